"""Files people write in TOML (tournaments, leagues, ``bot.toml``): a pydantic model per file, one problem per bad setting.

Each file's model declares its settings once (type, bounds, default, ``extra="forbid"``); this module
turns pydantic's errors into the arena's messages (``must be an integer in 3..6, got 9``) and finds
the line of each problem in the file's text, whichever TOML spelling set the key (a ``[table]``, a
dotted key, an inline table).  No grpc, no I/O beyond what the caller reads.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Final, TypeVar, get_args

import annotated_types
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from polignac_arena.settings import NAME_RULE, is_name

__all__ = [
    "NAME_MUST",
    "FileModel",
    "Key",
    "Problem",
    "TomlError",
    "TomlLines",
    "checked_name",
    "invalid",
    "parse_toml",
    "rule_of",
    "unknown_setting",
    "validate",
]

M = TypeVar("M", bound=BaseModel)
Key = tuple[str, ...]
_PROBLEM: Final = "problem"


class FileModel(BaseModel):
    """A table of a file: every key declared, any other key refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TomlError(ValueError):
    """Text that is not a TOML table; the message is the one problem."""


def parse_toml(text: str) -> dict[str, object]:
    """The table of ``text``; :class:`TomlError` says why it is not TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(f"not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise TomlError("not valid TOML: arrays or tables nested too deeply") from None


NAME_MUST: Final = f"must be {NAME_RULE}"
"""What a name must be (a tournament's, a league's, a bot's)."""


def checked_name(name: str | None) -> str | None:
    """A name setting's validator: the name as given, if it follows :data:`~polignac_arena.settings.NAME_RULE`."""
    if name is not None and not is_name(name):
        raise invalid(f"{NAME_MUST}, got {name!r}")
    return name


def invalid(message: str) -> PydanticCustomError:
    """The error a validator raises: ``message`` is the problem, word for word."""
    return PydanticCustomError(_PROBLEM, message)


@dataclass(frozen=True)
class Problem:
    """One bad setting: its key from the top of the file (``("seats", "limits", "cpus")``) and what is wrong."""

    key: Key
    message: str

    @property
    def dotted(self) -> str:
        return ".".join(self.key)


class TomlLines:
    """Finds the line that sets a key in a TOML text, to point each problem at it."""

    def __init__(self, text: str) -> None:
        self.entries: list[tuple[str, str, int]] = []
        section = ""
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            header = re.match(r"^\[([^\]]+)\]$", line)
            if header:
                section = header.group(1).strip()
                self.entries.append((section, "", number))
                continue
            assignment = re.match(r'^"?([A-Za-z0-9_.-]+)"?\s*=', line)
            if assignment:
                self.entries.append((section, assignment.group(1), number))

    def line(self, key: Key) -> int | None:
        """The line that sets ``key``, or the nearest line that sets a table holding it; None if there is none."""
        if not key:
            return None
        section, name = ".".join(key[:-1]), key[-1]
        dotted = ".".join(key)
        top, _, rest = dotted.partition(".")
        candidates: list[Callable[[str, str], bool]] = [
            lambda s, k: s == section and k == name,  # key = value under [section]
            lambda s, k: s == "" and k == dotted,  # section.key = value at the top
            lambda s, k: s == dotted and not k,  # the key's own [table] header
            lambda s, k: s == top and k == rest,  # [top] then sub.key = value
            lambda s, k: s == top and k == rest.split(".")[0],  # [top] then sub = { inline table }
            lambda s, k: s == "" and (k == top or k.startswith(top + ".")),  # top = { inline table }
            lambda s, k: s == section and not k,  # the [section] header, for a key not found under it
        ]
        for matches in candidates:
            for entry_section, entry_key, number in self.entries:
                if matches(entry_section, entry_key):
                    return number
        return None


def unknown_setting(key: Key, known: list[str]) -> str:
    """The message for a key the model does not declare."""
    return f"unknown setting; known: {', '.join(known)}"


def validate(
    model: type[M], table: Mapping[str, object], at: Key = (), unknown: Callable[[Key, list[str]], str] = unknown_setting
) -> tuple[M | None, list[Problem]]:
    """``table`` (the table at key ``at`` of its file) as ``model``, and a problem per bad setting.

    With problems, the model is still made when it can be, from the good settings and the defaults of
    the bad ones, so that checks across settings still report theirs; None when it cannot.  ``unknown``
    words the problem of a key the model does not declare.
    """
    try:
        return model.model_validate(table), []
    except ValidationError as exc:
        problems = [_problem(model, table, error, at, unknown) for error in exc.errors()]
    salvaged = copy.deepcopy(dict(table))
    for problem in problems:
        _drop(salvaged, problem.key[len(at) :])
    try:
        return model.model_validate(salvaged), _unique(problems)
    except ValidationError:
        return None, _unique(problems)


def _unique(problems: Iterable[Problem]) -> list[Problem]:
    """One problem per key and message (a list with two bad items is one bad setting), unknown keys first."""
    seen = dict.fromkeys(problems)
    return sorted(seen, key=lambda problem: not problem.message.startswith("unknown "))


def _drop(table: dict[str, object], key: Key) -> None:
    node: object = table
    for part in key[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(key[-1], None)


def _problem(
    model: type[BaseModel], table: Mapping[str, object], error: ErrorDetails, at: Key, unknown: Callable[[Key, list[str]], str]
) -> Problem:
    """The arena's message for one pydantic error, at its key (a list's item is its list's problem)."""
    key = _key_of(table, error["loc"])
    if error["type"] == _PROBLEM:
        return Problem(at + key, error["msg"])
    if error["type"] == "extra_forbidden":
        holder = _model_at(model, key[:-1])
        known = [field.alias or name for name, field in holder.model_fields.items()] if holder else []
        return Problem(at + key, unknown(at + key, known))
    return Problem(at + key, f"{rule_of(_field_at(model, key), at + key)}, got {_value_at(table, key)!r}")


def rule_of(field: FieldInfo | None, key: Key) -> str:
    """What the setting ``key`` must be, from its declaration: its description, or its type and bounds."""
    if field is None:
        return "is not valid"
    if field.description:
        return field.description
    if _model_class(field.annotation) is not None:
        return f"must be a table ([{'.'.join(key)}])"
    kind = next((arg for arg in get_args(field.annotation) or (field.annotation,) if arg is not type(None)), None)
    lo = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    hi = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    if isinstance(kind, type) and issubclass(kind, Enum):
        return f"must be one of {', '.join(str(member.value) for member in kind)}"
    if kind is bool:
        return "must be true or false"
    if kind is int:
        return f"must be an integer in {lo}..{hi}"
    if kind is float:
        return f"must be a number in {lo:g}..{hi:g}"
    if kind is str:
        return "must be text"
    return "is not valid"


def _key_of(table: Mapping[str, object], loc: tuple[str | int, ...]) -> Key:
    """The part of a pydantic location that names keys of the file (not a list's index)."""
    key: list[str] = []
    node: object = table
    for part in loc:
        if not isinstance(part, str) or not isinstance(node, dict):
            break
        key.append(part)
        node = node.get(part)
    return tuple(key)


def _value_at(table: Mapping[str, object], key: Key) -> object:
    node: object = table
    for part in key:
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _model_class(annotation: object) -> type[BaseModel] | None:
    for kind in (annotation, *get_args(annotation)):
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return kind
    return None


def _model_at(model: type[BaseModel], key: Key) -> type[BaseModel] | None:
    holder: type[BaseModel] | None = model
    for part in key:
        field = holder.model_fields.get(part) if holder else None
        holder = _model_class(field.annotation) if field else None
    return holder


def _field_at(model: type[BaseModel], key: Key) -> FieldInfo | None:
    holder = _model_at(model, key[:-1]) if key else None
    return holder.model_fields.get(key[-1]) if holder else None
