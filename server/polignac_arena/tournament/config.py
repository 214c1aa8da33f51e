"""Tournament files: TOML, every setting with a default and bounds, one clear error per problem.

A tournament file looks like ``tournaments/quickstart.toml``::

    name = "quickstart"            # required: 1-64 of A-Z a-z 0-9 . _ -
    description = ""               # optional text
    entrants = ["random", "../sample_bots/cautious"]   # required: built-in names ("builtin:random"
                                   # where a folder next to this file has that name; openspiel:ismcts
                                   # and openspiel:random need the research extra), submission
                                   # folders (relative to this file; always their own code), or
                                   # registered bots "name" / "name@version"
    format = "round-robin"         # round-robin | duplicate | ladder
    table_size = 3                 # players per match, 3..6 (at most the number of entrants)
    rounds = 1                     # round-robin and duplicate: times over the schedule, 1..1000
    matches = 100                  # ladder: the match budget, 1..1000000
    seed = 1                       # 0..2**64-1: the schedule and every deal derive from it
    parallel = 1                   # matches at once, 1..64 (the command line may override)

    [schedule]                     # optional: play on until the order is known
    until_separated = 0.95         # add rounds (ladder: tables) until every two neighbours on the
                                   # leaderboard are ordered with this probability, 0.5..0.9999
    max_matches = 400              # round-robin, duplicate: the budget, planned rounds included
                                   # (the ladder's budget is matches)

    [rules]                        # any ruleset setting (polignac rules NAME lists them)
    variant = "classic"            # the game: bots whose bot.toml does not declare it are refused
    limit = 20                     # (see polignac_arena.games for a ruleset's game)

    [time]                         # milliseconds
    move_ms = 1000
    bank_ms = 10000
    startup_ms = 10000

    [seats]
    kind = "process"               # process | docker | inprocess (built-in bots, and trusted folders'
                                   # Python bots, in the runner's own process)
    trusted = false                # vouch for the bots (process seats without bubblewrap need it,
                                   # and in-process seats for a folder's bot)

    [seats.limits]                 # caps; a bot's own [resources] requests are granted up to these
    memory_mb = 512
    cpus = 1.0
    pids = 64
    cpu_seconds = 600

    [executor]                     # where matches run (docs/cluster.md); the command line may override
    kind = "local"                 # local | ray
    address = "10.0.0.5:6379"      # ray: the cluster head's HOST:PORT (default: RAY_ADDRESS)
    cpus_per_match = 1.0           # ray: CPUs a match reserves on its node

    [trueskill]                    # docs/ratings.md; `polignac ratings fit` measures beta and the draw rate
    mu = 25.0
    sigma = 8.333333
    beta = 8.333333
    tau = 0.0                      # no drift within a tournament
    draw_probability = 0.03
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final

from pydantic import AfterValidator, Field, StrictStr, field_validator

from polignac import Ruleset
from polignac_arena.games import Game, game_of
from polignac_arena.seats.base import SeatLimits
from polignac_arena.settings import (
    DEAL_SEED_MAX,
    ExecutorSettings,
    SeatKind,
    TimeControl,
    TournamentFormat,
)
from polignac_arena.toml_files import NAME_MUST, FileModel, Problem, TomlError, TomlLines, checked_name, invalid, parse_toml, validate
from polignac_arena.tournament.sections import (
    ExecutorSection,
    SeatsSection,
    TimeSection,
    TrueSkillSection,
    TrueSkillSettings,
    check_rules,
    match_settings,
)

__all__ = [
    "FORMATS",
    "ConfigError",
    "TournamentConfig",
    "TournamentFile",
    "TrueSkillSettings",
    "load_config",
    "parse_config",
    "read_file_text",
    "read_toml",
]

FORMATS: Final = tuple(form.value for form in TournamentFormat)


class ConfigError(ValueError):
    """A tournament file with problems; ``problems`` has one line per problem, with its key and line."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.path = Path(path)
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} problem(s):\n" + "\n".join(f"  {p}" for p in problems))

    @classmethod
    def of(cls, path: Path | str, text: str, problems: list[Problem]) -> ConfigError:
        """The error listing ``problems``, each as ``line N: 'key': message``."""
        lines = TomlLines(text)

        def shown(problem: Problem) -> str:
            number = lines.line(problem.key)
            return f"{'' if number is None else f'line {number}: '}{problem.dotted!r}: {problem.message}"

        return cls(path, [shown(problem) for problem in problems])


@dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament file."""

    name: str
    entrants: tuple[str, ...]
    rules: Ruleset
    base_dir: Path
    game: Game = field(default_factory=lambda: Game("classic"))
    """The game the rules are (:func:`polignac_arena.games.game_of`): what every entrant must declare."""
    description: str = ""
    format: TournamentFormat = TournamentFormat.ROUND_ROBIN
    table_size: int = 4
    rounds: int = 1
    matches: int = 100
    seed: int = 1
    parallel: int = 1
    time: TimeControl = field(default_factory=TimeControl)
    seat_kind: SeatKind = SeatKind.PROCESS
    trusted: bool = False
    limits: SeatLimits = field(default_factory=SeatLimits)
    trueskill: TrueSkillSettings = field(default_factory=TrueSkillSettings)
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    """Where the matches run; like ``parallel``, not part of what defines the tournament."""
    until_separated: float | None = None
    """Play on until every two neighbours on the leaderboard are ordered with this probability (None: the planned schedule)."""
    max_matches: int | None = None
    """The match budget of a round-robin or duplicate tournament that plays on (``until_separated``)."""
    source: str = ""
    """The file's text, stored with the tournament."""


_ENTRANTS_RULE: Final = "must be a list of bots (built-in names, folders, or 'name@version')"


class ScheduleSection(FileModel):
    """``[schedule]``: play on until the order is known."""

    until_separated: float | None = Field(default=None, strict=True, ge=0.5, le=0.9999)
    max_matches: int | None = Field(default=None, strict=True, ge=1, le=1_000_000)


class TournamentFile(FileModel):
    """A tournament file as written (the module's docstring shows one); ``name`` and ``entrants`` are required."""

    name: Annotated[StrictStr | None, AfterValidator(checked_name)] = Field(default=None, description=NAME_MUST)
    description: StrictStr = ""
    entrants: list[StrictStr] | None = Field(default=None, description=_ENTRANTS_RULE)
    format: TournamentFormat = TournamentFormat.ROUND_ROBIN
    table_size: Annotated[int, Field(strict=True, ge=3, le=6)] = 4
    rounds: Annotated[int, Field(strict=True, ge=1, le=1000)] = 1
    matches: Annotated[int, Field(strict=True, ge=1, le=1_000_000)] = 100
    seed: Annotated[int, Field(strict=True, ge=0, le=DEAL_SEED_MAX)] = 1
    parallel: Annotated[int, Field(strict=True, ge=1, le=64)] = 1
    rules: dict[str, object] = Field(default_factory=dict, description="must be a table ([rules])")
    time: TimeSection = TimeSection()
    seats: SeatsSection = SeatsSection()
    executor: ExecutorSection = ExecutorSection()
    trueskill: TrueSkillSection = TrueSkillSection()
    schedule: ScheduleSection = ScheduleSection()

    @field_validator("entrants")
    @classmethod
    def _entrants(cls, entrants: list[str] | None) -> list[str] | None:
        if entrants is None:
            return None
        if not entrants or not all(entrant.strip() for entrant in entrants):
            raise invalid(f"{_ENTRANTS_RULE}, got {entrants!r}")
        if len(set(entrants)) != len(entrants):
            duplicates = sorted({e for e in entrants if entrants.count(e) > 1})
            raise invalid(f"each entrant once, but {', '.join(map(repr, duplicates))} appear more than once")
        return [entrant.strip() for entrant in entrants]

    def required(self, table: Mapping[str, object]) -> list[Problem]:
        """The problems of required settings left out of ``table`` (one set but bad has its problem already)."""
        missing = []
        if "name" not in table:
            missing.append(Problem(("name",), f"{NAME_MUST}, got None"))
        if "entrants" not in table:
            missing.append(Problem(("entrants",), f"{_ENTRANTS_RULE}, got None"))
        return missing

    def schedule_problems(self, table: Mapping[str, object]) -> list[Problem]:
        """``[schedule]`` (as set in ``table``, the file's) against the format: playing on needs a budget."""
        schedule = table.get("schedule")
        written = schedule if isinstance(schedule, dict) else {}
        until, budget = "until_separated" in written, "max_matches" in written
        if not until:
            return [Problem(("schedule", "max_matches"), "is the budget of until_separated, which is not set")] if budget else []
        if self.format is TournamentFormat.LADDER and budget:
            return [Problem(("schedule", "max_matches"), "the ladder's budget is 'matches'; leave max_matches out")]
        if self.format is not TournamentFormat.LADDER and not budget:
            return [Problem(("schedule", "until_separated"), "needs a budget: add max_matches (the most matches to play)")]
        return []


def read_file_text(file: Path, error: type[ValueError] = ValueError) -> str:
    """The UTF-8 text of ``file``; ``ConfigError`` with the one problem when it cannot be read."""
    try:
        return file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(file, [f"cannot read the file: {exc.strerror}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(file, ["not a UTF-8 text file"]) from None


def load_config(path: Path | str) -> TournamentConfig:
    """Read and validate a tournament file; raises :class:`ConfigError` listing every problem."""
    file = Path(path)
    return parse_config(read_file_text(file), file)


def read_toml(text: str, file: Path) -> dict[str, object]:
    """The TOML table of ``text``; :class:`ConfigError` if it does not parse."""
    try:
        return parse_toml(text)
    except TomlError as exc:
        raise ConfigError(file, [str(exc)]) from None


def parse_config(text: str, path: Path | str = "<tournament>") -> TournamentConfig:
    """Validate the text of a tournament file (relative entrant paths are taken from ``path``'s folder)."""
    file = Path(path)
    table = read_toml(text, file)
    read, problems = validate(TournamentFile, table)
    if read is None:
        raise ConfigError.of(file, text, problems)
    problems += read.required(table)
    entrants = read.entrants or []
    bad_keys = {problem.key for problem in problems}
    if entrants and read.table_size > len(entrants) and "table_size" in table and ("table_size",) not in bad_keys:
        problems.append(Problem(("table_size",), f"is {read.table_size} but there are only {len(entrants)} entrants"))
    rules = check_rules(read.rules, read.table_size)
    problems += rules.problems
    problems += read.schedule_problems(table)
    if problems or read.name is None:
        raise ConfigError.of(file, text, problems)
    return TournamentConfig(
        name=read.name,
        entrants=tuple(entrants),
        rules=rules.rules,
        base_dir=file.resolve().parent,
        game=game_of(rules.rules, rules.preset),
        description=read.description,
        format=read.format,
        table_size=read.table_size,
        rounds=read.rounds,
        matches=read.matches,
        seed=read.seed,
        parallel=read.parallel,
        **match_settings(read.time, read.seats, read.trueskill),
        executor=read.executor.settings(),
        until_separated=read.schedule.until_separated,
        max_matches=None if read.format is TournamentFormat.LADDER else read.schedule.max_matches,
        source=text,
    )
