"""A submission's Dockerfile, checked and rewritten before the Docker daemon sees it.

The daemon never builds the submission's own text: :func:`vet_dockerfile` parses it with
BuildKit's Dockerfile parser (the ``dockerfile`` package wraps the Go parser Docker itself
uses), checks every instruction, and writes a canonical Dockerfile, one instruction per line
with no line continuation, that parses back to exactly the instructions it checked.  So what
is built is what was checked, whatever tricks of continuations, comments, escape directives
or heredocs the submission plays.

What a Dockerfile may do, and what is refused (docs/docker-seats.md says why):

* ``FROM``: ``scratch``, an earlier stage, or an image already on this machine.  Variables
  are resolved from the ``ARG`` defaults before the first ``FROM``; ``--platform`` must name
  the image's own platform.  Every image is written as its bare 64-hex ID, which the daemon's
  reference parser refuses to pull ("cannot specify 64-byte hexadecimal strings"): even an
  image removed meanwhile is an error, never a download.  A base image with ``ONBUILD``
  triggers (they would run instructions nobody checked) or with volumes is refused.
* ``USER 65534:65534`` follows every ``FROM``: ``RUN`` steps never run as root.  With a
  ``build`` name, ``LABEL polignac.image-build=NAME`` follows it too: every image the build
  makes, of every stage and step, carries it, so the arena finds and removes those it
  does not keep (:mod:`.docker_build`).  A ``USER``
  of the Dockerfile must be a numeric uid (and gid) other than 0; names are refused, since
  an image's ``/etc/passwd`` decides what a name means.
* ``ADD`` is refused (it downloads URLs and unpacks archives, setuid files included): use
  ``COPY``.  ``COPY`` takes ``--chown`` and ``--from`` (an earlier stage or a local image,
  pinned like ``FROM``), nothing else.
* ``RUN`` takes no flags (``--mount`` reaches secrets, SSH agents and caches,
  ``--network`` the network); heredocs are refused everywhere; so are ``ONBUILD`` and
  ``VOLUME`` (a seat gets no volume the arena did not make).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import dockerfile

from polignac_arena.seats.base import SeatError

__all__ = ["BUILD_LABEL", "BUILD_USER", "MAX_DOCKERFILE_BYTES", "DockerfileError", "LocalImage", "VettedDockerfile", "vet_dockerfile"]

BUILD_USER: Final = "65534:65534"
"""The user every build step runs as, unless the Dockerfile names another non-root uid."""
BUILD_LABEL: Final = "polignac.image-build"
"""The label every image of one build carries (its value names the build: the tag it makes)."""
MAX_DOCKERFILE_BYTES: Final = 256 << 10
_BUILD_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]*")
_MAX_INSTRUCTIONS: Final = 2000

_ALLOWED: Final = frozenset(
    {"FROM", "ARG", "RUN", "COPY", "ENV", "LABEL", "WORKDIR", "USER", "CMD", "ENTRYPOINT", "EXPOSE", "STOPSIGNAL"}
    | {"SHELL", "HEALTHCHECK", "MAINTAINER"}
)
_REFUSED: Final = {
    "ADD": "ADD downloads URLs and unpacks archives; use COPY for the folder's files",
    "ONBUILD": "ONBUILD triggers run in other builds, unchecked",
    "VOLUME": "a seat gets no volume the arena did not make; write to /tmp",
}
_HEX_ID: Final = re.compile(r"sha256:([0-9a-f]{64})")
_NUMERIC_USER: Final = re.compile(r"([0-9]+)(?::([0-9]+))?")
_HEREDOC: Final = re.compile(r"<<-?\s*[\"']?[A-Za-z_]")
_VARIABLE: Final = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


class DockerfileError(SeatError):
    """A Dockerfile the arena will not build: the message names the line and the reason."""


@dataclass(frozen=True)
class LocalImage:
    """What the arena needs to know of an image on this machine."""

    id: str
    """``sha256:`` and 64 hex digits."""
    platform: str
    """``os/architecture`` (``/variant`` when the image has one), lower case."""
    on_build: tuple[str, ...] = ()
    volumes: tuple[str, ...] = ()

    @classmethod
    def from_inspect(cls, data: Mapping[str, object]) -> LocalImage:
        """From the daemon's answer to ``GET /images/NAME/json``."""
        config = data.get("Config")
        if not isinstance(config, Mapping):
            config = {}
        platform = "/".join(str(part) for part in (data.get("Os"), data.get("Architecture"), data.get("Variant")) if part)
        return cls(
            id=str(data["Id"]),
            platform=platform.lower(),
            on_build=tuple(config.get("OnBuild") or ()),
            volumes=tuple(sorted(config.get("Volumes") or {})),
        )


class Instruction(Protocol):
    """One instruction as :func:`dockerfile.parse_string` gives it (a ``dockerfile.Command``)."""

    @property
    def cmd(self) -> str: ...
    @property
    def sub_cmd(self) -> str | None: ...
    @property
    def json(self) -> bool: ...
    @property
    def original(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def flags(self) -> tuple[str, ...]: ...
    @property
    def value(self) -> tuple[str, ...]: ...
    @property
    def heredocs(self) -> tuple[object, ...]: ...


Signature = tuple[str, str | None, bool, tuple[str, ...], tuple[str, ...]]
"""What must survive a rewrite of an instruction: its name, sub-command, JSON form, flags and words."""

Resolver = Callable[[str], LocalImage | None]
"""Looks an image reference up on this machine (None when it is not there); never pulls."""


@dataclass(frozen=True)
class VettedDockerfile:
    """The Dockerfile the daemon builds, and the local images it builds on."""

    text: str
    images: dict[str, str]
    """Each image reference of the submission (after ``ARG`` substitution) and the ID it was pinned to."""


def vet_dockerfile(text: str, resolve: Resolver, build: str = "") -> VettedDockerfile:
    """Check a Dockerfile and rewrite it for the daemon; :class:`DockerfileError` says what is refused.

    With ``build`` every stage is labelled :data:`BUILD_LABEL` ``=build`` (see the module's docstring).
    """
    if build and _BUILD_NAME.fullmatch(build) is None:
        raise ValueError(f"not a build name: {build!r}")
    if len(text.encode()) > MAX_DOCKERFILE_BYTES:
        raise DockerfileError(f"the Dockerfile has {len(text.encode())} bytes, more than the {MAX_DOCKERFILE_BYTES} allowed")
    commands = _parse(text)
    if len(commands) > _MAX_INSTRUCTIONS:
        raise DockerfileError(f"the Dockerfile has {len(commands)} instructions, more than the {_MAX_INSTRUCTIONS} allowed")
    escape = _escape_char(text, commands)
    return _Vetting(resolve, escape, build).run(commands)


def _parse(text: str) -> list[Instruction]:
    try:
        return list(dockerfile.parse_string(text))
    except dockerfile.GoParseError as exc:
        raise DockerfileError(f"the Dockerfile does not parse: {str(exc).strip()[:300]}") from None


def _escape_char(text: str, commands: Sequence[Instruction]) -> str:
    """The escape character the parser used, asked of the parser itself (never guessed from the directive's text).

    The lines before the first instruction (the directives and comments) are parsed again
    before two lines joined by a backslash and two joined by a backtick: the one that joins is
    the escape character.
    """
    first = commands[0].start_line - 1 if commands else len(text.splitlines())
    head = "".join(text.splitlines(keepends=True)[:first])
    if head and not head.endswith("\n"):
        head += "\n"
    found = [char for char in ("\\", "`") if len(_parse(f"{head}RUN a {char}\nRUN b\n")) == 1]
    if len(found) != 1:
        raise DockerfileError("cannot tell the Dockerfile's escape character")
    return found[0]


def _line(command: Instruction) -> str:
    return f"line {command.start_line}"


def _expand(word: str, variables: dict[str, str], escape: str, where: str) -> str:
    """A word with its quotes and escapes removed and ``$NAME``, ``${NAME}``, ``${NAME:-x}``, ``${NAME:+x}`` replaced."""
    out: list[str] = []
    index = 0
    quote = ""
    while index < len(word):
        char = word[index]
        if char == escape and index + 1 < len(word) and quote != "'":
            out.append(word[index + 1])
            index += 2
            continue
        if char in "'\"" and (not quote or quote == char):
            quote = "" if quote else char
            index += 1
            continue
        if char == "$" and quote != "'":
            found = _VARIABLE.match(word, index)
            if found is None:
                raise DockerfileError(f"{where}: cannot resolve the variable in {word!r}")
            name = found.group(1) or found.group(4)
            value = variables.get(name, "")
            if found.group(2) == ":-" and not value:
                value = _expand(found.group(3), variables, escape, where)
            elif found.group(2) == ":+":
                value = _expand(found.group(3), variables, escape, where) if value else ""
            out.append(value)
            index = found.end()
            continue
        out.append(char)
        index += 1
    if quote:
        raise DockerfileError(f"{where}: unbalanced quote in {word!r}")
    return "".join(out)


class _Vetting:
    """One pass over the parsed instructions: checks, pinning, and the canonical lines."""

    def __init__(self, resolve: Resolver, escape: str, build: str = "") -> None:
        self.resolve = resolve
        self.escape = escape
        self.build = build
        self.global_args: dict[str, str] = {}
        self.stages: list[str] = []
        """Each stage's name (lower case; "" when it has none), in order."""
        self.images: dict[str, str] = {}
        self.lines: list[str] = []
        self.expected: list[Signature] = []

    def emit(self, cmd: str, flags: tuple[str, ...], value: tuple[str, ...], json_form: bool, sub_cmd: str | None = None) -> None:
        body = json.dumps(list(value)) if json_form else " ".join(value)
        self.lines.append(" ".join(part for part in (cmd, *flags, body) if part))
        self.expected.append((cmd, sub_cmd, json_form, flags, value))

    def keep(self, command: Instruction) -> None:
        if "\n" in command.original:
            raise DockerfileError(f"{_line(command)}: an instruction spread over lines that cannot be kept")
        self.lines.append(command.original)
        self.expected.append((command.cmd.upper(), command.sub_cmd, command.json, tuple(command.flags), tuple(command.value)))

    def run(self, commands: Sequence[Instruction]) -> VettedDockerfile:
        for command in commands:
            self.check(command)
        if not self.stages:
            raise DockerfileError("the Dockerfile has no FROM")
        text = f"# escape={self.escape}\n" + "".join(line + "\n" for line in self.lines)
        reparsed = [(c.cmd.upper(), c.sub_cmd, c.json, tuple(c.flags), tuple(c.value)) for c in _parse(text)]
        if reparsed != self.expected:
            bad = next((i for i, (a, b) in enumerate(zip(reparsed, self.expected, strict=False)) if a != b), len(reparsed))
            raise DockerfileError(f"the Dockerfile cannot be rewritten faithfully (near instruction {bad + 1})")
        return VettedDockerfile(text=text, images=dict(self.images))

    def check(self, command: Instruction) -> None:
        cmd = command.cmd.upper()
        where = _line(command)
        if command.heredocs or any(_HEREDOC.search(word) for word in command.value):
            raise DockerfileError(f"{where}: heredocs are not allowed")
        if cmd in _REFUSED:
            raise DockerfileError(f"{where}: {cmd} is not allowed: {_REFUSED[cmd]}")
        if cmd not in _ALLOWED:
            raise DockerfileError(f"{where}: unknown instruction {command.cmd!r}")
        if not self.stages and cmd not in ("ARG", "FROM"):
            raise DockerfileError(f"{where}: {cmd} before the first FROM")
        handler = {"FROM": self.from_, "ARG": self.arg, "RUN": self.run_, "COPY": self.copy, "USER": self.user}.get(cmd)
        if handler is not None:
            handler(command)
        elif command.flags and cmd != "HEALTHCHECK":
            raise DockerfileError(f"{where}: {cmd} takes no flags, got {' '.join(command.flags)!r}")
        else:
            self.keep(command)

    def arg(self, command: Instruction) -> None:
        if command.flags:
            raise DockerfileError(f"{_line(command)}: ARG takes no flags")
        if not self.stages:
            for word in command.value:
                name, has_default, default = word.partition("=")
                if has_default:
                    self.global_args[name] = _expand(default, self.global_args, self.escape, _line(command))
                else:
                    self.global_args.setdefault(name, "")
        self.keep(command)

    def pin(self, reference: str, where: str) -> tuple[str, LocalImage]:
        """The bare ID of a local image, refused when it is not local or brings ONBUILD triggers or volumes."""
        image = self.resolve(reference)
        if image is None:
            raise DockerfileError(
                f"{where}: the image {reference!r} is not on this machine, and the arena never pulls images:"
                " use FROM scratch, or build or import that image here first"
            )
        found = _HEX_ID.fullmatch(image.id)
        if found is None:
            raise DockerfileError(f"{where}: the image {reference!r} has an unexpected ID {image.id!r}")
        if image.on_build:
            raise DockerfileError(f"{where}: the image {reference!r} has ONBUILD triggers ({image.on_build[0]!r}...): not allowed")
        if image.volumes:
            raise DockerfileError(f"{where}: the image {reference!r} declares volumes ({', '.join(image.volumes)}), which are not allowed")
        self.images[reference] = image.id
        return found.group(1), image

    def stage_of(self, name: str) -> int | None:
        """The index of an earlier stage named (or numbered) ``name``."""
        if name.isdigit():
            return int(name) if int(name) < len(self.stages) else None
        lowered = name.lower()
        return self.stages.index(lowered) if lowered in self.stages else None

    def from_(self, command: Instruction) -> None:
        where = _line(command)
        value = tuple(command.value)
        if len(value) == 3 and value[1].lower() == "as":
            alias = value[2].lower()
        elif len(value) == 1:
            alias = ""
        else:
            raise DockerfileError(f"{where}: FROM takes an image and an optional 'AS name', got {' '.join(value)!r}")
        platform = ""
        for flag in command.flags:
            name, _, flag_value = flag.partition("=")
            if name != "--platform":
                raise DockerfileError(f"{where}: FROM takes no flag {flag!r}")
            platform = _expand(flag_value, self.global_args, self.escape, where).lower()
        reference = _expand(value[0], self.global_args, self.escape, where)
        if not reference:
            raise DockerfileError(f"{where}: FROM names no image ({value[0]!r} is empty)")
        stage = None if reference.isdigit() else self.stage_of(reference)
        if stage is not None:
            target = self.stages[stage]
        elif reference.lower() == "scratch":
            target = "scratch"
        else:
            target, image = self.pin(reference, where)
            if platform and platform not in (image.platform, image.platform.rsplit("/", 1)[0]):
                raise DockerfileError(f"{where}: the image {reference!r} is for {image.platform}, not {platform}")
        self.stages.append(alias)
        self.emit("FROM", (), (target, "AS", alias) if alias else (target,), False)
        self.emit("USER", (), (BUILD_USER,), False)
        if self.build:
            self.lines.append(f"LABEL {BUILD_LABEL}={self.build}")
            self.expected.append(("LABEL", None, False, (), (BUILD_LABEL, self.build)))

    def run_(self, command: Instruction) -> None:
        if command.flags:
            raise DockerfileError(f"{_line(command)}: RUN takes no flags (such as --mount or --network), got {' '.join(command.flags)!r}")
        self.keep(command)

    def copy(self, command: Instruction) -> None:
        where = _line(command)
        flags: list[str] = []
        for flag in command.flags:
            name, _, value = flag.partition("=")
            if name == "--chown":
                flags.append(flag)
            elif name == "--from":
                if "$" in value or self.escape in value or any(q in value for q in "'\""):
                    raise DockerfileError(f"{where}: COPY --from must name a stage or an image plainly, got {value!r}")
                stage = self.stage_of(value)
                flags.append(flag if stage is not None else f"--from={self.pin(value, where)[0]}")
            else:
                raise DockerfileError(f"{where}: COPY takes only --chown and --from, got {flag!r}")
        if tuple(flags) == tuple(command.flags):
            self.keep(command)
        else:
            self.emit("COPY", tuple(flags), tuple(command.value), command.json)

    def user(self, command: Instruction) -> None:
        where = _line(command)
        found = _NUMERIC_USER.fullmatch(command.value[0]) if len(command.value) == 1 and not command.flags else None
        if found is None:
            raise DockerfileError(f"{where}: USER must be a numeric uid[:gid] (a name means what the image says), got {command.original!r}")
        if int(found.group(1)) == 0 or (found.group(2) is not None and int(found.group(2)) == 0):
            raise DockerfileError(f"{where}: build steps may not run as root, got USER {command.value[0]!r}")
        self.keep(command)
