"""``polignac bot check``: is a submission valid, does it build, does it play a legal match?"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from polignac import preset
from polignac_arena.referee import TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import BotSpecError, run_local_match
from polignac_arena.seats import SeatKind, SeatLimits, launcher_for
from polignac_arena.signals import until_signal
from polignac_arena.statuses import MatchStatus
from polignac_arena.submission import Submission, SubmissionError, builtin_submission, load_submission

__all__ = ["CheckReport", "check_submission"]

T = TypeVar("T")

BUILD_TIMEOUT_S = 300
"""Wall-clock time a build step may take (then it is stopped, with everything it started)."""
BUILD_OUTPUT_LINES = 8
"""The last lines of a build's output the report shows."""


def _run(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)``; SIGTERM cancels it, so that what the check started is stopped and removed."""
    return asyncio.run(until_signal(work))


@dataclass
class CheckReport:
    """What the check found, step by step; ``ok`` only when every step passed."""

    submission: Submission | None = None
    steps: list[tuple[str, bool, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(passed for _, passed, _ in self.steps)

    def add(self, step: str, passed: bool, detail: str) -> bool:
        self.steps.append((step, passed, detail))
        return passed


def check_submission(
    path: Path,
    *,
    seat_kind: SeatKind = SeatKind.PROCESS,
    trusted: bool = False,
    build: bool = True,
    seed: int = 1,
    time_control: TimeControl | None = None,
) -> CheckReport:
    """Validate ``path``/bot.toml, run its build step, then play a short match against random bots.

    SIGTERM stops it (:class:`~polignac_arena.signals.Stopped`) once what it started is stopped and removed.

    The build step runs in the sandbox of ``seat_kind`` (:meth:`SeatLauncher.build`); what it makes is
    installed in the submission folder (docs/builds.md).
    """
    report = CheckReport()
    try:
        submission = load_submission(path)
    except SubmissionError as exc:
        report.add("bot.toml", False, "\n".join(exc.problems))
        return report
    report.submission = submission
    report.add("bot.toml", True, f"{submission.label} ({submission.language}, {submission.transport}; plays {', '.join(submission.games)})")
    if build and submission.build:
        launcher = launcher_for(seat_kind)
        built = _run(launcher.build(submission, SeatLimits(), timeout_s=BUILD_TIMEOUT_S, trusted=trusted))
        tail = built.output.strip().splitlines()[-BUILD_OUTPUT_LINES:]
        if not report.add("build", built.ok, "\n".join([built.reason, *tail])):
            return report
        try:
            submission = load_submission(path)  # the folder as its build left it
        except SubmissionError as exc:
            report.add("build", False, "the folder after its build: " + "; ".join(exc.problems))
            return report
    # The smoke match is a game the bot declares: classic when it plays it.
    rules = preset("classic" if "classic" in submission.games else submission.games[0], limit=5)
    opponents = [builtin_submission("random") for _ in range(rules.players - 1)]
    clock = time_control or TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=20_000)
    try:
        result, stderrs = _run(
            run_local_match([submission, *opponents], rules, seed, clock, seat_kind=seat_kind, trusted=trusted, limits=SeatLimits())
        )
    except BotSpecError as exc:
        report.add("smoke match", False, str(exc))
        return report
    faults = result.faults[0]
    decisions = [line["ms"] for line in result.record if line["type"] == "action" and line.get("seat") == 0 and "ms" in line]
    slowest = max(decisions, default=0.0)
    detail = f"{len(decisions)} decisions, slowest {slowest:.0f} ms, place {result.places[0] if result.places else '?'}"
    if faults:
        detail += "; faults: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
        last = [line for line in result.record if line.get("seat") == 0 and line.get("detail")]
        if last:
            detail += f"\nfirst fault: {last[0]['detail']}"
        if stderrs[0].strip():
            detail += "\nbot stderr (last lines):\n" + "\n".join(stderrs[0].strip().splitlines()[-8:])
    passed = result.status is MatchStatus.FINISHED and not faults and bool(decisions)
    report.add("smoke match", passed, detail)
    replay = replay_lines(result.record)
    report.add("replay", replay.divergence is None, replay.divergence or "the record replays exactly")
    return report
