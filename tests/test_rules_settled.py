"""The four rules points docs/rules.md settles beyond the seeds, each from the engine out to the wire.

1. A tie-break hand abandoned by a forfeit counts toward ``tiebreak_hands`` (rules 7 and 8),
   shown by the rules' own example played as a whole match.
2. Knaves and Bassadewitz have no contracts: a ruleset of either with capot or general on is refused.
3. A made general scores ``general_points``, a setting of its own (rules 4), carried on the wire.
4. Card text is strict on the wire and through the stdio bridge, lenient for people (rules 1).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from polignac import Card, Contract, IllegalDecision, Match, Phase, Ruleset, RulesetError, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.events import Forfeited, HandEnded, TiebreakStarted
from polignac.faults import Fault, fallback, rule_on_fault
from polignac.wire import PROTOCOL_VERSION, ruleset_from_pb, ruleset_to_pb
from polignac_arena.referee.versions import SPOKEN, refusal
from polignac_arena.store import ConflictError, Store
from polignac_arena.tournament.config import ConfigError, load_config
from polignac_arena.tournament.runner import config_record
from tests.referee.helpers import match_with_raw_seat, referee, run
from tests.referee.test_faults import first_card_request, seat_faults
from tests.test_stdio import play, stdio_bot

ROOT = Path(__file__).resolve().parents[1]

# -- 1. a tie-break hand abandoned by a forfeit counts ------------------------------------------------

# Hand 1 (seat 3 deals, seat 0 leads): seat 0 holds the Jacks and Kings; each other seat two cards
# of every suit, the Queen never alone.  Seat 0 leads its Jacks, the others follow with their
# lowest card: seat 0 takes all five penalty points, then wins the rest with its Kings.
HAND_1 = [
    "JS JH JD JC KS KH KD KC",
    "QS 7S QH 7H QD 7D QC 7C",
    "AS 8S AH 8H AD 8D AC 8C",
    "TS 9S TH 9H TD 9D TC 9C",
]
# Hand 2 (seat 0 deals, seat 1 leads 7S): seat 2's only spade is the Queen, so seat 0's King takes
# the first trick; then seat 0 leads its Jacks and no Queen is left to beat one.
HAND_2 = [
    "JS JH JD JC KS KH KD KC",
    "7S 8S QH 7H QD 7D QC 7C",
    "QS AH 8H TH AD 8D AC 8C",
    "9S TS AS 9H 9D TD 9C TC",
]


def _seat_0_takes_the_jacks(match: Match) -> Card:
    """Seat 0's card: a Jack when it leads, else its highest legal card."""
    legal = match.legal_cards()
    if not match.current_trick:
        jacks = [card for card in legal if str(card)[0] == "J"]
        if jacks:
            return jacks[0]
    return max(legal, key=lambda card: match.rules.strength[card.index])


def test_the_rules_example_as_a_whole_match_a_forfeit_in_the_only_tiebreak_hand_ends_it() -> None:
    """docs/rules.md 8: classic, 4 players, forfeit policy, tiebreak_hands = 1, seats 1, 2, 3 tied on 0;
    seat 3 revokes in the tie-break hand and forfeits: seats 1 and 2 share first, then seat 0, then seat 3."""
    rules = preset("classic", limit=10, fault_policy="forfeit", tiebreak_hands=1)
    match = Match(rules, 2026, deals={1: HAND_1, 2: HAND_2})
    faults = [0] * 4
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        if match.phase is Phase.AUCTION:
            match.apply(Contract.PASS)
        elif seat == 0:
            match.apply(_seat_0_takes_the_jacks(match))
        elif match.is_tiebreak and seat == 3:
            # A revoke (a card seat 3 does not hold): the engine refuses it, the referee rules on it.
            revoke = match.hand(1)[0]
            with pytest.raises(IllegalDecision):
                match.apply(revoke)
            faults[3] += 1
            ruling = rule_on_fault(rules, Fault.ILLEGAL, faults[3], answers_request=True)
            assert ruling.forfeit and not ruling.replace
            match.forfeit(3, ruling.reason)
        else:
            match.apply(fallback(rules, match.legal_cards()))
    ends = [e for e in match.events if isinstance(e, HandEnded)]
    assert [(e.hand_number, e.scores) for e in ends] == [(1, (5, 0, 0, 0)), (2, (5, 0, 0, 0))]
    assert match.totals == (10, 0, 0, 0)
    assert [(e.seats, e.round) for e in match.events if isinstance(e, TiebreakStarted)] == [((1, 2, 3), 1)]
    assert [(e.seat, e.reason, e.hand_abandoned) for e in match.events if isinstance(e, Forfeited)] == [(3, "illegal", True)]
    # Not another tie-break hand: the abandoned one was the only one allowed.
    assert match.places == (3, 1, 1, 4)
    groups = [sorted(s for s in range(4) if match.places[s] == place) for place in sorted(set(match.places))]
    assert groups == [[1, 2], [0], [3]]
    # The record replays to the same end.
    again = Match.from_record(json.loads(json.dumps(match.record())))
    assert again.places == match.places and again.totals == match.totals


def test_with_a_tiebreak_hand_left_the_others_play_it_after_the_forfeit() -> None:
    rules = preset("classic", limit=10, fault_policy="forfeit", tiebreak_hands=2)
    match = Match(rules, 2026, deals={1: HAND_1, 2: HAND_2})
    forfeited = False
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        if match.phase is Phase.AUCTION:
            match.apply(Contract.PASS)
        elif seat == 0:
            match.apply(_seat_0_takes_the_jacks(match))
        elif match.is_tiebreak and seat == 3 and not forfeited:
            match.forfeit(3, "illegal")
            forfeited = True
        else:
            match.apply(fallback(rules, match.legal_cards()))
    assert [(e.seats, e.round) for e in match.events if isinstance(e, TiebreakStarted)] == [((1, 2, 3), 1), ((1, 2), 2)]
    last = [e for e in match.events if isinstance(e, HandEnded)][-1]
    assert last.tiebreak and last.hand_number == 4
    assert match.places is not None
    assert match.places[0] == 3 and match.places[3] == 4 and sorted(match.places[1:3]) in ([1, 2], [1, 1])


# -- 2. Knaves and Bassadewitz have no contracts ------------------------------------------------------


@pytest.mark.parametrize("game", ["knaves", "bassadewitz"])
@pytest.mark.parametrize("contract", ["capot", "general"])
def test_a_knaves_or_bassadewitz_ruleset_with_contracts_is_refused(game: str, contract: str) -> None:
    with pytest.raises(RulesetError, match=rf"rules setting 'capot' / 'general': '{game}' has no contracts"):
        preset(game, **{contract: True})
    with pytest.raises(RulesetError, match="has no contracts"):
        Ruleset.from_dict({"variant": game, contract: True})
    assert not preset(game).contracts
    match = Match(preset(game), 1)
    assert match.phase is Phase.PLAY and not match.is_legal(Contract.CAPOT) and not match.is_legal(Contract.GENERAL)


def test_the_other_games_keep_their_contracts_and_may_switch_general_on() -> None:
    for name in ("classic", "quatre-valets", "ace-high", "slobberhannes", "eichel-obern", "gras-obern"):
        assert preset(name).capot and preset(name, general=True).general
    assert preset("classic", direction="higher", general=True).general  # a custom game: contracts score by its direction


def test_a_tournament_file_that_switches_contracts_on_in_knaves_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "knaves.toml"
    path.write_text(
        'name = "k"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n[rules]\nvariant = "knaves"\ncapot = true\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert any("'knaves' has no contracts" in problem for problem in caught.value.problems), caught.value.problems


# -- 3. general_points -------------------------------------------------------------------------------


def test_general_points_travels_on_the_wire_and_an_older_referee_means_minus_contract_points() -> None:
    rules = preset("classic", general=True, general_points=-12, contract_points=4)
    message = ruleset_to_pb(rules)
    assert message.HasField("general_points") and message.general_points == -12
    assert ruleset_from_pb(message) == rules
    older = pb.Ruleset()
    older.CopyFrom(message)
    older.ClearField("general_points")  # what a referee before protocol 1.2 sends
    assert ruleset_from_pb(older).general_points == -4
    zero = ruleset_to_pb(preset("classic", general=True, general_points=0))
    assert zero.HasField("general_points") and ruleset_from_pb(zero).general_points == 0  # 0 is a value, not "unset"


def test_clients_before_1_2_are_refused_only_where_a_made_general_scores_otherwise() -> None:
    assert SPOKEN == PROTOCOL_VERSION == "1.3"  # 1.3 (a decision's debug text) changes no game
    custom = preset("classic", general=True, general_points=-10)
    for old in ("1.0", "1.1"):
        why = refusal(old, custom)
        assert why is not None and "general_points = -10" in why and 'say protocol_version "1.3"' in why
        assert refusal(old, preset("classic", general=True)) is None  # -5 against contract_points 5: as before
        assert refusal(old, preset("classic", general_points=-10)) is None  # general off: nothing to misread
    assert refusal("1.2", custom) is None and refusal("1.3", custom) is None and refusal("1.4", custom) is None


def test_a_made_general_shows_its_own_score_in_the_rendered_match() -> None:
    from polignac_arena.render import render_events
    from tests.test_engine_rules import S1, S1_PLAY
    from tests.test_engine_rules import play as play_texts

    rules = preset("classic", general=True, general_points=-9)
    match = Match(rules, 1, deals={1: S1})
    play_texts(match, "pass general", S1_PLAY)
    text = " ".join(" ".join(str(line) for line in render_events(match.events, rules)).split())
    assert "seat 1 declared general and made it: seat 1 scores -9, every other seat +5" in text


def _stored_before_general_points(config_text: str, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """What an arena before general_points stored for a tournament file: its rules table without the setting."""
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n' + config_text, encoding="utf-8")
    record = json.loads(json.dumps(config_record(load_config(path))))
    record["rules"].pop("general_points", None)
    return record, path


def test_a_tournament_stored_before_general_points_is_still_the_same_tournament(tmp_path: Path) -> None:
    before, path = _stored_before_general_points("[rules]\ngeneral = true\n", tmp_path)
    record: dict[str, Any] = config_record(load_config(path))
    assert "general_points" not in record["rules"], "a general that scores -contract_points is stored as before the setting"
    with Store(tmp_path / "s.db") as store:
        first = store.create_tournament("t", before, [])
        assert store.create_tournament("t", record, []) == first  # --resume finds it
    assert Ruleset.from_record(before["rules"]) == load_config(path).rules


def test_a_tournament_whose_general_now_scores_otherwise_is_refused_on_resume_naming_the_setting(tmp_path: Path) -> None:
    # Before the setting, contract_points = 7 made a general score -7; today's default is -5.
    before, path = _stored_before_general_points("[rules]\ngeneral = true\ncontract_points = 7\n", tmp_path)
    assert Ruleset.from_record(before["rules"]).general_points == -7
    with Store(tmp_path / "s.db") as store:
        first = store.create_tournament("t", before, [])
        with pytest.raises(ConflictError, match="general_points"):
            store.create_tournament("t", config_record(load_config(path)), [])
        path.write_text(path.read_text(encoding="utf-8") + "general_points = -7\n", encoding="utf-8")  # as it was played
        assert store.create_tournament("t", config_record(load_config(path)), []) == first


# -- 4. card text: strict on the wire, lenient for people -------------------------------------------

LENIENT = ["js", "10H", "J♠", " 7D", "th", "Q♦"]


@pytest.mark.parametrize("text", LENIENT)
def test_the_referee_takes_only_the_canonical_card_text(text: str) -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server, rules=preset("no-contracts"))
            request = await first_card_request(raw)
            await raw.decide(request.request_id, card=text)
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == pb.FAULT_MALFORMED
            await raw.play_politely()
            assert seat_faults(await result) == {"malformed": 1}
            await asyncio.gather(*polite)

    run(scenario())


PEOPLE_TEXT = """
import json, sys

def lenient(card):
    rank, suit = card[:-1], card[-1]
    return {"T": "10"}.get(rank, rank).lower() + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[suit]

for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "decision_request":
        if m["kind"] == "card":
            answer = {"card": lenient(m["legal_cards"][0])}
        else:
            answer = {"contract": "pass"}
        sys.stdout.write(json.dumps({"request_id": m["request_id"], **answer}) + "\\n")
        sys.stdout.flush()
"""


def test_the_stdio_bridge_takes_only_the_canonical_card_text(tmp_path: Path) -> None:
    writer = stdio_bot(tmp_path / "people", "people", PEOPLE_TEXT)
    result, _ = play([writer, "heuristic", "cautious", "random"], rules=preset("no-contracts", max_faults=3))
    assert result.faults[0] == {"malformed": 3}, result.faults  # every card it wrote, until it forfeits
    assert result.places is not None and result.places[0] == 4


def test_people_may_write_cards_leniently_in_files_and_the_sdk() -> None:
    rules = Ruleset.from_dict({"penalty_cards": {"j♠": 3, "10h": 1, " QD ": 2}})
    assert {str(card): points for card, points in rules.penalty_cards} == {"JS": 3, "TH": 1, "QD": 2}
    assert Card.parse("10♥") is Card.from_wire("TH")
    with pytest.raises(RulesetError, match="'1OH'"):
        Ruleset.from_dict({"penalty_cards": {"1OH": 1}})


def test_the_docs_say_the_same_of_card_text() -> None:
    rules_md = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    protocol = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    stdio = (ROOT / "docs" / "stdio-protocol.md").read_text(encoding="utf-8")
    assert "**On the wire** (the gRPC protocol and the stdio bridge)" in rules_md and "`MALFORMED` decision" in rules_md
    assert "**What people write** is read leniently" in rules_md
    assert "`js`, `10H`, `J♠` or ` 7D` in a Decision is a `FAULT_MALFORMED`" in protocol
    assert '`"js"`, `"10H"` or `"J♠"` is `malformed`' in stdio
