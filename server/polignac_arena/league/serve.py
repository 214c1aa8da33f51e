"""`polignac league serve`: one process with the web, the authors' API, the gRPC endpoint and the ladder.

What runs, all in one asyncio loop:

- the web pages and JSON API of ``polignac web`` over the league's store, with the authors'
  API under ``/api/league/`` and the league's own page at ``/league`` (uvicorn, behind the
  connection guard of :mod:`~polignac_arena.league.http_guard`; TLS when the league file gives
  a certificate);
- the gRPC endpoint: the lobby where remote bots come online and the referee where they play
  (TLS likewise; plaintext on loopback only), under the limits of
  :mod:`~polignac_arena.league.grpc_guard`, behind the front of
  :mod:`~polignac_arena.league.grpc_front` that caps connections per address;
- the validation workers (:mod:`~polignac_arena.league.validator`): each upload's sandboxed
  build and smoke match, a few at once, one per author, the authors in turn;
- the ladder, keeping ``parallel`` matches running among the active versions;
- authors' test matches (:mod:`~polignac_arena.league.test_runs`), one at a time.

Every limit is declared in :mod:`polignac_arena.league.limits` (docs/league.md, "Limits").
Start-up mends what a stop or a kill left: a match without a result is played on from its
journal (``data/journals``), or, without a usable one, recorded aborted (void, unrated: its bots
get another match instead); an upload cut short in its validation is validated again, and
files half-written are put aside (renamed: the league serves at once) and removed in the
background.  SIGTERM or SIGINT drains: no new match starts, running ones may finish for
``[drain] deadline_s``, then are suspended (resumed at the next start; a match played by the
executor on another node is aborted and recorded aborted); the servers stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import ssl
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Container
from pathlib import Path
from typing import Any, Final, cast

import grpc
from fastapi import FastAPI
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from polignac.jsontypes import JsonObject
from polignac_arena import memory
from polignac_arena.archive import ArchiveCaps, ArchiveError
from polignac_arena.archive_store import ArchiveStore, disk_usage
from polignac_arena.executors import ClusterLost, ExecutorError, executor_for
from polignac_arena.league.author_api import author_router
from polignac_arena.league.authoring import (
    BotSummary,
    SubmissionRefused,
    SubmissionStatus,
    Throttled,
    Upload,
    VersionSummary,
)
from polignac_arena.league.config import LeagueConfig, parse_league_config
from polignac_arena.league.grpc_front import INTERNAL_HOST, GrpcFront, direct_peer
from polignac_arena.league.grpc_guard import CallsPerAddress, grpc_options
from polignac_arena.league.http_guard import ConnectionGuard, GuardedServer
from polignac_arena.league.human_matches import HumanMatches
from polignac_arena.league.human_pages import human_router
from polignac_arena.league.ladder import Ladder
from polignac_arena.league.lobby import LOBBY_SERVICE_NAME, AssignmentSpec, ClaimRefused, LobbyService, OnlineBots, peer_address
from polignac_arena.league.metrics import LeagueGauges, LeagueMetrics, metrics_router
from polignac_arena.league.note_access import league_notes_policy
from polignac_arena.league.pages import league_router
from polignac_arena.league.ray_referees import RayLauncher
from polignac_arena.league.referee_pool import RefereePool, RefereeStartError, referee_pool
from polignac_arena.league.sessions import Sessions
from polignac_arena.league.signin import signin_router
from polignac_arena.league.store import LeagueStore, LimitReached, NotOwner, Version, VersionKind
from polignac_arena.league.test_runs import TestRuns
from polignac_arena.league.tokens import BadTokenThrottle, parse_token
from polignac_arena.league.upload_page import upload_router
from polignac_arena.league.uploads import LeagueUpload, UploadSlots, check_received
from polignac_arena.league.validator import Validator
from polignac_arena.log_format import LogFormat, configure_logging
from polignac_arena.peers import address_key
from polignac_arena.ratings import RatingEnv, new_version
from polignac_arena.referee import RefereeServer
from polignac_arena.settings import ExecutorKind
from polignac_arena.store import ConflictError, StoredResult, StoreError
from polignac_arena.store.records import Rating
from polignac_arena.submission import Submission, SubmissionError, load_submission
from polignac_arena.web import create_app

__all__ = ["GrpcEndpoint", "League", "league_app", "league_openapi", "serve_league"]

log = logging.getLogger(__name__)

LISTEN_BACKLOG: Final = 1024
"""Connections the kernel queues for the web listener's accept loop (which closes those past the caps at once)."""


class League:
    """The league's state shared by its parts: the store, the archives, who is online.

    It is the authors' API's backend and the lobby's directory.
    """

    def __init__(self, config: LeagueConfig) -> None:
        self.config = config
        self.limits = config.author_limits
        self.store = LeagueStore(config.store)
        self.tournament_id = self.store.arena.create_tournament(config.name, config.identity(), [], source=config.source)
        self.archives = ArchiveStore(config.data)
        self.caps = ArchiveCaps(
            compressed_bytes=self.limits.archive_mb << 20, unpacked_bytes=self.limits.unpacked_mb << 20, files=self.limits.files
        )
        ts = config.trueskill
        self.env = RatingEnv(mu=ts.mu, sigma=ts.sigma, beta=ts.beta, tau=ts.tau, draw_probability=ts.draw_probability)
        self.throttle = BadTokenThrottle(free=self.limits.bad_tokens, max_block_s=self.limits.bad_token_block_s)
        self.online = OnlineBots(on_change=lambda: self.on_active())
        self.uploads = UploadSlots(self.limits.uploads_at_once, self.limits.uploads_in_flight)
        self.metrics = LeagueMetrics()
        self.sessions = Sessions()
        self.test_runs = TestRuns(self.store, config, self.submission_of)
        """Authors' unrated test matches (reruns of a league match with another version), played one at a time."""
        self.human_matches = HumanMatches(config)
        """People's matches against the built-in bots, played from the browser."""
        self._submissions: dict[int, Submission] = {}
        self.validator: Validator | None = None
        """The validation workers, once :func:`run_league` started them."""
        self.on_active: Callable[[], None] = lambda: None
        """Called when a version may have become active (the ladder looks for tables)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self.referees: RefereePool | None = None
        """The referee processes of matches with remote seats, once :func:`run_league` started them."""

    def _wake_validation(self) -> None:
        """Wake the validation workers (called from the authors' API's threads)."""
        if self._loop is not None and self.validator is not None:
            self._loop.call_soon_threadsafe(self.validator.wake.set)

    def prior(self, inherited: Rating | None) -> Rating:
        """A new version's first rating: the previous version's mean (if it had one) and a fresh uncertainty."""
        return new_version(self.env, inherited) if inherited is not None else (self.env.mu, self.env.sigma)

    # -- recovery -----------------------------------------------------------------------------

    def mend(self) -> None:
        """Put aside what a kill left half-made (an archive kept before its version was stored, temporary files).

        Each costs a rename or an unlink, so the league serves at once; :meth:`tidy` removes them.
        """
        in_use = self.store.archives_in_use()
        for sha in self.archives.kept() - in_use:
            self.archives.remove(sha, later=True)
        self.archives.sweep()

    def tidy(self) -> None:
        """What start-up leaves for later (run in the background): the trash emptied, disk use measured where unknown."""
        self.archives.empty_trash()
        for version in self.store.unmeasured():
            if version.archive is not None:
                size = self.archives.size(version.archive) + disk_usage(self.archives.version_path(version.archive))
                self.store.set_disk(version.id, size)

    # -- what the ladder asks ------------------------------------------------------------------

    def submission_of(self, version: Version) -> Submission | None:
        """The folder of an uploaded version, loaded (None when it cannot be: its archive was pruned, or is damaged)."""
        if version.archive is None:
            return None
        cached = self._submissions.get(version.id)
        if cached is None:
            try:
                cached = load_submission(self.archives.unpacked(version.archive, self.caps))
            except (ArchiveError, SubmissionError, LookupError, OSError) as exc:
                log.error("%s cannot be played: %s", version.label, exc)
                return None
            self._submissions[version.id] = cached
        return cached

    def online_labels(self) -> set[str]:
        return {bot.label for bot in self.online.online()}

    def online_names(self) -> Container[str]:
        """The names of the remote bots online now (they count toward their author's ``active_bots``): any thread may ask
        whether a name is among them."""
        return self.online.names()

    def gauges(self, ladder: Ladder) -> LeagueGauges:
        """What ``/metrics`` shows as waiting or live now (read in a web worker thread)."""
        return LeagueGauges(
            bots_online=len(self.online.online()),
            bots_active=len(self.store.active_versions()),
            uploads_in_flight=self.uploads.taken,
            validation_backlog=len(self.store.pending_validations()),
            matches_live=ladder.live,
            reruns_waiting=len(self.store.pending_reruns()),
        )

    async def assign(self, label: str, seat: int, match_id: str, token: str) -> bool:
        """Offer a remote bot its seat through the lobby (its Play stream goes to the match's referee process, if it has one)."""
        spec = AssignmentSpec(
            match_id=match_id,
            seat=seat,
            seat_token=token,
            address=self.referees.address_of(match_id) if self.referees is not None else "",
            rules=self.config.rules,
            time_control=self.config.time,
            reply_ms=self.config.reply_ms,
        )
        return await self.online.assign(label, spec)

    # -- the authors' API backend ----------------------------------------------------------------

    def token_live(self, token_id: str) -> bool:
        return self.store.token_live(token_id)

    def recent_matches(self, labels: list[str], limit: int) -> list[StoredResult]:
        """The last ``limit`` final results that seated any of ``labels``, newest first."""
        found = {r.match_id: r for label in labels for r in self.store.arena.recent_results(label, limit, self.tournament_id)}
        return sorted(found.values(), key=lambda r: (r.finished_at, r.idx), reverse=True)[:limit]

    def authenticate(self, token: str, peer: str) -> str | None:
        """The author of ``token``; None for a bad one.

        Bad tokens are counted by the address they come from (``peer``; an IPv6 network counts
        as one) and the token they name, so that one who keeps guessing is slowed down without
        locking out a good token sent from the same address: a good token this process has
        checked before always passes, and a guess at an unknown token counts apart from the
        real ones'.
        """
        address = address_key(peer, self.limits.ipv6_prefix)
        parts = parse_token(token)
        # A token this process found good was made, and no token is ever deleted: it needs no look-up to be known.
        remembered = parts is not None and self.store.remembers(token)
        known = remembered or (parts is not None and self.store.token_known(parts.id))
        key = (address, parts.id if known and parts is not None else "")
        if not remembered:
            self.throttle.check(key)
        author = self.store.author_of(token)
        if author is None:
            self.throttle.failed(key)
        else:
            self.throttle.succeeded(key)
        return author

    def admit(self, author: str, bot_name: str) -> LeagueUpload:
        """The upload to receive, once it is admitted (and counted toward the hourly limit); refused before its body is read."""
        self.uploads.take(author)
        try:
            self.store.count_upload(author, bot_name, self.limits, online=self.online_names())
            return LeagueUpload(self.archives.receive(self.caps.compressed_bytes), self.uploads, author)
        except BaseException as exc:
            self.uploads.give_back(author)
            if isinstance(exc, StoreError | ValueError):
                raise _refusal(exc) from None
            raise

    def submit(self, author: str, bot_name: str, upload: Upload) -> SubmissionStatus:
        """Keep a received upload and queue its validation, once the cheap checks pass; refused before any of it is kept.

        The checks, in order: the archive member by member and its ``bot.toml``, without
        unpacking anything (400, 413); then the author's disk budget, making room by dropping
        their oldest inactive versions' archives (413 when there is none to make).
        """
        if not isinstance(upload, LeagueUpload):
            raise TypeError(f"not an upload this league received: {upload!r}")
        path = upload.incoming.finish()
        scan = check_received(path, bot_name, self.caps, self.config.game)
        need = disk_usage(path) + scan.disk_bytes
        try:
            freed = self.store.make_room(author, need, self.limits.disk_mb << 20)
        except LimitReached as exc:
            raise SubmissionRefused(str(exc), 413) from None
        except (StoreError, ValueError) as exc:
            raise _refusal(exc) from None
        for archive in freed:
            self.archives.remove(archive)
        sha = upload.incoming.keep()
        try:
            online = self.online_names()
            version, pruned = self.store.add_upload(author, bot_name, sha, self.limits, online=online, disk_bytes=need, counted=True)
        except (StoreError, ValueError) as exc:
            if not self.store.archive_in_use(sha):
                self.archives.remove(sha)
            raise _refusal(exc) from None
        for archive in pruned:
            self.archives.remove(archive)
        self._wake_validation()
        return self.status(version)

    def submission(self, submission_id: str) -> SubmissionStatus | None:
        version = self.store.version(int(submission_id)) if submission_id.isdigit() else None
        return None if version is None or version.kind is not VersionKind.UPLOAD else self.status(version)

    @staticmethod
    def status(version: Version) -> SubmissionStatus:
        return SubmissionStatus(
            id=str(version.id),
            author=version.author,
            bot=version.bot,
            state=version.state,
            label=version.label,
            reason=version.reason,
            log=version.log.splitlines(),
            created_at=version.created_at,
        )

    def bots(self, author: str) -> list[BotSummary]:
        mine: dict[str, list[VersionSummary]] = {}
        for v in self.store.versions():
            if v.author == author:
                summary = VersionSummary(str(v.id), v.label, v.state, v.reason, v.created_at, v.kind.value, v.updated_at)
                mine.setdefault(v.bot, []).append(summary)
        online = self.online_names()
        counted = self.store.counted_bots(author, self.limits, online) if mine else set()
        return [BotSummary(name, tuple(versions), name in online, name in counted) for name, versions in sorted(mine.items())]

    def retire(self, author: str, bot_name: str) -> BotSummary:
        try:
            version = self.store.retire(author, bot_name)
        except NotOwner as exc:
            raise SubmissionRefused(str(exc), 403) from None
        except StoreError as exc:
            status = 404 if self.store.bot(bot_name) is None else 409
            raise SubmissionRefused(str(exc), status) from None
        if version.kind is VersionKind.REMOTE and self._loop is not None:
            detail = f"{version.label} was retired by its author: it stays out of the league until it joins again"
            self._loop.call_soon_threadsafe(self.online.kick, version.label, grpc.StatusCode.FAILED_PRECONDITION, detail)
        log.info("%s retired by its author %s", version.label, author)
        return next(bot for bot in self.bots(author) if bot.name == bot_name)

    def went_offline(self, label: str) -> None:
        """A remote bot left the lobby: its idle time counts from now."""
        try:
            self.store.seen(label)
        except StoreError as exc:
            log.warning("cannot note that %s went offline: %s", label, exc)

    # -- the lobby's directory --------------------------------------------------------------------

    def author_of(self, token: str, peer: str) -> str | None:
        try:
            return self.authenticate(token, peer_address(peer))
        except Throttled:
            return None

    def claim(self, author: str, bot_name: str, bot_version: str) -> str:
        try:
            version = self.store.claim_remote(
                author, bot_name, bot_version or "remote", self.limits, self.prior, self.tournament_id, online=self.online_names()
            )
        except NotOwner as exc:
            raise ClaimRefused(str(exc), grpc.StatusCode.PERMISSION_DENIED) from None
        except (LimitReached, ConflictError, ValueError) as exc:
            raise ClaimRefused(str(exc), grpc.StatusCode.FAILED_PRECONDITION) from None
        return version.label


def _refusal(exc: StoreError | ValueError) -> SubmissionRefused:
    """The HTTP refusal of a store's refusal: another author's bot 403, a limit 429 (with when to retry), else 400."""
    if isinstance(exc, NotOwner):
        return SubmissionRefused(str(exc), 403)
    if isinstance(exc, LimitReached):
        return SubmissionRefused(str(exc), 429, exc.retry_after_s)
    return SubmissionRefused(str(exc), 400)


def _tls_context(config: LeagueConfig) -> ssl.SSLContext | None:
    if config.tls_cert is None or config.tls_key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(config.tls_cert, config.tls_key)
    return context


def _grpc_credentials(config: LeagueConfig) -> grpc.ServerCredentials | None:
    if config.tls_cert is None or config.tls_key is None:
        return None
    return grpc.ssl_server_credentials([(config.tls_key.read_bytes(), config.tls_cert.read_bytes())])


def _bind_http(config: LeagueConfig) -> socket.socket:
    host, port = config.http.host, config.http.port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(LISTEN_BACKLOG)
    return sock


def league_app(league: League) -> Any:
    """The league's web app: the store's pages and JSON API, the authors' API and the league's page.

    With ``[http] trusted_proxies``, a request from one of them is taken to come from the client
    its ``X-Forwarded-For`` names (uvicorn's middleware); from anyone else the header is ignored.
    """
    limits = league.config.http_limits
    routers = [
        author_router(
            league, max_upload_bytes=league.caps.compressed_bytes, body_timeout_s=limits.body_timeout_s, test_runs=league.test_runs
        ),
        league_router(league),
        signin_router(league, league.test_runs, league.caps),
        human_router(league, league.human_matches),
        upload_router(league, max_upload_bytes=league.caps.compressed_bytes, body_timeout_s=limits.body_timeout_s),
        metrics_router(league.metrics),
    ]
    app = create_app(league.config.store, routers=routers, notes_policy=league_notes_policy(league))
    opened = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(served: Any) -> AsyncIterator[Any]:
        async with opened(served) as state:
            try:
                yield state
            finally:
                await league.human_matches.stop()  # the people's matches live in the web server's loop

    app.router.lifespan_context = lifespan
    if not limits.trusted_proxies:
        return app
    return ProxyHeadersMiddleware(cast(Any, app), trusted_hosts=list(limits.trusted_proxies))  # an ASGI app, as uvicorn's types spell it


def league_openapi() -> JsonObject:
    """The OpenAPI schema of the league server's HTTP API (drawn from a throwaway league in a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="polignac-openapi-") as folder:
        league = League(parse_league_config('name = "main"\n', Path(folder) / "league.toml"))
        try:
            app = league_app(league)
            assert isinstance(app, FastAPI)
            return app.openapi()
        finally:
            league.store.close()


class GrpcEndpoint:
    """The league's gRPC endpoint: the referee with the lobby, under the ``[grpc]`` limits, and the front before it.

    With ``[grpc] max_connections_per_address`` above 0 (the default), the front
    (:mod:`~polignac_arena.league.grpc_front`) listens on the league's gRPC address and gRPC on
    a loopback port of its own; whatever reads a client's address (the cap on streams per
    address, the bad-token throttle) asks the front who the client behind a gRPC peer is.
    With 0, gRPC listens on the league's address itself.
    """

    def __init__(self, config: LeagueConfig, league: League) -> None:
        self.config = config
        limits = config.grpc_limits
        self.front: GrpcFront | None = None
        if limits.max_connections_per_address > 0:
            self.front = GrpcFront(
                max_connections=limits.max_connections,
                max_per_address=limits.max_connections_per_address,
                ipv6_prefix=config.author_limits.ipv6_prefix,
                exempt=config.http_limits.trusted_proxies,
                connect_timeout_s=limits.handshake_timeout_s,
                backlog=LISTEN_BACKLOG,
            )
        client_peer = self.front.client_peer if self.front is not None else direct_peer
        self.calls = CallsPerAddress(limits.max_calls_per_address, config.author_limits.ipv6_prefix, client_peer)
        self.referee = RefereeServer(
            str(config.grpc) if self.front is None else f"{INTERNAL_HOST}:0",
            credentials=_grpc_credentials(config),
            max_streams=limits.max_streams,
            options=grpc_options(limits, fronted=self.front is not None),
            interceptors=[self.calls],
        )
        self.lobby = LobbyService(
            league,
            league.online,
            reattach_grace_ms=int(config.reattach_grace_s * 1000),
            on_offline=league.went_offline,
            client_peer=client_peer,
        )
        self.referee.add_service(self.lobby.add_to, name=LOBBY_SERVICE_NAME)

    async def start(self) -> str:
        """Start gRPC (and the front before it); the public address remote bots reach."""
        address = await self.referee.start()
        if self.front is None:
            return address
        public = str(self.config.grpc)
        try:
            port = await self.front.start(self.config.grpc.host, self.config.grpc.port, int(address.rpartition(":")[2]))
        except OSError as exc:
            await self.referee.stop(grace=0)
            raise OSError(f"cannot listen on {public!r}: {exc.strerror or exc}") from None
        return f"{public.rpartition(':')[0]}:{port}"

    async def stop(self, grace: float) -> None:
        """Stop gRPC (running matches aborted, streams given ``grace``), then the front; the lobby's last notes are written.

        The front takes no new connection from the start: gRPC, stopping, would refuse them.
        """
        if self.front is not None:
            self.front.stop_listening()
        await self.referee.stop(grace=grace)
        if self.front is not None:
            await self.front.close()
        await self.lobby.settle()


async def run_league(
    config: LeagueConfig, *, ready: Callable[[dict[str, str]], None] | None = None, log_format: LogFormat = LogFormat.TEXT
) -> None:
    """Run the league until SIGTERM or SIGINT, then drain; ``ready(addresses)`` is called once it serves."""
    if config.referees.on_ray_nodes and config.executor.kind is not ExecutorKind.RAY:
        raise ExecutorError('[referees] on_ray_nodes needs the ray executor: [executor] kind = "ray" (or --executor ray)')
    memory.return_large_frees()  # a flood of connections, once closed, gives its buffers back
    league = League(config)
    league._loop = asyncio.get_running_loop()
    await asyncio.to_thread(league.mend)
    # Matches with a remote bot are refereed here, or on the referees of [referees] (Ray nodes among them).
    executor = executor_for(config.executor) if config.executor.kind is not ExecutorKind.LOCAL else None
    if executor is not None:
        await executor.start()
    referee_addresses: list[str] = []
    if config.referees.enabled:
        # The Ray executor has joined the cluster: the referees' tasks go to it.
        launcher = RayLauncher(config.referees.cpus_per_referee, log_format) if config.referees.on_ray_nodes else None
        league.referees = referee_pool(config, log_format, launcher)
        referee_addresses = await league.referees.start() or ["Ray nodes"]
    endpoint = GrpcEndpoint(config, league)
    referee = endpoint.referee
    ladder = Ladder(
        league.store,
        league.tournament_id,
        config,
        referee,
        submission_of=league.submission_of,
        online=league.online_labels,
        assign=league.assign,
        withdraw=league.online.withdraw,
        pause=league.online.pause,
        release=league.online.finished,
        record_dir=config.data / "records",
        journal_dir=config.data / "journals",
        executor=executor,
        metrics=league.metrics,
        referees=league.referees,
    )
    league.metrics.watch(lambda: league.gauges(ladder))
    league.on_active = ladder.notify
    league.validator = Validator(league)
    # The matches a stop cut short go on: on the referee before its port opens, so that their remote seats' first
    # reattach finds them.
    ladder.recover()
    await ladder.hosted()
    grpc_address = await endpoint.start()
    sock = _bind_http(config)
    guard = ConnectionGuard(config.http_limits, ipv6_prefix=config.author_limits.ipv6_prefix, ssl_context=_tls_context(config))
    web = GuardedServer(league_app(league), sock, guard, on_idle=memory.release)
    scheme = "https" if config.tls else "http"
    host, port = sock.getsockname()[:2]
    web_url = f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"
    web_task = asyncio.ensure_future(web.serve())
    workers = [
        asyncio.ensure_future(league.validator.run()),
        asyncio.ensure_future(ladder.run()),
        asyncio.ensure_future(league.test_runs.run()),
    ]
    tidying = asyncio.ensure_future(asyncio.to_thread(league.tidy))
    memory.settle()  # later collections (after a flood of connections) cost only what came since
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        if ready is not None:
            ready({"web": web_url, "grpc": grpc_address, "referees": " ".join(referee_addresses)})
        done, _ = await asyncio.wait([web_task, *workers, stopping], return_when=asyncio.FIRST_COMPLETED)
        failed = [error for task in done if task is not stopping and not task.cancelled() and (error := task.exception()) is not None]
        if failed:
            raise failed[0]
    finally:
        stopping.cancel()
        log.warning("draining: no new matches; running ones have %g s to finish, then go on at the next start", config.drain_s)
        await ladder.drain(config.drain_s)
        await league.human_matches.stop()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        web.stop()
        await asyncio.gather(web_task, return_exceptions=True)
        sock.close()
        await endpoint.stop(grace=1)
        if league.referees is not None:
            await league.referees.close()
        if executor is not None:
            await executor.close()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await asyncio.gather(tidying, return_exceptions=True)
        league.store.close()


def serve_league(config: LeagueConfig, log_format: LogFormat = LogFormat.TEXT) -> int:
    """The command's body: run the league, print where it serves (stdout), log to stderr in ``log_format``; the exit code."""
    configure_logging(log_format, "polignac league: ")

    security = "TLS" if config.tls else "plaintext: loopback only"

    def ready(urls: dict[str, str]) -> None:
        print(f"polignac league {config.name}: web and authors' API on {urls['web']}/ ({security})", flush=True)
        print(f"polignac league {config.name}: remote bots connect to {urls['grpc']} ({security})", flush=True)
        if urls.get("referees"):
            print(f"polignac league {config.name}: their matches are refereed on {urls['referees']} ({security})", flush=True)

    try:
        asyncio.run(run_league(config, ready=ready, log_format=log_format))
    except ClusterLost as exc:  # the store is closed; Ray's driver, left on the lost head, would block or crash on a normal exit
        print(f"polignac: error: {exc}; once it is back, start the league again", file=sys.stderr, flush=True)
        os._exit(2)
    except (ConflictError, ExecutorError, RefereeStartError) as exc:
        print(f"polignac: error: {exc}", file=sys.stderr)
        return 2
    except (StoreError, OSError) as exc:
        print(f"polignac: error: {exc}", file=sys.stderr)
        return 1
    print(f"polignac league {config.name}: stopped", flush=True)
    return 0
