"""How values are written in the store: canonical JSON, compressed records, checked seats and fixtures."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TypeAlias

from polignac.jsontypes import JsonObject
from polignac_arena.store.records import FixtureLike, StoreError

SqlValue: TypeAlias = int | float | str | bytes | None
"""A value SQLite stores."""
SqlRow: TypeAlias = tuple[SqlValue, ...]
"""The values of some columns of one row."""


def now_text() -> str:
    return timestamp_text(datetime.now(UTC))


def timestamp_text(when: datetime) -> str:
    if when.tzinfo is None:
        raise ValueError(f"a timestamp needs a time zone, got {when!r}")
    return when.astimezone(UTC).isoformat(timespec="milliseconds")


def to_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_config(config: Mapping[str, object] | str) -> str:
    try:
        value = json.loads(config) if isinstance(config, str) else config
        if not isinstance(value, Mapping):
            raise ValueError(f"a tournament config must be a JSON object, got {type(value).__name__}")
        return to_json(value)
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"a tournament config must be JSON: {exc}") from None


def differences(old: object, new: object, prefix: str = "") -> list[str]:
    """Dotted keys where two JSON values differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            out += differences(old.get(key), new.get(key), f"{prefix}{key}.")
        return out
    return [] if old == new else [prefix.rstrip(".") or "(the whole config)"]


def encode_record(record: Iterable[Mapping[str, object]] | str) -> bytes:
    text = record if isinstance(record, str) else "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in record)
    return zlib.compress(text.encode("utf-8"), 6)


def decode_record(encoding: str, data: bytes) -> list[JsonObject]:
    if encoding != "zlib":
        raise StoreError(f"unknown record encoding {encoding!r}")
    text = zlib.decompress(data).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def split_key(key: str) -> tuple[str, str]:
    name, _, version = key.partition("@")
    return name, version


def checked_ints(values: Sequence[int] | None, what: str, n: int, minimum: int | None = None) -> list[int]:
    if values is None or isinstance(values, str | bytes) or len(values) != n:
        raise ValueError(f"{what} must give one integer per seat ({n}), got {values!r}")
    out = []
    for value in values:
        if not isinstance(value, int) or isinstance(value, bool) or (minimum is not None and value < minimum):
            raise ValueError(f"{what} must give one integer per seat ({n}), got {values!r}")
        out.append(int(value))
    return out


def check_fixture(fixture: FixtureLike) -> tuple[int, list[str], int, str]:
    seats = list(fixture.seats)
    if not seats or not all(isinstance(s, str) and s for s in seats):
        raise ValueError(f"fixture {fixture.index}: seats must be non-empty bot keys, got {fixture.seats!r}")
    if not isinstance(fixture.seed, int) or isinstance(fixture.seed, bool):
        raise ValueError(f"fixture {fixture.index}: the seed must be an integer, got {fixture.seed!r}")
    try:
        group = to_json(fixture.group)
    except (TypeError, ValueError):
        raise ValueError(f"fixture {fixture.index}: the group must be JSON, got {fixture.group!r}") from None
    return fixture.index, seats, fixture.seed, group
