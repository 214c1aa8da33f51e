"""Images built from a submission's Dockerfile: checked, capped, timed, and never pulled.

:func:`build_image` sends the daemon the canonical Dockerfile of
:func:`~polignac_arena.seats.dockerfile.vet_dockerfile` (never the submission's own text) in a
build context the arena writes itself, and builds it with the classic builder:

* the context is written from the arena's own copy of the folder (links and special files
  checked as they are copied), with no setuid, setgid or sticky bit on any file, so no build
  step can become root through a file of its own;
* every ``RUN`` container gets the seat's memory (no swap) and CPU caps through the build
  API's container limits, its open files and CPU seconds as rlimits, no network, and runs as
  uid 65534 (the vetting puts ``USER`` after every ``FROM``);
* processes: the build API has no pids limit, so the arena makes a pids cgroup with
  ``pids.max`` set to the seat's cap and passes it as the build's ``cgroupparent``: every
  ``RUN`` container's cgroup is made beneath it and the cap holds for all of them together;
* a wall clock: past ``timeout_s`` the arena closes the build's connection, the daemon
  cancels the build and kills its ``RUN`` container, and whatever process is still in the
  build's cgroup a few seconds later is killed by the arena;
* the daemon's output is kept up to :data:`OUTPUT_BYTES` (the rest is read and dropped);
* nothing but the image is left: the classic builder keeps every step's image, also of
  stages the final image does not build on and of failed builds, untagged and for good (a
  build could so fill the daemon's disk a wall clock at a time); every image of the build
  carries :data:`~polignac_arena.seats.dockerfile.BUILD_LABEL` and those untagged are removed.

Limits that the build API cannot give are written down in docs/docker-seats.md.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import http.client
import io
import json
import logging
import os
import re
import secrets
import signal
import socket
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final
from urllib.parse import urlencode

from polignac_arena.folders import FolderError, copy_folder
from polignac_arena.owners import identity, is_running
from polignac_arena.seats.base import SeatError, SeatLimits
from polignac_arena.seats.docker_http import DaemonLine, DaemonUnreachable, connect
from polignac_arena.seats.dockerfile import BUILD_LABEL

__all__ = ["BUILD_CGROUP_ROOT", "OUTPUT_BYTES", "BuildFailed", "BuildStop", "build_cgroup", "build_image", "context_archive"]

log = logging.getLogger(__name__)

BUILD_CGROUP_ROOT: Final = "polignac-builds"
"""The folder, at the root of each cgroup v1 hierarchy, holding one cgroup per running build."""
OUTPUT_BYTES: Final = 64 << 10
DOCKERFILE_NAME: Final = ".polignac.Dockerfile"
"""Where the canonical Dockerfile goes in the context (a submission file of that name is left out)."""
_KILL_GRACE_S: Final = 5.0
_OWNER_MARK: Final = "@"
_CONTAINER_ID: Final = re.compile(r"[0-9a-f]{64}")


class BuildFailed(SeatError):
    """An image build that the daemon refused, that failed, or that the arena stopped."""


# -- the build context ------------------------------------------------------------------------------------------


def _ignore_patterns(folder: Path) -> list[str]:
    """The ``.dockerignore`` patterns of a folder the arena made itself (a copy of the submission)."""
    path = folder / ".dockerignore"
    if not path.is_file() or path.is_symlink():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def context_archive(copy: Path, dockerfile_text: str, into: IO[bytes]) -> None:
    """Write a build context: the files of ``copy`` (``.dockerignore`` applied) and the canonical Dockerfile.

    ``copy`` is the arena's own copy of the submission (:func:`~polignac_arena.folders.copy_folder`:
    nothing in it leads out of it, no special file, sizes capped).  Links go in as links (the
    daemon resolves them inside the context); every entry belongs to root, has time zero and no
    setuid, setgid or sticky bit.
    """
    from docker.utils.build import PatternMatcher

    matcher = PatternMatcher(_ignore_patterns(copy))

    def clean(entry: tarfile.TarInfo) -> tarfile.TarInfo | None:
        name = entry.name.removeprefix("./")
        if not name or name == "." or name == DOCKERFILE_NAME or matcher.matches(name):
            return None
        if not (entry.isfile() or entry.isdir() or entry.issym()):
            raise BuildFailed(f"{copy / name} is not a regular file, a folder or a link")
        entry.name, entry.uid, entry.gid, entry.uname, entry.gname, entry.mtime = name, 0, 0, "", "", 0
        entry.mode = 0o777 if entry.issym() else 0o755 if entry.isdir() or entry.mode & 0o111 else 0o644
        return entry

    with tarfile.open(fileobj=into, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for child in sorted(copy.iterdir()):
            tar.add(child, arcname=child.name, recursive=True, filter=clean)
        data = dockerfile_text.encode()
        entry = tarfile.TarInfo(DOCKERFILE_NAME)
        entry.size, entry.mode, entry.mtime = len(data), 0o644, 0
        tar.addfile(entry, io.BytesIO(data))


# -- the build's pids cgroup ------------------------------------------------------------------------------------


@functools.cache
def _hierarchies() -> dict[str, Path]:
    """Each cgroup hierarchy's mount point, keyed by its controllers (``cpu,cpuacct``, ``pids``; ``cgroup2`` for v2).

    The daemon makes a build container's cgroup in every hierarchy (the v2 one too, on a
    hybrid host), so each gets cleaned.
    """
    found: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2") or len(fields) < 5 or fields[3] != "/":
                continue
            if tail[0] == "cgroup2":
                key = "cgroup2"
            else:
                key = ",".join(sorted(option for option in tail[2].split(",") if option not in ("rw", "ro")))
            found.setdefault(key, Path(fields[4]))
    return found


def _pids_root() -> Path | None:
    for controllers, mount in _hierarchies().items():
        if "pids" in controllers.split(","):
            return mount
    return None


def _pids_in(folder: Path) -> list[int]:
    pids: list[int] = []
    for procs in folder.rglob("cgroup.procs"):
        with contextlib.suppress(OSError, ValueError):
            pids.extend(int(line) for line in procs.read_text().split())
    return pids


def _remove_tree(name: str) -> bool:
    """Remove ``polignac-builds/NAME`` (and what the daemon left beneath it) in every hierarchy; False if busy."""
    clean = True
    for mount in _hierarchies().values():
        top = mount / BUILD_CGROUP_ROOT / name
        if not top.is_dir():
            continue
        inner = sorted((path for path in top.rglob("*") if path.is_dir()), key=lambda path: len(path.parts), reverse=True)
        for folder in [*inner, top]:
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    raise
                clean = False
    return clean


def _sweep_dead_builds() -> None:
    """Remove the empty build cgroups of arenas that died during a build."""
    root = _pids_root()
    if root is None or not (root / BUILD_CGROUP_ROOT).is_dir():
        return
    for folder in (root / BUILD_CGROUP_ROOT).iterdir():
        _, mark, owner = folder.name.rpartition(_OWNER_MARK)
        pid, dot, started = owner.partition(".")
        if mark and dot and pid.isdigit() and started.isdigit() and not is_running(int(pid), int(started)):
            with contextlib.suppress(OSError):
                _remove_tree(folder.name)


@dataclass
class BuildCgroup:
    """A pids cgroup that a build's containers are made beneath."""

    name: str
    folder: Path

    @property
    def parent(self) -> str:
        """The build API's ``cgroupparent``: the path from the hierarchy's root."""
        return f"/{BUILD_CGROUP_ROOT}/{self.name}"

    def containers(self) -> list[str]:
        """The IDs of the containers the daemon made in this cgroup (the cgroupfs driver names their cgroups so)."""
        return sorted(path.name for path in self.folder.iterdir() if path.is_dir() and _CONTAINER_ID.fullmatch(path.name))

    def kill_leftovers(self) -> list[int]:
        """SIGKILL every process still in the cgroup; their pids."""
        pids = _pids_in(self.folder)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return pids


@contextlib.contextmanager
def build_cgroup(pids: int) -> Iterator[BuildCgroup]:
    """A fresh pids cgroup with ``pids.max``; on leaving, anything left in it is killed and it is removed."""
    root = _pids_root()
    if root is None or os.geteuid() != 0:
        raise BuildFailed(
            "Dockerfile builds need a cgroup v1 pids hierarchy and root to cap a build's processes (the build API has no"
            " pids limit); give the bot an image instead, or build it by hand"
        )
    _sweep_dead_builds()
    owner = identity(os.getpid())
    name = secrets.token_hex(6) + (f"{_OWNER_MARK}{owner[0]}.{owner[1]}" if owner else "")
    folder = root / BUILD_CGROUP_ROOT / name
    for attempt in range(3):  # another build's cleanup may remove the shared parent in between
        try:
            folder.mkdir(parents=True)
            break
        except FileNotFoundError:
            if attempt == 2:
                raise
    group = BuildCgroup(name, folder)
    try:
        (folder / "pids.max").write_text(str(pids))
        yield group
    finally:
        deadline = time.monotonic() + _KILL_GRACE_S
        while _pids_in(folder) and time.monotonic() < deadline:
            time.sleep(0.05)
        if group.kill_leftovers():
            log.warning("build cgroup %s: killed the processes the daemon left running", name)
        for _ in range(100):
            if _remove_tree(name):
                break
            group.kill_leftovers()
            time.sleep(0.05)
        else:
            log.error("build cgroup %s could not be removed", name)
        for mount in _hierarchies().values():
            with contextlib.suppress(OSError):  # still used by another build, or already gone
                (mount / BUILD_CGROUP_ROOT).rmdir()


# -- the build --------------------------------------------------------------------------------------------------


class BuildStop:
    """Stops a running build from another thread: its wall clock, or the arena giving up on it (a signal)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.reason = ""
        """Why the build was stopped ("" while it was not)."""

    def attach(self, sock: socket.socket) -> None:
        """The build's connection: stopping shuts it down (the daemon then cancels the build)."""
        with self._lock:
            self._sock = sock
            if self.reason:
                self._cut()

    def stop(self, reason: str) -> None:
        with self._lock:
            if not self.reason:
                self.reason = reason
                self._cut()

    def _cut(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)


@dataclass(frozen=True)
class BuildRequest:
    """One image build: where the daemon is, what to tag, and the caps of its steps."""

    base_url: str
    api_version: str
    tag: str
    labels: dict[str, str]
    limits: SeatLimits
    timeout_s: float
    stop: BuildStop = field(default_factory=BuildStop)
    """Stops the build from another thread (the arena's own wall clock uses it too)."""


def _params(request: BuildRequest, cgroup_parent: str) -> str:
    limits = request.limits
    memory = limits.memory_mb << 20
    ulimits = [
        {"Name": "nofile", "Soft": limits.open_files, "Hard": limits.open_files},
        {"Name": "cpu", "Soft": limits.cpu_seconds, "Hard": limits.cpu_seconds},
    ]
    params = {
        "version": "1",  # the classic builder, the one the vetting and these limits are for (never BuildKit)
        "dockerfile": DOCKERFILE_NAME,
        "t": request.tag,
        "labels": json.dumps(request.labels),
        "rm": "1",
        "forcerm": "1",
        "pull": "0",
        "networkmode": "none",
        "memory": str(memory),
        "memswap": str(memory),
        "cpuperiod": "100000",
        "cpuquota": str(max(1000, int(limits.cpus * 100_000))),
        "shmsize": str(min(memory, 64 << 20)),
        "cgroupparent": cgroup_parent,
        "ulimits": json.dumps(ulimits),
    }
    return urlencode(params)


class _Output:
    """The build's output as people read it, up to :data:`OUTPUT_BYTES`."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.size = 0
        self.error: str | None = None
        self.image_id: str | None = None

    def add(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if message.get("error"):
            self.error = str(message["error"]).strip()
        aux = message.get("aux")
        if isinstance(aux, dict) and isinstance(aux.get("ID"), str):
            self.image_id = aux["ID"]
        stream = message.get("stream")
        if isinstance(stream, str) and self.size < OUTPUT_BYTES:
            piece = stream[: OUTPUT_BYTES - self.size]
            self.text.append(piece)
            self.size += len(piece)

    def tail(self, chars: int = 2000) -> str:
        return "".join(self.text).strip()[-chars:]


def build_image(request: BuildRequest, context: IO[bytes], size: int) -> str:
    """Build ``context`` (a tar of ``size`` bytes) as ``request.tag``; the image ID, or :class:`BuildFailed`."""
    image_id: str | None = None
    try:
        with build_cgroup(request.limits.pids) as group:
            image_id = _stream_build(request, context, size, group)
    finally:
        _remove_build_images(request, keep=image_id)
    return image_id


SWEEP_PATIENCE_S: Final = 10.0
"""How long the sweep of a build's images waits for the daemon to let go of a stopped step's container."""
SWEEP_RETRY_S: Final = 0.2


def _remove_build_images(request: BuildRequest, keep: str | None) -> None:
    """Remove the untagged images of this build (labelled with its tag by the vetting) but ``keep``.

    Removing one also removes its untagged parents; a parent of the kept image is refused (409) and stays.
    """
    filters = json.dumps({"label": [f"{BUILD_LABEL}={request.tag}"]})
    try:
        line = DaemonLine(request.base_url, request.api_version)
    except (DaemonUnreachable, OSError) as exc:
        log.error("the images of the build of %s could not be listed: %s", request.tag, exc)
        return
    try:
        deadline = time.monotonic() + SWEEP_PATIENCE_S
        while True:
            status, found = line.request("GET", "/images/json", {"all": "1", "filters": filters})
            if status != 200 or not isinstance(found, list):
                log.error("the images of the build of %s could not be listed: %s %s", request.tag, status, found)
                return
            held = False
            for image in found:
                ident, tags = image.get("Id"), image.get("RepoTags") or []
                if isinstance(ident, str) and ident != keep and all(tag == "<none>:<none>" for tag in tags):
                    # 404: removed with a child already; 409: the kept one's parent, or a step's container not yet gone
                    status, body = line.request("DELETE", f"/images/{ident}")
                    held = held or (status == 409 and "container" in str(body))
            if not held or time.monotonic() > deadline:
                if held:
                    log.error("images of the build of %s are still held by a container: left on the daemon", request.tag)
                return
            time.sleep(SWEEP_RETRY_S)  # the daemon removes a stopped build's step container on its own, a moment later
    except DaemonUnreachable as exc:
        log.error("the images of the build of %s could not be removed: %s", request.tag, exc)
    finally:
        line.close()


def _stream_build(request: BuildRequest, context: IO[bytes], size: int, group: BuildCgroup) -> str:
    sock = connect(request.base_url, timeout=30.0)
    request.stop.attach(sock)
    timed_out = f"the build ran past its {request.timeout_s:g} s limit and was stopped"
    timer = threading.Timer(request.timeout_s, request.stop.stop, [timed_out])
    timer.daemon = True
    timer.start()
    output = _Output()
    connection = http.client.HTTPConnection("docker")
    connection.sock = sock
    try:
        sock.settimeout(None)
        path = f"/v{request.api_version}/build?{_params(request, group.parent)}"
        connection.request("POST", path, body=context, headers={"Content-Type": "application/x-tar", "Content-Length": str(size)})
        response = connection.getresponse()
        if response.status != 200:
            body = response.read(4000).decode("utf-8", "replace").strip()
            with contextlib.suppress(ValueError, TypeError):
                body = str(json.loads(body).get("message", body))
            raise BuildFailed(f"the Docker daemon refused the build: {body}")
        while line := response.readline(1 << 20):
            output.add(line)
    except (OSError, http.client.HTTPException) as exc:
        if not request.stop.reason:
            raise BuildFailed(f"the connection to the Docker daemon broke during the build: {exc}") from None
    finally:
        timer.cancel()
        connection.close()
    if request.stop.reason:
        _remove_step_containers(request, group)
        raise BuildFailed(f"{request.stop.reason}\n{output.tail()}".rstrip())
    if output.error is not None or output.image_id is None:
        reason = output.error or "the daemon named no image"
        raise BuildFailed(f"{reason}\n{output.tail()}".rstrip())
    return output.image_id


def _remove_step_containers(request: BuildRequest, group: BuildCgroup) -> None:
    """After a cut: kill the build's processes and remove its step containers now, not whenever the daemon gets to it."""
    containers = group.containers()
    group.kill_leftovers()
    if not containers:
        return
    line = DaemonLine(request.base_url, request.api_version)
    try:
        for container in containers:
            line.request("DELETE", f"/containers/{container}", {"force": "1", "v": "1"})  # 404: the daemon was faster
    except DaemonUnreachable as exc:
        log.error("build containers %s could not be removed: %s", ", ".join(c[:12] for c in containers), exc)
    finally:
        line.close()


def spooled_context(folder: Path, dockerfile_text: str, identity: tuple[int, int] | None = None) -> tuple[IO[bytes], int]:
    """The build context of a submission folder, in a temporary file (in memory while small); the caller closes it.

    The folder is first copied by :func:`~polignac_arena.folders.copy_folder` (every link and
    file checked on the walk that copies it; with ``identity``, only the folder that was checked,
    reached through no link); the archive is written from that copy.
    """
    spool = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115 (returned open, closed by the caller)
    try:
        with tempfile.TemporaryDirectory(prefix="polignac-context-") as work:
            copy = Path(work, "context")
            try:
                copy_folder(folder, copy, identity=identity)
            except FolderError as exc:
                raise BuildFailed(str(exc)) from None
            context_archive(copy, dockerfile_text, spool)
        size = spool.tell()
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return spool, size
