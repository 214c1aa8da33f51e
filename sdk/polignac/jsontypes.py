"""Names for JSON data, for the places where a value truly is arbitrary JSON (records, wire messages)."""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JsonObject", "JsonValue"]

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
"""Any value :func:`json.loads` can return."""

JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object: what a record or a message is at the top."""
