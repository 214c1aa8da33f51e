// The author's page (me.html): send the chosen archive as an upload, then follow its validation log until it ends.
(function () {
  "use strict";
  var form = document.getElementById("upload");
  if (!form) return;
  var stateLine = document.getElementById("upload-state"), logBox = document.getElementById("upload-log");
  var POLL_MS = 700;

  function say(text, kind) {
    stateLine.textContent = text;
    stateLine.className = kind ? "state-" + kind : "";
  }

  function errorOf(answer) {
    return answer.json().then(function (body) { return body.error || ("refused (" + answer.status + ")"); },
                              function () { return "refused (" + answer.status + ")"; });
  }

  function follow(url, since) {
    fetch(url + "?since=" + since, {credentials: "same-origin", cache: "no-store"}).then(function (answer) {
      if (!answer.ok) return errorOf(answer).then(function (message) { say("Could not follow the validation: " + message, "refused"); });
      return answer.json().then(function (status) {
        if (status.log.length) {
          logBox.hidden = false;
          logBox.textContent += status.log.join("\n") + "\n";  // text, never markup
          logBox.scrollTop = logBox.scrollHeight;
        }
        if (!status.final) {
          say("Validating " + (status.label || status.bot) + "…", "validating");
          setTimeout(function () { follow(url, status.log_next); }, POLL_MS);
          return;
        }
        var done = status.state === "active" ? "accepted" : status.state;
        say((status.label || status.bot) + ": " + done + (status.reason ? " (" + status.reason + ")" : ""), status.state);
        refreshBots();
      });
    }, function () {
      say("The connection was lost; retrying…", "validating");
      setTimeout(function () { follow(url, since); }, POLL_MS * 4);
    });
  }

  // The versions table, fetched again from this page, so the new version's state shows without a reload.
  function refreshBots() {
    fetch("/me", {credentials: "same-origin", cache: "no-store"}).then(function (answer) {
      return answer.ok ? answer.text() : null;
    }).then(function (html) {
      if (!html) return;
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("bots-section");
      var shown = document.getElementById("bots-section");
      if (fresh && shown) shown.replaceWith(fresh);
    }, function () { /* the table stays as it was: a reload shows it */ });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var name = form.elements.bot.value.trim(), file = form.elements.archive.files[0];
    if (!file) { say("Choose an archive first.", "refused"); return; }
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    logBox.textContent = "";
    logBox.hidden = true;
    say("Uploading " + file.name + "…", "validating");
    fetch("/me/bots/" + encodeURIComponent(name) + "/versions", {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/gzip", "X-CSRF-Token": form.dataset.csrf},
      body: file
    }).then(function (answer) {
      button.disabled = false;
      if (!answer.ok) return errorOf(answer).then(function (message) { say("Upload refused: " + message, "refused"); });
      return answer.json().then(function (status) { follow("/me/submissions/" + status.id, 0); });
    }, function () {
      button.disabled = false;
      say("The upload could not be sent (the connection failed or the archive is over the limit).", "refused");
    });
  });
})();
