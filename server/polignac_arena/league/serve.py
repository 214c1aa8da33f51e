"""`polignac league serve`: one process with the web, the authors' API, the gRPC endpoint and the ladder.

What runs, all in one asyncio loop:

- the web pages and JSON API of ``polignac web`` over the league's store, with the authors'
  API under ``/api/league/`` and the league's own page at ``/league`` (uvicorn; TLS when the
  league file gives a certificate);
- the gRPC endpoint: the lobby where remote bots come online and the referee where they play
  (TLS likewise; plaintext on loopback only);
- the validation worker: each upload's sandboxed build and smoke match, one at a time, oldest
  first;
- the ladder, keeping ``parallel`` matches running among the active versions.

Start-up mends what a kill left: a match without a result is recorded aborted (void, unrated:
its bots get another match instead), an upload cut short in its validation is validated again,
and files half-written are swept.  SIGTERM or SIGINT drains: no new match starts, running ones
may finish for ``[drain] deadline_s``, then are aborted and recorded aborted; the servers stop.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import signal
import socket
import ssl
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
from fastapi import FastAPI

from polignac_arena.archive import ArchiveCaps, ArchiveError, ArchiveStore, ArchiveTooBig
from polignac_arena.executors import ExecutorError, executor_for
from polignac_arena.league.author_api import author_router
from polignac_arena.league.authoring import BotSummary, SubmissionRefused, SubmissionState, SubmissionStatus, Throttled, VersionSummary
from polignac_arena.league.config import LeagueConfig, parse_league_config
from polignac_arena.league.ladder import Ladder
from polignac_arena.league.lobby import LOBBY_SERVICE_NAME, AssignmentSpec, ClaimRefused, LobbyService, OnlineBots, peer_address
from polignac_arena.league.pages import league_router
from polignac_arena.league.store import LeagueLimits, LeagueStore, LimitReached, NotOwner, Version, VersionKind, VersionState
from polignac_arena.league.tokens import BadTokenThrottle
from polignac_arena.league.validation import validate
from polignac_arena.ratings import RatingEnv, new_version
from polignac_arena.referee import RefereeServer
from polignac_arena.store import ConflictError, StoreError
from polignac_arena.store.records import Rating
from polignac_arena.submission import Submission, SubmissionError, load_submission
from polignac_arena.web import create_app

__all__ = ["League", "league_app", "league_openapi", "serve_league"]

log = logging.getLogger(__name__)


class League:
    """The league's state shared by its parts: the store, the archives, who is online.

    It is the authors' API's backend and the lobby's directory.
    """

    def __init__(self, config: LeagueConfig) -> None:
        self.config = config
        self.store = LeagueStore(config.store)
        self.tournament_id = self.store.create_tournament(config.name, config.identity(), [], source=config.source)
        self.archives = ArchiveStore(config.data)
        self.caps = ArchiveCaps(compressed_bytes=config.archive_mb << 20, unpacked_bytes=config.unpacked_mb << 20, files=config.files)
        self.limits = LeagueLimits(
            uploads_per_hour=config.uploads_per_hour,
            versions_kept=config.versions_kept,
            active_bots=config.active_bots,
            remote_idle_s=config.idle_minutes * 60,
        )
        ts = config.trueskill
        self.env = RatingEnv(mu=ts.mu, sigma=ts.sigma, beta=ts.beta, tau=ts.tau, draw_probability=ts.draw_probability)
        self.throttle = BadTokenThrottle()
        self.online = OnlineBots(on_change=lambda: self.on_active())
        self._submissions: dict[int, Submission] = {}
        self.uploaded = asyncio.Event()
        """Set when an upload is queued: the validation worker wakes."""
        self.on_active: Callable[[], None] = lambda: None
        """Called when a version may have become active (the ladder looks for tables)."""
        self._loop: asyncio.AbstractEventLoop | None = None

    def _wake_validation(self) -> None:
        """Wake the validation worker (called from the authors' API's threads)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.uploaded.set)

    def prior(self, inherited: Rating | None) -> Rating:
        """A new version's first rating: the previous version's mean (if it had one) and a fresh uncertainty."""
        return new_version(self.env, inherited) if inherited is not None else (self.env.mu, self.env.sigma)

    # -- recovery -----------------------------------------------------------------------------

    def mend(self) -> None:
        """Drop what a kill left half-made: an archive kept before its version was stored, temporary files."""
        in_use = self.store.archives_in_use()
        for sha in self.archives.kept() - in_use:
            self.archives.remove(sha)
        self.archives.sweep()

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

    def online_names(self) -> set[str]:
        """The names of the remote bots online now (they count toward their author's ``active_bots``)."""
        return {bot.name for bot in self.online.online()}

    async def assign(self, label: str, seat: int, match_id: str, token: str) -> bool:
        """Offer a remote bot its seat through the lobby."""
        spec = AssignmentSpec(
            match_id=match_id,
            seat=seat,
            seat_token=token,
            address="",
            rules=self.config.rules,
            time_control=self.config.time,
            reply_ms=self.config.reply_ms,
        )
        return await self.online.assign(label, spec)

    # -- the authors' API backend ----------------------------------------------------------------

    def authenticate(self, token: str, peer: str) -> str | None:
        """The author of ``token``; None for a bad one (counted against ``peer``, which is slowed down past a few)."""
        self.throttle.check(peer)
        author = self.store.author_of(token)
        if author is None:
            self.throttle.failed(peer)
        else:
            self.throttle.succeeded(peer)
        return author

    def admit(self, author: str, bot_name: str) -> None:
        """Refuse, before the archive is read, an upload that cannot be taken whatever it holds."""
        try:
            self.store.check_upload(author, bot_name, self.limits, online=self.online_names())
        except NotOwner as exc:
            raise SubmissionRefused(str(exc), 403) from None
        except LimitReached as exc:
            raise SubmissionRefused(str(exc), 429, exc.retry_after_s) from None
        except (StoreError, ValueError) as exc:
            raise SubmissionRefused(str(exc), 400) from None

    def submit(self, author: str, bot_name: str, data: bytes) -> SubmissionStatus:
        """Store an upload and queue its validation; refused before any of it is kept."""
        self.admit(author, bot_name)
        known = self.archives.has(hashlib.sha256(data).hexdigest())
        try:
            sha = self.archives.add(data, self.caps)
        except ArchiveTooBig as exc:
            raise SubmissionRefused(f"the archive is refused: {exc}", 413) from None
        except ArchiveError as exc:
            raise SubmissionRefused(f"the archive is refused: {exc}", 400) from None
        try:
            version, pruned = self.store.add_upload(author, bot_name, sha, self.limits, online=self.online_names())
        except (StoreError, ValueError) as exc:
            if not known and not self.store.archive_in_use(sha):
                self.archives.remove(sha)
            if isinstance(exc, NotOwner):
                raise SubmissionRefused(str(exc), 403) from None
            if isinstance(exc, LimitReached):
                raise SubmissionRefused(str(exc), 429, exc.retry_after_s) from None
            raise SubmissionRefused(str(exc), 400) from None
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
            state=SubmissionState(version.state.value),
            label=version.label,
            reason=version.reason,
            log=version.log.splitlines(),
            created_at=version.created_at,
        )

    def bots(self, author: str) -> list[BotSummary]:
        mine: dict[str, list[VersionSummary]] = {}
        for v in self.store.versions():
            if v.author == author:
                state = SubmissionState(v.state.value)
                summary = VersionSummary(str(v.id), v.label, state, v.reason, v.created_at, v.kind.value, v.updated_at)
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

    # -- validation ---------------------------------------------------------------------------

    async def validate_uploads(self) -> None:
        """Validate queued uploads one at a time, oldest first, for as long as the league runs."""
        while True:
            self.uploaded.clear()
            for version in await asyncio.to_thread(self.store.pending_validations):
                await self._validate(version)
                self.on_active()
            await self.uploaded.wait()

    async def _validate(self, version: Version) -> None:
        assert version.archive is not None
        if version.state is VersionState.VALIDATING:  # cut short by a stop: its build may have left half its files
            await asyncio.to_thread(self.archives.forget_unpacked, version.archive)
        await asyncio.to_thread(self.store.start_validation, version.id)
        try:
            folder = await asyncio.to_thread(self.archives.unpacked, version.archive, self.caps)
        except ArchiveError as exc:
            await asyncio.to_thread(self.store.finish_validation, version.id, False, str(exc), self.tournament_id, self.prior)
            return
        lines: list[str] = []

        def note(line: str) -> None:
            lines.append(line if line.endswith("\n") else line + "\n")

        flushing = asyncio.ensure_future(self._flush_log(version.id, lines))
        try:
            result = await validate(
                folder,
                game_rules=self.config.rules,
                bot_name=version.bot,
                seat_kind=self.config.seat_kind,
                limits=self.config.limits,
                trusted=self.config.trusted,
                time_control=self.config.time,
                log=note,
            )
        finally:
            flushing.cancel()
        await asyncio.to_thread(self.store.append_log, version.id, "".join(lines))
        lines.clear()
        done = await asyncio.to_thread(self.store.finish_validation, version.id, result.ok, result.reason, self.tournament_id, self.prior)
        log.info("%s: %s%s", done.label, done.state.value, f" ({done.reason})" if done.state is VersionState.REFUSED else "")

    async def _flush_log(self, version_id: int, lines: list[str]) -> None:
        """Write the validation log as it grows, so the author follows it live."""
        while True:
            await asyncio.sleep(0.5)
            if lines:
                text = "".join(lines)
                lines.clear()
                await asyncio.to_thread(self.store.append_log, version_id, text)


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
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class _QuietServer:
    """A uvicorn server that leaves signals to the league (it drains the ladder first)."""

    def __init__(self, app: Any, sock: socket.socket, config: LeagueConfig) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            @contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        kwargs: dict[str, Any] = {"log_level": "warning", "lifespan": "on", "timeout_graceful_shutdown": 5}
        if config.tls_cert is not None and config.tls_key is not None:
            kwargs.update(ssl_certfile=str(config.tls_cert), ssl_keyfile=str(config.tls_key))
        self.server = Server(uvicorn.Config(app, **kwargs))
        self.sock = sock

    async def serve(self) -> None:
        await self.server.serve(sockets=[self.sock])

    def stop(self) -> None:
        self.server.should_exit = True


def league_app(league: League) -> FastAPI:
    """The league's web app: the store's pages and JSON API, the authors' API and the league's page."""
    routers = [author_router(league, max_upload_bytes=league.caps.compressed_bytes), league_router(league)]
    return create_app(league.config.store, routers=routers)


def league_openapi() -> dict[str, Any]:
    """The OpenAPI schema of the league server's HTTP API (drawn from a throwaway league in a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="polignac-openapi-") as folder:
        league = League(parse_league_config('name = "main"\n', Path(folder) / "league.toml"))
        try:
            return league_app(league).openapi()
        finally:
            league.store.close()


async def run_league(config: LeagueConfig, *, ready: Callable[[dict[str, str]], None] | None = None) -> None:
    """Run the league until SIGTERM or SIGINT, then drain; ``ready(addresses)`` is called once it serves."""
    league = League(config)
    league._loop = asyncio.get_running_loop()
    await asyncio.to_thread(league.mend)
    # Matches with a remote bot stay on this server, whose address the bot is connected to.
    executor = executor_for(config.executor) if config.executor.kind != "local" else None
    if executor is not None:
        await executor.start()
    referee = RefereeServer(str(config.grpc), credentials=_grpc_credentials(config))
    lobby = LobbyService(league, league.online, reattach_grace_ms=int(config.reattach_grace_s * 1000), on_offline=league.went_offline)
    referee.add_service(lobby.add_to, name=LOBBY_SERVICE_NAME)
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
        executor=executor,
    )
    league.on_active = ladder.notify
    grpc_address = await referee.start()
    sock = _bind_http(config)
    web = _QuietServer(league_app(league), sock, config)
    scheme = "https" if config.tls else "http"
    host, port = sock.getsockname()[:2]
    web_url = f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"
    web_task = asyncio.ensure_future(web.serve())
    workers = [asyncio.ensure_future(league.validate_uploads()), asyncio.ensure_future(ladder.run())]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        if ready is not None:
            ready({"web": web_url, "grpc": grpc_address})
        done, _ = await asyncio.wait([web_task, *workers, stopping], return_when=asyncio.FIRST_COMPLETED)
        failed = [task for task in done if task is not stopping and not task.cancelled() and task.exception() is not None]
        if failed:
            raise failed[0].exception()  # type: ignore[misc]
    finally:
        stopping.cancel()
        log.warning("draining: no new matches; running ones have %g s to finish", config.drain_s)
        await ladder.drain(config.drain_s)
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        web.stop()
        await asyncio.gather(web_task, return_exceptions=True)
        await referee.stop(grace=1)
        await lobby.settle()
        if executor is not None:
            await executor.close()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        league.store.close()


def serve_league(config: LeagueConfig) -> int:
    """The command's body: run the league, print where it serves; the exit code."""
    logging.basicConfig(level=logging.WARNING, format="polignac league: %(message)s")

    security = "TLS" if config.tls else "plaintext: loopback only"

    def ready(urls: dict[str, str]) -> None:
        print(f"polignac league {config.name}: web and authors' API on {urls['web']}/ ({security})", flush=True)
        print(f"polignac league {config.name}: remote bots connect to {urls['grpc']} ({security})", flush=True)

    try:
        asyncio.run(run_league(config, ready=ready))
    except (ConflictError, ExecutorError) as exc:
        print(f"polignac: error: {exc}", file=sys.stderr)
        return 2
    except (StoreError, OSError) as exc:
        print(f"polignac: error: {exc}", file=sys.stderr)
        return 1
    print(f"polignac league {config.name}: stopped", flush=True)
    return 0
