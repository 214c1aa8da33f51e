"""Play a bot in-process, without a server: a harness and a conformance check for authors."""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from polignac.bot.base import Bot, FaultInfo, MatchInfo
from polignac.cards import Card
from polignac.engine import Match
from polignac.errors import PolignacError
from polignac.events import MatchEnded, redact
from polignac.faults import Fault, rule_on_fault
from polignac.limits import NAME_MAX, VERSION_MAX, is_display_name, is_version_text
from polignac.rules import PRESETS, Ruleset, preset
from polignac.statuses import MatchStatus
from polignac.values import Contract, Decision, Phase, parse_decision
from polignac.wire import in_pack

__all__ = ["ConformanceReport", "LocalResult", "check_bot", "play_local"]


@dataclass
class LocalResult:
    """Results of :func:`play_local` for the bot under test (always seat 0 before rotation)."""

    places: list[int] = field(default_factory=list)
    """The bot's place in each match."""
    totals: list[int] = field(default_factory=list)
    """The bot's final total in each match."""
    faults: list[str] = field(default_factory=list)
    """One line per fault of the bot (an illegal or malformed decision, an exception), ruled as the referee rules it."""

    @property
    def average_place(self) -> float:
        """Mean finishing place (1 is best)."""
        return sum(self.places) / len(self.places) if self.places else 0.0


def _resolve(bot: Bot | str, seed: int) -> Bot:
    if isinstance(bot, Bot):
        return bot
    from polignac.bots import builtin_bot  # built-in bots import this package

    return builtin_bot(bot, seed)


def _play_one(
    rules: Ruleset, seed: int, bots: Sequence[Bot], under_test: int, faults: list[str], times: list[float] | None = None
) -> Match:
    """One match in-process, every fault ruled as the referee rules it (:func:`polignac.faults.rule_on_fault`).

    The faults of the bot at ``under_test`` are listed in ``faults``.  An exception raised by a
    bot is a crash (under the referee its process or task would end): the seat forfeits.
    """
    match = Match(rules, seed)
    for seat, bot in enumerate(bots):
        bot.on_match_start(MatchInfo(f"local-{seed}", seat, rules, tuple(b.name for b in bots), 0, 0, 0))
    delivered = [0] * len(bots)
    fault_counts = [0] * len(bots)
    while not match.is_over:
        to_act = match.to_act
        assert to_act is not None
        seat = to_act
        bot = bots[seat]
        for event in match.events_since(delivered[seat]):
            if not isinstance(event, MatchEnded):
                bot.on_event(redact(event, seat))
        delivered[seat] = match.event_count
        view = match.view(seat)
        start = time.perf_counter()
        decision: Decision | None
        fault: Fault | None
        try:
            answer: object = bot.decide(view)
        except Exception as exc:  # a bot's bug is reported, not raised: the harness finds them all
            decision, fault, problem = None, Fault.CRASHED, f"{type(exc).__name__}: {exc} in\n{traceback.format_exc(limit=-3)}"
        else:
            decision, fault, problem = _judge(match, answer)
        bot.take_debug()  # no record here: a decision's debug text is not kept for the next
        if times is not None and seat == under_test:
            times.append(time.perf_counter() - start)
        if fault is None:
            assert decision is not None  # _judge gives a decision exactly when it finds no fault
            match.apply(decision)
            continue
        fault_counts[seat] += 1
        ruling = rule_on_fault(rules, fault, fault_counts[seat], answers_request=True)
        hand = match.hand_number
        fallback = ""
        if ruling.forfeit:
            match.forfeit(seat, ruling.reason)
        elif ruling.replace:
            replacement = match.fallback()
            fallback = str(replacement)
            if ruling.points:
                match.add_penalty(seat, ruling.points, fault.value)
            match.apply(replacement)
        if seat == under_test:
            outcome = f"; the seat forfeits ({ruling.reason})" if ruling.forfeit else ""
            faults.append(f"seed {seed}, hand {hand}, seat {seat}: {problem}{outcome}")
        points = ruling.points if ruling.replace else 0
        bot.on_fault(FaultInfo(0, fault.value, problem, fallback, points, fault_counts[seat], ruling.forfeit))
    for bot in bots:
        bot.on_match_end(match.places or (), match.totals, MatchStatus.FINISHED)
    return match


def _judge(match: Match, answer: object) -> tuple[Decision | None, Fault | None, str]:
    """A bot's answer as the referee judges it: the decision, or the fault (MALFORMED, ILLEGAL) and why."""
    decision = answer
    if isinstance(answer, str):  # text is accepted, as over the wire
        try:
            decision = parse_decision(answer)
        except PolignacError as exc:
            return None, Fault.MALFORMED, f"not a decision: {answer!r} ({exc})"
    if not isinstance(decision, Card | Contract):
        return None, Fault.MALFORMED, f"a decision is a Card or a Contract, got {answer!r}"
    if match.phase is Phase.AUCTION and not isinstance(decision, Contract):
        return None, Fault.MALFORMED, f"the auction needs a contract (pass, capot, general), got {answer!r}"
    if match.phase is Phase.PLAY and not isinstance(decision, Card):
        return None, Fault.MALFORMED, f"a card is needed, got {answer!r}"
    if isinstance(decision, Card) and not in_pack(decision, match.rules):
        # As the referee reads it: text no card of this game has, not a card the seat may not play.
        return None, Fault.MALFORMED, f"not a card of the {match.rules.pack}-card pack: {str(decision)!r} (its ranks are 7 8 9 T J Q K A)"
    if not match.is_legal(decision):
        return None, Fault.ILLEGAL, f"illegal decision {answer!r}; legal: {[str(d) for d in match.legal_decisions()]}"
    return decision, None, ""


def play_local(
    bot: Bot,
    opponents: Sequence[Bot | str] = ("random", "cautious", "heuristic"),
    rules: Ruleset | str = "classic",
    matches: int = 10,
    seed: int = 0,
) -> LocalResult:
    """Play ``matches`` matches of ``bot`` against ``opponents`` (bots or built-in names), rotating seats.

    >>> from polignac.bots import RandomBot
    >>> len(play_local(RandomBot(1), matches=2).places)
    2
    """
    ruleset = preset(rules, players=len(opponents) + 1) if isinstance(rules, str) else rules
    if ruleset.players != len(opponents) + 1:
        raise ValueError(f"the ruleset seats {ruleset.players} players but {len(opponents) + 1} bots were given")
    result = LocalResult()
    for number in range(matches):
        others = [_resolve(o, seed + number * 7 + i) for i, o in enumerate(opponents)]
        seat = number % ruleset.players
        table = [*others[:seat], bot, *others[seat:]]
        match = _play_one(ruleset, seed + number, table, seat, result.faults)
        assert match.places is not None
        result.places.append(match.places[seat])
        result.totals.append(match.totals[seat])
    return result


@dataclass
class ConformanceReport:
    """What :func:`check_bot` found."""

    matches: int = 0
    decisions: int = 0
    slowest_ms: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the bot made only legal decisions, raised nothing and was never slow."""
        return not self.problems

    def summary(self) -> str:
        """A few lines for people."""
        head = f"{self.matches} matches, {self.decisions} decisions, slowest {self.slowest_ms:.1f} ms"
        if self.ok:
            return f"OK: {head}"
        return "\n".join([f"FAILED: {head}, {len(self.problems)} problems:", *(f"- {p}" for p in self.problems[:20])])


def check_bot(bot: Bot, matches_per_table: int = 1, move_ms: float = 1000.0, seed: int = 0) -> ConformanceReport:
    """Play ``bot`` in every named ruleset at every table size it allows and report any problem.

    A problem is an exception, an illegal decision, a decision slower than ``move_ms``,
    or a bad name/version.
    """
    report = ConformanceReport()
    if not is_display_name(bot.name):
        report.problems.append(f"bot name must be 1 to {NAME_MAX} printable characters, got {bot.name!r}")
    if not is_version_text(bot.version, empty=True):
        report.problems.append(f"bot version must be up to {VERSION_MAX} printable characters, got {bot.version!r}")
    rng = random.Random(seed)
    for name, base in PRESETS.items():
        for players in base.table_sizes():
            rules = preset(name, players=players)
            for _ in range(matches_per_table):
                match_seed = rng.randrange(2**64)
                seat = rng.randrange(players)
                from polignac.bots import RandomBot  # built-in bots import this package

                table: list[Bot] = [RandomBot(match_seed + i) for i in range(players)]
                table[seat] = bot
                times: list[float] = []
                _play_one(rules, match_seed, table, seat, report.problems, times)
                report.matches += 1
                report.decisions += len(times)
                slow = [t for t in times if t * 1000 > move_ms]
                if slow:
                    report.problems.append(f"{len(slow)} decisions slower than {move_ms:g} ms in {name} with {players} players")
                report.slowest_ms = max([report.slowest_ms, *(t * 1000 for t in times)])
    return report
