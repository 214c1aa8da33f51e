// The league page's "your submissions" form: fetches the author's versions with their token and shows each validation log.
"use strict";
(function () {
  const form = document.getElementById("mine");
  const out = document.getElementById("my-versions");
  if (!form || !out) return;
  function text(tag, content, cls) {
    const node = document.createElement(tag);
    node.textContent = content;
    if (cls) node.className = cls;
    return node;
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    out.replaceChildren(text("p", "loading..."));
    const token = document.getElementById("token").value.trim();
    let response;
    try {
      response = await fetch("/api/league/me", { headers: { Authorization: "Bearer " + token } });
    } catch (error) {
      out.replaceChildren(text("p", "cannot reach the server: " + error, "error"));
      return;
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      out.replaceChildren(text("p", body.error || body.detail || "refused (" + response.status + ")", "error"));
      return;
    }
    const nodes = [text("p", "author: " + body.author)];
    for (const bot of body.bots || []) {
      for (const v of bot.versions || []) {
        const section = document.createElement("section");
        section.className = "version";
        section.append(text("h3", v.label + ": " + v.state + (v.reason ? " (" + v.reason + ")" : "")));
        const detail = await fetch("/api/league/submissions/" + encodeURIComponent(v.submission), {
          headers: { Authorization: "Bearer " + token },
        }).catch(() => null);
        const submission = detail && detail.ok ? await detail.json().catch(() => null) : null;
        const lines = submission && submission.log ? submission.log : [];
        section.append(text("pre", lines.length ? lines.join("\n") : "(no validation log: a remote bot, or not started)", "log"));
        nodes.push(section);
      }
    }
    if (nodes.length === 1) nodes.push(text("p", "no submission yet"));
    out.replaceChildren(...nodes);
  });
})();
