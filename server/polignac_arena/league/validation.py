"""Validating an uploaded version: what ``polignac bot check`` does, in the league's game, told line by line to its author.

An upload is accepted when its ``bot.toml`` is valid and names the bot it was uploaded as, it
declares the league's game, its build step succeeds in the sandbox, and it plays a short smoke
match of the league's game against random bots without a fault
(:func:`polignac_arena.botcheck.check_submission_async`).  Every line of progress goes to the
author's log as it happens, with bot-written text (its build's output, its stderr) made plain.

The log is the author's alone; the reason of a refusal is shown to everyone (the league's page),
so it names the step that failed and how, never what the private ``bot.toml`` says (its build
command, a bad value it holds): those are in the log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from polignac_arena.botcheck import CheckReport, check_submission_async
from polignac_arena.league.config import LeagueConfig
from polignac_arena.plaintext import plain
from polignac_arena.seats import BuildLimits
from polignac_arena.submission import Submission, SubmissionError, load_submission

__all__ = ["SMOKE_LIMIT", "Validation", "validate"]

SMOKE_LIMIT: Final = 5
"""The smoke match plays the league's game to at most this many points: a few hands."""


@dataclass(frozen=True, slots=True)
class Validation:
    """How an uploaded version's validation went."""

    ok: bool
    reason: str
    """Why it was refused (the failed step, and how: no private detail), or ``accepted``."""
    log_text: str
    """Every line told to the author, plain text."""
    submission: Submission | None = None
    """The version as its ``bot.toml`` (read after its build) describes it, when that was valid."""


async def validate(
    folder: Path,
    league: LeagueConfig,
    *,
    log: Callable[[str], None],
    bot_name: str | None = None,
    build_caps: BuildLimits | None = None,
) -> Validation:
    """Validate the unpacked submission in ``folder`` for ``league``; never raises for a bad submission.

    Its build step (which installs what it makes in ``folder``, as ``polignac bot check`` does) and
    its smoke match (the league's rules, to a lower limit) run in seats as the league's matches have
    them (kind, limits, trust) and on its clock; the build within the league's ``[validation]``
    build_timeout_s and ``build_caps``.  With ``bot_name``, the upload must be a version of that bot.
    Each line of progress is passed to ``log`` as it happens.  Cancelled, it stops and removes what it
    started.
    """
    lines: list[str] = []

    def tell(text: str) -> None:
        for line in plain(text).splitlines() or [""]:
            lines.append(line)
            log(line)

    if bot_name is not None:
        try:
            declared = load_submission(folder).name
        except SubmissionError:
            declared = None  # the check below reports what is wrong with bot.toml
        if declared is not None and declared != bot_name:
            reason = f"bot.toml: this is bot {declared!r}, uploaded as a version of {bot_name!r}; upload it under its own name"
            tell(f"FAILED  {reason}")
            return Validation(False, reason, "\n".join(lines))
    smoke_rules = dataclasses.replace(league.rules, limit=min(league.rules.limit, SMOKE_LIMIT))
    report = await check_submission_async(
        folder,
        seat_kind=league.seat_kind,
        trusted=league.trusted,
        time_control=league.time,
        rules=smoke_rules,
        limits=league.limits,
        progress=tell,
        build_timeout_s=league.validation.build_timeout_s,
        build_caps=build_caps,
    )
    if report.ok:
        tell("accepted: the bot is ready for the ladder")
        return Validation(True, "accepted", "\n".join(lines), report.submission)
    return Validation(False, _reason(report), "\n".join(lines), report.submission)


def _reason(report: CheckReport) -> str:
    """The first failed step and how it failed, for everyone to read: nothing of the private ``bot.toml``."""
    for step, passed, detail in report.steps:
        if passed:
            continue
        if step == "bot.toml":
            return "bot.toml: it is not valid (the author's validation log says why)"
        if step == "build":
            return f"build: {plain(report.build.public_reason) if report.build is not None else 'it failed'}"
        first = next((line for line in plain(detail).splitlines() if line.strip()), "failed")
        return f"{step}: {first}"
    return "the check did not run"
