"""``polignac bot check``: is a submission valid, does it build, does it play a legal match (and, asked, every situation)?"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec, TypeVar

from polignac import Ruleset, preset
from polignac.jsontypes import JsonObject
from polignac_arena.conformance import ConformanceReport, run_conformance
from polignac_arena.games import GameRefused, check_seating, game_of
from polignac_arena.record_lines import ActionLine, AwayLine, FaultLine
from polignac_arena.referee import TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import BotSpecError, run_local_match
from polignac_arena.seats import SeatKind, SeatLimits, launcher_for
from polignac_arena.seats.base import BuildLimits, BuildResult
from polignac_arena.signals import until_signal
from polignac_arena.statuses import MatchStatus
from polignac_arena.submission import Submission, SubmissionError, builtin_submission, load_submission

__all__ = ["CheckReport", "Progress", "check_submission", "check_submission_async"]

T = TypeVar("T")
P = ParamSpec("P")

BUILD_TIMEOUT_S = 300
"""Wall-clock time a build step may take (then it is stopped, with everything it started)."""
BUILD_OUTPUT_LINES = 8
"""The last lines of a build's output the report shows."""


def _blocking(work: Callable[P, Coroutine[object, object, T]]) -> Callable[P, T]:
    """``work`` for callers outside an event loop: ``asyncio.run`` of it; SIGTERM cancels it, so that what it started is
    stopped and removed."""

    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return asyncio.run(until_signal(work(*args, **kwargs)))

    return run


Progress = Callable[[str], None]
"""Where a check reports each step as it starts and ends, one line (or a few) at a time."""


@dataclass
class CheckReport:
    """What the check found, step by step; ``ok`` only when every step passed."""

    submission: Submission | None = None
    steps: list[tuple[str, bool, str]] = field(default_factory=list)
    build: BuildResult | None = None
    """How the build step went, when it ran."""
    conformance: ConformanceReport | None = None
    """The conformance report, when it was asked for and the steps before it passed."""
    progress: Progress | None = field(default=None, repr=False, compare=False)
    """Told of each step as it starts (:meth:`note`) and ends (:meth:`add`)."""

    @property
    def ok(self) -> bool:
        steps = bool(self.steps) and all(passed for _, passed, _ in self.steps)
        return steps and (self.conformance is None or self.conformance.ok)

    def to_json(self) -> JsonObject:
        """The report as ``polignac bot check --json`` prints it (docs/languages.md)."""
        return {
            "bot": self.submission.label if self.submission is not None else None,
            "ok": self.ok,
            "steps": [{"step": step, "ok": passed, "detail": detail} for step, passed, detail in self.steps],
            "conformance": self.conformance.to_json() if self.conformance is not None else None,
        }

    def add(self, step: str, passed: bool, detail: str) -> bool:
        self.steps.append((step, passed, detail))
        if self.progress is not None:
            self.progress(f"{'ok' if passed else 'FAILED'}  {step}: {detail}")
        return passed

    def note(self, text: str) -> None:
        """Tell of a step starting."""
        if self.progress is not None:
            self.progress(text)


async def check_submission_async(
    path: Path,
    *,
    seat_kind: SeatKind = SeatKind.PROCESS,
    trusted: bool = False,
    build: bool = True,
    seed: int = 1,
    time_control: TimeControl | None = None,
    rules: Ruleset | None = None,
    limits: SeatLimits | None = None,
    progress: Progress | None = None,
    conformance: bool = False,
    build_timeout_s: float | None = None,
    build_caps: BuildLimits | None = None,
) -> CheckReport:
    """Validate ``path``/bot.toml, run its build step, then play a short match against random bots (and, with
    ``conformance``, every scripted situation of the conformance report), each step told to ``progress``.

    Runs in a running event loop; :func:`check_submission` is this check from outside one.

    The build step runs in the sandbox of ``seat_kind`` (:meth:`SeatLauncher.build`); what it makes is
    installed in the submission folder (docs/builds.md).  The smoke match is in ``rules`` when given
    (a bot that does not declare its game fails, before its build), else in a game the bot declares.
    Seats and builds get ``limits`` (default :class:`SeatLimits`); the build step gets ``build_timeout_s``
    of wall clock (default :data:`BUILD_TIMEOUT_S`) and ``build_caps`` (default :class:`BuildLimits`).  With
    ``conformance``, once every step passed, the bot plays the scripted situations of
    :func:`~polignac_arena.conformance.run_conformance` in seats of ``seat_kind`` (``report.conformance``).
    Cancelled, it stops and removes what it started.
    """
    report = CheckReport(progress=progress)
    limits = limits or SeatLimits()
    report.note("reading bot.toml")
    try:
        submission = load_submission(path)
    except SubmissionError as exc:
        report.add("bot.toml", False, "\n".join(exc.problems))
        return report
    report.submission = submission
    report.add("bot.toml", True, f"{submission.label} ({submission.language}, {submission.transport}; plays {', '.join(submission.games)})")
    if rules is not None:
        try:
            check_seating([submission], game_of(rules))
        except GameRefused as exc:
            report.add("game", False, str(exc))
            return report
        report.add("game", True, f"it plays {game_of(rules)}")
    if build and submission.build:
        build_timeout_s = BUILD_TIMEOUT_S if build_timeout_s is None else build_timeout_s
        report.note(f"building: {shlex.join(submission.build)} (at most {build_timeout_s:g} s)")
        launcher = launcher_for(seat_kind)
        built = await launcher.build(submission, limits, timeout_s=build_timeout_s, trusted=trusted, caps=build_caps)
        report.build = built
        tail = built.output.strip().splitlines()[-BUILD_OUTPUT_LINES:]
        if not report.add("build", built.ok, "\n".join([built.reason, *tail])):
            return report
        try:
            submission = load_submission(path)  # the folder as its build left it
        except SubmissionError as exc:
            report.add("build", False, "the folder after its build: " + "; ".join(exc.problems))
            return report
    # The smoke match is a game the bot declares (classic when it plays it) unless the caller names one.
    if rules is None:
        rules = preset("classic" if "classic" in submission.games else submission.games[0], limit=5)
    opponents = [builtin_submission("random") for _ in range(rules.players - 1)]
    clock = time_control or TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=20_000)
    report.note(f"smoke match: {game_of(rules)} to {rules.limit} points against {len(opponents)} random bots ({seat_kind} seats)")
    try:
        result, stderrs = await run_local_match(
            [submission, *opponents], rules, seed, clock, seat_kind=seat_kind, trusted=trusted, limits=limits
        )
    except BotSpecError as exc:
        report.add("smoke match", False, str(exc))
        return report
    faults = result.faults[0]
    decisions = [line.ms for line in result.lines if isinstance(line, ActionLine) and line.seat == 0 and line.ms is not None]
    slowest = max(decisions, default=0.0)
    detail = f"{len(decisions)} decisions, slowest {slowest:.0f} ms, place {result.places[0] if result.places else '?'}"
    if faults:
        detail += "; faults: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
        said = [line.detail for line in result.lines if isinstance(line, ActionLine | FaultLine | AwayLine) and line.seat == 0]
        first = next((text for text in said if text), None)
        if first:
            detail += f"\nfirst fault: {first}"
        if stderrs[0].strip():
            detail += "\nbot stderr (last lines):\n" + "\n".join(stderrs[0].strip().splitlines()[-8:])
    passed = result.status is MatchStatus.FINISHED and not faults and bool(decisions)
    report.add("smoke match", passed, detail)
    replay = replay_lines(result.lines)
    report.add("replay", replay.divergence is None, replay.divergence or "the record replays exactly")
    if conformance and report.ok:
        launcher = launcher_for(seat_kind)
        say = (lambda text: progress(f"conformance: {text}")) if progress is not None else None
        report.conformance = await run_conformance(submission, launcher, limits=limits, trusted=trusted, progress=say)
    return report


check_submission = _blocking(check_submission_async)
""":func:`check_submission_async` from outside an event loop; SIGTERM stops it (:class:`~polignac_arena.signals.Stopped`)
once what it started is stopped and removed."""
