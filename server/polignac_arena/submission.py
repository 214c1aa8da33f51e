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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final

from pydantic import AfterValidator, Field, StrictStr, field_validator

from polignac_arena.folders import FolderError, folder_digest, read_file, scan_folder
from polignac_arena.games import DEFAULT_GAMES, GamesError, parse_games
from polignac_arena.settings import VERSION_MAX, Transport, is_version_text
from polignac_arena.toml_files import (
    NAME_MUST,
    FileModel,
    Key,
    Problem,
    TomlError,
    TomlLines,
    checked_name,
    invalid,
    parse_toml,
    validate,
)

__all__ = [
    "LANGUAGES",
    "BotFile",
    "ResourceRequest",
    "Submission",
    "SubmissionError",
    "builtin_submission",
    "content_digest",
    "load_submission",
]

LANGUAGES: Final = ("python", "javascript", "typescript", "c", "cpp", "rust", "go", "java", "other")
MAX_MANIFEST_BYTES: Final = 64 << 10
MAX_DOCKERFILE_BYTES: Final = 1 << 20


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


_IMAGE: Final = re.compile(r"^[a-z0-9][a-z0-9._/:@-]{0,199}$")
_COMMAND_RULE: Final = "must be a non-empty list of strings (or one command line)"


def _command_words(value: list[str] | str | None) -> tuple[str, ...] | None:
    """A command as words: a list as given, or one command line split as a shell would."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as exc:
            raise invalid(f"cannot be split into words: {exc}") from None
    if not value or not all(word and "\x00" not in word for word in value):
        raise invalid(f"{_COMMAND_RULE}, got {value!r}")
    return tuple(value)


class ResourcesTable(FileModel):
    """``[resources]``: what the bot asks for, granted up to the tournament's caps."""

    memory_mb: int | None = Field(default=None, strict=True, ge=16, le=65536, description="must be a number in 16..65536")
    cpus: float | None = Field(default=None, strict=True, ge=0.1, le=64.0, description="must be a number in 0.1..64.0")
    pids: int | None = Field(default=None, strict=True, ge=4, le=4096, description="must be a number in 4..4096")


class BotFile(FileModel):
    """``bot.toml`` as written (the module's docstring shows one); the required keys are None when left out."""

    name: Annotated[StrictStr | None, AfterValidator(checked_name)] = Field(default=None, description=NAME_MUST)
    version: StrictStr | None = Field(default=None, description=f"must be 1 to {VERSION_MAX} printable characters")
    author: StrictStr = Field(default="", description="must be up to 100 printable characters")
    language: StrictStr | None = Field(default=None, description=f"must be one of {', '.join(LANGUAGES)}")
    transport: Transport = Field(default=Transport.GRPC, description="must be 'grpc' or 'stdio'")
    command: list[StrictStr] | StrictStr | None = Field(default=None, union_mode="left_to_right", description=_COMMAND_RULE)
    build: list[StrictStr] | StrictStr | None = Field(default=None, union_mode="left_to_right", description=_COMMAND_RULE)
    dockerfile: StrictStr | None = Field(default=None, description="must be a relative path inside the folder")
    image: StrictStr | None = Field(default=None, description="must be a docker image reference such as 'my-bot:1'")
    resources: ResourcesTable = Field(default=ResourcesTable(), description="must be a table such as [resources] memory_mb = 256")
    games: tuple[str, ...] = DEFAULT_GAMES

    @field_validator("version")
    @classmethod
    def _version(cls, version: str | None) -> str | None:
        if not is_version_text(version):
            raise invalid(f"must be 1 to {VERSION_MAX} printable characters, got {version!r}")
        return version

    @field_validator("author")
    @classmethod
    def _author(cls, author: str) -> str:
        if len(author) > 100 or not author.isprintable():
            raise invalid(f"must be up to 100 printable characters, got {author!r}")
        return author

    @field_validator("language")
    @classmethod
    def _language(cls, language: str | None) -> str | None:
        if language not in LANGUAGES:
            raise invalid(f"must be one of {', '.join(LANGUAGES)}, got {language!r}")
        return language

    @field_validator("command", "build")
    @classmethod
    def _words(cls, value: list[str] | str | None) -> list[str] | None:
        words = _command_words(value)
        return None if words is None else list(words)

    @field_validator("dockerfile")
    @classmethod
    def _relative(cls, dockerfile: str | None) -> str | None:
        if dockerfile is not None and (not dockerfile or Path(dockerfile).is_absolute() or ".." in Path(dockerfile).parts):
            raise invalid(f"must be a relative path inside the folder, got {dockerfile!r}")
        return dockerfile

    @field_validator("image")
    @classmethod
    def _image(cls, image: str | None) -> str | None:
        if image is not None and not _IMAGE.match(image):
            raise invalid(f"must be a docker image reference such as 'my-bot:1', got {image!r}")
        return image

    @field_validator("games", mode="before")
    @classmethod
    def _games(cls, games: object) -> tuple[str, ...]:
        try:
            return parse_games(games)
        except GamesError as exc:
            raise invalid(str(exc)) from None

    def problems_in(self, folder: Path, table: Mapping[str, object]) -> list[Problem]:
        """What the keys say against each other and against the folder (``table``: the file's, to tell a key left out)."""
        problems = []
        if "command" not in table:
            problems.append(Problem(("command",), "is required: the command that starts the bot, such as ['python', 'bot.py']"))
        if "dockerfile" in table and "image" in table:
            problems.append(Problem(("image",), "give either 'dockerfile' or 'image', not both"))
        if self.dockerfile is not None:
            if not os.path.lexists(folder / self.dockerfile):
                problems.append(Problem(("dockerfile",), f"{self.dockerfile!r} does not exist in the folder"))
            else:
                try:
                    read_file(folder, self.dockerfile, MAX_DOCKERFILE_BYTES)
                except FolderError as exc:
                    problems.append(Problem(("dockerfile",), exc.problem))
        return problems


def _unknown_key(key: Key, known: list[str]) -> str:
    return f"unknown key {key[-1]!r}; known: {', '.join(known)}" if len(key) > 1 else f"unknown key; known keys: {', '.join(known)}"


def _shown(problem: Problem, lines: TomlLines) -> str:
    """``'key' (line N): message``: a key of a table is named in the message, after its table."""
    number = lines.line(problem.key)
    where = "" if number is None else f" (line {number})"
    message = problem.message
    if len(problem.key) > 1 and not message.startswith("unknown "):
        message = f"{problem.key[1]} {message}"
    return f"{problem.key[0]!r}{where}: {message}"


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
        table = parse_toml(text)
    except FolderError as exc:
        raise SubmissionError(folder, [exc.problem]) from None
    except UnicodeDecodeError:
        raise SubmissionError(manifest, ["not UTF-8 text"]) from None
    except TomlError as exc:
        raise SubmissionError(manifest, [str(exc)]) from None
    read, problems = validate(BotFile, table, unknown=_unknown_key)
    if read is not None:
        problems += read.problems_in(folder, table)
    if problems or read is None or read.name is None or read.version is None or read.language is None:
        lines = TomlLines(text)
        raise SubmissionError(manifest, [_shown(problem, lines) for problem in problems])
    return Submission(
        path=listing.root,
        name=read.name,
        version=read.version,
        language=read.language,
        command=tuple(read.command or ()),
        transport=read.transport,
        author=read.author,
        dockerfile=read.dockerfile,
        image=read.image,
        build=tuple(read.build or ()),
        resources=ResourceRequest(**read.resources.model_dump()),
        games=read.games,
        identity=listing.identity,
    )


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
