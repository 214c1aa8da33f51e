"""Docker test images, built on this machine from local contexts: there is no container registry.

* :func:`daemon_problem` says why no Docker daemon answers (None when one does): tests skip with it.
* :func:`static_binary` compiles a C program with ``gcc -static`` (cached by a hash of its source).
* :func:`build_test_image` builds an image of the test's own (a Dockerfile and files, not vetted by the
  arena), tagged by a hash of its content and reused while present (the legacy builder, no
  network, nothing pulled); :func:`scratch_image` is one static binary ``FROM scratch``, and
  :func:`tool_image` holds the hostile build tool (``tests/hostile/bots/build_tool.c``).
* :func:`echo_submission` writes a ``stdio`` submission folder running the C echo program, either
  with a ``dockerfile`` (the seat launcher builds it) or with the ``image`` of :func:`scratch_image`.
* :func:`python_submission` writes a Python submission folder (runs on the arena's runtime image).

The C echo program answers each line of its stdin with the same line on stdout, and obeys a
few commands: ``stderr N`` writes N bytes to stderr, ``flood N`` writes N bytes and a newline
to stdout, ``exit N`` exits with status N.  At end of input it exits with status 0.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ECHO_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    static char line[1 << 16];
    fputs("echo: ready\n", stderr);
    while (fgets(line, sizeof line, stdin) != NULL) {
        long n = 0;
        if (sscanf(line, "exit %ld", &n) == 1) {
            fflush(stdout);
            return (int)n;
        }
        if (sscanf(line, "stderr %ld", &n) == 1) {
            for (long i = 0; i < n; i++) fputc('e', stderr);
            fflush(stderr);
            continue;
        }
        if (sscanf(line, "flood %ld", &n) == 1) {
            for (long i = 0; i < n; i++) fputc('x', stdout);
            fputc('\n', stdout);
            fflush(stdout);
            continue;
        }
        fputs(line, stdout);
        fflush(stdout);
    }
    return 0;
}
"""

CACHE = Path(tempfile.gettempdir()) / "polignac-test-images"
TEST_REPOSITORY = "polignac-test"


def client() -> Any:
    """A docker SDK client with a short timeout (a missing daemon is an error, not a hang)."""
    import docker

    return docker.from_env(timeout=10)


@functools.lru_cache(maxsize=1)
def daemon_problem() -> str | None:
    """Why the docker tests cannot run here, or None."""
    try:
        import docker  # noqa: F401  # imported only to learn whether it is installed
    except ImportError:
        return "the docker Python package is not installed (pip install docker)"
    try:
        client().ping()
    except Exception as exc:
        return f"no Docker daemon answers ({str(exc)[:200]}); CI starts dockerd before the tests"
    return None


def gcc_problem() -> str | None:
    """Why static C test binaries cannot be built here, or None."""
    if shutil.which("gcc") is None:
        return "gcc is not installed (apt-get install gcc libc6-dev)"
    return None


def static_binary(source: str, name: str) -> Path:
    """``source`` compiled with ``gcc -static -O2`` into the cache; rebuilt only when the source changes."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    target = CACHE / f"{name}-{digest}"
    if target.is_file():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as work:
        c_file = Path(work, f"{name}.c")
        c_file.write_text(source)
        out = Path(work, name)
        subprocess.run(["gcc", "-static", "-O2", "-o", str(out), str(c_file)], check=True, capture_output=True, text=True)
        os.chmod(out, 0o755)
        os.replace(out, target)
    return target


def echo_binary() -> Path:
    """The static C echo program."""
    return static_binary(ECHO_SOURCE, "echo")


def _context_tar(files: dict[str, tuple[bytes, int]]) -> io.BytesIO:
    """A build context of ``files`` (name: content and mode); a name ending in ``/`` is a folder."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(name.rstrip("/"))
            info.size, info.mode, info.mtime = len(data), mode, 0
            if name.endswith("/"):
                info.type, info.size = tarfile.DIRTYPE, 0
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def build_test_image(name: str, dockerfile: str, files: dict[str, tuple[bytes, int]]) -> str:
    """An image built here by the test itself (not vetted by the arena) from ``dockerfile`` and ``files``; once per content."""
    import docker.errors

    digest = hashlib.sha256(dockerfile.encode())
    for file_name, (data, mode) in sorted(files.items()):
        digest.update(f"\0{file_name}\0{mode}\0".encode() + data)
    tag = f"{TEST_REPOSITORY}/{name}:{digest.hexdigest()[:16]}"
    docker_client = client()
    try:
        docker_client.api.inspect_image(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    context = _context_tar({"Dockerfile": (dockerfile.encode(), 0o644), **files})
    docker_client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True, forcerm=True, pull=False, network_mode="none")
    return tag


def imported_image(name: str, files: dict[str, tuple[bytes, int]], changes: list[str]) -> str:
    """An image made with ``docker import`` of exactly ``files`` (modes kept, folders too) and Dockerfile ``changes``."""
    import docker.errors

    digest = hashlib.sha256("\0".join(changes).encode())
    for file_name, (data, mode) in sorted(files.items()):
        digest.update(f"\0{file_name}\0{mode}\0".encode() + data)
    tag = digest.hexdigest()[:16]
    docker_client = client()
    try:
        docker_client.api.inspect_image(f"{TEST_REPOSITORY}/{name}:{tag}")
    except docker.errors.ImageNotFound:
        data = _context_tar(files).getvalue()
        docker_client.api.import_image_from_data(data, repository=f"{TEST_REPOSITORY}/{name}", tag=tag, changes=changes)
        docker_client.api.inspect_image(f"{TEST_REPOSITORY}/{name}:{tag}")  # the import answers 200 even when it failed
    return f"{TEST_REPOSITORY}/{name}:{tag}"


def scratch_image(binary: Path, name: str) -> str:
    """A ``FROM scratch`` image holding ``binary`` as ``/NAME`` (its command); built once per content."""
    return build_test_image(name, f'FROM scratch\nCOPY {name} /{name}\nCMD ["/{name}"]\n', {name: (binary.read_bytes(), 0o755)})


def tool_binary() -> Path:
    """The static hostile build tool (tests/hostile/bots/build_tool.c)."""
    source = (Path(__file__).parent / "hostile" / "bots" / "build_tool.c").read_text()
    return static_binary(source, "tool")


def tool_image() -> str:
    """A ``FROM scratch`` image holding the build tool as ``/tool``: a local base for hostile Dockerfiles."""
    return scratch_image(tool_binary(), "tool")


def _readable(folder: Path) -> None:
    """Make a test folder readable by the sandbox user (pytest makes its folders 0700)."""
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        extra = stat.S_IROTH | stat.S_IRGRP
        if path.is_dir() or mode & stat.S_IXUSR:
            extra |= stat.S_IXOTH | stat.S_IXGRP
        path.chmod(stat.S_IMODE(mode) | extra)


def echo_submission(folder: Path, how: str = "dockerfile", name: str = "echo") -> Path:
    """A stdio submission folder running the C echo program: ``how`` is ``dockerfile`` or ``image``."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = [f'name = "{name}"', 'version = "1"', 'language = "c"', 'command = ["/echo"]', 'transport = "stdio"']
    if how == "dockerfile":
        shutil.copy2(echo_binary(), folder / "echo")
        (folder / "Dockerfile").write_text('FROM scratch\nCOPY echo /echo\nCMD ["/echo"]\n')
        manifest.append('dockerfile = "Dockerfile"')
    elif how == "image":
        manifest.append(f'image = "{scratch_image(echo_binary(), "echo")}"')
    else:
        raise ValueError(f"how must be 'dockerfile' or 'image', not {how!r}")
    (folder / "bot.toml").write_text("\n".join(manifest) + "\n")
    _readable(folder)
    return folder


def python_submission(folder: Path, source: str, args: tuple[str, ...] = (), name: str = "probe", transport: str = "grpc") -> Path:
    """A Python submission folder running ``source`` as ``bot.py`` (on the arena's runtime image)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(source)
    command = ", ".join(f'"{word}"' for word in ("python", "bot.py", *args))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\nlanguage = "python"\ncommand = [{command}]\ntransport = "{transport}"\n'
    )
    _readable(folder)
    return folder
