"""Submissions: a bot's folder and its ``bot.toml``, validated with one clear error per problem.

``bot.toml`` keys (see sample_bots/ for examples)::

    name = "heuristic"              # required: 1-64 of A-Z a-z 0-9 . _ -, a letter or digit first
    version = "1.0"                 # required: 1-64 printable characters
    author = "Ada"                  # optional, up to 100 characters
    language = "python"             # required: python, javascript, typescript, c, cpp, rust, go, java, other
    command = ["python", "bot.py"]  # required: a list of strings, or one command line
    transport = "grpc"              # optional: grpc (default) or stdio
    dockerfile = "Dockerfile"       # optional: build the docker image from this file in the folder
    image = "my-bot:1"              # optional: a local docker image (not with dockerfile)
    build = ["gcc", "-O2", "-o", "bot", "bot.c"]  # optional: a build step, run in the folder
    games = ["classic", "knaves"]   # optional: the games (presets) it plays; default: the 32-card
                                    # French games (classic, quatre-valets, ace-high, slobberhannes,
                                    # no-contracts).  A match in another game refuses to seat it.

    [resources]                     # optional requests, granted up to the tournament's caps
    memory_mb = 256
    cpus = 1.0
    pids = 64
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from polignac_arena.folders import FolderError, folder_digest, read_file, scan_folder
from polignac_arena.games import DEFAULT_GAMES, GamesError, parse_games
from polignac_arena.settings import NAME_RULE, VERSION_MAX, Transport, is_name, is_version_text

__all__ = ["LANGUAGES", "ResourceRequest", "Submission", "SubmissionError", "builtin_submission", "content_digest", "load_submission"]

LANGUAGES: Final = ("python", "javascript", "typescript", "c", "cpp", "rust", "go", "java", "other")
_KEYS: Final = ("name", "version", "author", "language", "command", "transport", "dockerfile", "image", "build", "games", "resources")
MAX_MANIFEST_BYTES: Final = 64 << 10
MAX_DOCKERFILE_BYTES: Final = 1 << 20
_RESOURCE_BOUNDS: Final = {"memory_mb": (16, 65536), "cpus": (0.1, 64.0), "pids": (4, 4096)}


class SubmissionError(ValueError):
    """A submission that cannot be used; ``problems`` lists every problem, one line each."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))


@dataclass(frozen=True)
class ResourceRequest:
    """What a bot asks for; a tournament grants at most its own caps."""

    memory_mb: int | None = None
    cpus: float | None = None
    pids: int | None = None


@dataclass(frozen=True)
class Submission:
    """A validated bot: where it lives and how to start it."""

    path: Path
    name: str
    version: str
    language: str
    command: tuple[str, ...]
    transport: Transport = Transport.GRPC
    author: str = ""
    dockerfile: str | None = None
    image: str | None = None
    build: tuple[str, ...] = ()
    resources: ResourceRequest = field(default_factory=ResourceRequest)
    games: tuple[str, ...] = DEFAULT_GAMES
    """The games (preset names) it plays: bot.toml's ``games`` (:mod:`polignac_arena.games`)."""
    builtin: bool = False
    """A built-in bot of the SDK (``python -m polignac.bots NAME``), not a folder of its own."""
    identity: tuple[int, int] | None = None
    """The folder's ``(st_dev, st_ino)`` when it was checked: a seat refuses a folder replaced since (None: not checked)."""

    def __post_init__(self) -> None:
        # Made in code as well as from bot.toml: a transport given as its text is the same transport.
        object.__setattr__(self, "transport", Transport(self.transport))

    @property
    def label(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def host_command(self) -> tuple[str, ...]:
        """The command as run on this machine: ``python`` means this interpreter (so the SDK imports)."""
        if self.command and self.command[0] in ("python", "python3"):
            return (sys.executable, *self.command[1:])
        return self.command


def _line_of(text: str, key: str) -> str:
    """`` (line N)`` for the first line that sets ``key``, to point at the problem."""
    for number, line in enumerate(text.splitlines(), start=1):
        if re.match(rf"\s*{re.escape(key)}\s*=", line) or line.strip() == f"[{key}]":
            return f" (line {number})"
    return ""


def load_submission(path: Path | str) -> Submission:
    """Read and validate ``PATH/bot.toml``; raises :class:`SubmissionError` listing every problem.

    The whole folder is checked first (:func:`polignac_arena.folders.scan_folder`: no link out
    of it, no special file, within the caps), and ``bot.toml`` and the Dockerfile are read only
    as regular files of the folder itself.
    """
    folder = Path(path)
    manifest = folder / "bot.toml"
    if not folder.is_dir():
        raise SubmissionError(folder, ["not a folder (a submission is a folder holding bot.toml)"])
    try:
        listing = scan_folder(folder)
    except FolderError as exc:
        raise SubmissionError(folder, [exc.problem]) from None
    if not os.path.lexists(manifest):
        raise SubmissionError(folder, ["no bot.toml in this folder"])
    try:
        text = read_file(folder, "bot.toml", MAX_MANIFEST_BYTES).decode("utf-8")
        table = tomllib.loads(text)
    except FolderError as exc:
        raise SubmissionError(folder, [exc.problem]) from None
    except UnicodeDecodeError:
        raise SubmissionError(manifest, ["not UTF-8 text"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise SubmissionError(manifest, [f"not valid TOML: {exc}"]) from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise SubmissionError(manifest, ["not valid TOML: arrays or tables nested too deeply"]) from None
    problems: list[str] = []

    def bad(key: str, message: str) -> None:
        problems.append(f"{key!r}{_line_of(text, key)}: {message}")

    for key in table:
        if key not in _KEYS:
            bad(key, f"unknown key; known keys: {', '.join(_KEYS)}")
    name = table.get("name")
    if not is_name(name):
        bad("name", f"must be {NAME_RULE}, got {name!r}")
    version = table.get("version")
    if not is_version_text(version):
        bad("version", f"must be 1 to {VERSION_MAX} printable characters, got {version!r}")
    author = table.get("author", "")
    if not isinstance(author, str) or len(author) > 100 or not author.isprintable():
        bad("author", f"must be up to 100 printable characters, got {author!r}")
    language = table.get("language")
    if language not in LANGUAGES:
        bad("language", f"must be one of {', '.join(LANGUAGES)}, got {language!r}")
    transport = table.get("transport", Transport.GRPC.value)
    if transport not in set(Transport):
        bad("transport", f"must be 'grpc' or 'stdio', got {transport!r}")
        transport = Transport.GRPC
    command = _command(table.get("command"), "command", bad, required=True)
    build = _command(table.get("build"), "build", bad, required=False)
    dockerfile = table.get("dockerfile")
    image = table.get("image")
    if dockerfile is not None and image is not None:
        bad("image", "give either 'dockerfile' or 'image', not both")
    if dockerfile is not None:
        if not isinstance(dockerfile, str) or not dockerfile or Path(dockerfile).is_absolute() or ".." in Path(dockerfile).parts:
            bad("dockerfile", f"must be a relative path inside the folder, got {dockerfile!r}")
        elif not os.path.lexists(folder / dockerfile):
            bad("dockerfile", f"{dockerfile!r} does not exist in the folder")
        else:
            try:
                read_file(folder, dockerfile, MAX_DOCKERFILE_BYTES)
            except FolderError as exc:
                bad("dockerfile", exc.problem)
    if image is not None and (not isinstance(image, str) or not re.match(r"^[a-z0-9][a-z0-9._/:@-]{0,199}$", image)):
        bad("image", f"must be a docker image reference such as 'my-bot:1', got {image!r}")
    resources = _resources(table.get("resources", {}), bad)
    games: tuple[str, ...] = DEFAULT_GAMES
    if "games" in table:
        try:
            games = parse_games(table["games"])
        except GamesError as exc:
            bad("games", str(exc))
    if problems or not is_name(name) or not is_version_text(version) or not isinstance(language, str):
        raise SubmissionError(manifest, problems)
    return Submission(
        path=listing.root,
        name=name,
        version=version,
        language=language,
        command=command,
        transport=Transport(transport),
        author=author,
        dockerfile=dockerfile,
        image=image,
        build=build,
        resources=resources,
        games=games,
        identity=listing.identity,
    )


def _command(value: Any, key: str, bad: Any, required: bool) -> tuple[str, ...]:
    if value is None:
        if required:
            bad(key, "is required: the command that starts the bot, such as ['python', 'bot.py']")
        return ()
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as exc:
            bad(key, f"cannot be split into words: {exc}")
            return ()
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v and "\x00" not in v for v in value):
        bad(key, f"must be a non-empty list of strings (or one command line), got {value!r}")
        return ()
    return tuple(value)


def _resources(value: Any, bad: Any) -> ResourceRequest:
    if not isinstance(value, dict):
        bad("resources", f"must be a table such as [resources] memory_mb = 256, got {value!r}")
        return ResourceRequest()
    granted: dict[str, Any] = {}
    for key, raw in value.items():
        if key not in _RESOURCE_BOUNDS:
            bad("resources", f"unknown key {key!r}; known: {', '.join(_RESOURCE_BOUNDS)}")
            continue
        lo, hi = _RESOURCE_BOUNDS[key]
        kind = float if key == "cpus" else int
        ok = type(raw) is int or (kind is float and type(raw) is float)
        if not ok or not lo <= raw <= hi:
            bad("resources", f"{key} must be a number in {lo}..{hi}, got {raw!r}")
            continue
        granted[key] = kind(raw)
    return ResourceRequest(**granted)


def content_digest(folder: Path) -> str:
    """The submission's digest (:func:`polignac_arena.folders.folder_digest`); raises :class:`SubmissionError`."""
    try:
        return folder_digest(folder)
    except FolderError as exc:
        raise SubmissionError(Path(folder), [exc.problem]) from None


def builtin_submission(name: str) -> Submission:
    """A built-in bot of the SDK as a submission (its code is the installed ``polignac`` package)."""
    import polignac
    from polignac import PRESETS
    from polignac.bots import BUILTIN_NAMES, builtin_unavailable

    if name not in BUILTIN_NAMES:
        raise SubmissionError(Path(name), [f"no built-in bot {name!r}; built-in bots: {', '.join(BUILTIN_NAMES)}"])
    problem = builtin_unavailable(name)
    if problem is not None:
        raise SubmissionError(Path(name), [problem])
    # Version "builtin": the SDK's bots are told apart from folders of the same name (the sample bots).
    return Submission(
        path=Path(polignac.__file__).resolve().parent,
        name=name,
        version="builtin",
        language="python",
        command=("python", "-m", "polignac.bots", name),
        games=tuple(PRESETS),
        builtin=True,
    )
