// The Polignac Arena replay viewer: the table as the players see it, stepped through a match's engine events.
// Data: the JSON in <script id="replay-data">; buttons and the arrow keys (Home/End too) move the step, the hand
// list and PageUp/PageDown jump between hands. The viewer opens on the first deal (every hand face up: it is a
// replay), or on the step or hand the address names (#step=N, #hand=K), and keeps the address on the step shown.
// Seats sit round the table in play order (seat 0 at the bottom, the play going to its left, clockwise on the
// screen); each shows its name, its hand face up (the record holds every hand), its running totals and marks
// for the dealer, the leader of the trick and whose turn it is. The trick lies in the middle, each card in
// front of the seat that played it. A text log of every event so far sits beside the table.
// data.cards says how each card is shown under the ruleset's faces (French J\u2660, or German Gras-Unter):
// the server computes it with polignac.faces, so the viewer and the text renderings name cards alike.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var events = data.events || [];
  var names = data.names || [];
  var cards = data.cards || {};
  var rules = data.rules || {};
  var playOn = rules.tiebreak === "play-on";
  var german = rules.faces === "german";
  var pointCards = rules.penalty_cards || {};
  // Few point cards (the Jacks, an Ober) are shown one by one as a seat takes them; many (card points) as a sum.
  var showTaken = Object.keys(pointCards).length <= 8;
  var SUITS = { S: ["\u2660", "black", "spades"], H: ["\u2665", "red", "hearts"], D: ["\u2666", "red", "diamonds"], C: ["\u2663", "black", "clubs"] };
  // Where each seat sits, seat 0 first, going to its left (clockwise seen from above), by table size.
  var PLACES = {
    2: ["s", "n"], 3: ["s", "w", "e"], 4: ["s", "w", "n", "e"],
    5: ["s", "w", "nw", "ne", "e"], 6: ["s", "sw", "nw", "n", "ne", "se"],
  };
  var places = PLACES[names.length] || PLACES[6];
  var step = 0; // number of events applied
  // The bots' own notes (shown only to their author): by the index of the decision's event, shown at the step just after it.
  var notesAt = {};
  (data.notes || []).forEach(function (n) { (notesAt[n.event] = notesAt[n.event] || []).push(n); });
  var noteSteps = Object.keys(notesAt).map(function (k) { return Number(k) + 1; }).sort(function (a, b) { return a - b; });
  var el = function (id) { return document.getElementById(id); };

  // How a card is shown: from data.cards, or (a record that did not replay) its French text.
  function face(code) {
    if (cards[code]) { return cards[code]; }
    var rank = code.slice(0, -1), suit = SUITS[code.slice(-1)] || ["?", "black", "?"];
    return { text: (rank === "T" ? "10" : rank) + suit[0], name: code, suit: suit[2], colour: suit[1], polignac: code === "JS" };
  }

  function cardNode(code, extra) {
    var span = document.createElement("span");
    var f = face(code);
    span.className = "card " + f.colour + (extra ? " " + extra : "");
    span.title = f.name;
    if (f.polignac) { span.className += " polignac"; span.title = "the Polignac (" + f.name + ")"; }
    // German cards carry their suit's letter (E G H S) as a pip drawn by the style sheet, outside the text.
    if (german) { span.setAttribute("data-pip", f.suit.charAt(0)); }
    span.textContent = f.text;
    span.setAttribute("data-card", code);
    return span;
  }

  function textNode(tag, cls, text) {
    var node = document.createElement(tag);
    node.className = cls;
    node.textContent = text;
    return node;
  }

  // The parts of a seat's hand score (the hand_ended event's result), in words.
  function partsText(result, seat) {
    if (!result) { return ""; }
    var parts = [result.tricks[seat] + (result.tricks[seat] === 1 ? " trick" : " tricks")];
    if (result.card_points[seat]) { parts.push(result.card_points[seat] + " card pts"); }
    if (result.trick_points[seat]) { parts.push((result.trick_points[seat] > 0 ? "+" : "") + result.trick_points[seat] + " for tricks"); }
    if (result.first_last_points[seat]) { parts.push(result.first_last_points[seat] + " first/last"); }
    if (result.fault_points[seat]) { parts.push(result.fault_points[seat] + " faults"); }
    return parts.join(", ");
  }

  var EXCEPTIONS = { every_trick: "every trick taken", big_take: "big take" };
  function seatName(seat) { return names[seat] !== undefined ? names[seat] : "seat " + seat; }
  function signed(x) { return (x > 0 ? "+" : x < 0 ? "\u2212" : "") + Math.abs(x); }

  function freshTaken() {
    return names.map(function () { return { tricks: 0, cards: [], points: 0, faults: 0 }; });
  }

  // The state after the first n events.
  function stateAt(n) {
    var s = {
      hands: [], trick: [], auction: [], tricks: [], results: [], log: [], caption: "Start of the match",
      hand: 0, turned: null, seats: names.map(function (_, k) { return k; }), dealer: null, leader: null, bids: {}, ended: null,
      winner: null, contract: null, totals: names.map(function () { return 0; }), scores: null,
      taken: freshTaken(), out: {}, turn: null, bidding: false, over: false,
    };
    for (var i = 0; i < n; i++) {
      var e = events[i];
      switch (e.event) {
        case "hand_dealt":
          s.hand = e.hand_number; s.hands = []; s.trick = []; s.auction = []; s.tricks = [];
          s.seats = e.seats.slice(); s.dealer = e.dealer; s.leader = null; s.winner = null; s.contract = null;
          s.scores = null; s.taken = freshTaken(); s.bids = {}; s.ended = null;
          e.seats.forEach(function (seat, k) { s.hands[seat] = e.hands[k].slice(); });
          s.turned = e.turned || null;
          s.caption = "Hand " + e.hand_number + " dealt (dealer " + seatName(e.dealer) + ")" + (e.tiebreak ? (playOn ? ", play-on" : ", tiebreak") : "");
          if (s.turned) { s.caption += ", trumps " + face(s.turned).suit + " (turned card " + face(s.turned).text + ")"; }
          break;
        case "declared":
          s.auction.push(seatName(e.seat) + ": " + e.contract);
          s.bids[e.seat] = e.contract;
          if (e.contract !== "pass") { s.contract = { seat: e.seat, contract: e.contract }; }
          s.caption = seatName(e.seat) + (e.contract === "pass" ? " passes" : " declares " + e.contract);
          break;
        case "card_played":
          if (s.winner !== null) { s.trick = []; s.winner = null; }
          if (!s.trick.length) { s.leader = e.seat; }
          var hand = s.hands[e.seat] || [];
          var at = hand.indexOf(e.card); if (at >= 0) { hand.splice(at, 1); }
          s.trick.push([e.seat, e.card]);
          s.caption = seatName(e.seat) + " plays " + face(e.card).text;
          break;
        case "trick_won":
          s.tricks.push({ number: e.trick_number, winner: e.winner, cards: e.cards });
          s.winner = e.winner;
          var taken = s.taken[e.winner];
          if (taken) {
            taken.tricks += 1;
            e.cards.forEach(function (c) { if (pointCards[c]) { taken.cards.push(c); taken.points += pointCards[c]; } });
          }
          s.caption = "Trick " + e.trick_number + " won by " + seatName(e.winner);
          break;
        case "penalty_added":
          if (s.taken[e.seat]) { s.taken[e.seat].faults += e.points; }
          s.caption = seatName(e.seat) + " gets " + e.points + " penalty points (" + e.reason + ")";
          break;
        case "hand_ended":
          s.results.push(e);
          s.totals = e.totals.slice(); s.scores = e.scores.slice(); s.ended = e;
          s.caption = "Hand " + e.hand_number + " ends: scores " + e.scores.join(", ");
          break;
        case "forfeited":
          s.out[e.seat] = true;
          s.caption = seatName(e.seat) + " forfeits: " + e.reason;
          break;
        case "tiebreak_started":
          s.caption = (playOn ? "Play-on hand " + e.round + ", everyone plays; tied: " : "Tiebreak round " + e.round + " between ") + e.seats.map(seatName).join(", ");
          break;
        case "match_ended":
          s.totals = e.totals.slice(); s.over = true;
          s.caption = "Match over: places " + e.places.join(", ") + ", totals " + e.totals.join(", ") + (data.direction ? " (" + data.direction + ")" : "");
          break;
        default:
          s.caption = e.event;
      }
      s.log.push(s.caption);
    }
    // Whose turn: the seat of the next decision, if the next event is one.
    var next = events[n];
    if (next && (next.event === "card_played" || next.event === "declared")) { s.turn = next.seat; s.bidding = next.event === "declared"; }
    return s;
  }

  function badge(text, cls) { return textNode("span", "badge " + cls, text); }

  function seatNode(s, seat) {
    var div = document.createElement("div");
    var inHand = s.seats.indexOf(seat) >= 0;
    div.className = "seat at-" + places[seat] + (s.turn === seat ? " to-play" : "") + (inHand ? "" : " sits-out") + (s.out[seat] ? " forfeited" : "");
    div.setAttribute("data-seat", seat);
    div.setAttribute("data-place", places[seat]);
    var head = document.createElement("div"); head.className = "name";
    head.appendChild(textNode("span", "who", seat + ". " + seatName(seat)));
    if (s.dealer === seat) { head.appendChild(badge("dealer", "dealer")); }
    if (s.leader === seat && s.trick.length) { head.appendChild(badge("leads", "leads")); }
    if (s.contract && s.contract.seat === seat) { head.appendChild(badge(s.contract.contract, "declarer")); }
    else if (s.bids[seat] && !s.tricks.length && !s.trick.length) { head.appendChild(badge(s.bids[seat], "bid")); }
    if (s.turn === seat) { head.appendChild(badge(s.bidding ? "to bid" : "to play", "turn")); }
    if (s.out[seat]) { head.appendChild(badge("forfeited", "out")); }
    div.appendChild(head);
    var hand = document.createElement("div"); hand.className = "hand";
    (s.hands[seat] || []).forEach(function (c) { hand.appendChild(cardNode(c)); });
    div.appendChild(hand);
    div.appendChild(scoreNode(s, seat));
    return div;
  }

  // The running totals of a seat: the match total, then what it took in this hand (or the hand's score).
  function scoreNode(s, seat) {
    var div = document.createElement("div"); div.className = "score";
    div.appendChild(textNode("span", "total", "total " + s.totals[seat]));
    var taken = s.taken[seat];
    var parts = [taken.tricks + (taken.tricks === 1 ? " trick" : " tricks")];
    if (taken.points) { parts.push(taken.points + " card pts"); }
    if (taken.faults) { parts.push(taken.faults + " fault pts"); }
    div.appendChild(textNode("span", "taken", " \u00b7 this hand: " + parts.join(", ")));
    if (showTaken) { taken.cards.forEach(function (c) { div.appendChild(cardNode(c, "mini")); }); }
    if (s.scores) { div.appendChild(textNode("span", "hand-score", " \u00b7 scores " + signed(s.scores[seat]))); }
    return div;
  }

  // The middle of the table: the trick, each card in front of the seat that played it.
  function renderTrick(s) {
    var div = el("trick");
    if (!div) { return; }
    div.innerHTML = "";
    s.trick.forEach(function (p) {
      var spot = document.createElement("div");
      spot.className = "spot at-" + places[p[0]];
      spot.setAttribute("data-seat", p[0]);
      spot.appendChild(cardNode(p[1], "played" + (s.winner === p[0] ? " wins" : "")));
      div.appendChild(spot);
    });
    var middle = s.over ? "match over" : s.winner !== null ? "trick " + s.tricks.length + " to " + seatName(s.winner)
      : s.trick.length ? "trick " + (s.tricks.length + 1) : s.hand ? "hand " + s.hand : "";
    div.appendChild(textNode("div", "middle", middle));
    if (s.ended) { div.appendChild(handResultNode(s.ended)); }
  }

  // A hand's result, laid on the table once it ends: the contract and each seat's score for the hand.
  function handResultNode(e) {
    var box = document.createElement("div"); box.className = "hand-result"; box.id = "hand-result";
    var exception = e.result && EXCEPTIONS[e.result.exception];
    box.appendChild(textNode("div", "title", "Hand " + e.hand_number + ": " + e.contract + (exception ? ", " + exception : "")));
    e.scores.forEach(function (x, seat) {
      box.appendChild(textNode("div", "line", seatName(seat) + " " + signed(x) + (partsText(e.result, seat) ? " (" + partsText(e.result, seat) + ")" : "")));
    });
    return box;
  }

  function renderInfo(s) {
    var trumps = el("trumps");
    if (trumps) {
      trumps.innerHTML = "";
      if (s.turned) {
        trumps.appendChild(document.createTextNode("Trumps: " + face(s.turned).suit + ", turned card "));
        trumps.appendChild(cardNode(s.turned, "turned"));
      }
    }
    var contract = el("contract");
    if (contract) {
      var passed = s.auction.length && s.auction.length === s.seats.length;
      contract.textContent = s.contract ? "Contract: " + s.contract.contract + " by " + seatName(s.contract.seat)
        : passed ? "No contract: all passed" : s.auction.length ? "Auction: " + s.auction.join(", ") : "";
    }
  }

  function renderLogs(s) {
    var log = el("log");
    if (log) {
      log.innerHTML = "";
      s.log.forEach(function (line, k) {
        log.appendChild(textNode("li", k === s.log.length - 1 ? "current" : "", line));
      });
      log.scrollTop = log.scrollHeight || 0;
    }
    var auction = el("auction"); auction.innerHTML = "";
    s.auction.forEach(function (line) { var li = document.createElement("li"); li.textContent = line; auction.appendChild(li); });
    var tricks = el("tricks"); tricks.innerHTML = "";
    s.tricks.forEach(function (t, k) {
      var li = document.createElement("li");
      li.className = "trick" + (k === s.tricks.length - 1 ? " current" : "");
      li.setAttribute("data-winner", t.winner);
      t.cards.forEach(function (c) { li.appendChild(cardNode(c)); });
      li.appendChild(document.createTextNode(" won by " + seatName(t.winner)));
      tricks.appendChild(li);
    });
    var results = el("results"); results.innerHTML = "";
    if (s.results.length) {
      var head = document.createElement("tr");
      ["hand", "contract"].concat(names).forEach(function (h) { var th = document.createElement("th"); th.textContent = h; head.appendChild(th); });
      results.appendChild(head);
      s.results.forEach(function (r) {
        var tr = document.createElement("tr");
        var exception = r.result && EXCEPTIONS[r.result.exception];
        [r.hand_number, r.contract + (exception ? ", " + exception : "")].forEach(function (v) {
          var td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
        });
        r.scores.forEach(function (x, k) {
          var td = document.createElement("td"); td.textContent = x + " (" + r.totals[k] + ")";
          var parts = partsText(r.result, k);
          if (parts) { var div = document.createElement("div"); div.className = "parts"; div.textContent = parts; td.appendChild(div); }
          tr.appendChild(td);
        });
        results.appendChild(tr);
      });
    }
  }

  // The hands of the match: [hand number, the step just after its deal, its dealer].
  var deals = [];
  events.forEach(function (e, i) { if (e.event === "hand_dealt") { deals.push([e.hand_number, i + 1, e.dealer, e.tiebreak]); } });

  function fillHandList() {
    var list = el("hand-jump");
    if (!list) { return; }
    deals.forEach(function (d) {
      var option = document.createElement("option");
      option.value = String(d[1]);
      option.textContent = "hand " + d[0] + (d[3] ? " (tiebreak)" : "") + ", dealer " + seatName(d[2]);
      list.appendChild(option);
    });
    list.addEventListener("change", function () { go(Number(list.value)); });
  }

  // The deal of the hand being shown (the last one dealt at or before the step), as an index into deals.
  function dealIndex(n) {
    var k = -1;
    deals.forEach(function (d, i) { if (d[1] <= n) { k = i; } });
    return k;
  }

  function render() {
    var s = stateAt(step);
    el("position").textContent = "step " + step + " / " + events.length;
    var list = el("hand-jump");
    if (list && dealIndex(step) >= 0) { list.value = String(deals[dealIndex(step)][1]); }
    try { window.history.replaceState(null, "", "#step=" + step); } catch (ignored) { /* no history here: a test's stub, an address that cannot change */ }
    el("caption").textContent = s.caption;
    renderInfo(s);
    var felt = el("felt");
    if (felt) { felt.className = "felt players-" + names.length + (german ? " german" : ""); }
    var table = el("table"); table.innerHTML = "";
    names.forEach(function (_, seat) { table.appendChild(seatNode(s, seat)); });
    renderTrick(s);
    renderLogs(s);
    renderNotes();
  }

  function renderNotes() {
    var box = el("note-body");
    if (!box) { return; }
    box.innerHTML = "";
    var here = notesAt[step - 1] || [];
    if (!here.length) {
      box.appendChild(textNode("p", "note-none", "No note at this step (" + noteSteps.length + " in this match: \u25c0 note and note \u25b6 go to them)."));
      return;
    }
    here.forEach(function (n) {
      var div = document.createElement("div");
      div.className = "note";
      div.appendChild(textNode("p", "note-step", "Hand " + n.hand + ", " + n.step + ": " + seatName(n.seat) + " played " + n.action));
      [["debug", n.debug], ["stderr", n.stderr]].forEach(function (part) {
        if (!part[1]) { return; }
        div.appendChild(textNode("p", "note-label", part[0]));
        div.appendChild(textNode("pre", "note-" + part[0], part[1]));
      });
      box.appendChild(div);
    });
  }

  function goNote(delta) {
    var later = noteSteps.filter(function (n) { return delta > 0 ? n > step : n < step; });
    if (later.length) { go(delta > 0 ? later[0] : later[later.length - 1]); }
  }

  function go(n) { step = Math.max(0, Math.min(events.length, n)); render(); }
  function goHand(delta) {
    var k = dealIndex(step) + delta;
    if (delta < 0 && dealIndex(step) >= 0 && step > deals[dealIndex(step)][1]) { k += 1; }  // back to this hand's deal first
    if (k >= 0 && k < deals.length) { go(deals[k][1]); } else if (k < 0) { go(0); }
  }
  el("first").addEventListener("click", function () { go(0); });
  el("prev").addEventListener("click", function () { go(step - 1); });
  el("next").addEventListener("click", function () { go(step + 1); });
  el("last").addEventListener("click", function () { go(events.length); });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowRight") { go(step + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { go(step - 1); ev.preventDefault(); }
    else if (ev.key === "Home") { go(0); ev.preventDefault(); }
    else if (ev.key === "End") { go(events.length); ev.preventDefault(); }
    else if (ev.key === "PageDown") { goHand(1); ev.preventDefault(); }
    else if (ev.key === "PageUp") { goHand(-1); ev.preventDefault(); }
  });
  if (el("prev-note")) { el("prev-note").addEventListener("click", function () { goNote(-1); }); }
  if (el("next-note")) { el("next-note").addEventListener("click", function () { goNote(1); }); }
  if (el("prev-hand")) { el("prev-hand").addEventListener("click", function () { goHand(-1); }); }
  if (el("next-hand")) { el("next-hand").addEventListener("click", function () { goHand(1); }); }
  // A signed-in author's rerun form (replay.html): "rerun from this hand" submits it for the hand on show.
  var rerunHere = el("rerun-here"), rerunForm = el("rerun-form");
  if (rerunHere && rerunForm) {
    rerunHere.addEventListener("click", function () {
      var k = dealIndex(step), buttons = rerunForm.querySelectorAll("button.rerun-hand");
      var hand = k >= 0 ? deals[k][0] : buttons.length ? Number(buttons[0].value) : null;
      for (var i = 0; i < buttons.length; i++) { if (Number(buttons[i].value) === hand) { buttons[i].click(); return; } }
      rerunHere.textContent = "this hand is a tie-break: choose another";
    });
  }
  // "Play this position" (replay.html, signed in): a human match from the hand on show, in the seat chosen in its form.
  var playHere = el("play-here"), playForm = el("play-here-form");
  if (playHere && playForm) {
    playHere.addEventListener("click", function () {
      var k = dealIndex(step);
      if (k >= 0 && deals[k][3]) { playHere.textContent = "this hand is a tie-break: choose another"; return; }
      playForm.elements.hand.value = k >= 0 ? deals[k][0] : 1;
      playForm.submit();
    });
  }
  window.polignacReplay = { go: go, step: function () { return step; }, events: events, hands: deals };
  fillHandList();
  // The step an address names (#step=N, or #hand=K: just after hand K's deal); null when it names none.
  function stepOf(hash) {
    var asked = /^#(step|hand)=(\d{1,9})$/.exec(hash);
    if (!asked) { return null; }
    if (asked[1] === "step") { return Math.min(events.length, Number(asked[2])); }
    var found = null;
    deals.forEach(function (d) { if (d[0] === Number(asked[2]) && found === null) { found = d[1]; } });
    return found;
  }
  var address = typeof location !== "undefined" ? location : { hash: "" };
  if (window.addEventListener) {
    window.addEventListener("hashchange", function () { var n = stepOf(address.hash); if (n !== null) { go(n); } });
  }
  // Where to open: the address's step or hand, else just after the first deal (a replay shows the hands at once).
  var opening = stepOf(address.hash);
  step = opening !== null ? opening : deals.length && deals[0][1] === 1 ? 1 : 0;
  render();
})();
