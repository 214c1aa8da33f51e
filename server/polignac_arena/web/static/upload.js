// The author's page (me.html): send the chosen archive (or the chosen folder, packed here) as an upload,
// then follow its validation log until it ends.
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

  // A chosen folder, packed here as `tar -czf` packs it: a POSIX ustar archive of its files, named
  // relative to the folder, in name order, owner and time 0, mode 0755 for a file that starts with
  // "#!" or is an ELF binary (the browser does not say which files are executable) and 0644 for the
  // rest; gzip'd by the browser.  Refused here, in words, when a name does not fit ustar or the
  // folder is past the league's limits (written on the form); the server checks it as any archive.
  var encoder = new TextEncoder();
  var caps = {archive: Number(form.dataset.archiveBytes), unpacked: Number(form.dataset.unpackedBytes), files: Number(form.dataset.files)};

  function bytes(text) { return encoder.encode(text).length; }

  // ustar's name field holds 100 bytes; a longer name is split at a "/" into a prefix of up to 155 bytes and the rest.
  function ustarName(path) {
    if (bytes(path) <= 100) return {name: path, prefix: ""};
    for (var cut = path.indexOf("/"); cut > 0; cut = path.indexOf("/", cut + 1)) {
      var prefix = path.slice(0, cut), rest = path.slice(cut + 1);
      if (bytes(prefix) <= 155 && bytes(rest) <= 100) return {name: rest, prefix: prefix};
    }
    return null;
  }

  function header(name, size, mode) {
    var block = new Uint8Array(512);
    function put(offset, text) { block.set(encoder.encode(text), offset); }
    function octal(offset, width, value) { put(offset, value.toString(8).padStart(width - 1, "0")); }  // and a NUL
    put(0, name.name);
    octal(100, 8, mode); octal(108, 8, 0); octal(116, 8, 0); octal(124, 12, size); octal(136, 12, 0);
    put(148, "        "); put(156, "0"); put(257, "ustar\u0000" + "00"); put(345, name.prefix);
    var sum = block.reduce(function (total, byte) { return total + byte; }, 0);
    octal(148, 7, sum);  // six digits, a NUL, a space
    block[154] = 0;
    return block;
  }

  function modeOf(file) {
    return file.slice(0, 4).arrayBuffer().then(function (buffer) {
      var head = new Uint8Array(buffer);
      var script = head[0] === 0x23 && head[1] === 0x21;  // "#!"
      var elf = head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46;  // "\x7fELF"
      return script || elf ? 0o755 : 0o644;
    });
  }

  function mb(size) { return (size / 1048576).toFixed(1) + " MB"; }

  function refuse(why) { return Promise.reject(new Error(why)); }

  // The folder's files as a gzip'd tar (a Blob); rejected with an Error saying why it cannot be.
  function packFolder(files) {
    if (typeof CompressionStream === "undefined") return refuse("this browser cannot gzip (no CompressionStream): pack the folder with tar and upload the archive");
    var entries = [], total = 0;
    for (var i = 0; i < files.length; i++) {
      var relative = files[i].webkitRelativePath, path = relative.slice(relative.indexOf("/") + 1), name = ustarName(path);
      if (!name) {
        return refuse("the name " + JSON.stringify(path) + " is too long for the tar this page makes (ustar: 100 bytes, " +
                      "or 155 and 100 either side of a '/'): shorten it, or pack the folder with tar and upload the archive");
      }
      entries.push({file: files[i], path: path, name: name});
      total += files[i].size;
    }
    if (entries.length > caps.files) return refuse("the folder has " + entries.length + " files, more than the " + caps.files + " a submission may hold");
    if (total > caps.unpacked) return refuse("the folder's files take " + mb(total) + ", more than the " + mb(caps.unpacked) + " a submission may hold");
    entries.sort(function (a, b) { return a.path < b.path ? -1 : a.path > b.path ? 1 : 0; });
    return Promise.all(entries.map(function (entry) { return modeOf(entry.file); })).then(function (modes) {
      var parts = [];
      entries.forEach(function (entry, index) {
        var padding = new Uint8Array((512 - entry.file.size % 512) % 512);
        parts.push(header(entry.name, entry.file.size, modes[index]), entry.file, padding);
      });
      parts.push(new Uint8Array(1024));  // the end of the archive: two empty blocks
      return new Response(new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"))).blob();
    }).then(function (archive) {
      if (archive.size > caps.archive) throw new Error("packed, the folder takes " + mb(archive.size) + ", more than the " + mb(caps.archive) + " an archive may take");
      return archive;
    });
  }

  function send(name, body, button) {
    fetch("/me/bots/" + encodeURIComponent(name) + "/versions", {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/gzip", "X-CSRF-Token": form.dataset.csrf},
      body: body
    }).then(function (answer) {
      button.disabled = false;
      if (!answer.ok) return errorOf(answer).then(function (message) { say("Upload refused: " + message, "refused"); });
      return answer.json().then(function (status) { follow("/me/submissions/" + status.id, 0); });
    }, function () {
      button.disabled = false;
      say("The upload could not be sent (the connection failed or the archive is over the limit).", "refused");
    });
  }

  // Choosing one clears the other: what is sent is the archive or the folder chosen last.
  form.elements.archive.addEventListener("change", function () { form.elements.folder.value = ""; });
  form.elements.folder.addEventListener("change", function () { form.elements.archive.value = ""; });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var name = form.elements.bot.value.trim(), archive = form.elements.archive.files[0], folder = form.elements.folder.files;
    if (!archive && !folder.length) { say("Choose an archive or a folder (with files in it) first.", "refused"); return; }
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    logBox.textContent = "";
    logBox.hidden = true;
    if (archive) {
      say("Uploading " + archive.name + "…", "validating");
      send(name, archive, button);
      return;
    }
    say("Packing the folder's " + folder.length + " files…", "validating");
    packFolder(folder).then(function (packed) {
      say("Uploading the folder (" + folder.length + " files, " + mb(packed.size) + " packed)…", "validating");
      send(name, packed, button);
    }, function (error) {
      button.disabled = false;
      say("Folder not sent: " + error.message + ".", "refused");
    });
  });
})();
