"""The tables tournament and league files share (``[time]``, ``[seats]``, ``[executor]``, ``[trueskill]``, ``[rules]``), declared once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Final, TypedDict

from pydantic import Field, StrictBool, field_validator

from polignac import PRESETS, PolignacError, Ruleset
from polignac_arena.ratings import RatingEnv
from polignac_arena.seats.base import SeatLimits
from polignac_arena.settings import CLOCK_MAX_MS, ExecutorKind, ExecutorSettings, SeatKind, TimeControl
from polignac_arena.toml_files import FileModel, Key, Problem, invalid

__all__ = [
    "ExecutorSection",
    "MatchSettings",
    "RulesCheck",
    "SeatLimitsSection",
    "SeatsSection",
    "TimeSection",
    "TrueSkillSection",
    "TrueSkillSettings",
    "check_rules",
    "match_settings",
]

_RATING_DEFAULTS: Final = RatingEnv()
_LIMITS: Final = SeatLimits()
_CLOCK: Final = TimeControl()


@dataclass(frozen=True)
class TrueSkillSettings:
    """The TrueSkill environment of a tournament; the defaults are :class:`~polignac_arena.ratings.RatingEnv`'s (docs/ratings.md)."""

    mu: float = _RATING_DEFAULTS.mu
    sigma: float = _RATING_DEFAULTS.sigma
    beta: float = _RATING_DEFAULTS.beta
    tau: float = _RATING_DEFAULTS.tau
    draw_probability: float = _RATING_DEFAULTS.draw_probability


class TimeSection(FileModel):
    """``[time]``: milliseconds."""

    move_ms: Annotated[int, Field(strict=True, ge=TimeControl.lowest("move_ms"), le=CLOCK_MAX_MS)] = _CLOCK.move_ms
    bank_ms: Annotated[int, Field(strict=True, ge=TimeControl.lowest("bank_ms"), le=CLOCK_MAX_MS)] = _CLOCK.bank_ms
    startup_ms: Annotated[int, Field(strict=True, ge=TimeControl.lowest("startup_ms"), le=CLOCK_MAX_MS)] = _CLOCK.startup_ms

    def control(self) -> TimeControl:
        return TimeControl(self.move_ms, self.bank_ms, self.startup_ms)


class SeatLimitsSection(FileModel):
    """``[seats.limits]``: the caps of a seat; a bot's own requests are granted up to these."""

    memory_mb: Annotated[int, Field(strict=True, ge=32, le=65_536)] = _LIMITS.memory_mb
    cpus: Annotated[float, Field(strict=True, ge=0.1, le=64)] = _LIMITS.cpus
    pids: Annotated[int, Field(strict=True, ge=8, le=4096)] = _LIMITS.pids
    cpu_seconds: Annotated[int, Field(strict=True, ge=1, le=86_400)] = _LIMITS.cpu_seconds
    file_size_mb: Annotated[int, Field(strict=True, ge=1, le=10_240)] = _LIMITS.file_size_mb
    open_files: Annotated[int, Field(strict=True, ge=16, le=65_536)] = _LIMITS.open_files
    tmpfs_mb: Annotated[int, Field(strict=True, ge=1, le=10_240)] = _LIMITS.tmpfs_mb

    def limits(self) -> SeatLimits:
        return SeatLimits(**self.model_dump())


class SeatsSection(FileModel):
    """``[seats]``: how bots get their seats."""

    kind: SeatKind = SeatKind.PROCESS
    trusted: StrictBool = False
    limits: SeatLimitsSection = SeatLimitsSection()


class ExecutorSection(FileModel):
    """``[executor]``: where matches run (docs/cluster.md)."""

    kind: ExecutorKind = ExecutorKind.LOCAL
    address: str | None = Field(default=None, strict=True)
    cpus_per_match: Annotated[float, Field(strict=True, ge=0.01, le=256)] = 1.0

    @field_validator("address")
    @classmethod
    def _host_and_port(cls, address: str | None) -> str | None:
        if address is not None and not re.fullmatch(r"\[?[A-Za-z0-9.:-]+\]?:[0-9]{1,5}", address.strip()):
            raise invalid(f"must be the Ray head's HOST:PORT, got {address!r}")
        return address.strip() if address else None

    def settings(self) -> ExecutorSettings:
        return ExecutorSettings(self.kind, self.address, self.cpus_per_match)


class TrueSkillSection(FileModel):
    """``[trueskill]`` (docs/ratings.md)."""

    mu: Annotated[float, Field(strict=True, ge=-1e6, le=1e6)] = _RATING_DEFAULTS.mu
    sigma: Annotated[float, Field(strict=True, ge=1e-3, le=1e6)] = _RATING_DEFAULTS.sigma
    beta: Annotated[float, Field(strict=True, ge=1e-3, le=1e6)] = _RATING_DEFAULTS.beta
    tau: Annotated[float, Field(strict=True, ge=0, le=1e6)] = _RATING_DEFAULTS.tau
    draw_probability: Annotated[float, Field(strict=True, ge=0, le=0.99)] = _RATING_DEFAULTS.draw_probability

    def settings(self) -> TrueSkillSettings:
        return TrueSkillSettings(**self.model_dump())


class MatchSettings(TypedDict):
    """What tournament and league configs alike take from ``[time]``, ``[seats]`` and ``[trueskill]``, by these names."""

    time: TimeControl
    seat_kind: SeatKind
    trusted: bool
    limits: SeatLimits
    trueskill: TrueSkillSettings


def match_settings(time: TimeSection, seats: SeatsSection, trueskill: TrueSkillSection) -> MatchSettings:
    """The sections read as a config takes them: ``Config(..., **match_settings(read.time, read.seats, read.trueskill))``."""
    limits = seats.limits.limits()
    return MatchSettings(time=time.control(), seat_kind=seats.kind, trusted=seats.trusted, limits=limits, trueskill=trueskill.settings())


@dataclass(frozen=True)
class RulesCheck:
    """The ``[rules]`` table read: the ruleset, the preset it starts from, and a problem per bad setting."""

    rules: Ruleset
    preset: str
    problems: list[Problem]


def check_rules(table: Mapping[str, object], table_size: int) -> RulesCheck:
    """The ``[rules]`` table for tables of ``table_size``; the SDK's :class:`~polignac.Ruleset` checks each setting."""
    problems: list[Problem] = []

    def bad(key: str, message: str) -> None:
        where: Key = ("rules", key) if key else ("rules",)
        problems.append(Problem(where, message))

    rules_table = dict(table)
    rules_table.setdefault("players", table_size)
    if rules_table.get("players") != table_size:
        bad("players", f"is set by table_size ({table_size}); leave it out of [rules]")
    rules = Ruleset()
    # Each setting on its own first, so that every bad value is reported, then all together.
    variant = rules_table.get("variant", "classic")
    preset = variant if isinstance(variant, str) and variant in PRESETS else "classic"  # a bad variant is reported once
    singles = 0
    for key, value in rules_table.items():
        try:
            Ruleset.from_dict({"variant": preset, key: value} if key != "variant" else {"variant": value})
        except PolignacError as exc:
            singles += 1
            bad(str(key), str(exc))
    if not singles:
        try:
            rules = Ruleset.from_dict(rules_table)
        except PolignacError as exc:
            named = re.search(r"'([a-z_]+)'", str(exc))
            bad(named.group(1) if named else "", str(exc))
    return RulesCheck(rules, preset, problems)
