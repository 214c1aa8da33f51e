"""League files: what `polignac league serve --config league.toml` runs, checked as tournament files are.

A league file looks like this (every setting has a default; paths are relative to the file)::

    name = "main"                  # the league's name: its results and ratings in the store
    description = ""               # shown on its page
    store = "league.db"            # the SQLite store
    data = "league-data"           # uploaded archives, unpacked versions, match records
    table_size = 4                 # players per match, 3..6
    parallel = 2                   # matches at once, 1..64
    seed = 1                       # every match's deal derives from it and the match's index

    [rules]                        # as in tournament files: the game every bot must declare
    variant = "classic"
    [time]                         # milliseconds: move_ms, bank_ms, startup_ms
    [seats]                        # kind (process | docker), limits: as in tournament files
    [trueskill]                    # mu, sigma, beta, tau, draw_probability (docs/ratings.md);
                                   # as a tournament's, but tau = 25/3000: a small drift

    [http]
    address = "127.0.0.1:8080"     # web pages, JSON API, the authors' API
    [grpc]
    address = "127.0.0.1:50051"    # remote bots: the lobby and their matches' Play streams
    [tls]                          # required when an address is not loopback
    cert = "server.pem"            # PEM certificate chain
    key = "server-key.pem"         # its private key

    [limits]                       # per author, per upload, per address
    uploads_per_hour = 10
    versions_kept = 5
    active_bots = 3
    archive_mb = 20
    unpacked_mb = 100
    files = 2000

    [validation]
    workers = 2
    build_timeout_s = 300

    [ladder]
    new_version_matches = 10       # a new version's first matches come before others'
    rate_factor = 2.0              # no active bot plays more than this times another's share

    [remote]
    reattach_grace_s = 10          # a remote seat may come back this long after its stream broke
    reply_ms = 10000               # a remote bot answers its assignment within this
    decline_pause_s = 30           # a bot that declines (or does not answer) is offered no match for this long
    pause_after = 3                # ... and after this many in a row,
    pause_s = 300                  # ... for this long
    idle_minutes = 60              # an offline remote bot stops counting as active this long after it left

    [drain]
    deadline_s = 30                # on SIGTERM, running matches may finish for this long

    [executor]                     # where matches of uploaded versions run (docs/cluster.md)
    kind = "local"                 # local | ray: matches with a remote bot are always played here
    address = "10.0.0.5:6379"      # ray: the cluster head's HOST:PORT (default: RAY_ADDRESS)
    cpus_per_match = 1.0

The connection limits of ``[http]`` and ``[grpc]``, the other keys of ``[limits]`` and their
defaults are declared in :mod:`polignac_arena.league.limits` and listed in docs/league.md.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from polignac import Ruleset
from polignac_arena.games import Game, game_of
from polignac_arena.league.limits import LIMIT_TABLES, GrpcLimits, HttpLimits, LeagueLimits, ValidationSettings
from polignac_arena.loopback import is_loopback_host as is_loopback
from polignac_arena.ratings import LEAGUE_TAU
from polignac_arena.seats.base import SeatLimits
from polignac_arena.settings import LEAGUE_SEED_MAX, NAME_RULE, ExecutorSettings, SeatKind, TimeControl, is_name
from polignac_arena.tournament.config import Checker, ConfigError, TrueSkillSettings, read_toml

__all__ = ["LEAGUE_TRUESKILL", "LeagueConfig", "ListenAddress", "is_loopback", "load_league_config", "parse_league_config"]

_TOP_KEYS: Final = ("name", "description", "store", "data", "table_size", "parallel", "seed")
LEAGUE_TRUESKILL: Final = TrueSkillSettings(tau=LEAGUE_TAU)
"""A league's defaults: a tournament's, with a small drift (docs/ratings.md)."""
_SECTIONS: Final = (
    "rules", "time", "seats", "trueskill", "http", "grpc", "tls", "limits", "validation", "ladder", "remote", "drain", "executor",
)  # fmt: skip
L = TypeVar("L")


@dataclass(frozen=True)
class ListenAddress:
    """A ``host:port`` to listen on."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class LeagueConfig:
    """A validated league file."""

    name: str
    rules: Ruleset
    base_dir: Path
    store: Path
    data: Path
    game: Game = field(default_factory=lambda: Game("classic"))
    description: str = ""
    table_size: int = 4
    parallel: int = 2
    seed: int = 1
    time: TimeControl = field(default_factory=TimeControl)
    seat_kind: SeatKind = SeatKind.PROCESS
    trusted: bool = False
    limits: SeatLimits = field(default_factory=SeatLimits)
    trueskill: TrueSkillSettings = field(default_factory=lambda: LEAGUE_TRUESKILL)
    http: ListenAddress = ListenAddress("127.0.0.1", 8080)
    grpc: ListenAddress = ListenAddress("127.0.0.1", 50051)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    grpc_limits: GrpcLimits = field(default_factory=GrpcLimits)
    author_limits: LeagueLimits = field(default_factory=LeagueLimits)
    """``[limits]``: what one author, one upload and one address may do."""
    validation: ValidationSettings = field(default_factory=ValidationSettings)
    new_version_matches: int = 10
    rate_factor: float = 2.0
    reattach_grace_s: float = 10.0
    reply_ms: int = 10_000
    decline_pause_s: float = 30.0
    pause_after: int = 3
    pause_s: float = 300.0
    idle_minutes: float = 60.0
    drain_s: float = 30.0
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    """Where matches of uploaded versions run; not part of what the results depend on."""
    source: str = ""

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    def identity(self) -> dict[str, Any]:
        """What the league's results depend on: stored with its tournament, and a change to it is refused."""
        return {
            "league": self.name,
            "rules": self.rules.stored_dict(),
            "table_size": self.table_size,
            "time": {"move_ms": self.time.move_ms, "bank_ms": self.time.bank_ms, "startup_ms": self.time.startup_ms},
            "trueskill": vars(self.trueskill),
        }


def load_league_config(path: Path | str) -> LeagueConfig:
    """Read and validate a league file; raises :class:`ConfigError` listing every problem."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(file, [f"cannot read the file: {exc.strerror}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(file, ["not a UTF-8 text file"]) from None
    return parse_league_config(text, file)


def _limits(check: Checker, section: str, table: dict[str, Any], cls: type[L]) -> L:
    """The limits of ``table`` (``[section]``), each key's default and bounds taken from the field of ``cls``."""
    values: dict[str, Any] = {}
    for spec in dataclasses.fields(cls):  # type: ignore[arg-type]  # every class of LIMIT_TABLES is a dataclass
        if spec.name not in table or "lo" not in spec.metadata:
            continue
        lo, hi = spec.metadata["lo"], spec.metadata["hi"]
        if isinstance(spec.default, int):
            values[spec.name] = check.integer(section, table, spec.name, spec.default, int(lo), int(hi))
        else:
            values[spec.name] = check.number(section, table, spec.name, float(spec.default), lo, hi)  # type: ignore[arg-type]
    return cls(**values)


def _limit_keys(section: str) -> tuple[str, ...]:
    cls = LIMIT_TABLES[section]
    return tuple(spec.name for spec in dataclasses.fields(cls) if "key" not in spec.metadata)  # a "key" is set elsewhere


def _proxies(check: Checker, table: dict[str, Any]) -> tuple[str, ...]:
    """``[http] trusted_proxies``: addresses or networks (``10.0.0.0/8``, ``::1``), checked."""
    value = table.get("trusted_proxies", [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        check.bad("http", "trusted_proxies", f"must be a list of addresses or networks, got {value!r}")
        return ()
    networks = []
    for item in value:
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            check.bad("http", "trusted_proxies", f"{item!r} is not an IP address or network")
            return ()
    return tuple(networks)


def _address(check: Checker, section: str, default: ListenAddress) -> ListenAddress:
    table = check.section_table(section)
    check.unknown(section, table, ("address", *_limit_keys(section)))
    text = table.get("address", str(default))
    if not isinstance(text, str) or ":" not in text:
        check.bad(section, "address", f"must be 'host:port', got {text!r}")
        return default
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        check.bad(section, "address", f"must be 'host:port' with a port in 0..65535, got {text!r}")
        return default
    return ListenAddress(host, int(port))


def parse_league_config(text: str, path: Path | str = "<league>") -> LeagueConfig:
    """Validate the text of a league file (relative paths are taken from ``path``'s folder)."""
    file = Path(path)
    table = read_toml(text, file)
    check = Checker(table, text)
    check.unknown("", table, _TOP_KEYS + _SECTIONS)
    base = file.resolve().parent
    name = table.get("name", "league")
    if not is_name(name):
        check.bad("", "name", f"must be {NAME_RULE}, got {name!r}")
        name = "league"
    description = check.text("", table, "description", "") or ""
    store = base / (check.text("", table, "store", "league.db") or "league.db")
    data = base / (check.text("", table, "data", "league-data") or "league-data")
    table_size = check.integer("", table, "table_size", 4, 3, 6)
    parallel = check.integer("", table, "parallel", 2, 1, 64)
    seed = check.integer("", table, "seed", 1, 0, LEAGUE_SEED_MAX)
    rules, preset = check.rules(table_size)
    clock = check.time()
    seat_kind, trusted, limits = check.seats()
    if seat_kind is SeatKind.INPROCESS:
        check.bad("seats", "kind", "must be process or docker in a league: its bots are strangers' code")
    trueskill = check.trueskill(LEAGUE_TRUESKILL)
    executor = check.executor()
    http = _address(check, "http", ListenAddress("127.0.0.1", 8080))
    grpc = _address(check, "grpc", ListenAddress("127.0.0.1", 50051))

    tls_table = check.section_table("tls")
    check.unknown("tls", tls_table, ("cert", "key"))
    cert_text, key_text = check.text("tls", tls_table, "cert", None), check.text("tls", tls_table, "key", None)
    tls_cert = base / cert_text if cert_text else None
    tls_key = base / key_text if key_text else None
    if (tls_cert is None) != (tls_key is None):
        check.bad("tls", "key" if tls_key is None else "cert", "give both cert and key, or neither")
    for key, value in (("cert", tls_cert), ("key", tls_key)):
        if value is not None and not value.is_file():
            check.bad("tls", key, f"no such file: {str(value)!r}")
    if tls_cert is None:
        for section, where in (("http", http), ("grpc", grpc)):
            if not where.loopback:
                check.bad(
                    section,
                    "address",
                    f"{str(where)!r} is not a loopback address: give [tls] cert and key (plaintext is served on loopback only)",
                )

    http_table, grpc_table = check.section_table("http"), check.section_table("grpc")
    http_limits = dataclasses.replace(_limits(check, "http", http_table, HttpLimits), trusted_proxies=_proxies(check, http_table))
    limits_table, validation_table = check.section_table("limits"), check.section_table("validation")
    check.unknown("limits", limits_table, _limit_keys("limits"))
    check.unknown("validation", validation_table, _limit_keys("validation"))
    ladder = check.section_table("ladder")
    check.unknown("ladder", ladder, ("new_version_matches", "rate_factor"))
    remote = check.section_table("remote")
    check.unknown("remote", remote, ("reattach_grace_s", "reply_ms", "decline_pause_s", "pause_after", "pause_s", "idle_minutes"))
    drain = check.section_table("drain")
    check.unknown("drain", drain, ("deadline_s",))
    idle_minutes = check.number("remote", remote, "idle_minutes", 60.0, 0, 525_600)
    config = LeagueConfig(
        name=name,
        rules=rules,
        base_dir=base,
        store=store,
        data=data,
        game=game_of(rules, preset),
        description=description,
        table_size=table_size,
        parallel=parallel,
        seed=seed,
        time=clock,
        seat_kind=seat_kind,
        trusted=trusted,
        limits=limits,
        trueskill=trueskill,
        http=http,
        grpc=grpc,
        tls_cert=tls_cert,
        tls_key=tls_key,
        http_limits=http_limits,
        grpc_limits=_limits(check, "grpc", grpc_table, GrpcLimits),
        author_limits=dataclasses.replace(_limits(check, "limits", limits_table, LeagueLimits), remote_idle_s=idle_minutes * 60),
        validation=_limits(check, "validation", validation_table, ValidationSettings),
        new_version_matches=check.integer("ladder", ladder, "new_version_matches", 10, 0, 10_000),
        rate_factor=check.number("ladder", ladder, "rate_factor", 2.0, 1.0, 100.0),
        reattach_grace_s=check.number("remote", remote, "reattach_grace_s", 10.0, 0, 600),
        reply_ms=check.integer("remote", remote, "reply_ms", 10_000, 100, 600_000),
        decline_pause_s=check.number("remote", remote, "decline_pause_s", 30.0, 0, 86_400),
        pause_after=check.integer("remote", remote, "pause_after", 3, 1, 1000),
        pause_s=check.number("remote", remote, "pause_s", 300.0, 0, 86_400),
        idle_minutes=idle_minutes,
        drain_s=check.number("drain", drain, "deadline_s", 30.0, 0, 3600),
        executor=executor,
        source=text,
    )
    if check.problems:
        raise ConfigError(file, check.problems)
    return config
