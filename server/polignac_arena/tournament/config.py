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

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from polignac import PRESETS, PolignacError, Ruleset
from polignac_arena.games import Game, game_of
from polignac_arena.ratings import RatingEnv
from polignac_arena.seats.base import SeatLimits
from polignac_arena.settings import (
    CLOCK_MAX_MS,
    DEAL_SEED_MAX,
    EXECUTOR_KINDS,
    NAME_RULE,
    ExecutorKind,
    ExecutorSettings,
    SeatKind,
    TimeControl,
    TournamentFormat,
    is_name,
)

__all__ = ["FORMATS", "ConfigError", "TournamentConfig", "TrueSkillSettings", "load_config", "parse_config"]

FORMATS: Final = tuple(form.value for form in TournamentFormat)
_TOP_KEYS: Final = ("name", "description", "entrants", "format", "table_size", "rounds", "matches", "seed", "parallel")
_SECTIONS: Final = ("rules", "time", "seats", "executor", "trueskill", "schedule")


class ConfigError(ValueError):
    """A tournament file with problems; ``problems`` has one line per problem, with its key and line."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.path = Path(path)
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} problem(s):\n" + "\n".join(f"  {p}" for p in problems))


_RATING_DEFAULTS: Final = RatingEnv()


@dataclass(frozen=True)
class TrueSkillSettings:
    """The TrueSkill environment of a tournament; the defaults are :class:`~polignac_arena.ratings.RatingEnv`'s (docs/ratings.md)."""

    mu: float = _RATING_DEFAULTS.mu
    sigma: float = _RATING_DEFAULTS.sigma
    beta: float = _RATING_DEFAULTS.beta
    tau: float = _RATING_DEFAULTS.tau
    draw_probability: float = _RATING_DEFAULTS.draw_probability


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


class _Lines:
    """Finds the line of a key in the TOML text, to point each problem at it."""

    def __init__(self, text: str) -> None:
        self.entries: list[tuple[str, str, int]] = []
        section = ""
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            header = re.match(r"^\[([^\]]+)\]$", line)
            if header:
                section = header.group(1).strip()
                self.entries.append((section, "", number))
                continue
            assignment = re.match(r'^"?([A-Za-z0-9_.-]+)"?\s*=', line)
            if assignment:
                self.entries.append((section, assignment.group(1), number))

    def where(self, section: str, key: str = "") -> str:
        """``line N: `` for the setting, or the nearest line that sets its table; empty if none is found."""
        dotted = ".".join(part for part in (section, key) if part)
        top, _, rest = dotted.partition(".")
        candidates: list[Callable[[str, str], bool]] = [
            lambda s, k: s == section and k == key,  # key = value under [section]
            lambda s, k: s == "" and k == dotted,  # section.key = value at the top
            lambda s, k: s == section and not k and not key,  # the [section] header itself
            lambda s, k: s == dotted and not k,  # a [section.key] sub-table header
            lambda s, k: s == top and k == rest,  # [top] then sub.key = value
            lambda s, k: s == top and k == rest.split(".")[0],  # [top] then sub = { inline table }
            lambda s, k: s == "" and (k == top or k.startswith(top + ".")),  # top = { inline table }
            lambda s, k: s == section and not k,  # the [section] header, for a key not found under it
        ]
        for matches in candidates:
            for entry_section, entry_key, number in self.entries:
                if matches(entry_section, entry_key):
                    return f"line {number}: "
        return ""


def load_config(path: Path | str) -> TournamentConfig:
    """Read and validate a tournament file; raises :class:`ConfigError` listing every problem."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(file, [f"cannot read the file: {exc.strerror}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(file, ["not a UTF-8 text file"]) from None
    return parse_config(text, file)


class Checker:
    """Reads a parsed TOML table and collects one problem per bad setting, each with its line."""

    def __init__(self, table: dict[str, Any], text: str) -> None:
        self.table = table
        self.lines = _Lines(text)
        self.problems: list[str] = []

    def bad(self, section: str, key: str, message: str) -> None:
        dotted = f"{section}.{key}" if section and key else section or key
        self.problems.append(f"{self.lines.where(section, key)}{dotted!r}: {message}")

    def integer(self, section: str, source: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
        value = source.get(key, default)
        if type(value) is not int or not lo <= value <= hi:
            self.bad(section, key, f"must be an integer in {lo}..{hi}, got {value!r}")
            return default
        return value

    def number(self, section: str, source: dict[str, Any], key: str, default: float, lo: float, hi: float) -> float:
        value = source.get(key, default)
        if type(value) not in (int, float) or not lo <= value <= hi:
            self.bad(section, key, f"must be a number in {lo:g}..{hi:g}, got {value!r}")
            return default
        return float(value)

    def boolean(self, section: str, source: dict[str, Any], key: str, default: bool) -> bool:
        value = source.get(key, default)
        if type(value) is not bool:
            self.bad(section, key, f"must be true or false, got {value!r}")
            return default
        return value

    def text(self, section: str, source: dict[str, Any], key: str, default: str | None) -> str | None:
        value = source.get(key, default)
        if value is not None and not isinstance(value, str):
            self.bad(section, key, f"must be text, got {value!r}")
            return default
        return value

    def section_table(self, name: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
        value = (self.table if source is None else source).get(name.rsplit(".", 1)[-1], {})
        if not isinstance(value, dict):
            self.bad(name, "", f"must be a table ([{name}]), got {value!r}")
            return {}
        return value

    def unknown(self, section: str, source: dict[str, Any], known: tuple[str, ...]) -> None:
        for key in source:
            if key not in known:
                self.bad(section, str(key), f"unknown setting; known: {', '.join(known)}")

    def rules(self, table_size: int) -> tuple[Ruleset, str]:
        """The ``[rules]`` table for tables of ``table_size``: the ruleset and the preset it starts from."""
        rules_table = dict(self.section_table("rules"))
        rules_table.setdefault("players", table_size)
        if rules_table.get("players") != table_size:
            self.bad("rules", "players", f"is set by table_size ({table_size}); leave it out of [rules]")
        rules = Ruleset()
        # Each setting on its own first, so that every bad value is reported, then all together.
        variant = rules_table.get("variant", "classic")
        base = variant if isinstance(variant, str) and variant in PRESETS else "classic"  # a bad variant is reported once
        single_problems = 0
        for key, value in rules_table.items():
            try:
                Ruleset.from_dict({"variant": base, key: value} if key != "variant" else {"variant": value})
            except PolignacError as exc:
                single_problems += 1
                self.bad("rules", str(key), str(exc))
        if not single_problems:
            try:
                rules = Ruleset.from_dict(rules_table)
            except PolignacError as exc:
                named = re.search(r"'([a-z_]+)'", str(exc))
                self.bad("rules", named.group(1) if named else "", str(exc))
        return rules, base

    def time(self) -> TimeControl:
        """The ``[time]`` table."""
        time_table = self.section_table("time")
        self.unknown("time", time_table, ("move_ms", "bank_ms", "startup_ms"))
        return TimeControl(
            move_ms=self.integer("time", time_table, "move_ms", 1000, TimeControl.lowest("move_ms"), CLOCK_MAX_MS),
            bank_ms=self.integer("time", time_table, "bank_ms", 10_000, TimeControl.lowest("bank_ms"), CLOCK_MAX_MS),
            startup_ms=self.integer("time", time_table, "startup_ms", 10_000, TimeControl.lowest("startup_ms"), CLOCK_MAX_MS),
        )

    def seats(self, default_kind: SeatKind = SeatKind.PROCESS) -> tuple[SeatKind, bool, SeatLimits]:
        """The ``[seats]`` table: the seat kind, whether the bots are trusted, the caps."""
        seats_table = self.section_table("seats")
        self.unknown("seats", seats_table, ("kind", "trusted", "limits"))
        kind_text = seats_table.get("kind", default_kind.value)
        try:
            seat_kind = SeatKind(kind_text)
        except ValueError:
            self.bad("seats", "kind", f"must be one of {', '.join(k.value for k in SeatKind)}, got {kind_text!r}")
            seat_kind = default_kind
        trusted = self.boolean("seats", seats_table, "trusted", False)
        limits_table = seats_table.get("limits", {})
        if not isinstance(limits_table, dict):
            self.bad("seats.limits", "", f"must be a table, got {limits_table!r}")
            limits_table = {}
        known_limits = ("memory_mb", "cpus", "pids", "cpu_seconds", "file_size_mb", "open_files", "tmpfs_mb")
        self.unknown("seats.limits", limits_table, known_limits)
        defaults = SeatLimits()
        limits = SeatLimits(
            memory_mb=self.integer("seats.limits", limits_table, "memory_mb", defaults.memory_mb, 32, 65_536),
            cpus=self.number("seats.limits", limits_table, "cpus", defaults.cpus, 0.1, 64),
            pids=self.integer("seats.limits", limits_table, "pids", defaults.pids, 8, 4096),
            cpu_seconds=self.integer("seats.limits", limits_table, "cpu_seconds", defaults.cpu_seconds, 1, 86_400),
            file_size_mb=self.integer("seats.limits", limits_table, "file_size_mb", defaults.file_size_mb, 1, 10_240),
            open_files=self.integer("seats.limits", limits_table, "open_files", defaults.open_files, 16, 65_536),
            tmpfs_mb=self.integer("seats.limits", limits_table, "tmpfs_mb", defaults.tmpfs_mb, 1, 10_240),
        )
        return seat_kind, trusted, limits

    def executor(self) -> ExecutorSettings:
        """The ``[executor]`` table."""
        table = self.section_table("executor")
        self.unknown("executor", table, ("kind", "address", "cpus_per_match"))
        kind = table.get("kind", "local")
        if kind not in EXECUTOR_KINDS:
            self.bad("executor", "kind", f"must be one of {', '.join(EXECUTOR_KINDS)}, got {kind!r}")
            kind = "local"
        address = self.text("executor", table, "address", None)
        if address is not None and not re.fullmatch(r"\[?[A-Za-z0-9.:-]+\]?:[0-9]{1,5}", address.strip()):
            self.bad("executor", "address", f"must be the Ray head's HOST:PORT, got {address!r}")
            address = None
        cpus = self.number("executor", table, "cpus_per_match", 1.0, 0.01, 256)
        return ExecutorSettings(ExecutorKind(kind), address.strip() if address else None, cpus)

    def schedule(self, form: str) -> tuple[float | None, int | None]:
        """The ``[schedule]`` table for tournaments of format ``form``: ``until_separated`` and ``max_matches``."""
        table = self.section_table("schedule")
        self.unknown("schedule", table, ("until_separated", "max_matches"))
        until = None if "until_separated" not in table else self.number("schedule", table, "until_separated", 0.95, 0.5, 0.9999)
        budget = None if "max_matches" not in table else self.integer("schedule", table, "max_matches", 1, 1, 1_000_000)
        if until is None:
            if budget is not None:
                self.bad("schedule", "max_matches", "is the budget of until_separated, which is not set")
            return None, None
        if form == "ladder" and "max_matches" in table:
            self.bad("schedule", "max_matches", "the ladder's budget is 'matches'; leave max_matches out")
            budget = None
        elif form != "ladder" and "max_matches" not in table:
            self.bad("schedule", "until_separated", "needs a budget: add max_matches (the most matches to play)")
        return until, budget

    def trueskill(self, ts_defaults: TrueSkillSettings | None = None) -> TrueSkillSettings:
        """The ``[trueskill]`` table; a setting it leaves out takes ``ts_defaults``' (default: a tournament's)."""
        ts_table = self.section_table("trueskill")
        self.unknown("trueskill", ts_table, ("mu", "sigma", "beta", "tau", "draw_probability"))
        ts_defaults = ts_defaults or TrueSkillSettings()
        return TrueSkillSettings(
            mu=self.number("trueskill", ts_table, "mu", ts_defaults.mu, -1e6, 1e6),
            sigma=self.number("trueskill", ts_table, "sigma", ts_defaults.sigma, 1e-3, 1e6),
            beta=self.number("trueskill", ts_table, "beta", ts_defaults.beta, 1e-3, 1e6),
            tau=self.number("trueskill", ts_table, "tau", ts_defaults.tau, 0, 1e6),
            draw_probability=self.number("trueskill", ts_table, "draw_probability", ts_defaults.draw_probability, 0, 0.99),
        )


def read_toml(text: str, file: Path) -> dict[str, Any]:
    """The TOML table of ``text``; :class:`ConfigError` if it does not parse."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, [f"not valid TOML: {exc}"]) from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(file, ["not valid TOML: arrays or tables nested too deeply"]) from None


def parse_config(text: str, path: Path | str = "<tournament>") -> TournamentConfig:
    """Validate the text of a tournament file (relative entrant paths are taken from ``path``'s folder)."""
    file = Path(path)
    table = read_toml(text, file)
    check = Checker(table, text)
    bad = check.bad
    check.unknown("", table, _TOP_KEYS + _SECTIONS)

    name = table.get("name")
    if not is_name(name):
        bad("", "name", f"must be {NAME_RULE}, got {name!r}")
        name = "tournament"
    description = table.get("description", "")
    if not isinstance(description, str):
        bad("", "description", f"must be text, got {description!r}")
        description = ""
    entrants = table.get("entrants")
    if not isinstance(entrants, list) or not entrants or not all(isinstance(e, str) and e.strip() for e in entrants):
        bad("", "entrants", f"must be a list of bots (built-in names, folders, or 'name@version'), got {entrants!r}")
        entrants = []
    elif len(set(entrants)) != len(entrants):
        duplicates = sorted({e for e in entrants if entrants.count(e) > 1})
        bad("", "entrants", f"each entrant once, but {', '.join(map(repr, duplicates))} appear more than once")
    form = table.get("format", "round-robin")
    if form not in FORMATS:
        bad("", "format", f"must be one of {', '.join(FORMATS)}, got {form!r}")
        form = "round-robin"
    table_size = check.integer("", table, "table_size", 4, 3, 6)
    if entrants and table_size > len(entrants) and table.get("table_size", 4) == table_size:
        bad("", "table_size", f"is {table_size} but there are only {len(entrants)} entrants")
    rounds = check.integer("", table, "rounds", 1, 1, 1000)
    matches = check.integer("", table, "matches", 100, 1, 1_000_000)
    seed = check.integer("", table, "seed", 1, 0, DEAL_SEED_MAX)
    parallel = check.integer("", table, "parallel", 1, 1, 64)
    rules, base = check.rules(table_size)
    clock = check.time()
    seat_kind, trusted, limits = check.seats()
    executor = check.executor()
    trueskill = check.trueskill()
    until_separated, max_matches = check.schedule(form)
    if check.problems:
        raise ConfigError(file, check.problems)
    return TournamentConfig(
        name=name,
        entrants=tuple(e.strip() for e in entrants),
        rules=rules,
        base_dir=file.resolve().parent,
        game=game_of(rules, base),
        description=description,
        format=TournamentFormat(form),
        table_size=table_size,
        rounds=rounds,
        matches=matches,
        seed=seed,
        parallel=parallel,
        time=clock,
        seat_kind=seat_kind,
        trusted=trusted,
        limits=limits,
        trueskill=trueskill,
        executor=executor,
        until_separated=until_separated,
        max_matches=max_matches,
        source=text,
    )
