"""The golden playthroughs of the family of the seeds (docs/rules.md 11) show what a reader needs.

tests/test_golden.py diffs every case against its file; this checks that the files of the new
games show the turned card of every hand (Knaves) and the parts of place and trick scores.
"""

from __future__ import annotations

import re

from polignac import Match
from polignac.events import HandDealt, HandEnded
from tests.test_golden import CASES, golden

FAMILY = ("knaves", "bassadewitz", "eichel-obern", "gras-obern")


def test_every_game_of_the_family_has_a_golden_playthrough() -> None:
    names = {case.rules.name for case in CASES.values()}
    assert set(FAMILY) <= names
    assert any(case.rules.name == "bassadewitz" and golden._tiebreak_decided_by_play(golden.play_case(case)) for case in CASES.values())


def test_the_turned_card_is_shown_after_every_deal_where_there_is_one() -> None:
    for name, case in CASES.items():
        text = golden.golden_path(case).read_text(encoding="utf-8")
        events, record = golden.split_golden(text)
        deals = [e for e in Match.from_record(record).events if isinstance(e, HandDealt)]
        lines = events.splitlines()
        shown = [line for line in lines if line.startswith("  turned ")]
        if case.rules.trumps.value == "turned":
            assert shown == [f"  turned   {d.turned}: {d.turned.suit.name.lower()} are trumps" for d in deals if d.turned is not None]
            assert len(shown) == len(deals), f"{name}: a hand without its turned card"
            # Right after the last deal line of its hand.
            for i, line in enumerate(lines):
                if line.startswith("  turned "):
                    assert lines[i - 1].startswith("  deal ") and not lines[i + 1].startswith("  deal ")
        else:
            assert not shown, f"{name} turns no card"


def test_place_and_trick_scores_show_their_parts() -> None:
    for name, case in CASES.items():
        text = golden.golden_path(case).read_text(encoding="utf-8")
        events, record = golden.split_golden(text)
        ended = [e for e in Match.from_record(record).events if isinstance(e, HandEnded)]
        tricks = re.findall(r"^    tricks  (.*)$", events, flags=re.MULTILINE)
        if case.rules.name in ("knaves", "bassadewitz"):
            assert len(tricks) == len(ended), name
            assert ("exception: big take" in events) == any(e.result and e.result.exception.value == "big_take" for e in ended)
        else:
            assert not tricks and "    points  " not in events, f"{name}: the penalty games' files keep their old form"
