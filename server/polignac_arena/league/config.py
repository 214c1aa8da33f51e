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
    seats_ahead = 1                # matches whose seats start while every table plays (0: none)

    [remote]
    reattach_grace_s = 10          # a remote seat may come back this long after its stream broke
    reply_ms = 10000               # a remote bot answers its assignment within this
    decline_pause_s = 30           # a bot that declines (or does not answer) is offered no match for this long
    pause_after = 3                # ... and after this many in a row,
    pause_s = 300                  # ... for this long
    idle_minutes = 60              # an offline remote bot stops counting as active this long after it left

    [drain]
    deadline_s = 30                # on SIGTERM, running matches may finish for this long

    [referees]                     # matches with a remote bot are refereed in processes of their own
    processes = 2                  # default 1: on the league process's referee (resumable after a restart)
    matches_per_process = 32       # matches one process referees at once (more wait for room)
    first_port = 0                 # 0: ports the OS chooses; else process i listens on first_port + i
    public_host = ""               # the host in the address bots are sent to (default: the [grpc] host)
    hang_s = 30                    # a process that answers nothing this long is killed and replaced
    on_ray_nodes = false           # true (with the ray executor): the processes are Ray tasks on the nodes
    cpus_per_referee = 1.0         # on_ray_nodes: the Ray CPUs each reserves on its node

    [executor]                     # where matches of uploaded versions run (docs/cluster.md)
    kind = "local"                 # local | ray: matches with a remote bot are refereed per [referees]
    address = "10.0.0.5:6379"      # ray: the cluster head's HOST:PORT (default: RAY_ADDRESS)
    cpus_per_match = 1.0

The connection limits of ``[http]`` and ``[grpc]``, the other keys of ``[limits]`` and their
defaults are declared in :mod:`polignac_arena.league.limits` and listed in docs/league.md.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

from pydantic import AfterValidator, BaseModel, Field, StrictStr, create_model, field_validator
from pydantic.fields import FieldInfo

from polignac import Ruleset
from polignac.jsontypes import JsonObject
from polignac_arena.games import Game, game_of
from polignac_arena.league.limits import LIMIT_TABLES, GrpcLimits, HttpLimits, LeagueLimits, ValidationSettings
from polignac_arena.loopback import is_loopback_host as is_loopback
from polignac_arena.ratings import LEAGUE_TAU
from polignac_arena.seats.base import SeatLimits
from polignac_arena.settings import LEAGUE_SEED_MAX, ExecutorSettings, SeatKind, TimeControl
from polignac_arena.toml_files import NAME_MUST, FileModel, Problem, checked_name, invalid, validate
from polignac_arena.tournament.config import ConfigError, TrueSkillSettings, read_file_text, read_toml
from polignac_arena.tournament.sections import ExecutorSection, SeatsSection, TimeSection, TrueSkillSection, check_rules, match_settings

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "LEAGUE_TRUESKILL",
    "LeagueConfig",
    "LeagueFile",
    "ListenAddress",
    "RefereeSettings",
    "is_loopback",
    "load_league_config",
    "parse_league_config",
]

LEAGUE_TRUESKILL: Final = TrueSkillSettings(tau=LEAGUE_TAU)
"""A league's defaults: a tournament's, with a small drift (docs/ratings.md)."""
L = TypeVar("L", bound="DataclassInstance")
T = TypeVar("T", bound=FileModel)


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

    @classmethod
    def parse(cls, text: str) -> ListenAddress:
        """``host:port`` (``[v6]:port`` too); ``ValueError`` with the problem."""
        if ":" not in text:
            raise ValueError(f"must be 'host:port', got {text!r}")
        host, _, port = text.rpartition(":")
        host = host.strip("[]")
        if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"must be 'host:port' with a port in 0..65535, got {text!r}")
        return cls(host, int(port))


@dataclass(frozen=True)
class RefereeSettings:
    """``[referees]``: the referee processes of matches with remote seats (:mod:`polignac_arena.league.referee_pool`)."""

    processes: int = 1
    """Processes to start; 0 or 1: none, such matches are refereed in the league process (on Ray nodes: 1 is one)."""
    matches_per_process: int = 32
    first_port: int = 0
    public_host: str = ""
    hang_s: float = 30.0
    on_ray_nodes: bool = False
    """The processes are Ray tasks on the cluster's nodes (:mod:`polignac_arena.league.ray_referees`)."""
    cpus_per_referee: float = 1.0
    """The Ray CPUs each of those reserves on its node."""

    @property
    def enabled(self) -> bool:
        return self.processes > 1 or self.on_ray_nodes


_HTTP: Final = ListenAddress("127.0.0.1", 8080)
_GRPC: Final = ListenAddress("127.0.0.1", 50051)


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
    http: ListenAddress = _HTTP
    grpc: ListenAddress = _GRPC
    tls_cert: Path | None = None
    tls_key: Path | None = None
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    grpc_limits: GrpcLimits = field(default_factory=GrpcLimits)
    author_limits: LeagueLimits = field(default_factory=LeagueLimits)
    """``[limits]``: what one author, one upload and one address may do."""
    validation: ValidationSettings = field(default_factory=ValidationSettings)
    new_version_matches: int = 10
    rate_factor: float = 2.0
    seats_ahead: int = 1
    """Matches whose seats may be started while every table plays (:mod:`polignac_arena.league.seats_ahead`)."""
    reattach_grace_s: float = 10.0
    reply_ms: int = 10_000
    decline_pause_s: float = 30.0
    pause_after: int = 3
    pause_s: float = 300.0
    idle_minutes: float = 60.0
    drain_s: float = 30.0
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    """Where matches of uploaded versions run; not part of what the results depend on."""
    referees: RefereeSettings = field(default_factory=RefereeSettings)
    """Where matches with remote seats are refereed; not part of what the results depend on."""
    source: str = ""

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    def identity(self) -> JsonObject:
        """What the league's results depend on: stored with its tournament, and a change to it is refused."""
        return {
            "league": self.name,
            "rules": self.rules.stored_dict(),
            "table_size": self.table_size,
            "time": {"move_ms": self.time.move_ms, "bank_ms": self.time.bank_ms, "startup_ms": self.time.startup_ms},
            "trueskill": vars(self.trueskill),
        }


class _Listener(FileModel):
    """``[http]`` and ``[grpc]``: the address; their limits are added from :mod:`polignac_arena.league.limits`."""

    address: StrictStr = Field(description="must be 'host:port'")

    @field_validator("address")
    @classmethod
    def _host_and_port(cls, address: str) -> str:
        try:
            ListenAddress.parse(address)
        except ValueError as exc:
            raise invalid(str(exc)) from None
        return address


class _HttpListener(_Listener):
    trusted_proxies: list[StrictStr] = Field(default_factory=list, description="must be a list of addresses or networks")

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, proxies: list[str]) -> list[str]:
        networks = []
        for item in proxies:
            try:
                networks.append(str(ipaddress.ip_network(item, strict=False)))
            except ValueError:
                raise invalid(f"{item!r} is not an IP address or network") from None
        return networks


def _table_model(section: str, base: type[T], **fields: Any) -> type[T]:
    """The model of the limit table ``[section]``: each key's type, default and bounds from its field in :data:`LIMIT_TABLES`."""
    for spec in dataclasses.fields(LIMIT_TABLES[section]):
        if "lo" in spec.metadata:
            kind = int if isinstance(spec.default, int) else float
            fields[spec.name] = (kind, Field(default=spec.default, strict=True, ge=spec.metadata["lo"], le=spec.metadata["hi"]))
    return create_model(f"{section.title()}Table", __base__=base, **fields)


def _address(default: ListenAddress) -> tuple[object, FieldInfo]:
    return (StrictStr, FieldInfo(default=str(default), description="must be 'host:port'"))


_HTTP_TABLE: Final = _table_model("http", _HttpListener, address=_address(_HTTP))
_GRPC_TABLE: Final = _table_model("grpc", _Listener, address=_address(_GRPC))
_LIMITS_TABLE: Final = _table_model("limits", FileModel)
_VALIDATION_TABLE: Final = _table_model("validation", FileModel)


def _read_table(model: type[T], table: Mapping[str, object], section: str, problems: list[Problem]) -> T:
    """``[section]`` as ``model``, its problems added to ``problems`` (with them, the defaults of the bad keys)."""
    values, found = validate(model, table, at=(section,))
    problems += found
    return values if values is not None else model()


def _limits(values: BaseModel, cls: type[L]) -> L:
    """The limits of ``cls`` read from a table's model (its other keys left out)."""
    names = {spec.name for spec in dataclasses.fields(cls)}
    return cls(**{key: value for key, value in values.model_dump().items() if key in names and key != "trusted_proxies"})


class LeagueTrueSkillSection(TrueSkillSection):
    """A league's ``[trueskill]``: a tournament's, with a small drift by default."""

    tau: float = Field(default=LEAGUE_TAU, strict=True, ge=0, le=1e6)


class TlsSection(FileModel):
    """``[tls]``: the certificate chain and its key, both or neither."""

    cert: str | None = Field(default=None, strict=True)
    key: str | None = Field(default=None, strict=True)


class LadderSection(FileModel):
    """``[ladder]``: who plays next."""

    new_version_matches: int = Field(default=10, strict=True, ge=0, le=10_000)
    rate_factor: float = Field(default=2.0, strict=True, ge=1.0, le=100.0)
    seats_ahead: int = Field(default=1, strict=True, ge=0, le=64)


class RemoteSection(FileModel):
    """``[remote]``: bots that connect from their authors' machines."""

    reattach_grace_s: float = Field(default=10.0, strict=True, ge=0, le=600)
    reply_ms: int = Field(default=10_000, strict=True, ge=100, le=600_000)
    decline_pause_s: float = Field(default=30.0, strict=True, ge=0, le=86_400)
    pause_after: int = Field(default=3, strict=True, ge=1, le=1000)
    pause_s: float = Field(default=300.0, strict=True, ge=0, le=86_400)
    idle_minutes: float = Field(default=60.0, strict=True, ge=0, le=525_600)


class DrainSection(FileModel):
    """``[drain]``: how a stopping league ends its matches."""

    deadline_s: float = Field(default=30.0, strict=True, ge=0, le=3600)


class RefereesSection(FileModel):
    """``[referees]``: processes that referee matches with remote seats."""

    processes: int | None = Field(default=None, strict=True, ge=0, le=64)
    matches_per_process: int = Field(default=32, strict=True, ge=1, le=1000)
    first_port: int = Field(default=0, strict=True, ge=0, le=65535 - 64)
    public_host: StrictStr = Field(default="", max_length=253)
    hang_s: float = Field(default=30.0, strict=True, ge=1, le=3600)
    on_ray_nodes: bool = Field(default=False, strict=True)
    cpus_per_referee: float = Field(default=1.0, strict=True, ge=0.01, le=256)

    def settings(self, grpc_host: str) -> RefereeSettings:
        """The settings; left out, ``processes`` is 1: matches are refereed in the league process, where a restart
        resumes them from their journals (a match on a referee process is aborted by a restart instead)."""
        processes = 1 if self.processes is None else self.processes
        return RefereeSettings(
            processes, self.matches_per_process, self.first_port, self.public_host, self.hang_s, self.on_ray_nodes, self.cpus_per_referee
        )


class LeagueFile(FileModel):
    """A league file as written (the module's docstring shows one); every setting has a default."""

    name: Annotated[StrictStr, AfterValidator(checked_name)] = Field(default="league", description=NAME_MUST)
    description: StrictStr = ""
    store: StrictStr = "league.db"
    data: StrictStr = "league-data"
    table_size: int = Field(default=4, strict=True, ge=3, le=6)
    parallel: int = Field(default=2, strict=True, ge=1, le=64)
    seed: int = Field(default=1, strict=True, ge=0, le=LEAGUE_SEED_MAX)
    rules: dict[str, object] = Field(default_factory=dict, description="must be a table ([rules])")
    time: TimeSection = TimeSection()
    seats: SeatsSection = SeatsSection()
    trueskill: LeagueTrueSkillSection = LeagueTrueSkillSection()
    http: dict[str, object] = Field(default_factory=dict, description="must be a table ([http])")
    grpc: dict[str, object] = Field(default_factory=dict, description="must be a table ([grpc])")
    tls: TlsSection = TlsSection()
    limits: dict[str, object] = Field(default_factory=dict, description="must be a table ([limits])")
    validation: dict[str, object] = Field(default_factory=dict, description="must be a table ([validation])")
    ladder: LadderSection = LadderSection()
    remote: RemoteSection = RemoteSection()
    drain: DrainSection = DrainSection()
    executor: ExecutorSection = ExecutorSection()
    referees: RefereesSection = RefereesSection()


def load_league_config(path: Path | str) -> LeagueConfig:
    """Read and validate a league file; raises :class:`ConfigError` listing every problem."""
    file = Path(path)
    return parse_league_config(read_file_text(file), file)


def _tls_problems(read: LeagueFile, base: Path, http: ListenAddress, grpc: ListenAddress) -> list[Problem]:
    """Both of cert and key or neither, files that exist, and plaintext on loopback only."""
    problems = []
    cert, key = read.tls.cert, read.tls.key
    if bool(cert) != bool(key):
        problems.append(Problem(("tls", "key" if not key else "cert"), "give both cert and key, or neither"))
    for name, value in (("cert", cert), ("key", key)):
        if value and not (base / value).is_file():
            problems.append(Problem(("tls", name), f"no such file: {str(base / value)!r}"))
    if not cert:
        for section, where in (("http", http), ("grpc", grpc)):
            if not where.loopback:
                message = f"{str(where)!r} is not a loopback address: give [tls] cert and key (plaintext is served on loopback only)"
                problems.append(Problem((section, "address"), message))
    return problems


def _ray_referee_problems(read: LeagueFile, referees: RefereeSettings) -> list[Problem]:
    """Referees on Ray nodes: at least one, and TLS unless the cluster is on loopback (a node serves plaintext on loopback only).

    That they need the ray executor is checked when the league starts: ``league serve --executor ray`` may choose it.
    """
    if not referees.on_ray_nodes:
        return []
    problems = []
    if referees.processes < 1:
        problems.append(Problem(("referees", "processes"), "must be 1 or more with on_ray_nodes: the referees on Ray nodes"))
    if referees.public_host:
        message = "does not apply with on_ray_nodes: each node names itself (set POLIGNAC_REFEREE_HOST on the node)"
        problems.append(Problem(("referees", "public_host"), message))
    address = read.executor.address
    on_loopback = address is not None and is_loopback(address.rpartition(":")[0].strip("[]"))
    if not read.tls.cert and not on_loopback:
        message = "referees on Ray nodes serve on the nodes' addresses: give [tls] cert and key (plaintext is served on loopback only)"
        problems.append(Problem(("referees", "on_ray_nodes"), message))
    return problems


def _wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return host == ""


def parse_league_config(text: str, path: Path | str = "<league>") -> LeagueConfig:
    """Validate the text of a league file (relative paths are taken from ``path``'s folder)."""
    file = Path(path)
    table = read_toml(text, file)
    read, problems = validate(LeagueFile, table)
    if read is None:
        raise ConfigError.of(file, text, problems)
    http_table = _read_table(_HTTP_TABLE, read.http, "http", problems)
    grpc_table = _read_table(_GRPC_TABLE, read.grpc, "grpc", problems)
    limits_table = _read_table(_LIMITS_TABLE, read.limits, "limits", problems)
    validation_table = _read_table(_VALIDATION_TABLE, read.validation, "validation", problems)
    base = file.resolve().parent
    rules = check_rules(read.rules, read.table_size)
    problems += rules.problems
    if read.seats.kind is SeatKind.INPROCESS:
        problems.append(Problem(("seats", "kind"), "must be process or docker in a league: its bots are strangers' code"))
    http, grpc = ListenAddress.parse(http_table.address), ListenAddress.parse(grpc_table.address)
    problems += _tls_problems(read, base, http, grpc)
    referees = read.referees.settings(grpc.host)
    problems += _ray_referee_problems(read, referees)
    if referees.enabled and not referees.on_ray_nodes and not referees.public_host and _wildcard(grpc.host):
        message = f"the [grpc] host {grpc.host!r} is no address a bot can reach: name the league's host for its referee processes"
        problems.append(Problem(("referees", "public_host"), message))
    if referees.enabled and referees.first_port and referees.first_port <= grpc.port < referees.first_port + referees.processes:
        message = f"ports {referees.first_port}..{referees.first_port + referees.processes - 1} include the [grpc] port {grpc.port}"
        problems.append(Problem(("referees", "first_port"), message))
    if problems:
        raise ConfigError.of(file, text, problems)
    return LeagueConfig(
        name=read.name,
        rules=rules.rules,
        base_dir=base,
        store=base / read.store,
        data=base / read.data,
        game=game_of(rules.rules, rules.preset),
        description=read.description,
        table_size=read.table_size,
        parallel=read.parallel,
        seed=read.seed,
        **match_settings(read.time, read.seats, read.trueskill),
        http=http,
        grpc=grpc,
        tls_cert=base / read.tls.cert if read.tls.cert else None,
        tls_key=base / read.tls.key if read.tls.key else None,
        http_limits=dataclasses.replace(_limits(http_table, HttpLimits), trusted_proxies=tuple(http_table.trusted_proxies)),
        grpc_limits=_limits(grpc_table, GrpcLimits),
        author_limits=dataclasses.replace(_limits(limits_table, LeagueLimits), remote_idle_s=read.remote.idle_minutes * 60),
        validation=_limits(validation_table, ValidationSettings),
        new_version_matches=read.ladder.new_version_matches,
        rate_factor=read.ladder.rate_factor,
        seats_ahead=read.ladder.seats_ahead,
        reattach_grace_s=read.remote.reattach_grace_s,
        reply_ms=read.remote.reply_ms,
        decline_pause_s=read.remote.decline_pause_s,
        pause_after=read.remote.pause_after,
        pause_s=read.remote.pause_s,
        idle_minutes=read.remote.idle_minutes,
        drain_s=read.drain.deadline_s,
        executor=read.executor.settings(),
        referees=referees,
        source=text,
    )
