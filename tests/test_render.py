"""The text rendering of a match (``polignac_arena.render``), checked against the events it renders."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from polignac import Card, Contract, Match, Ruleset, preset
from polignac.events import Declared, HandEnded, TiebreakStarted
from polignac_arena.players import play_local, random_players
from polignac_arena.render import WIDTH, render_events, standings_table

TRICK_ROW = re.compile(r"^ {2,6}\d+  ")
CARD_TOKEN = re.compile(r"^>?([2-9TJQKA][SHDC])([*!]?)$")


def played(name: str, players: int, seed: int) -> tuple[Match, list[str]]:
    match = play_local(preset(name, players=players), seed, random_players(seed, players))
    return match, render_events(match.events, match.rules)


def rows(lines: list[str], label: str) -> list[list[int]]:
    """The numbers of every ``score`` or ``total`` row, in order."""
    return [[int(x) for x in line.split()[1:]] for line in lines if line.split()[:1] == [label]]


CASES = [("classic", 3, 1), ("classic", 4, 7), ("quatre-valets", 5, 2), ("ace-high", 6, 3), ("slobberhannes", 4, 4), ("no-contracts", 6, 5)]


@pytest.mark.parametrize(("name", "players", "seed"), CASES)
def test_lines_fit_and_scores_are_the_events(name: str, players: int, seed: int) -> None:
    match, lines = played(name, players, seed)
    assert all(len(line) <= WIDTH and line == line.rstrip() for line in lines)
    ended = [e for e in match.events if isinstance(e, HandEnded)]
    regular = [e for e in ended if not e.tiebreak]
    assert rows(lines, "total") == [list(e.totals) for e in regular]
    assert len(rows(lines, "score")) == len(ended)
    assert rows(lines, "score")[: len(regular)] == [list(e.scores) for e in regular]
    assert sum(1 for line in lines if line.startswith("Hand ")) == len(ended)


@pytest.mark.parametrize(("name", "players", "seed"), CASES)
def test_every_card_is_shown_once_per_hand_with_its_mark(name: str, players: int, seed: int) -> None:
    match, lines = played(name, players, seed)
    rules = match.rules
    seen: list[str] = []
    for line in lines:
        if line.startswith("Hand "):
            assert len(seen) == len(set(seen))
            seen = []
        if not TRICK_ROW.match(line):
            continue
        tokens = line.split()
        assert tokens[-2] == "seat"
        cards = tokens[1:-2]
        assert sum(t.startswith(">") for t in cards) == 1
        for token in cards:
            found = CARD_TOKEN.match(token)
            assert found, token
            card = Card.parse(found[1])
            seen.append(found[1])
            points = rules.card_points[card.index]
            expected = "!" if card == Card.parse("JS") and points else "*" if points else ""
            assert found[2] == expected, token
    assert seen and len(seen) == len(set(seen))


def test_penalty_cards_taken_add_up_to_the_points_of_a_hand() -> None:
    match, lines = played("no-contracts", 4, 9)
    taken = [line for line in lines if line.startswith("  penalty cards:")]
    assert len(taken) == sum(isinstance(e, HandEnded) for e in match.events)
    for line in taken:
        assert sum(int(n) for n in re.findall(r"\((\d+)\)", line)) == match.rules.points_per_hand
    assert "Polignac" in lines[0]


def test_auction_is_shown_only_when_someone_declared() -> None:
    match, lines = played("classic", 4, 7)
    declared = [e for e in match.events if isinstance(e, Declared) and e.contract is not Contract.PASS]
    assert declared
    assert sum(line.startswith("  auction:") for line in lines) == len(declared)
    assert sum(line.startswith("  contract:") for line in lines) == len(declared)
    assert not any("auction" in line for line in played("no-contracts", 4, 7)[1])


def test_tiebreak_hands() -> None:
    for seed in range(200):
        match, lines = played("classic", 4, seed)
        if any(isinstance(e, TiebreakStarted) for e in match.events):
            break
    else:  # pragma: no cover - random play ties for first far more often than this
        pytest.fail("no tie for first in 200 seeds")
    text = "\n".join(lines)
    assert "Tie for first place at" in text
    assert "(tie-break), dealer seat" in text
    assert "lowest score:" in text
    assert re.search(r"Match over after \d+ hands and \d+ tie-break hands?\.", text)


def test_penalty_forfeit_and_a_record_cut_short() -> None:
    match = Match(preset("classic", players=3), 5)
    for _ in range(3):
        match.apply(Contract.PASS)
    seats = random_players(5, 3)
    for _ in range(7):
        seat = match.to_act
        assert seat is not None
        match.apply(seats[seat].decide(match.view(seat)))
    cut = render_events(match.events, match.rules)
    assert cut[-1] == "  (the hand was not finished)"
    (third,) = [line for line in cut if re.match(r"^ +3  ", line)]
    assert len(third.split()) == 2  # the unfinished trick: its number and the one card led
    match.add_penalty(1, 5, "revoke")
    match.forfeit(2, "timeout")
    text = "\n".join(render_events(match.events, match.rules))
    assert "extra points: seat 1 +5 (revoke)" in text
    assert "Seat 2 forfeits (timeout); hand 1 is abandoned and scores nothing." in text


def test_standings_table_shows_shared_places() -> None:
    out = io.StringIO()
    Console(file=out, width=80).print(standings_table((1, 1, 3), (4, 4, 9), forfeited=(2,)))
    text = out.getvalue()
    assert text.count("1=") == 2
    assert "forfeited" in text


def test_rulesets_without_the_polignac_have_no_polignac_mark() -> None:
    rules = Ruleset(penalty_cards=((Card.parse("QC"), 3),))
    match = play_local(rules, 1, random_players(1, 4))
    lines = render_events(match.events, rules)
    assert "!" not in "\n".join(lines)
    assert "QC*" in "\n".join(lines)
