"""Play a bot in-process, without a server: a harness and a conformance check for authors."""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from polignac.bot.base import Bot, FaultInfo, MatchInfo
from polignac.engine import Decision, Match, parse_decision
from polignac.errors import PolignacError
from polignac.events import MatchEnded, redact
from polignac.rules import PRESETS, Ruleset, preset

__all__ = ["ConformanceReport", "LocalResult", "check_bot", "play_local"]


@dataclass
class LocalResult:
    """Results of :func:`play_local` for the bot under test (always seat 0 before rotation)."""

    places: list[int] = field(default_factory=list)
    """The bot's place in each match."""
    totals: list[int] = field(default_factory=list)
    """The bot's final total in each match."""
    faults: list[str] = field(default_factory=list)
    """One line per illegal decision or exception of the bot."""

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
    """One match in-process; the bot at ``under_test`` has its faults recorded and penalised like the referee would."""
    match = Match(rules, seed)
    for seat, bot in enumerate(bots):
        bot.on_match_start(MatchInfo(f"local-{seed}", seat, rules, tuple(b.name for b in bots), 0, 0, 0))
    delivered = [0] * len(bots)
    fault_count = 0
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
        try:
            answer: object = bot.decide(view)
            decision = _parse_or_keep(answer) if isinstance(answer, str) else answer  # text is accepted, as over the wire
            problem = None if match.is_legal(decision) else f"illegal decision {decision!r}; legal: {[str(d) for d in view.legal]}"
        except Exception as exc:  # a bot's bug is reported, not raised: the harness finds them all
            problem = f"{type(exc).__name__}: {exc} in\n{traceback.format_exc(limit=-3)}"
            decision = None
        if times is not None and seat == under_test:
            times.append(time.perf_counter() - start)
        if problem is None:
            match.apply(decision)  # type: ignore[arg-type]  # checked legal above
            continue
        if seat == under_test:
            fault_count += 1
            faults.append(f"seed {seed}, hand {match.hand_number}, seat {seat}: {problem}")
            bot.on_fault(FaultInfo(0, "illegal", problem, str(match.fallback()), rules.revoke_points, fault_count, False))
        fallback = match.fallback()
        if rules.revoke_points:
            match.add_penalty(seat, rules.revoke_points, "illegal")
        match.apply(fallback)
    for bot in bots:
        bot.on_match_end(match.places or (), match.totals, "finished")
    return match


def _parse_or_keep(text: str) -> Decision | str:
    try:
        return parse_decision(text)
    except PolignacError:
        return text


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
    """Play ``bot`` in every named ruleset at every table size (3 to 6) and report any problem.

    A problem is an exception, an illegal decision, a decision slower than ``move_ms``,
    or a bad name/version.
    """
    report = ConformanceReport()
    if not isinstance(bot.name, str) or not 1 <= len(bot.name) <= 64 or not bot.name.isprintable():
        report.problems.append(f"bot name must be 1 to 64 printable characters, got {bot.name!r}")
    if not isinstance(bot.version, str) or len(bot.version) > 64 or not bot.version.isprintable():
        report.problems.append(f"bot version must be up to 64 printable characters, got {bot.version!r}")
    rng = random.Random(seed)
    for name in PRESETS:
        for players in range(3, 7):
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
