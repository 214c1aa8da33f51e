// The human seat's page: long-polls the seat's state and posts the person's decisions (docs/league.md, "Play against the bots").
(function () {
  "use strict";
  const root = document.getElementById("play");
  if (!root) return;
  const base = "/play/" + root.dataset.match;
  const csrf = root.dataset.csrf;
  let state = null;
  let sending = false;

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  function name(seat) {
    return (state && state.seat_names[seat]) || ("seat " + seat);
  }

  async function send(decision) {
    if (sending || !state || state.turn === null) return;
    sending = true;
    const turn = state.turn;
    // The decision is on its way: nothing is clickable until the state after it is drawn.
    document.querySelectorAll("#hand button, #contracts button").forEach((button) => {
      button.disabled = true;
      button.classList.remove("legal");
    });
    try {
      const response = await fetch(base + "/decision", {
        method: "POST",
        headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
        body: JSON.stringify({turn: turn, decision: decision}),
      });
      const body = await response.json();
      if (response.ok) {
        show(body);
      } else {
        show(state);  // refused: the hand as it was, clickable again
        document.getElementById("status").textContent = body.detail;
      }
    } catch (error) {
      show(state);
      document.getElementById("status").textContent = "The decision was not sent: " + error;
    } finally {
      sending = false;
    }
  }

  function show(next) {
    state = next;
    const mine = state.turn !== null;
    const status = document.getElementById("status");
    if (state.ended || !state.live) {
      status.textContent = "The match is over (" + state.status + ").";
    } else if (mine) {
      status.textContent = "Your turn (hand " + state.hand_number + ", " + state.phase + "): you have " + state.move_s + " s.";
    } else {
      status.textContent = "The bots are playing…";
    }
    const body = document.querySelector("#scores tbody");
    body.replaceChildren();
    const totals = state.totals || [];
    const trick = new Map((state.trick || []).map(([seat, card]) => [seat, card]));
    state.seat_names.forEach((who, seat) => {
      const row = el("tr");
      row.id = "seat-" + seat;
      row.append(el("td", String(seat)), el("td", who + (seat === state.seat ? " (you)" : "")),
        el("td", String(totals[seat] ?? 0)), el("td", String((state.tricks_taken || [])[seat] ?? 0)),
        el("td", trick.get(seat) || "", "table-card"));
      body.append(row);
    });
    document.getElementById("auction").textContent =
      (state.auction || []).map(([seat, what]) => name(seat) + ": " + what).join(", ") || "-";
    const contracts = document.getElementById("contracts");
    contracts.replaceChildren();
    (state.legal_contracts || []).forEach((what) => {
      const button = el("button", what, "contract");
      button.type = "button";
      button.dataset.contract = what;
      button.addEventListener("click", () => send(what));
      contracts.append(button);
    });
    const hand = document.getElementById("hand");
    hand.replaceChildren();
    const legal = new Set(state.legal_cards || []);
    (state.hand || []).forEach((card, index) => {
      const button = el("button", (index + 1) + ": " + card, legal.has(card) ? "card legal" : "card");
      button.type = "button";
      button.dataset.card = card;
      button.disabled = !legal.has(card);
      button.addEventListener("click", () => send(card));
      hand.append(button);
    });
    const last = state.last_hand;
    document.getElementById("last-hand").textContent = last
      ? "Hand " + last.hand + ": scores " + last.scores.join(", ") + "; totals " + last.totals.join(", ") : "";
    document.getElementById("faults").textContent = (state.faults || []).slice(-1).join("");
    const log = document.getElementById("log");
    log.replaceChildren(...(state.log || []).map((line) => el("li", line)));
    const ended = document.getElementById("ended");
    if (state.ended && state.status !== "playing") {
      ended.hidden = false;
      ended.replaceChildren();
      const places = state.ended.places || [];
      ended.append(el("span", places.length
        ? "Final places: " + places.map((place, seat) => name(seat) + " " + place).join(", ") + ". "
        : "The match ended: " + state.status + (state.error ? " (" + state.error + ")" : "") + ". "));
      const link = el("a", "See its replay");
      link.id = "replay-link";
      link.href = base + "/replay";
      ended.append(link);
    }
  }

  async function poll() {
    for (;;) {
      try {
        const since = state ? state.version : -1;
        const response = await fetch(base + "/state?since=" + since, {cache: "no-store"});
        if (!response.ok) {
          document.getElementById("status").textContent = "The server says: " + response.status;
          return;
        }
        show(await response.json());
        if (state.ended && !state.live) return;
      } catch (error) {
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }

  document.addEventListener("keydown", (event) => {
    if (!state || state.turn === null) return;
    const number = Number.parseInt(event.key, 10);
    if (number >= 1 && number <= 9 && state.hand && state.hand[number - 1]) {
      const card = state.hand[number - 1];
      if ((state.legal_cards || []).includes(card)) send(card);
    } else if (event.key === "p" && (state.legal_contracts || []).includes("pass")) {
      send("pass");
    }
  });
  poll();
})();
