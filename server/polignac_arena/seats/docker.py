"""``docker`` seats: each bot in its own container, started through the docker SDK.

The container, its images, stdio bots and exit statuses: docs/sandbox.md ("Docker seats").
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import logging
import os
import posixpath
import re
import secrets
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypedDict

if TYPE_CHECKING:
    from docker import DockerClient

from polignac_arena.folders import FolderError, folder_digest, read_file
from polignac_arena.seats.base import BuildLimits, BuildResult, SeatContext, SeatError, SeatKind, SeatLauncher, SeatLimits, SeatProcess
from polignac_arena.seats.builds import BUILD_DIR, BUILD_SOURCE, BUILD_WRAPPER, WRAPPER_SOURCE, BuildStarted, build_command, run_build
from polignac_arena.seats.common import checked_folder
from polignac_arena.seats.common import host_runtime as common_host_runtime
from polignac_arena.seats.docker_build import BuildFailed, BuildRequest, BuildStop, build_image, spooled_context
from polignac_arena.seats.docker_http import RETRY_FIRST_S, RETRY_LAST_S, DaemonLine, daemon_target, out_of_descriptors
from polignac_arena.seats.docker_seat import (
    STDERR_LIMIT,
    STDOUT_LIMIT,
    Attached,
    DockerSeat,
    StdinWriter,
    docker_exit_status,
    in_thread,
    short_error,
)
from polignac_arena.seats.dockerfile import MAX_DOCKERFILE_BYTES, DockerfileError, LocalImage, vet_dockerfile
from polignac_arena.seats.syscalls import SeccompUnavailable, docker_profile
from polignac_arena.settings import Transport
from polignac_arena.submission import Submission

__all__ = [
    "CONTAINER_SOCKET_DIR",
    "RUNTIME_REPOSITORY",
    "ContainerConfig",
    "DockerLauncher",
    "DockerSeat",
    "docker_exit_status",
    "folder_hash",
    "remove_containers",
]

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S: Final = 5.0
"""How long the daemon may take to answer the first call: a stuck daemon is an error, not a hang."""
CALL_TIMEOUT_S: Final = 60.0
"""Timeout of every later call (an image build has its own, longer one)."""
BUILD_TIMEOUT_S: Final = 900.0
"""The wall clock of an image build (every step together)."""
REMOVE_PATIENCE_S: Final = 30.0
"""How long the removal of a container that never started is tried again while descriptors are short."""
MAX_IMAGE_VOLUMES: Final = 8
_SYSTEM_DIRS: Final = ("/proc", "/sys", "/dev")
BUILD_SCHEME: Final = "vetted-1"
"""Part of a built image's tag: images built before the Dockerfile was vetted are never reused."""
CONTAINER_SOCKET_DIR: Final = "/run/polignac"
CONTAINER_SDK_DIR: Final = "/opt/polignac-sdk"
RUNTIME_REPOSITORY: Final = "polignac-runtime"
BOT_REPOSITORY: Final = "polignac-bot"
SANDBOX_USER: Final = "65534:65534"
LABEL_MATCH: Final = "polignac.match"
LABEL_SEAT: Final = "polignac.seat"
LABEL_BOT: Final = "polignac.bot"
LABEL_BUILD: Final = "polignac.build"


def folder_hash(folder: Path, extra: str = "") -> str:
    """The submission's digest (:func:`polignac_arena.folders.folder_digest`, ``extra`` hashed first) for image tags."""
    try:
        return folder_digest(folder, extra)
    except FolderError as exc:
        raise SeatError(str(exc)) from None


def _repository_name(name: str) -> str:
    """A submission name as a docker repository component (lower case, no leading separator)."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", name.lower())
    cleaned = re.sub(r"[._-]{2,}", "-", cleaned).strip("._-")
    return cleaned or "bot"


def _name_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:40] or "local"


# -- the runtime image and the host's runtime ------------------------------------------------------------------


def _runtime_tarball() -> bytes:
    """The runtime image's whole file system: a few /etc files and empty folders (reproducible bytes)."""
    files = {
        "etc/passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "etc/group": "root:x:0:\nnogroup:x:65534:\n",
        "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    }
    folders = {"bot": 0o755, "etc": 0o755, "opt": 0o755, "run": 0o755, "run/polignac": 0o755, "tmp": 0o1777}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, mode in sorted(folders.items()):
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, mode, 0
            tar.addfile(info)
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def host_runtime() -> tuple[tuple[tuple[str, str], ...], str]:
    """The host runtime (:func:`.common.host_runtime`, shared with bubblewrap seats) as a runtime-image container's
    read-only mounts (source, target), and its PYTHONPATH."""
    runtime = common_host_runtime()
    folders = [*runtime.system, *runtime.python, *runtime.etc]
    mounts = [(folder, folder) for folder in folders]
    mounts.append((runtime.sdk, f"{CONTAINER_SDK_DIR}/polignac"))
    return tuple(mounts), ":".join([CONTAINER_SDK_DIR, *runtime.python_path])


# -- talking to the daemon --------------------------------------------------------------------------------------


def _daemon_hint(where: str, exc: BaseException) -> str:
    text = short_error(exc)
    hint = "start the Docker daemon (dockerd, or systemctl start docker) or point DOCKER_HOST at a running one"
    if "Permission denied" in text or "PermissionError" in text:
        hint = "this user may not use the daemon's socket: run the arena as a member of the 'docker' group"
    return f"cannot reach the Docker daemon at {where}: {text}; {hint}"


_build_locks: dict[str, threading.Lock] = {}
_build_locks_guard = threading.Lock()


def _build_lock(tag: str) -> threading.Lock:
    with _build_locks_guard:
        return _build_locks.setdefault(tag, threading.Lock())


def _volume_paths(volumes: tuple[str, ...], mounted: list[str], label: str) -> list[str]:
    """The image's volumes that need a tmpfs of the arena's (so the daemon makes no volume); refused when unsafe.

    >>> _volume_paths(("/data", "/tmp", "/var/cache/"), ["/run/polignac"], "bot@1")
    ['/data', '/var/cache']
    """
    if len(volumes) > MAX_IMAGE_VOLUMES:
        raise SeatError(f"the image of {label} declares {len(volumes)} volumes, more than the {MAX_IMAGE_VOLUMES} allowed")
    taken = [*mounted, "/tmp"]
    paths: list[str] = []
    for volume in volumes:
        path = posixpath.normpath(volume)
        if not path.startswith("/") or path.startswith("//"):
            raise SeatError(f"the image of {label} declares the volume {volume!r}, which is not an absolute path")
        if path == "/tmp":
            continue  # the seat's own capped tmpfs is there already
        inside = [top for top in (*_SYSTEM_DIRS, *taken) if _nested(path, top) or _nested(top, path)]
        if path == "/" or inside:
            raise SeatError(f"the image of {label} declares the volume {volume!r}, on a path the arena keeps for itself")
        paths.append(path)
    return sorted(set(paths))


def _nested(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


class ContainerConfig(TypedDict):
    """A seat's container as :meth:`DockerLauncher.container_config` draws it (the ``create_container`` arguments)."""

    image: str
    command: list[str]
    environment: dict[str, str]
    mounts: list[tuple[str, str]]
    """Host paths mounted read-only: (source, target)."""
    working_dir: str | None


@dataclass(frozen=True)
class _Spec:
    """One container to run: a seat's or a build step's."""

    image: str
    command: list[str]
    environment: dict[str, str]
    binds: list[tuple[str, str]]
    """Host paths mounted read-only: (source, target)."""
    working_dir: str | None
    limits: SeatLimits
    name: str
    labels: dict[str, str]
    label: str
    """Who it is for, in messages."""
    stdin: bool
    stdout: bool
    writable: dict[str, str] = field(default_factory=dict)
    """Writable tmpfs folders besides ``/tmp``: path and mount options."""


@cache
def _seccomp_option() -> str:
    """``security_opt`` entry giving a container the arena's seccomp profile (:func:`.syscalls.docker_profile`)."""
    return "seccomp=" + json.dumps(docker_profile(), separators=(",", ":"))


def _runtime_environment(python_path: str) -> dict[str, str]:
    """The fixed environment of a runtime-image container (a bot's, a build step's): nothing of the arena's."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/nonexistent",  # nobody's: the only writable place is /tmp (TMPDIR)
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": python_path,
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _check_readable(submission: Submission) -> None:
    """The folder to mount is the one checked (no link put in its place since) and readable by the sandbox user."""
    mode = checked_folder(submission).stat().st_mode
    if mode & 0o005 != 0o005:
        raise SeatError(
            f"the folder of {submission.label} ({submission.path}) is not readable by the sandbox user (mode {mode & 0o777:o}):"
            " make it readable by everyone (chmod -R a+rX)"
        )


def remove_containers(client: DockerClient, match_id: str | None = None) -> list[str]:
    """Kill and remove every arena container (of one match, if given); returns their names."""
    label = f"{LABEL_MATCH}={match_id}" if match_id is not None else LABEL_MATCH
    removed: list[str] = []
    for info in client.api.containers(all=True, filters={"label": label}):
        with contextlib.suppress(Exception):
            client.api.remove_container(info["Id"], force=True, v=True)
            removed.append(str((info.get("Names") or [info["Id"]])[0]).lstrip("/"))
    return removed


# -- the launcher -----------------------------------------------------------------------------------------------


_NO_BUILDS: Final = "build steps cannot run in docker seats here: "
"""How the reason for refusing a build step begins."""


class DockerLauncher(SeatLauncher):
    """Seats in docker containers (see the module's documentation for what each container gets)."""

    kind = SeatKind.DOCKER

    def __init__(self, base_url: str | None = None, build_timeout_s: float = BUILD_TIMEOUT_S) -> None:
        self._base_url = base_url
        self.build_timeout_s = build_timeout_s
        self._client: DockerClient | None = None
        self._runtime_image: str | None = None

    @property
    def base_url(self) -> str:
        """The daemon's address: the given one, else ``DOCKER_HOST``, else the default socket."""
        return self._base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"

    def _connect(self) -> DockerClient:
        """A client of a daemon that answered, or SeatError saying why there is none."""
        if self._client is not None:
            return self._client
        try:
            import docker
        except ImportError:
            raise SeatError("the docker Python package is not installed: pip install docker") from None
        try:
            if self._base_url is None:
                client = docker.from_env(timeout=PROBE_TIMEOUT_S)
            else:
                client = docker.DockerClient(base_url=self._base_url, timeout=PROBE_TIMEOUT_S)
            client.ping()
        except Exception as exc:
            raise SeatError(_daemon_hint(self.base_url, exc)) from None
        client.api.timeout = CALL_TIMEOUT_S
        self._client = client
        return client

    def unavailable(self) -> str | None:
        try:
            _seccomp_option()
        except SeccompUnavailable as exc:
            return f"the seats' seccomp profile cannot be made: {exc}"
        try:
            self._connect()
        except SeatError as exc:
            return str(exc)
        return None

    # -- images

    def runtime_image(self) -> str:
        """The tag of the runtime image (made with ``docker import`` when absent)."""
        import docker.errors

        if self._runtime_image is not None:
            return self._runtime_image
        client = self._connect()
        tarball = _runtime_tarball()
        tag = hashlib.sha256(tarball).hexdigest()[:16]
        image = f"{RUNTIME_REPOSITORY}:{tag}"
        with _build_lock(image):
            try:
                client.api.inspect_image(image)
            except docker.errors.ImageNotFound:
                client.api.import_image_from_data(tarball, repository=RUNTIME_REPOSITORY, tag=tag, changes=["LABEL polignac.runtime=1"])
                client.api.inspect_image(image)  # the import answers 200 even when it failed: make sure
        self._runtime_image = image
        return image

    def image_for(self, submission: Submission, limits: SeatLimits | None = None, stop: BuildStop | None = None) -> str:
        """The local image a submission runs in: its own, built from its Dockerfile, or the runtime image.

        ``stop`` stops the build from another thread (a cancelled seat start).
        """
        import docker.errors

        client = self._connect()
        if submission.image is not None:
            try:
                client.api.inspect_image(submission.image)
            except docker.errors.ImageNotFound:
                raise SeatError(
                    f"the image {submission.image!r} of {submission.label} is not on this machine, and the arena never pulls"
                    " images: build or import it here first (docker build / docker load / docker import)"
                ) from None
            return submission.image
        if submission.dockerfile is not None:
            return self._build(submission, limits or SeatLimits(), stop or BuildStop())
        return self.runtime_image()

    def local_image(self, reference: str) -> LocalImage | None:
        """An image already on this machine, or None (never pulled)."""
        import docker.errors

        try:
            return LocalImage.from_inspect(self._connect().api.inspect_image(reference))
        except (docker.errors.ImageNotFound, docker.errors.NullResource):
            return None
        except docker.errors.APIError as exc:
            if exc.response is not None and exc.response.status_code in (400, 404):
                return None  # not a valid reference: not an image here either
            raise

    def _build(self, submission: Submission, limits: SeatLimits, stop: BuildStop) -> str:
        """Build the submission's Dockerfile, checked and rewritten (:mod:`.dockerfile`), capped and timed (:mod:`.docker_build`)."""
        client = self._connect()
        assert submission.dockerfile is not None
        where = f"{submission.dockerfile} of {submission.label}"
        digest = folder_hash(submission.path, extra=f"{submission.dockerfile}\0{BUILD_SCHEME}")[:16]
        tag = f"{BOT_REPOSITORY}/{_repository_name(submission.name)}:{digest}"
        with _build_lock(tag):
            if self.local_image(tag) is not None:
                return tag
            try:
                try:
                    text = read_file(submission.path, submission.dockerfile, MAX_DOCKERFILE_BYTES).decode("utf-8", "replace")
                except FolderError as exc:
                    raise DockerfileError(exc.problem) from None
                vetted = vet_dockerfile(text, self.local_image, tag)
            except DockerfileError as exc:
                raise DockerfileError(f"{where}: {exc}") from None
            request = BuildRequest(
                base_url=self.base_url,
                api_version=str(client.api.api_version),
                tag=tag,
                labels={"polignac.submission": submission.label},
                limits=limits,
                timeout_s=self.build_timeout_s,
                stop=stop,
            )
            started = time.monotonic()
            try:
                context, size = spooled_context(submission.path, vetted.text, submission.identity)
                with context:
                    build_image(request, context, size)
            except (BuildFailed, OSError) as exc:
                raise BuildFailed(f"building {submission.label} from {submission.dockerfile} failed: {exc}") from None
            log.info("built %s for %s in %.1f s", tag, submission.label, time.monotonic() - started)
        return tag

    # -- containers

    def container_config(self, context: SeatContext, image: str) -> ContainerConfig:
        """The arguments of ``create_container`` for a seat (without ``host_config`` limits: see :meth:`_create`)."""
        sub = context.submission
        runtime = sub.image is None and sub.dockerfile is None
        environment = context.bot_environment(f"unix:{CONTAINER_SOCKET_DIR}/{context.referee_socket.name}")
        mounts: list[tuple[str, str]] = [(str(context.referee_socket.parent), CONTAINER_SOCKET_DIR)] if context.reaches_referee else []
        working_dir: str | None = None
        command = list(sub.command)
        if runtime:
            runtime_mounts, python_path = host_runtime()
            mounts.extend(runtime_mounts)
            environment |= _runtime_environment(python_path)
            command = list(sub.host_command())
            if sub.builtin:
                working_dir = "/tmp"
            else:
                mounts.append((str(sub.path), "/bot"))
                working_dir = "/bot"
        return {
            "image": image,
            "command": command,
            "environment": environment,
            "mounts": mounts,
            "working_dir": working_dir,
        }

    def _seat_spec(self, context: SeatContext, image: str) -> _Spec:
        config = self.container_config(context, image)
        sub = context.submission
        return _Spec(
            image=image,
            command=config["command"],
            environment=config["environment"],
            binds=config["mounts"],
            working_dir=config["working_dir"],
            limits=context.limits,
            name=f"polignac-{_name_part(context.match_id)}-seat{context.seat}-{secrets.token_hex(3)}",
            labels={LABEL_MATCH: context.match_id, LABEL_SEAT: str(context.seat), LABEL_BOT: sub.label},
            label=sub.label,
            stdin=sub.transport is Transport.STDIO,
            stdout=sub.transport is Transport.STDIO,
        )

    def _create(self, spec: _Spec) -> str:
        """Create (not start) the container of ``spec``; its ID."""
        from docker.types import Mount, Ulimit

        api = self._connect().api
        limits = spec.limits
        memory = f"{limits.memory_mb}m"
        mounts = [Mount(target=target, source=source, type="bind", read_only=True) for source, target in spec.binds]
        found = self.local_image(spec.image)
        volumes = _volume_paths(found.volumes if found else (), [*(target for _, target in spec.binds), *spec.writable], spec.label)
        mounts += [Mount(target=path, source=None, type="tmpfs", tmpfs_size=limits.tmpfs_mb << 20, tmpfs_mode=0o1777) for path in volumes]
        host_config = api.create_host_config(
            network_mode="none",
            mounts=mounts,
            read_only=True,
            tmpfs={"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777", **spec.writable},
            ipc_mode="none",
            cap_drop=["ALL"],
            # The arena's seccomp table, not the daemon's default profile (Docker 20.10's lets ptrace and io_uring through).
            security_opt=["no-new-privileges", _seccomp_option()],
            mem_limit=memory,
            memswap_limit=memory,
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.pids,
            ulimits=[
                Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
                Ulimit(name="fsize", soft=limits.file_size_mb << 20, hard=limits.file_size_mb << 20),
                Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds),
            ],
            log_config={"type": "none", "config": {}},
            auto_remove=False,
        )
        created = api.create_container(
            image=spec.image,
            command=spec.command,
            environment=spec.environment,
            working_dir=spec.working_dir,
            user=SANDBOX_USER,
            hostname="bot",
            name=spec.name,
            labels=spec.labels,
            stdin_open=spec.stdin,
            tty=False,
            host_config=host_config,
            use_config_proxy=False,
            healthcheck={"test": ["NONE"]},  # an image's health check would run commands in the seat unasked
        )
        return str(created["Id"])

    def _remove_quietly(self, container_id: str) -> None:
        """Remove a container that never became a seat; tried again while the arena is short of descriptors."""
        import docker.errors

        delay, give_up = RETRY_FIRST_S, time.monotonic() + REMOVE_PATIENCE_S
        while True:
            try:
                self._connect().api.remove_container(container_id, force=True, v=True)
                return
            except docker.errors.NotFound:
                return
            except Exception as exc:
                if not out_of_descriptors(exc) or time.monotonic() + delay > give_up:
                    log.warning("container %s could not be removed: %s", container_id[:12], short_error(exc))
                    return
            time.sleep(delay)
            delay = min(delay * 2, RETRY_LAST_S)

    async def _attach(self, container_id: str, streams: str, limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Our own connection to the daemon, upgraded to some of the container's raw multiplexed streams."""
        client = self._connect()
        where, port = daemon_target(self.base_url)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=limit)
        protocol = asyncio.StreamReaderProtocol(reader)
        try:
            if where == "unix":
                transport, _ = await asyncio.wait_for(loop.create_unix_connection(lambda: protocol, str(port)), PROBE_TIMEOUT_S)
            else:
                transport, _ = await asyncio.wait_for(loop.create_connection(lambda: protocol, where, int(port)), PROBE_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise SeatError(_daemon_hint(self.base_url, exc)) from None
        writer = StdinWriter(transport, protocol, reader, loop)
        request = (
            f"POST /v{client.api.api_version}/containers/{container_id}/attach?stream=1&{streams} HTTP/1.1\r\n"
            "Host: docker\r\nContent-Type: text/plain\r\nContent-Length: 0\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
        )
        try:
            writer.write(request.encode())
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), PROBE_TIMEOUT_S)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            transport.abort()
            raise SeatError(f"cannot attach to the container: {short_error(exc) or 'no answer'}") from None
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        if status.split()[1:2] not in (["101"], ["200"]):
            body = b""
            with contextlib.suppress(Exception):
                body = await asyncio.wait_for(reader.read(2000), 1.0)
            transport.abort()
            raise SeatError(f"cannot attach to the container: {status} {body.decode('utf-8', 'replace').strip()}")
        return reader, writer

    async def start(self, context: SeatContext) -> SeatProcess:
        sub = context.submission
        if sub.image is None and sub.dockerfile is None and not sub.builtin:
            _check_readable(sub)
        await in_thread(self._connect)
        stop = BuildStop()
        finding = asyncio.ensure_future(in_thread(self.image_for, sub, context.limits, stop))
        try:
            image = await asyncio.shield(finding)
        except asyncio.CancelledError:
            # The thread would build on to its wall clock and hold the arena's exit that long: stop it and let it clean up.
            stop.stop("the arena stopped the build")
            with contextlib.suppress(Exception):
                await finding
            raise
        return await self._launch(self._seat_spec(context, image))

    async def _launch(self, spec: _Spec) -> DockerSeat:
        """Create the container of ``spec``, attach to its streams, open its line, start it."""
        creating = asyncio.ensure_future(in_thread(self._create, spec))
        try:
            container_id = await asyncio.shield(creating)
        except asyncio.CancelledError:
            # The daemon still creates it: remove it as soon as it is there.
            def later(done: asyncio.Future[str]) -> None:
                if not done.cancelled() and done.exception() is None:
                    asyncio.get_running_loop().run_in_executor(None, self._remove_quietly, done.result())

            creating.add_done_callback(later)
            raise
        except SeatError:
            raise
        except Exception as exc:
            raise SeatError(f"cannot create the container of {spec.label}: {short_error(exc)}") from None
        connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        line: DaemonLine | None = None
        try:
            # stderr apart from stdin/stdout: its flood is slowed at the source without touching stdout.
            connections.append(await self._attach(container_id, "stdin=0&stdout=0&stderr=1", STDERR_LIMIT))
            if spec.stdin or spec.stdout:
                streams = f"stdin={int(spec.stdin)}&stdout={int(spec.stdout)}&stderr=0"
                connections.append(await self._attach(container_id, streams, STDOUT_LIMIT))
            line = await in_thread(DaemonLine, self.base_url, str(self._connect().api.api_version))
            await in_thread(self._connect().api.start, container_id)
        except BaseException as exc:
            for connection in connections:
                connection[1].transport.abort()
            if line is not None:
                line.close()
            await asyncio.shield(in_thread(self._remove_quietly, container_id))
            if isinstance(exc, SeatError | asyncio.CancelledError) or not isinstance(exc, Exception):
                raise
            raise SeatError(f"cannot start the container of {spec.label}: {short_error(exc)}") from None
        attached = Attached(stderr=connections[0], stdio=connections[1] if len(connections) > 1 else None, line=line, stdin=spec.stdin)
        return DockerSeat(self._connect(), container_id, spec.name, attached, spec.limits)

    # -- build steps

    async def build(
        self, submission: Submission, limits: SeatLimits, *, timeout_s: float, trusted: bool = False, caps: BuildLimits | None = None
    ) -> BuildResult:
        """Run the build step in a container like a seat's (see docs/builds.md); never raises for a failing build."""
        return await run_build(submission, limits, caps, timeout_s, self.unavailable, _NO_BUILDS, partial(self._start_build, submission))

    async def _start_build(self, submission: Submission, build_limits: SeatLimits, caps: BuildLimits) -> BuildStarted:
        """The build's container, started (:data:`.builds.BuildStart`)."""
        _check_readable(submission)
        image = await in_thread(self.runtime_image)
        runtime_mounts, python_path = host_runtime()
        spec = _Spec(
            image=image,
            command=build_command(sys.executable, submission.build),
            environment=_runtime_environment(python_path),
            binds=[*runtime_mounts, (str(submission.path), BUILD_SOURCE), (str(WRAPPER_SOURCE), BUILD_WRAPPER)],
            working_dir="/",
            limits=build_limits,
            name=f"polignac-build-{_name_part(submission.name)}-{secrets.token_hex(3)}",
            labels={LABEL_BUILD: submission.label},
            label=f"the build of {submission.label}",
            stdin=False,
            stdout=True,
            # The build's copy of the folder: capped, its own, and it may run what it compiles there.
            writable={BUILD_DIR: f"rw,exec,nosuid,nodev,size={caps.disk_mb}m,uid=65534,gid=65534,mode=0755"},
        )
        process = await self._launch(spec)
        return process, process.memory_kills

    def remove_match_containers(self, match_id: str) -> list[str]:
        """Kill and remove every container of a match (for a sweep after a crash of the arena)."""
        return remove_containers(self._connect(), match_id)
