"""The bot SDK's in-process harness (``play_local``, ``check_bot``) and the built-in bots.

The built-in bots must make only legal decisions everywhere, and the two strategic ones must beat
random play by a clear margin; ``check_bot`` must catch each kind of faulty bot and say what is
wrong; ``play_local`` must seat the bot under test in every seat in turn.  Every match is seeded,
so every number here is the same on every run.
"""

from __future__ import annotations

import random
import time

import pytest

import polignac
from polignac import Card, Contract, Match, Phase, Ruleset, cards_in, preset
from polignac.bot import Bot, ConformanceReport, MatchInfo, check_bot, play_local
from polignac.bots import BUILTIN_BOTS, CautiousBot, HeuristicBot, RandomBot, builtin_bot
from polignac.events import Declared, Event, HandDealt, HandEnded
from polignac.rules import deck_mask
from polignac.view import PlayerView

# -- the built-in bots are legal everywhere ------------------------------------------------------

# The expert searches for its time at every decision: tests/test_expert_bot.py checks it
# everywhere with a small playout budget instead.
FAST_BOTS = sorted(set(BUILTIN_BOTS) - {"expert"})


@pytest.mark.parametrize("name", FAST_BOTS)
def test_builtin_bot_passes_the_conformance_check(name: str) -> None:
    """check_bot plays every preset at every table size it allows; a built-in bot has no problem anywhere."""
    report = check_bot(builtin_bot(name, 1), seed=7)
    assert report.problems == [], report.summary()
    assert report.ok
    assert report.matches == sum(len(r.table_sizes()) for r in polignac.PRESETS.values())
    assert report.decisions > 20 * report.matches
    assert report.summary().startswith("OK: ")


@pytest.mark.parametrize("name", FAST_BOTS)
def test_builtin_bot_is_legal_with_general_and_small_limits(name: str) -> None:
    """Every seat played by the bot, general enabled (a contract the conformance check never offers)."""
    for players in range(3, 7):
        rules = preset("classic", players=players, general=True, limit=10)
        result = play_local(builtin_bot(name, 2), opponents=[builtin_bot(name, 3 + i) for i in range(players - 1)], rules=rules, matches=2)
        assert result.faults == []


def test_builtin_bots_have_valid_names_and_make_fresh_instances() -> None:
    assert set(BUILTIN_BOTS) == {"random", "cautious", "heuristic", "expert"}
    for name, cls in BUILTIN_BOTS.items():
        bot = builtin_bot(name, 5)
        assert type(bot) is cls and bot.name == name
        assert bot is not builtin_bot(name, 5)
    with pytest.raises(ValueError, match="'nope'"):
        builtin_bot("nope")


# -- the strategic bots beat random play ---------------------------------------------------------

MATCHES = 60
RANDOM_OPPONENTS = ("random", "random", "random")


def average_place(bot: Bot) -> float:
    result = play_local(bot, opponents=RANDOM_OPPONENTS, rules="classic", matches=MATCHES, seed=1000)
    assert len(result.places) == MATCHES and result.faults == []
    return result.average_place


def test_heuristic_and_cautious_beat_random_against_random_bots() -> None:
    baseline = average_place(RandomBot(99))
    # With four random players the expected place is about 2.5 (ties share a place).
    assert 2.0 <= baseline <= 3.0, baseline
    for bot in (HeuristicBot(), CautiousBot()):
        place = average_place(bot)
        assert place <= baseline - 0.6, f"{bot.name}: average place {place:.2f} against random bots; random itself gets {baseline:.2f}"


def test_play_local_is_deterministic_for_a_seed() -> None:
    first = play_local(HeuristicBot(), opponents=RANDOM_OPPONENTS, matches=6, seed=3)
    again = play_local(HeuristicBot(), opponents=RANDOM_OPPONENTS, matches=6, seed=3)
    assert (first.places, first.totals) == (again.places, again.totals)


# -- play_local seats the bot under test in every seat ---------------------------------------------


class Recorder(Bot):
    """Plays the lowest legal card and remembers where it sat and how each match ended."""

    name = "recorder"

    def __init__(self) -> None:
        self.seats: list[int] = []
        self.view_seats: set[int] = set()
        self.ends: list[tuple[tuple[int, ...], tuple[int, ...], str]] = []
        self.events: list[Event] = []

    def on_match_start(self, info: MatchInfo) -> None:
        self.seats.append(info.seat)

    def on_event(self, event: Event) -> None:
        self.events.append(event)

    def on_match_end(self, places: tuple[int, ...], totals: tuple[int, ...], status: str) -> None:
        self.ends.append((places, totals, status))

    def play(self, view: PlayerView) -> Card:
        assert view.seat == self.seats[-1]
        self.view_seats.add(view.seat)
        return min(view.legal_cards, key=lambda c: c.index)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_play_local_rotates_the_bot_through_every_seat(players: int) -> None:
    bot = Recorder()
    matches = 2 * players
    result = play_local(bot, opponents=["random"] * (players - 1), rules="no-contracts", matches=matches, seed=11)
    assert bot.seats == [n % players for n in range(matches)]
    assert bot.view_seats == set(range(players))
    assert len(result.places) == len(result.totals) == len(bot.ends) == matches
    for seat, place, total, (places, totals, status) in zip(bot.seats, result.places, result.totals, bot.ends, strict=True):
        assert (place, total, status) == (places[seat], totals[seat], "finished")
    assert result.faults == []


def test_play_local_rejects_a_table_of_the_wrong_size() -> None:
    with pytest.raises(ValueError, match="seats 5 players but 4 bots"):
        play_local(RandomBot(1), opponents=RANDOM_OPPONENTS, rules=preset("classic", players=5))


def test_bots_only_see_their_own_cards() -> None:
    bot = Recorder()
    play_local(bot, opponents=RANDOM_OPPONENTS, rules="classic", matches=4, seed=5)
    deals = [e for e in bot.events if isinstance(e, HandDealt)]
    assert deals
    for deal in deals:
        assert sum(1 for hand in deal.hands if hand) == 1


# -- check_bot reports faulty bots ----------------------------------------------------------------


class IllegalCard(Bot):
    """Plays a card it does not hold (one that is not legal, at least)."""

    name = "illegal"

    def play(self, view: PlayerView) -> Card:
        return next(c for c in polignac.CARDS if c not in view.legal)


class Raises(Bot):
    name = "raises"

    def play(self, view: PlayerView) -> Card:
        raise RuntimeError("boom in play")


class ReturnsText(Bot):
    name = "text"

    def play(self, view: PlayerView) -> Card:
        return "Z9"  # type: ignore[return-value]  # a malformed decision on purpose


class LongName(RandomBot):
    name = "x" * 100


class SlowOnce(RandomBot):
    """Takes 1.5 s over its very first decision, and is quick after that (quick enough for a loaded machine's 1 s)."""

    name = "slow"

    def __init__(self) -> None:
        super().__init__(1)
        self.first = True

    def play(self, view: PlayerView) -> Card:
        if self.first:
            self.first = False
            time.sleep(1.5)
        return super().play(view)


def problems_of(bot: Bot, move_ms: float | None = None) -> ConformanceReport:
    report = check_bot(bot) if move_ms is None else check_bot(bot, move_ms=move_ms)
    assert not report.ok and report.problems
    assert report.summary().startswith("FAILED: ")
    return report


def test_check_bot_reports_an_illegal_card() -> None:
    report = problems_of(IllegalCard())
    assert all("illegal decision" in p for p in report.problems), report.problems[:3]
    assert "legal:" in report.problems[0]


def test_check_bot_reports_an_exception() -> None:
    report = problems_of(Raises())
    assert all("RuntimeError: boom in play" in p for p in report.problems), report.problems[:3]


def test_check_bot_reports_a_string_that_is_not_a_card() -> None:
    report = problems_of(ReturnsText())
    assert all("'Z9'" in p for p in report.problems), report.problems[:3]


def test_check_bot_reports_a_long_name() -> None:
    report = problems_of(LongName(1))
    assert len(report.problems) == 1, report.problems
    assert "name" in report.problems[0] and "64" in report.problems[0] and "x" * 100 in report.problems[0]


def test_check_bot_reports_a_slow_decision() -> None:
    report = problems_of(SlowOnce(), move_ms=1000.0)
    assert report.problems == ["1 decisions slower than 1000 ms in classic with 3 players"]
    assert report.slowest_ms >= 1000.0


def test_check_bot_problems_name_where_they_happened() -> None:
    report = problems_of(IllegalCard())
    # "seed S, hand H, seat N: illegal decision ..."
    assert report.problems[0].startswith("seed ") and ", hand " in report.problems[0] and ", seat " in report.problems[0]


# -- the heuristic bot's auction ----------------------------------------------------------------


def contract_rulesets() -> list[Ruleset]:
    out = []
    for name, base in polignac.PRESETS.items():
        if base.capot:
            for players in base.table_sizes():
                out.append(preset(name, players=players))
                out.append(preset(name, players=players, general=True))
    return out


def rid(rules: Ruleset) -> str:
    return f"{rules.name}-{rules.players}p" + ("-general" if rules.general else "")


def top_deal(rules: Ruleset, strong_seat: int, rnd: random.Random) -> list[list[Card]]:
    """A hand-1 deal where ``strong_seat`` holds the top cards of the pack (the top of every suit)."""
    pack = cards_in(deck_mask(rules, rules.players))
    each = len(pack) // rules.players
    by_strength = sorted(pack, key=lambda c: (-rules.strength[c.index], c.suit))
    rest = by_strength[each:]
    rnd.shuffle(rest)
    others = [rest[i * each : (i + 1) * each] for i in range(rules.players - 1)]
    return [*others[:strong_seat], by_strength[:each], *others[strong_seat:]]


def auction(match: Match) -> list[tuple[int, Contract]]:
    """The first hand's auction, from the events."""
    return [(e.seat, e.contract) for e in match.events if isinstance(e, Declared)]


def play_first_hand(match: Match, bots: list[Bot]) -> HandEnded:
    while True:
        ended = [e for e in match.events if isinstance(e, HandEnded)]
        if ended:
            return ended[0]
        seat = match.to_act
        assert seat is not None
        match.apply(bots[seat].decide(match.view(seat)))


@pytest.mark.parametrize("rules", contract_rulesets(), ids=rid)
def test_heuristic_declares_with_an_unbeatable_hand_and_makes_it(rules: Ruleset) -> None:
    rnd = random.Random(rid(rules))
    expected = Contract.GENERAL if rules.general else Contract.CAPOT
    for strong in range(rules.players):
        match = Match(rules, 1, deals={1: top_deal(rules, strong, rnd)})
        bots: list[Bot] = [HeuristicBot() for _ in range(rules.players)]
        ended = play_first_hand(match, bots)
        # Every seat before the strong one passes (it cannot hold the top of any suit), then it declares.
        assert auction(match) == [(seat, Contract.PASS) for seat in range(strong)] + [(strong, expected)]
        assert (ended.contract, ended.declarer, ended.contract_made) == (expected, strong, True)


def test_heuristic_declares_as_eldest_without_every_suit_but_not_later() -> None:
    """Top cards in three suits only: unbeatable when leading every trick, not when the eldest may lead the fourth suit."""
    hand = "KS QS JS KH QH JH KD QD"
    rest = [c for c in polignac.CARDS if str(c) not in hand.split()]
    others = [" ".join(str(c) for c in rest[i * 8 : (i + 1) * 8]) for i in range(3)]
    bot = HeuristicBot()
    eldest = Match(preset("classic"), 1, deals={1: [hand, *others]})
    assert bot.decide(eldest.view(0)) is Contract.CAPOT
    second = Match(preset("classic"), 1, deals={1: [others[0], hand, others[1], others[2]]})
    second.apply(Contract.PASS)
    assert bot.decide(second.view(1)) is Contract.PASS
    general = Match(preset("classic", general=True), 1, deals={1: [hand, *others]})
    assert bot.decide(general.view(0)) is Contract.GENERAL


def test_heuristic_passes_with_ordinary_hands() -> None:
    bot = HeuristicBot()
    for seed in range(40):
        for players in (3, 4, 5, 6):
            match = Match(preset("classic", players=players, general=True), seed)
            while match.phase is Phase.AUCTION:
                assert match.to_act is not None
                assert bot.decide(match.view(match.to_act)) is Contract.PASS
                match.apply(Contract.PASS)
    # One card short of the top: the Ace (below the Jack in the French order) instead of the Jack.
    hand = "KS QS AS KH QH KD QD KC"
    rest = [c for c in polignac.CARDS if str(c) not in hand.split()]
    match = Match(preset("classic"), 1, deals={1: [hand, *(" ".join(str(c) for c in rest[i * 8 : (i + 1) * 8]) for i in range(3))]})
    assert bot.decide(match.view(0)) is Contract.PASS


# -- the Bot base class -------------------------------------------------------------------------


class Routing(Bot):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def declare(self, view: PlayerView) -> Contract:
        self.calls.append("declare")
        return Contract.CAPOT

    def play(self, view: PlayerView) -> Card:
        self.calls.append("play")
        return view.legal_cards[0]


def test_decide_routes_by_phase() -> None:
    match = Match(preset("classic"), 4)
    bot = Routing()
    assert bot.decide(match.view(0)) is Contract.CAPOT
    assert bot.calls == ["declare"]
    match.apply(Contract.PASS)
    while match.phase is Phase.AUCTION:
        match.apply(Contract.PASS)
    assert match.to_act is not None
    view = match.view(match.to_act)
    assert bot.decide(view) is view.legal_cards[0]
    assert bot.calls == ["declare", "play"]
    # No auction at all without contracts: the first decision is already a card.
    bot = Routing()
    assert isinstance(bot.decide(Match(preset("no-contracts"), 4).view(0)), Card)
    assert bot.calls == ["play"]


class PlayOnly(Bot):
    name = "play-only"

    def play(self, view: PlayerView) -> Card:
        return max(view.legal_cards, key=lambda c: c.index)


def test_a_bot_that_only_overrides_play_works() -> None:
    bot = PlayOnly()
    assert bot.decide(Match(preset("classic", general=True), 2).view(0)) is Contract.PASS
    assert bot.declare(Match(preset("classic"), 2).view(0)) is Contract.PASS
    report = check_bot(bot, seed=3)
    assert report.problems == [] and report.ok
    assert play_local(bot, opponents=RANDOM_OPPONENTS, matches=4).faults == []


def test_the_base_bot_must_override_play() -> None:
    match = Match(preset("no-contracts"), 2)
    with pytest.raises(NotImplementedError, match="override"):
        Bot().decide(match.view(0))
    assert Bot().decide(Match(preset("classic"), 2).view(0)) is Contract.PASS
