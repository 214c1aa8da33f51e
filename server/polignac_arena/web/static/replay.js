// The Polignac Arena replay viewer: steps through a match's engine events (auction, tricks, hand results).
// Data: the JSON in <script id="replay-data">; buttons and the arrow keys (Home/End too) move the step.
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
  var SUITS = { S: ["\u2660", "black", "spades"], H: ["\u2665", "red", "hearts"], D: ["\u2666", "red", "diamonds"], C: ["\u2663", "black", "clubs"] };
  var step = 0; // number of events applied
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
    span.textContent = f.text;
    span.setAttribute("data-card", code);
    return span;
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

  // The state after the first n events.
  function stateAt(n) {
    var s = { hands: [], trick: [], auction: [], tricks: [], results: [], caption: "Start of the match", toPlay: null, hand: 0, turned: null };
    for (var i = 0; i < n; i++) {
      var e = events[i];
      switch (e.event) {
        case "hand_dealt":
          s.hand = e.hand_number; s.hands = []; s.trick = []; s.auction = []; s.tricks = [];
          e.seats.forEach(function (seat, k) { s.hands[seat] = e.hands[k].slice(); });
          s.turned = e.turned || null;
          s.caption = "Hand " + e.hand_number + " dealt (dealer " + seatName(e.dealer) + ")" + (e.tiebreak ? (playOn ? ", play-on" : ", tiebreak") : "");
          if (s.turned) { s.caption += ", trumps " + face(s.turned).suit + " (turned card " + face(s.turned).text + ")"; }
          break;
        case "declared":
          s.auction.push(seatName(e.seat) + ": " + e.contract);
          s.caption = seatName(e.seat) + " declares " + e.contract; s.toPlay = e.seat;
          break;
        case "card_played":
          if (s.trick.length && s.trickDone) { s.trick = []; }
          s.trickDone = false;
          var hand = s.hands[e.seat] || [];
          var at = hand.indexOf(e.card); if (at >= 0) { hand.splice(at, 1); }
          s.trick.push([e.seat, e.card]);
          s.caption = seatName(e.seat) + " plays " + face(e.card).text; s.toPlay = e.seat;
          break;
        case "trick_won":
          s.tricks.push({ number: e.trick_number, winner: e.winner, cards: e.cards });
          s.trickDone = true;
          s.caption = "Trick " + e.trick_number + " won by " + seatName(e.winner); s.toPlay = e.winner;
          break;
        case "penalty_added":
          s.caption = seatName(e.seat) + " gets " + e.points + " penalty points (" + e.reason + ")";
          break;
        case "hand_ended":
          s.results.push(e);
          s.caption = "Hand " + e.hand_number + " ends: scores " + e.scores.join(", ");
          break;
        case "forfeited":
          s.caption = seatName(e.seat) + " forfeits: " + e.reason;
          break;
        case "tiebreak_started":
          s.caption = (playOn ? "Play-on hand " + e.round + ", everyone plays; tied: " : "Tiebreak round " + e.round + " between ") + e.seats.map(seatName).join(", ");
          break;
        case "match_ended":
          s.caption = "Match over: places " + e.places.join(", ") + ", totals " + e.totals.join(", ") + (data.direction ? " (" + data.direction + ")" : "");
          break;
        default:
          s.caption = e.event;
      }
    }
    return s;
  }

  function render() {
    var s = stateAt(step);
    el("position").textContent = "step " + step + " / " + events.length;
    el("caption").textContent = s.caption;
    var trumps = el("trumps");
    if (trumps) {
      trumps.innerHTML = "";
      if (s.turned) {
        trumps.appendChild(document.createTextNode("Trumps: " + face(s.turned).suit + ", turned card "));
        trumps.appendChild(cardNode(s.turned, "turned"));
      }
    }
    var table = el("table"); table.innerHTML = "";
    names.forEach(function (name, seat) {
      var div = document.createElement("div");
      div.className = "seat" + (s.toPlay === seat ? " to-play" : "");
      div.setAttribute("data-seat", seat);
      var title = document.createElement("div"); title.className = "name"; title.textContent = seat + ". " + name;
      div.appendChild(title);
      var hand = document.createElement("div"); hand.className = "hand";
      (s.hands[seat] || []).forEach(function (c) { hand.appendChild(cardNode(c)); });
      div.appendChild(hand);
      var played = document.createElement("div"); played.className = "in-trick";
      s.trick.forEach(function (p) { if (p[0] === seat) { played.appendChild(document.createTextNode("plays ")); played.appendChild(cardNode(p[1], "played")); } });
      div.appendChild(played);
      table.appendChild(div);
    });
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

  function go(n) { step = Math.max(0, Math.min(events.length, n)); render(); }
  el("first").addEventListener("click", function () { go(0); });
  el("prev").addEventListener("click", function () { go(step - 1); });
  el("next").addEventListener("click", function () { go(step + 1); });
  el("last").addEventListener("click", function () { go(events.length); });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowRight") { go(step + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { go(step - 1); ev.preventDefault(); }
    else if (ev.key === "Home") { go(0); ev.preventDefault(); }
    else if (ev.key === "End") { go(events.length); ev.preventDefault(); }
  });
  window.polignacReplay = { go: go, step: function () { return step; }, events: events };
  render();
})();
