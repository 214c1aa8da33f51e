"""Copies of objects with ``__slots__``: each list and dict copied, every other value shared."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

__all__ = ["copy_slots"]

T = TypeVar("T")


def copy_slots(obj: T, slots: Iterable[str]) -> T:
    """A new object of ``obj``'s class, made without ``__init__``, with ``obj``'s ``slots``.

    A list or dict is copied (one level: its items are shared); other values are shared.

    >>> class Pair:
    ...     __slots__ = ("name", "items")
    ...     def __init__(self) -> None:
    ...         self.name, self.items = "a", [1]
    >>> first = Pair()
    >>> second = copy_slots(first, Pair.__slots__)
    >>> second.items.append(2)
    >>> first.items, second.items, second.name
    ([1], [1, 2], 'a')
    """
    other = object.__new__(type(obj))
    for name in slots:
        value = getattr(obj, name)
        if isinstance(value, list):
            value = list(value)
        elif isinstance(value, dict):
            value = dict(value)
        object.__setattr__(other, name, value)
    return other
