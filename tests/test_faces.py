"""Card faces (``polignac.faces``) and where people read them: the text renderings and ``polignac rules``.

German-suited games (``faces = "german"``) name their cards in German for people while the
wire keeps the French text; renderings also show the turned trump card, the parts of a
hand's score and which way the totals go.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from polignac import (
    CARDS,
    Card,
    CardParseError,
    Faces,
    Match,
    Rank,
    Suit,
    card_name,
    card_text,
    parse_cards,
    parse_face,
    preset,
    rank_name,
    suit_name,
)
from polignac.events import HandDealt, HandEnded, TrickWon
from polignac.faces import legend
from polignac_arena.cli import app
from polignac_arena.players import play_local, random_players
from polignac_arena.render import WIDTH, render_events, standings_table
from polignac_arena.replay import replay_lines

PIQUET = [c for c in CARDS if c.rank.in_piquet]
TRICK_ROW = re.compile(r"^ {2,6}\d+  ")
GERMAN_CELL = re.compile(r"^>?([EGHS](?:D|K|O|U|10|9|8|7))([*]?)$")


def played(name: str, players: int, seed: int) -> tuple[Match, list[str]]:
    match = play_local(preset(name, players=players), seed, random_players(seed, players))
    return match, render_events(match.events, match.rules)


def trick_cells(lines: list[str]) -> list[list[str]]:
    """The card cells of every trick row (the number and the winner left out)."""
    return [line.split()[1:-2] for line in lines if TRICK_ROW.match(line)]


def tail_row(lines: list[str], label: str) -> list[list[int]]:
    """The numbers of every part row whose description (at the end) is ``label``."""
    return [[int(x) for x in line.split()[: -len(label.split())]] for line in lines if line.endswith("  " + label)]


# -- the names -------------------------------------------------------------------------------


def test_german_names_of_the_cards_the_issue_names() -> None:
    assert card_name(Card.parse("QC"), Faces.GERMAN) == "Eichel-Ober"
    assert card_name(Card.parse("JS"), Faces.GERMAN) == "Gras-Unter"
    assert card_name(Card.parse("AD"), Faces.GERMAN) == "Schellen-Daus"
    assert card_name(Card.parse("KH"), Faces.GERMAN) == "Herz-König"
    assert card_name(Card.parse("TH"), Faces.GERMAN) == "Herz-10"
    assert [card_text(Card.parse(t), Faces.GERMAN) for t in ("QC", "JS", "AD", "TH", "7C")] == ["EO", "GU", "SD", "H10", "E7"]
    assert [suit_name(s, Faces.GERMAN) for s in Suit] == ["Gras", "Herz", "Schellen", "Eichel"]
    ranks = (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK, Rank.TEN)
    assert [rank_name(r, Faces.GERMAN) for r in ranks] == ["Daus", "König", "Ober", "Unter", "10"]


def test_french_faces_keep_the_wire_text() -> None:
    assert [card_text(c) for c in CARDS] == [str(c) for c in CARDS]
    assert card_name(Card.parse("JS")) == "jack of spades"
    assert card_name(Card.parse("2C")) == "2 of clubs"
    assert suit_name(Suit.DIAMONDS) == "diamonds"
    assert legend(Faces.FRENCH) is None


@pytest.mark.parametrize("faces", list(Faces))
def test_names_and_short_text_are_one_to_one_and_read_back(faces: Faces) -> None:
    cards = PIQUET if faces is Faces.GERMAN else list(CARDS)
    names = {card_name(c, faces) for c in cards}
    short = {card_text(c, faces) for c in cards}
    assert len(names) == len(short) == len(cards)
    assert all(len(text) <= 3 for text in short)
    for card in cards:
        assert parse_face(card_name(card, faces), faces) is card
        assert parse_face(card_text(card, faces).lower(), faces) is card
        assert parse_face(str(card), faces) is card  # the French text is always understood


def test_german_short_text_never_reads_as_a_french_card() -> None:
    for card in PIQUET:
        with pytest.raises(CardParseError):
            Card.parse(card_text(card, Faces.GERMAN))


def test_parse_face_errors_quote_the_text() -> None:
    assert parse_face("Schellen-Koenig", Faces.GERMAN) is Card.parse("KD")
    with pytest.raises(CardParseError, match="'Eichel-Zwerg'"):
        parse_face("Eichel-Zwerg", Faces.GERMAN)
    with pytest.raises(CardParseError, match="'Eichel-Ober'"):
        parse_face("Eichel-Ober", Faces.FRENCH)


# -- text renderings -------------------------------------------------------------------------


GERMAN_GAMES = [("eichel-obern", 4, 3, "QC"), ("gras-obern", 5, 4, "QS"), ("eichel-obern", 6, 8, "QC")]


@pytest.mark.parametrize(("name", "players", "seed", "ober"), GERMAN_GAMES)
def test_german_games_render_german_cards(name: str, players: int, seed: int, ober: str) -> None:
    match, lines = played(name, players, seed)
    text = "\n".join(lines)
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[1].startswith("German cards, suit then rank: E Eichel, G Gras, H Herz, S Schellen; D Daus")
    # every trick row shows the German short text of the cards the engine says were played
    tricks = [e for e in match.events if isinstance(e, TrickWon)]
    rows = trick_cells(lines)
    assert len(rows) == len(tricks)
    for cells, trick in zip(rows, tricks, strict=True):
        found = [GERMAN_CELL.match(cell) for cell in cells]
        assert all(found), cells
        shown = [parse_face(m[1], Faces.GERMAN) for m in found if m]
        assert sorted(shown) == sorted(trick.cards)
        assert [m[2] == "*" for m in found if m] == [str(c) == ober for c in sorted(trick.cards, key=shown.index)]
    # the penalty card is named in full where the text says who took it; no French text is left
    ober_name = card_name(Card.parse(ober), Faces.GERMAN)
    taken = [line for line in lines if line.startswith("  penalty cards:")]
    assert taken and all(ober_name in line for line in taken if "none taken" not in line)
    assert sum(ober_name in line for line in taken) == sum(isinstance(e, HandEnded) for e in match.events)
    assert "GU" in text and "SD" in text
    assert not re.search(r"\b[2-9TJQKA][SHDC]\b", text)
    assert "Polignac" not in text and "!" not in text


def test_french_games_render_french_cards() -> None:
    _, lines = played("classic", 4, 7)
    text = "\n".join(lines)
    assert "German" not in text and "Eichel" not in text
    assert all(re.fullmatch(r">?[2-9TJQKA][SHDC][*!]?", cell) for row in trick_cells(lines) for cell in row)


def test_knaves_renders_the_turned_card_trumps_and_score_parts() -> None:
    match, lines = played("knaves", 3, 3)
    text = "\n".join(lines)
    dealt = [e for e in match.events if isinstance(e, HandDealt)]
    ended = [e for e in match.events if isinstance(e, HandEnded)]
    turned = [line.strip() for line in lines if line.startswith("  trumps: ")]
    assert turned == [f"trumps: {suit_name(e.turned.suit)} (turned card {e.turned})" for e in dealt if e.turned is not None]
    assert len(turned) == len(dealt)
    results = [e.result for e in ended if e.result is not None]
    assert len(results) == len(ended)
    assert tail_row(lines, "tricks") == [list(r.tricks) for r in results]
    assert tail_row(lines, "trick points") == [list(r.trick_points) for r in results]
    assert [sum(row) for row in tail_row(lines, "tricks")] == [17] * len(ended)
    assert "Polignac" not in text and "!" not in text  # the Jack of spades is one Jack among four here
    assert all(len(line) <= WIDTH for line in lines)


def test_knaves_play_on_hands_count_toward_the_totals() -> None:
    match, lines = played("knaves", 3, 15)
    ended = [e for e in match.events if isinstance(e, HandEnded)]
    play_on = [e for e in ended if e.tiebreak]
    assert play_on  # seed 15 ends in a tie for first
    text = "\n".join(lines)
    assert "Tie for first place at 20: seat 1 and seat 2. Play on: one more hand for all." in text
    assert f"Hand {play_on[0].hand_number} (play-on), dealer seat" in text
    totals = [[int(x) for x in line.split()[1:]] for line in lines if line.startswith("  total ")]
    assert totals == [list(e.totals) for e in ended]  # a play-on hand's scores count
    assert re.search(rf"Match over after {len(ended) - len(play_on)} hands and {len(play_on)} play-on hands?\.$", text)


def test_standings_say_which_way_is_better() -> None:
    match, _ = played("knaves", 3, 3)
    assert match.places is not None
    out = io.StringIO()
    Console(file=out, width=80).print(standings_table(match.places, match.totals, (), match.rules.direction))
    assert "higher is better" in out.getvalue()
    out = io.StringIO()
    Console(file=out, width=80).print(standings_table((1, 2, 3), (0, 4, 9)))
    assert "lower is better" in out.getvalue()


def _hand_of(deal: list[str]) -> tuple[Match, list[str]]:
    """Bassadewitz hand 1 with a fixed deal, every seat playing the fallback card."""
    match = Match(preset("bassadewitz"), 1, deals={1: [parse_cards(h) for h in deal]})
    while not any(isinstance(e, HandEnded) for e in match.events):
        match.apply(match.fallback())
    return match, render_events(match.events, match.rules)


def test_bassadewitz_renders_card_points_places_and_the_exceptions() -> None:
    # seat 0 leads and holds every spade, which nobody else can follow: it takes every trick
    every = ["AS KS QS JS TS 9S 8S 7S", "AH KH QH JH TH 9H 8H 7H", "AD KD QD JD TD 9D 8D 7D", "AC KC QC JC TC 9C 8C 7C"]
    match, lines = _hand_of(every)
    assert "  seat 0 took every trick: it scores 0, every other seat 5" in lines
    assert tail_row(lines, "card points") == [[120, 0, 0, 0]]
    # the aces and tens: 100 card points or more without the last trick
    big = ["AS AH AD AC TS TH TD 7C", "KS QS JS 9S KH QH JH 9H", "8S 7S 8H 7H KD QD JD 9D", "8D 7D KC QC JC TC 9C 8C"]
    match, lines = _hand_of(big)
    (result,) = [e.result for e in match.events if isinstance(e, HandEnded)]
    assert result is not None and result.tricks[0] == 7
    assert f"  seat 0 took {result.card_points[0]} card points (100 or more): it scores 8, every other seat 0" in lines
    assert "Polignac" not in "\n".join(lines)
    # an ordinary hand says it is scored by place
    match, lines = played("bassadewitz", 4, 2)
    ended = [e for e in match.events if isinstance(e, HandEnded)]
    assert tail_row(lines, "card points") == [list(e.result.card_points) for e in ended if e.result is not None]
    assert "  scored by place, fewest points first: 0 1 2 5" in lines


def test_replay_show_names_german_cards_and_the_standings() -> None:
    match, _ = played("eichel-obern", 4, 3)
    record: list[dict[str, Any]] = [
        {"type": "header", "rules": match.rules.to_dict(), "seed": match.seed, "seats": [{"name": f"bot{i}"} for i in range(4)]},
        *({"type": "action", "action": action} for action in match.actions),
        {"type": "result", "status": "finished", "places": list(match.places or ()), "totals": list(match.totals)},
    ]
    replay = replay_lines(record)
    assert replay.divergence is None
    lines = replay.render()
    assert any("Eichel-Ober" in line for line in lines)
    (standings,) = [line for line in lines if line.startswith("Standings (lower is better): ")]
    best = min(range(4), key=lambda s: (match.places or ())[s])
    assert f"1 seat {best} ({match.totals[best]})" in standings or f"1= seat {best}" in standings


# -- polignac rules --------------------------------------------------------------------------


def test_rules_of_a_german_game_show_the_card_names() -> None:
    result = CliRunner().invoke(app, ["rules", "eichel-obern"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert re.search(r"\bfaces\W+german\b", out)
    assert re.search(r"\bpenalty_cards\W+QC=1 \(Eichel-Ober\)", out)
    pairs = [("Eichel (E)", "clubs (C)"), ("Gras (G)", "spades (S)"), ("Herz (H)", "hearts (H)"), ("Schellen (S)", "diamonds (D)")]
    pairs += [("Daus (D)", "ace (A)"), ("König (K)", "king (K)"), ("Ober (O)", "queen (Q)"), ("Unter (U)", "jack (J)")]
    for german, french in pairs:
        assert re.search(rf"{re.escape(german)}\W+{re.escape(french)}", out)
    assert "the Eichel-Ober is EO, QC on the wire" in out
    assert all(len(line.rstrip()) <= WIDTH for line in out.splitlines())
    assert out.strip().splitlines()[-1] == "The rules of eichel-obern: docs/rules.md (section 11; settings: section 12)."


@pytest.mark.parametrize("name", ["gras-obern", "bassadewitz", "knaves", "classic"])
def test_rules_of_each_new_preset_name_their_section(name: str) -> None:
    result = CliRunner().invoke(app, ["rules", name])
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    section = 10 if name == "classic" else 11
    assert last == f"The rules of {name}: docs/rules.md (section {section}; settings: section 12)."
    assert ("Card names" in result.stdout) == (name == "gras-obern")
    assert all(len(line.rstrip()) <= WIDTH for line in result.stdout.splitlines())
