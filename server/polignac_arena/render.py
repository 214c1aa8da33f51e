"""Text rendering of a match for people: hand by hand, trick by trick, then the standings.

:func:`render_events` turns a match's events (``Match.events``, or a replayed record's)
into plain lines that fit an 80-column terminal; :func:`standings_table` makes the final
standings a rich table.  Both are shared by ``polignac play`` and the replay viewer.
Cards are named by the ruleset's faces (:mod:`polignac.faces`): German games show ``EO``
in the columns and ``Eichel-Ober`` in the text.

A hand looks like this (``>`` marks the card led, ``*`` a penalty card, ``!`` the Polignac)::

    Hand 3, dealer seat 1
      trick  seat 0  seat 1  seat 2  seat 3  won by
          1   KH      JH*    >QH      AH     seat 0
          2  >8C      AC      9C      JC*    seat 3
          3   TS      7S      8S     >JS!    seat 3
      ...
      penalty cards: seat 0 JH JD (2), seat 3 JC JS (3)
              3       1       0       4      tricks
      score   2       0       0       3
      total   9       7       0       9

A hand with a turned trump card says so under its first line (``trumps: hearts (turned
card 7H)``); the parts of a hand's score (tricks, card points, trick points, an
exception to scoring by place) come just above its score.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from rich.table import Table

from polignac import Card, Contract, Direction, Event, Faces, HandScore, Ruleset, ScoreException, Tiebreak, card_name, card_text, suit_name
from polignac.events import (
    CardPlayed,
    Declared,
    Forfeited,
    HandDealt,
    HandEnded,
    MatchEnded,
    PenaltyAdded,
    TiebreakStarted,
    TrickWon,
)
from polignac.faces import legend
from polignac_arena.render_notes import StepNote, note_lines

__all__ = ["WIDTH", "direction_text", "is_polignac", "render_events", "seat_label", "standings_table"]

WIDTH: Final = 80
"""Every rendered line fits in this many columns (given at most 6 seats)."""

POLIGNAC: Final = Card.parse("JS")
"""The Jack of spades, the card the game is named after."""

_CELL: Final = 6  # "seat 5", or a card with its marks: ">JS!", ">H10*"
_GAP: Final = "  "


def seat_label(seat: int) -> str:
    """How a seat is named in the text: ``seat 2``."""
    return f"seat {seat}"


def direction_text(direction: Direction) -> str:
    """Which totals win, for people: ``lower is better``."""
    return f"{direction.value} is better"


def is_polignac(rules: Ruleset, card: Card) -> bool:
    """Whether ``card`` is the Polignac of this game: the Jack of spades as a penalty card of a French penalty game.

    In Knaves or Bassadewitz the Jack of spades is one counting card among others.
    """
    penalty_game = rules.direction is Direction.LOWER and rules.hand_score is HandScore.POINTS and rules.faces is Faces.FRENCH
    return penalty_game and card is POLIGNAC and rules.card_points[card.index] > 0


def _seats_text(seats: Iterable[int]) -> str:
    """``seat 0``, ``seat 0 and seat 2``, ``seat 0, seat 2 and seat 3``."""
    labels = [seat_label(s) for s in seats]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


@dataclass
class _Hand:
    """What the renderer remembers of the hand being played."""

    number: int
    dealer: int
    seats: tuple[int, ...]
    tiebreak: bool
    turned: Card | None = None
    auction: list[Declared] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    current: list[CardPlayed] = field(default_factory=list)
    taken: dict[int, list[Card]] = field(default_factory=dict)
    tricks: list[TrickWon] = field(default_factory=list)
    extra: list[PenaltyAdded] = field(default_factory=list)


class _Renderer:
    """Consumes events in order and accumulates lines."""

    def __init__(self, rules: Ruleset) -> None:
        self.rules = rules
        self.faces = rules.faces
        self.by_place = rules.hand_score is HandScore.PLACE
        self.play_on = rules.tiebreak is Tiebreak.PLAY_ON
        self.lines: list[str] = []
        self.hand: _Hand | None = None
        self.totals: tuple[int, ...] = (0,) * rules.players
        self.regular_hands = 0
        self.tiebreak_hands = 0
        self.notes: dict[int, list[StepNote]] = {}
        """By hand number, the bots' notes on their decisions, shown after the hand."""
        self._legend()

    # -- cards ---------------------------------------------------------------------------

    def _is_polignac(self, card: Card) -> bool:
        return is_polignac(self.rules, card)

    def _legend(self) -> None:
        marks = "> led the trick, " + ("* a card with card points" if self.by_place else "* penalty card")
        if self._is_polignac(POLIGNAC):
            marks += ", ! the Polignac (JS)"
        self.emit(f"Marks: {marks}.")
        faces = legend(self.faces)
        if faces is not None:
            self.emit(faces)

    def _card(self, card: Card, led: bool = False) -> str:
        mark = "!" if self._is_polignac(card) else "*" if self.rules.card_points[card.index] else ""
        return (">" if led else " ") + card_text(card, self.faces) + mark

    def _named(self, card: Card) -> str:
        """A card in running text: its French text, or its German name."""
        return card_name(card, self.faces) if self.faces is Faces.GERMAN else str(card)

    # -- layout --------------------------------------------------------------------------

    def emit(self, text: str = "", indent: int = 0) -> None:
        """Add a line, wrapped to :data:`WIDTH` with continuation lines indented further."""
        pad = " " * indent
        if len(pad + text) <= WIDTH:
            self.lines.append((pad + text).rstrip())
        else:
            self.lines.extend(textwrap.wrap(text, WIDTH, initial_indent=pad, subsequent_indent=pad + "    "))

    def _row(self, label: str, cells: Sequence[str], tail: str = "") -> str:
        body = "".join(f"{_GAP}{cell:<{_CELL}}" for cell in cells)
        return f"  {label:>5}{body}{_GAP if tail else ''}{tail}".rstrip()

    def _trick_row(self, hand: _Hand, number: int, plays: dict[int, Card], leader: int, winner: int | None) -> str:
        cells = [self._card(plays[s], led=s == leader) if s in plays else "" for s in hand.seats]
        return self._row(str(number), cells, seat_label(winner) if winner is not None else "")

    # -- events --------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        """Take the next event of the match."""
        if isinstance(event, HandDealt):
            self._flush(unfinished=True)
            self.hand = _Hand(event.hand_number, event.dealer, event.seats, event.tiebreak, event.turned)
        elif isinstance(event, Declared):
            if self.hand is not None:
                self.hand.auction.append(event)
        elif isinstance(event, CardPlayed):
            if self.hand is not None:
                self.hand.current.append(event)
        elif isinstance(event, TrickWon):
            self._trick(event)
        elif isinstance(event, PenaltyAdded):
            if self.hand is not None:
                self.hand.extra.append(event)
        elif isinstance(event, HandEnded):
            self._hand_ended(event)
        elif isinstance(event, Forfeited):
            self._forfeited(event)
        elif isinstance(event, TiebreakStarted):
            self._tiebreak(event)
        elif isinstance(event, MatchEnded):
            self._flush(unfinished=True)
            self._match_ended()

    def _trick(self, event: TrickWon) -> None:
        hand = self.hand
        if hand is None:
            return
        # Play passes to the left among the seats of this hand, starting with the leader.
        start = hand.seats.index(event.leader)
        order = hand.seats[start:] + hand.seats[:start]
        plays = dict(zip(order, event.cards, strict=False))
        hand.rows.append(self._trick_row(hand, event.trick_number, plays, event.leader, event.winner))
        hand.tricks.append(event)
        hand.current.clear()
        penalties = [c for c in event.cards if self.rules.card_points[c.index]]
        if penalties:
            hand.taken.setdefault(event.winner, []).extend(penalties)

    def _header(self, hand: _Hand, ended: bool) -> None:
        """The hand's lines up to its scores: the deal, the auction, the tricks and what they took."""
        kind = (" (play-on)" if self.play_on else " (tie-break)") if hand.tiebreak else ""
        self.emit()
        self.emit(f"Hand {hand.number}{kind}, dealer {seat_label(hand.dealer)}")
        if hand.turned is not None:
            self.emit(f"trumps: {suit_name(hand.turned.suit, self.faces)} (turned card {self._named(hand.turned)})", indent=2)
        if any(d.contract is not Contract.PASS for d in hand.auction):
            said = [
                f"{seat_label(d.seat)} " + ("passes" if d.contract is Contract.PASS else f"declares {d.contract.value}")
                for d in hand.auction
            ]
            self.emit("auction: " + ", ".join(said), indent=2)
        if hand.rows or hand.current:
            self.lines.append(self._row("trick", [seat_label(s) for s in hand.seats], "won by"))
            self.lines.extend(hand.rows)
        if hand.current:
            plays = {p.seat: p.card for p in hand.current}
            self.lines.append(self._trick_row(hand, len(hand.tricks) + 1, plays, hand.current[0].seat, None))
        self._taken_lines(hand, ended)

    def _taken_lines(self, hand: _Hand, ended: bool) -> None:
        points = self.rules.card_points
        # Scored by place, nearly every card counts: the card points row of the hand says it shorter.
        if hand.taken and not self.by_place:
            parts = []
            for seat in hand.seats:
                cards = hand.taken.get(seat)
                if cards:
                    named = " ".join(self._named(c) for c in cards)
                    # Points against the taker: shown negative where higher is better.
                    parts.append(f"{seat_label(seat)} {named} ({self.rules.against * sum(points[c.index] for c in cards)})")
            self.emit("penalty cards: " + ", ".join(parts), indent=2)
        elif ended and self.rules.penalty_cards and not self.by_place:
            self.emit("penalty cards: none taken", indent=2)
        if hand.tricks:
            bonus = []
            if self.rules.first_trick_points:
                bonus.append(f"first trick {seat_label(hand.tricks[0].winner)} (+{self.rules.first_trick_points})")
            if self.rules.last_trick_points:
                bonus.append(f"last trick {seat_label(hand.tricks[-1].winner)} (+{self.rules.last_trick_points})")
            if bonus:
                self.emit(", ".join(bonus), indent=2)
        if hand.extra:
            # Extra points always count against the offender: taken off where higher is better.
            extra = [f"{seat_label(p.seat)} {self.rules.against * p.points:+d} ({p.reason})" for p in hand.extra]
            self.emit("extra points: " + ", ".join(extra), indent=2)

    def _flush(self, unfinished: bool) -> None:
        """Write out the hand in progress, if any (a forfeit or a cut record ends it early)."""
        hand = self.hand
        if hand is None:
            return
        self._header(hand, ended=False)
        if unfinished:
            self.emit("(the hand was not finished)", indent=2)
        self._notes(hand.number)
        self.hand = None

    def _notes(self, hand_number: int) -> None:
        for text, indent in note_lines(self.notes.get(hand_number, ())):
            self.emit(text, indent)

    def _contract_line(self, event: HandEnded) -> None:
        if event.declarer is None:
            return
        points = self.rules.contract_points
        against = self.rules.against
        declarer = seat_label(event.declarer)
        text = f"contract: {declarer} declared {event.contract.value} and "
        if event.contract_made:
            mine = against * self.rules.general_points if event.contract is Contract.GENERAL else 0
            text += f"made it: {declarer} scores {mine}, every other seat {against * points:+d}"
        else:
            text += f"failed: {against * points:+d} to {declarer}"
        self.emit(text, indent=2)

    def _parts(self, hand: _Hand, event: HandEnded) -> None:
        """The parts the hand's scores were made of (``HandEnded.result``), one row each, then any exception."""
        result = event.result
        if result is None:  # a sender that gave no parts: count the tricks from the events
            tricks = [sum(t.winner == s for t in hand.tricks) for s in range(max(hand.seats) + 1)]
            self.lines.append(self._row("", [f" {tricks[s]}" for s in hand.seats], "tricks"))
            return
        self.lines.append(self._row("", [f" {result.tricks[s]}" for s in hand.seats], "tricks"))
        if self.by_place and self.rules.penalty_cards:
            self.lines.append(self._row("", [f" {result.card_points[s]}" for s in hand.seats], "card points"))
        if self.rules.trick_points:
            self.lines.append(self._row("", [f"{result.trick_points[s]:+d}" for s in hand.seats], "trick points"))
        if self.by_place and any(result.first_last_points):
            self.lines.append(self._row("", [f" {result.first_last_points[s]}" for s in hand.seats], "first/last trick"))
        if self.by_place and any(result.fault_points):
            self.lines.append(self._row("", [f" {result.fault_points[s]}" for s in hand.seats], "fault points"))
        if result.exception is ScoreException.EVERY_TRICK:
            taker = next(s for s in hand.seats if result.tricks[s] == sum(result.tricks))
            mine, other = self.rules.every_trick_scores
            self.emit(f"{seat_label(taker)} took every trick: it scores {mine}, every other seat {other}", indent=2)
        elif result.exception is ScoreException.BIG_TAKE:
            taker = next(s for s in hand.seats if result.card_points[s] >= self.rules.big_take_points)
            mine, other = self.rules.big_take_scores
            self.emit(
                f"{seat_label(taker)} took {result.card_points[taker]} card points"
                f" ({self.rules.big_take_points} or more): it scores {mine}, every other seat {other}",
                indent=2,
            )
        elif self.by_place:
            self.emit(f"scored by place, fewest points first: {' '.join(map(str, self.rules.place_table(len(hand.seats))))}", indent=2)

    def _hand_ended(self, event: HandEnded) -> None:
        hand = self.hand
        if hand is None:
            return
        self._header(hand, ended=True)
        self._contract_line(event)
        self._parts(hand, event)
        self.lines.append(self._row("score", [f" {event.scores[s]}" for s in hand.seats]))
        if event.tiebreak:
            self.tiebreak_hands += 1
        if event.tiebreak and not self.play_on:
            best = self.rules.best(event.scores[s] for s in hand.seats)
            winners = [s for s in hand.seats if event.scores[s] == best]
            which = "lowest" if self.rules.direction is Direction.LOWER else "highest"
            self.emit(f"{which} score: {_seats_text(winners)} (tie-break hands leave the totals alone)", indent=2)
        else:
            self.regular_hands += 0 if event.tiebreak else 1
            self.totals = event.totals
            self.lines.append(self._row("total", [f" {event.totals[s]}" for s in hand.seats]))
        self._notes(hand.number)
        self.hand = None

    def _forfeited(self, event: Forfeited) -> None:
        abandoned = self.hand if event.hand_abandoned else None
        if abandoned is not None:
            self._flush(unfinished=False)
        text = f"{seat_label(event.seat)} forfeits ({event.reason})"
        if abandoned is not None:
            text += f"; hand {abandoned.number} is abandoned and scores nothing"
        self.emit()
        self.emit(text[0].upper() + text[1:] + ".")

    def _tiebreak(self, event: TiebreakStarted) -> None:
        self._flush(unfinished=True)
        self.emit()
        if self.play_on:
            tied = f"Tie for first place at {self.totals[event.seats[0]]}" if event.round == 1 else "Still tied"
            self.emit(f"{tied}: {_seats_text(event.seats)}. Play on: one more hand for all.")
        elif event.round == 1:
            total = self.totals[event.seats[0]]
            self.emit(f"Tie for first place at {total}: {_seats_text(event.seats)} play a tie-break hand.")
        else:
            self.emit(f"Still tied: {_seats_text(event.seats)} play tie-break hand {event.round}.")

    def finish(self) -> None:
        """No more events: show the hand in progress, if any."""
        self._flush(unfinished=True)

    def _match_ended(self) -> None:
        text = f"Match over after {self.regular_hands} hand{'s' if self.regular_hands != 1 else ''}"
        if self.tiebreak_hands:
            kind = "play-on" if self.play_on else "tie-break"
            text += f" and {self.tiebreak_hands} {kind} hand{'s' if self.tiebreak_hands != 1 else ''}"
        self.emit()
        self.emit(text + ".")


def render_events(events: Iterable[Event], rules: Ruleset, notes: Iterable[StepNote] = ()) -> list[str]:
    """The match as text lines, hand by hand (no trailing newlines; none wider than :data:`WIDTH`).

    ``events`` may stop anywhere (a record cut short): the hand in progress is shown as far as it went.
    ``notes`` (the bots' debug text and stderr) are shown after the hand of their step.
    """
    renderer = _Renderer(rules)
    for note in notes:
        renderer.notes.setdefault(note.hand, []).append(note)
    for event in events:
        renderer.feed(event)
    renderer.finish()
    return renderer.lines


def standings_table(
    places: Sequence[int], totals: Sequence[int], forfeited: Sequence[int] = (), direction: Direction = Direction.LOWER
) -> Table:
    """The final standings as a rich table: place, seat and total, best first (``1=`` is a shared place).

    Its caption says which totals are better (``direction``).
    """
    table = Table(caption=f"Totals: {direction_text(direction)}.", caption_justify="left")
    table.add_column("Place", justify="right")
    table.add_column("Seat")
    table.add_column("Total", justify="right")
    if forfeited:
        table.add_column("Note")
    shared = {p for p in places if list(places).count(p) > 1}
    for seat in sorted(range(len(places)), key=lambda s: (places[s], s)):
        place = f"{places[seat]}=" if places[seat] in shared else str(places[seat])
        row = [place, seat_label(seat), str(totals[seat])]
        if forfeited:
            row.append("forfeited" if seat in forfeited else "")
        table.add_row(*row)
    return table
