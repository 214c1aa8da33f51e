// Live pages: poll the store's stamp (/api/stamp) and, when it differs from the one the page was drawn with, fetch the
// page again and swap in its parts marked data-live (kept by id), so a running tournament's tables update without a
// reload. Forms and scroll position stay as they are. Polling pauses while the tab is hidden.
"use strict";
(function () {
  const body = document.body;
  const every = Number(body.dataset.livePoll || 0);
  if (!(every > 0)) return;
  let drawn = body.dataset.liveStamp || "";
  let timer = null;
  let busy = false;

  async function redraw() {
    const response = await fetch(location.href, { cache: "no-store", headers: { Accept: "text/html" } });
    if (!response.ok) return false;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const part of document.querySelectorAll("[data-live][id]")) {
      const replacement = fresh.getElementById(part.id);
      if (!replacement) continue;
      const node = document.importNode(replacement, true);
      node.classList.add("updated");
      part.replaceWith(node);
    }
    drawn = (fresh.body && fresh.body.dataset.liveStamp) || drawn;
    body.dataset.liveStamp = drawn;
    body.dataset.liveRedraws = String(Number(body.dataset.liveRedraws || 0) + 1);
    return true;
  }

  async function poll() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const response = await fetch("/api/stamp", { cache: "no-store" });
      if (response.ok) {
        const stamp = await response.json();
        if (stamp.key && stamp.key !== drawn) await redraw();
      }
    } catch (error) {
      // The server may be restarting: try again at the next tick.
    } finally {
      busy = false;
    }
  }

  function start() {
    if (timer === null) timer = setInterval(poll, every);
  }
  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
  }
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      stop();
    } else {
      poll();
      start();
    }
  });
  start();
})();
