"""``polignac bot check DIR --conformance``: a bot played through every scripted situation, one line each.

The situations (docs/languages.md, "The conformance report"):

* every game the bot declares, at every table size it may be played by: one short match each
  (to a limit of 1 point: a hand, and any tie-break hands);
* across those matches: the auction, a void in the suit led, the last trick of a hand;
* a tie-break hand: an opponent forfeits at its first decision, the other two play it off;
* a reattach: the bot plays through the relay of ``polignac league connect``, whose stream to
  the referee is cut at the bot's fourth request; the relay opens it again and the referee
  asks the pending request again;
* a later protocol version: unknown fields and messages in everything the bot receives;
* a time-pressed request: every request with :data:`PRESSED_MOVE_MS` and no bank (played last, alone).

Matches run :data:`PARALLEL` at a time.  The report holds when every line that applies held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from polignac import Ruleset, preset
from polignac.jsontypes import JsonObject
from polignac.rules import Tiebreak
from polignac_arena.conformance.checks import Asked, Line, asked, game_line, scenario_line, situation_line, table_sizes
from polignac_arena.conformance.matches import Played, Scenario, play_scenario
from polignac_arena.record_lines import AwayLine, BackLine
from polignac_arena.referee import TimeControl
from polignac_arena.seats import SeatLauncher, SeatLimits
from polignac_arena.submission import Submission

__all__ = ["PARALLEL", "PRESSED_MOVE_MS", "ConformanceReport", "run_conformance"]

PARALLEL: Final = 2
"""Scripted matches played at once."""
PRESSED_MOVE_MS: Final = 500
"""The time a time-pressed request allows, with no bank behind it.  Played alone, after the other matches: the
referee's clock counts from the request's writing to the answer's arrival, through a busy event loop."""
CLOCK: Final = TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=20_000)
"""The clock of every other scripted match: as ``polignac bot check``'s smoke match."""
CUT_AT_REQUEST: Final = 4
"""The reattach scenario cuts the bot's stream to the referee when the referee sends this request of the bot's."""
SEED: Final = 20_261_203
"""Each scripted match is dealt from this seed plus its own offset: the same bot plays the same matches every time."""

Progress = Callable[[str], None]
_MARKS: Final = {True: "held", False: "FAILED", None: "n/a"}


@dataclass
class ConformanceReport:
    """The lines of the report, in order; ``ok`` when none that applies failed."""

    bot: str
    transport: str
    seat_kind: str
    lines: list[Line] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.lines) and all(line.held is not False for line in self.lines)

    def to_json(self) -> JsonObject:
        return {
            "bot": self.bot,
            "transport": self.transport,
            "seat_kind": self.seat_kind,
            "ok": self.ok,
            "lines": [line.to_json() for line in self.lines],
        }


async def run_conformance(
    submission: Submission,
    launcher: SeatLauncher,
    *,
    limits: SeatLimits | None = None,
    trusted: bool = False,
    progress: Progress | None = None,
) -> ConformanceReport:
    """Play ``submission`` (built) through every situation, in seats of ``launcher``; each line told to ``progress``."""
    session = _Session(submission, launcher, limits or SeatLimits(), trusted, progress or (lambda text: None))
    session.say(f"{len(submission.games)} games at every table size, then 4 scripted situations ({launcher.kind} seats)")
    await session.run()
    return session.report


@dataclass
class _Session:
    """One bot's way through the situations: the matches it plays, the lines they make."""

    submission: Submission
    launcher: SeatLauncher
    limits: SeatLimits
    trusted: bool
    say: Progress
    report: ConformanceReport = field(init=False)
    gate: asyncio.Semaphore = field(init=False)
    main: str = field(init=False)
    """The game of the scripted situations: classic when the bot plays it."""
    main_rules: Ruleset = field(init=False)

    def __post_init__(self) -> None:
        submission = self.submission
        self.report = ConformanceReport(submission.label, submission.transport, str(self.launcher.kind))
        self.gate = asyncio.Semaphore(PARALLEL)
        self.main = "classic" if "classic" in submission.games else submission.games[0]
        sizes = table_sizes(self.main)
        self.main_rules = preset(self.main, players=4 if 4 in sizes else sizes[0], limit=5)

    def add(self, line: Line) -> None:
        self.report.lines.append(line)
        self.say(f"{_MARKS[line.held]}  {line.situation}: {line.detail}  [{line.doc}]")

    async def play(
        self,
        rules: Ruleset,
        offset: int,
        clock: TimeControl = CLOCK,
        *,
        forfeit_seat: int | None = None,
        future_fields: bool = False,
        cut_at_request: int | None = None,
    ) -> tuple[Played, Asked]:
        scenario = Scenario(
            rules, SEED + offset, clock, forfeit_seat=forfeit_seat, future_fields=future_fields, cut_at_request=cut_at_request
        )
        async with self.gate:
            played = await play_scenario(self.submission, scenario, self.launcher, limits=self.limits, trusted=self.trusted)
        return played, asked(played.result.lines)

    async def run(self) -> None:
        games = list(self.submission.games)
        tied = [game for game in games if preset(game).tiebreak is Tiebreak.TIED]
        async with asyncio.TaskGroup() as group:  # a failure cancels the matches still to play
            # The scripted situations start at once, beside the game matches (they wait on the same gate).
            reattach = group.create_task(self.play(self.main_rules, 1, cut_at_request=CUT_AT_REQUEST))
            future = group.create_task(self.play(self.main_rules, 2, future_fields=True))
            tiebreak = group.create_task(self.play(preset(tied[0], players=3, limit=5), 3, forfeit_seat=2)) if tied else None
            total = Asked()
            for number, game in enumerate(games):
                total += await self.game(game, 100 + 10 * number)
            self.situations(total, contracts=any(preset(game).capot or preset(game).general for game in games))
            if tiebreak is None:
                detail = "no game the bot plays has tie-break hands among the tied"
                self.add(Line("a tie-break hand", None, detail, "docs/rules.md section 7"))
            else:
                played, seen = await tiebreak
                detail = f"{tied[0]}, 3 players, the third forfeits at once: {seen.tiebreak} decisions in tie-break hands"
                self.add(scenario_line("a tie-break hand", played, seen, seen.tiebreak > 0, detail, "docs/rules.md section 7"))
            self.reattach(*await reattach)
            played, seen = await future
            doc = "docs/stdio-protocol.md, Lines" if self.submission.transport == "stdio" else "docs/protocol.md, Versions"
            detail = f"{self.main}: unknown fields, message types and event kinds in every message, ignored"
            self.add(scenario_line("a later protocol version", played, seen, True, detail, doc))
        # Last, alone: nothing else keeps the referee's event loop busy.
        played, seen = await self.play(self.main_rules, 4, TimeControl(PRESSED_MOVE_MS, 0, CLOCK.startup_ms))
        detail = f"{self.main}: every request with {PRESSED_MOVE_MS} ms and no bank; slowest answer {seen.slowest_ms:.0f} ms"
        self.add(scenario_line("a time-pressed request", played, seen, True, detail, "docs/protocol.md, The clock"))

    async def game(self, game: str, offset: int) -> Asked:
        """A match of ``game`` at every table size; its line; what the bot was asked in them."""
        sizes = table_sizes(game)
        results = await asyncio.gather(*(self.play(preset(game, players=players, limit=1), offset + players) for players in sizes))
        self.add(game_line(game, [(players, played, seen) for players, (played, seen) in zip(sizes, results, strict=True)]))
        total = Asked()
        for _, seen in results:
            total += seen
        return total

    def situations(self, total: Asked, contracts: bool) -> None:
        """The lines of what came up in the game matches."""
        faulted = total.faulted.get
        no_auction = None if contracts else "no game the bot plays has contracts: there is no auction"
        auction = situation_line(
            "the auction", total.auction, faulted("auction", 0), "asked to pass or declare", "docs/rules.md section 4", no_auction
        )
        self.add(auction)
        self.add(
            situation_line("a void in the suit led", total.void, faulted("void", 0), "any card may be played", "docs/rules.md section 5")
        )
        self.add(
            situation_line(
                "the last trick", total.last_trick, faulted("last_trick", 0), "one card left, one legal", "docs/rules.md section 5"
            )
        )

    def reattach(self, played: Played, seen: Asked) -> None:
        moves = [line.type for line in played.result.lines if isinstance(line, AwayLine | BackLine) and line.seat == 0]
        back = played.cuts == 1 and moves == ["away", "back"]
        went = " and ".join(moves) or "never away"
        detail = f"{self.main}: the stream to the referee cut at request {CUT_AT_REQUEST}; the seat went {went}"
        self.add(scenario_line("a reattach", played, seen, back, detail, "docs/protocol.md, Reattaching to a match"))
