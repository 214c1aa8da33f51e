#!/usr/bin/env python3
"""Regenerate the golden playthroughs in tests/golden/ (OpenSpiel style).

Each case plays one whole match with a fixed decision policy, renders every event as
text and appends the match record as JSON.  ``tests/test_golden.py`` plays each case
again in memory and diffs it against its file, so any change in what the engine deals,
allows, scores or records shows up as a readable diff.  When such a change is intended:

    python scripts/regen_golden.py            # rewrite every file
    python scripts/regen_golden.py --check    # only report which files differ (exit 1)
    python scripts/regen_golden.py --find-tiebreak classic 4 --start 0
                                              # first seed whose match reaches a tie-break

The policy does not use Python's ``random`` (whose algorithms may change between
versions) but a 64-bit linear congruential generator written out here (Knuth's MMIX
constants), started from the case's seed.  Each draw is the top 31 bits of the next
state.  In play the seat takes option ``draw % len(options)`` of
``Match.legal_decisions()``; in the auction it declares option ``draw % 12`` when that
is a valid index other than 0 (pass), else passes, so most hands are played without a
contract.  A case may force some decisions (``forced``) and deal hand 1 itself (``deals``).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polignac import ENGINE_VERSION, Match, Phase, Ruleset, parse_cards, parse_decision, preset
from polignac.deal import GENERATOR
from polignac.events import (
    CardPlayed,
    Declared,
    Event,
    Forfeited,
    HandDealt,
    HandEnded,
    MatchEnded,
    PenaltyAdded,
    TiebreakStarted,
    TrickWon,
)

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "tests" / "golden"
POLICY = (
    "state = (state * 6364136223846793005 + 1442695040888963407) mod 2**64 from state = seed, draw = state >> 33;"
    " play option draw % len(options); in the auction option draw % 12 if a valid index, else pass"
)
RECORD_MARK = "== record =="


@dataclass(frozen=True)
class RefereeCall:
    """A referee call made just before decision number ``step``: a penalty or a forfeit."""

    step: int
    kind: str  # "penalty" or "forfeit"
    seat: int
    points: int = 0
    reason: str = "revoke"


@dataclass(frozen=True)
class Case:
    """One golden playthrough: a ruleset, a seed, and optionally some referee calls."""

    name: str
    rules: Ruleset
    seed: int
    about: str
    calls: tuple[RefereeCall, ...] = ()
    forced: tuple[tuple[int, str], ...] = ()
    """(step, decision text) pairs played instead of the policy's choice."""
    deals: tuple[tuple[str, ...], ...] | None = None
    """Hand 1 dealt by hand: each seat's cards as text, in seat order."""
    expect: Callable[[Match], bool] = field(default=lambda match: True, compare=False)
    """What the case is there to exercise; test_golden.py checks it still does."""


def _has(kind: type) -> Callable[[Match], bool]:
    return lambda match: any(isinstance(e, kind) for e in match.events)


def _general_declared(match: Match) -> bool:
    return any(isinstance(e, Declared) and e.contract.value == "general" for e in match.events)


def _tiebreak_decided_by_play(match: Match) -> bool:
    return any(isinstance(e, HandEnded) and e.tiebreak for e in match.events)


def _exception_scored(kind: str) -> Callable[[Match], bool]:
    return lambda match: any(r.exception.value == kind for r in match.hand_results)


def _contract_declared(match: Match) -> bool:
    return any(isinstance(e, Declared) and e.contract.value != "pass" for e in match.events)


CASES: tuple[Case, ...] = (
    Case("classic-4p-seed1", preset("classic"), 1, "the classic game, four players, all 32 cards"),
    Case("classic-3p-seed2", preset("classic", players=3), 2, "three players: black sevens out, 10 cards each"),
    Case(
        "classic-5p-red-sevens-seed3",
        preset("classic", players=5, removed_sevens="red"),
        3,
        "five players with the red sevens out, 6 cards each",
    ),
    Case("ace-high-6p-seed4", preset("ace-high", players=6), 4, "six players, ace-high order, the Queens score"),
    Case(
        "slobberhannes-4p-seed5",
        preset("slobberhannes"),
        5,
        "first trick, last trick and QC score; a two-player tie-break with 15 cards each",
        expect=_tiebreak_decided_by_play,
    ),
    Case(
        "classic-general-4p-seed6",
        preset("classic", general=True),
        6,
        "capot and general both on",
        expect=_general_declared,
    ),
    Case(
        "classic-tiebreak-4p-seed1243",
        preset("classic"),
        1243,
        "three tied for first; a second tie-break round between two (found with --find-tiebreak classic 4 --tied 3 --rounds 2)",
        expect=lambda m: sum(isinstance(e, TiebreakStarted) for e in m.events) >= 2,
    ),
    Case(
        "classic-general-made-4p-seed10",
        preset("classic", general=True, limit=10),
        10,
        "seat 0 is dealt every King and Queen, declares general and makes it",
        forced=((0, "general"),),
        deals=(
            ("KS", "QS", "KH", "QH", "KD", "QD", "KC", "QC"),
            ("TS", "AS", "TH", "AH", "7D", "JD", "AD", "JC"),
            ("9S", "JS", "8H", "9H", "JH", "8C", "9C", "TC"),
            ("7S", "8S", "7H", "8D", "9D", "TD", "7C", "AC"),
        ),
        expect=lambda m: any(isinstance(e, HandEnded) and e.contract_made for e in m.events),
    ),
    Case(
        "no-contracts-referee-5p-seed9",
        preset("no-contracts", players=5),
        9,
        "the referee adds a revoke and a timeout, then seat 2 forfeits in the middle of hand 3",
        calls=(
            RefereeCall(5, "penalty", 1, 5, "revoke"),
            RefereeCall(40, "penalty", 3, 0, "timeout"),
            RefereeCall(70, "forfeit", 2, reason="crashed"),
        ),
        expect=_has(Forfeited),
    ),
    Case(
        "no-contracts-tiebreak-forfeit-4p-seed8",
        preset("no-contracts", limit=10),
        8,
        "a revoke takes seat 1 to the limit in hand 1; a three-way tie-break with a timeout in it,"
        " a second round, and a forfeit inside that round",
        calls=(
            RefereeCall(5, "penalty", 1, 5, "revoke"),
            RefereeCall(40, "penalty", 3, 0, "timeout"),
            RefereeCall(75, "forfeit", 2, reason="crashed"),
        ),
        expect=lambda m: (
            any(isinstance(e, Forfeited) and m.is_over and e.hand_abandoned for e in m.events)
            and any(isinstance(e, TiebreakStarted) and e.round == 2 for e in m.events)
        ),
    ),
    # The family of the seeds (docs/rules.md 11).
    Case(
        "knaves-3p-seed11",
        preset("knaves"),
        11,
        "Knaves: 17 cards each, one at a time, the 52nd turned for trumps; a point a trick, Jacks against, higher is better",
        expect=lambda m: m.is_over and not m.is_tiebreak and m.places == (2, 3, 1),
    ),
    Case(
        "knaves-playon-3p-seed18",
        preset("knaves"),
        18,
        "two tied for first at the limit play on with all, scores counting, twice, until one is alone on top"
        " (found with --find-tiebreak knaves 3 --rounds 2)",
        expect=lambda m: sum(isinstance(e, TiebreakStarted) for e in m.events) >= 2 and m.places is not None and m.places.count(1) == 1,
    ),
    Case(
        "bassadewitz-4p-seed12",
        preset("bassadewitz"),
        12,
        "card points, scores by place 0 1 2 5; a hand of 100 card points or more; a two-player tie-break hand"
        " (found with --find-tiebreak bassadewitz 4)",
        expect=lambda m: _tiebreak_decided_by_play(m) and _exception_scored("big_take")(m),
    ),
    Case(
        "eichel-obern-4p-seed13",
        preset("eichel-obern"),
        13,
        "German-suited Slobberhannes: the Eichel-Ober (QC), the first and the last trick score; capots declared",
        expect=_contract_declared,
    ),
    Case(
        "gras-obern-4p-seed14",
        preset("gras-obern"),
        14,
        "German-suited Slobberhannes: the Gras-Ober (QS), the first and the last trick score; capots declared",
        expect=_contract_declared,
    ),
)


# -- playing ---------------------------------------------------------------------------------


class Lcg:
    """A 64-bit linear congruential generator: the same numbers in every Python version."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def draw(self) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return self.state >> 33


def policy_decision(match: Match, lcg: Lcg) -> Any:
    """The golden policy: one draw per decision."""
    options = match.legal_decisions()
    if match.phase is Phase.AUCTION:
        k = lcg.draw() % 12
        return options[k] if k < len(options) else options[0]
    return options[lcg.draw() % len(options)]


def play_case(case: Case) -> Match:
    """Play ``case`` to the end with the golden policy, its forced decisions and its referee calls."""
    deals = None if case.deals is None else {1: [parse_cards(" ".join(hand)) for hand in case.deals]}
    match = Match(case.rules, case.seed, deals=deals)
    calls = sorted(case.calls, key=lambda c: c.step)
    forced = dict(case.forced)
    lcg = Lcg(case.seed)
    step = 0
    while not match.is_over:
        while calls and calls[0].step == step and not match.is_over:
            call = calls.pop(0)
            if call.kind == "penalty":
                match.add_penalty(call.seat, call.points, call.reason)
            else:
                match.forfeit(call.seat, call.reason)
        if match.is_over:
            break
        if step in forced:
            match.apply(parse_decision(forced[step]))
        else:
            match.apply(policy_decision(match, lcg))
        step += 1
    return match


# -- rendering -------------------------------------------------------------------------------


def _cards(cards: tuple[Any, ...]) -> str:
    return " ".join(str(c) for c in cards)


def _by_seat(values: tuple[int, ...]) -> str:
    return "  ".join(f"{seat}:{value:>3}" for seat, value in enumerate(values))


def _shows_parts(rules: Ruleset | None) -> bool:
    """Whether a hand's end shows its tricks and card points: where the score is not just the points taken."""
    return rules is not None and (rules.hand_score.value != "points" or rules.trick_points != 0)


def render_event(event: Event, rules: Ruleset | None = None) -> list[str]:
    """The text lines of one event (a trick's seats are those of the play lines above it).

    With ``rules`` whose hand score is not just the points taken (Knaves' tricks, Bassadewitz's
    places), a hand's end also shows each seat's tricks and card points, and any exception.
    """
    if isinstance(event, HandDealt):
        kind = "tie-break hand" if event.tiebreak else "hand"
        lines = [f"{kind} {event.hand_number}: dealer {event.dealer}, seats {' '.join(map(str, event.seats))}"]
        lines += [f"  deal     seat {seat}: {_cards(hand)}" for seat, hand in zip(event.seats, event.hands, strict=True)]
        if event.turned is not None:
            lines.append(f"  turned   {event.turned}: {event.turned.suit.name.lower()} are trumps")
        return lines
    if isinstance(event, Declared):
        return [f"  declare  seat {event.seat}: {event.contract.value}"]
    if isinstance(event, CardPlayed):
        return [f"  play     seat {event.seat}: {event.card}"]
    if isinstance(event, TrickWon):
        return [f"  trick {event.trick_number:>2} led by seat {event.leader}, won by seat {event.winner}: {_cards(event.cards)}"]
    if isinstance(event, PenaltyAdded):
        return [f"  penalty  seat {event.seat}: +{event.points} ({event.reason})"]
    if isinstance(event, HandEnded):
        if event.declarer is None:
            contract = "no contract"
        else:
            contract = f"{event.contract.value} by seat {event.declarer} {'made' if event.contract_made else 'failed'}"
        kind = "tie-break hand" if event.tiebreak else "hand"
        lines = [f"  end of {kind} {event.hand_number}: {contract}"]
        if _shows_parts(rules) and event.result is not None:
            lines.append(f"    tricks  {_by_seat(event.result.tricks)}")
            lines.append(f"    points  {_by_seat(event.result.card_points)}")
            if event.result.exception.value:
                lines.append(f"    exception: {event.result.exception.value.replace('_', ' ')}")
        return [*lines, f"    scores  {_by_seat(event.scores)}", f"    totals  {_by_seat(event.totals)}"]
    if isinstance(event, Forfeited):
        abandoned = ", the hand is abandoned" if event.hand_abandoned else ""
        return [f"forfeit: seat {event.seat} ({event.reason}){abandoned}"]
    if isinstance(event, TiebreakStarted):
        return [f"tie-break round {event.round}: seats {' '.join(map(str, event.seats))}"]
    if isinstance(event, MatchEnded):
        return ["match over", f"  places  {_by_seat(event.places)}", f"  totals  {_by_seat(event.totals)}"]
    raise TypeError(f"no rendering for event {event!r}")  # a new event type needs a line here


def render_record(record: dict[str, Any]) -> str:
    """The record as JSON: one key a line, the actions sixteen to a line (still valid JSON)."""
    lines = ["{"]
    keys = list(record)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        if key == "actions":
            actions = [json.dumps(a, ensure_ascii=False) for a in record[key]]
            rows = [", ".join(actions[k : k + 16]) for k in range(0, len(actions), 16)]
            lines.append('  "actions": [')
            lines += [f"    {row}{',' if k < len(rows) - 1 else ''}" for k, row in enumerate(rows)]
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(record[key], ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_match(match: Match) -> str:
    """Every event of ``match`` as text, then its record: the body of a golden file."""
    lines: list[str] = []
    for event in match.events:
        if isinstance(event, HandDealt | TiebreakStarted) and lines:
            lines.append("")
        lines += render_event(event, match.rules)
    return "\n".join(lines) + f"\n\n{RECORD_MARK}\n" + render_record(match.record())


def render_header(case: Case) -> str:
    rules = ", ".join(f"{key}={value}" for key, value in case.rules.describe())
    lines = [
        f"# golden playthrough {case.name}: {case.about}",
        "# regenerate with: python scripts/regen_golden.py",
        f"# engine {ENGINE_VERSION}, deal generator {GENERATOR}",
        f"# rules: {rules}",
        f"# seed: {case.seed}",
        f"# policy: {POLICY}",
    ]
    for call in case.calls:
        what = f"forfeit by seat {call.seat}" if call.kind == "forfeit" else f"penalty +{call.points} to seat {call.seat}"
        lines.append(f"# referee: before decision {call.step}, {what} ({call.reason})")
    for step, decision in case.forced:
        lines.append(f"# forced: decision {step} is {decision}")
    if case.deals is not None:
        lines.append("# hand 1 is dealt by hand (see the record's deals)")
    return "\n".join(lines) + "\n\n"


def render_case(case: Case) -> str:
    """The whole golden file of ``case``."""
    return render_header(case) + render_match(play_case(case))


def split_golden(text: str) -> tuple[str, dict[str, Any]]:
    """A golden file's event text (header removed) and its parsed record."""
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#")).lstrip("\n")
    events, _, record = body.partition(f"{RECORD_MARK}\n")
    return events, json.loads(record)


def golden_path(case: Case) -> Path:
    return GOLDEN_DIR / f"{case.name}.txt"


# -- command line ----------------------------------------------------------------------------


def find_tiebreak_seed(rules: Ruleset, start: int, tied: int = 2, rounds: int = 1, tries: int = 100_000) -> int | None:
    """The first seed from ``start`` whose golden-policy match has ``tied`` players in ``rounds`` tie-break hands."""
    for seed in range(start, start + tries):
        starts = [e for e in play_case(Case("search", rules, seed, "")).events if isinstance(e, TiebreakStarted)]
        if starts and len(starts[0].seats) >= tied and len(starts) >= rounds:
            return seed
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report files that differ instead of writing them")
    parser.add_argument("--find-tiebreak", nargs=2, metavar=("PRESET", "PLAYERS"), help="search a seed reaching a tie-break")
    parser.add_argument("--start", type=int, default=0, help="first seed to try with --find-tiebreak")
    parser.add_argument("--tied", type=int, default=2, help="with --find-tiebreak: at least this many tied for first")
    parser.add_argument("--rounds", type=int, default=1, help="with --find-tiebreak: at least this many tie-break hands")
    args = parser.parse_args(argv)
    if args.find_tiebreak:
        name, players = args.find_tiebreak
        seed = find_tiebreak_seed(preset(name, players=int(players)), args.start, args.tied, args.rounds)
        print(seed if seed is not None else "no seed found")
        return 0 if seed is not None else 1
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    differ = 0
    for case in CASES:
        if not case.expect(play_case(case)):
            print(f"{case.name}: no longer exercises what it is for ({case.about}); pick another seed", file=sys.stderr)
            differ += 1
        text = render_case(case)
        path = golden_path(case)
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            continue
        differ += 1
        if args.check:
            diff = difflib.unified_diff(old.splitlines(), text.splitlines(), str(path), "regenerated", lineterm="", n=1)
            print("\n".join(list(diff)[:40]))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(GOLDEN_DIR.parent.parent)}")
    stale = {p.name for p in GOLDEN_DIR.glob("*.txt")} - {golden_path(c).name for c in CASES}
    for name in sorted(stale):
        print(f"tests/golden/{name} belongs to no case; delete it", file=sys.stderr)
    return 1 if args.check and (differ or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
