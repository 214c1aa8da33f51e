"""Which queued uploads are validated next: a few at once, one per author, the authors in turn.

A validation builds a stranger's code and plays a smoke match: minutes, at worst.  First come,
first served would let one author who queues slow builds hold every worker; so at most one
validation per author runs at once, and the next worker goes to the author served longest ago
(an author never served first), who gets their oldest queued version validated.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from typing import Protocol

__all__ = ["Queued", "ValidationQueue"]


class Queued(Protocol):
    """What the queue reads of a queued version."""

    @property
    def id(self) -> int: ...

    @property
    def author(self) -> str: ...


class ValidationQueue:
    """Picks the versions to validate next (see the module notes); remembers whom it served, and when."""

    def __init__(self) -> None:
        self._served: dict[str, int] = {}
        self._turns = itertools.count()

    def pick(self, pending: Sequence[Queued], running: Collection[str], free: int) -> list[Queued]:
        """Up to ``free`` of the ``pending`` versions to start now; ``running``: the authors whose validation runs."""
        oldest: dict[str, Queued] = {}
        for version in sorted(pending, key=lambda v: v.id):
            if version.author not in running:
                oldest.setdefault(version.author, version)
        chosen = sorted(oldest.values(), key=lambda v: (self._served.get(v.author, -1), v.id))[: max(0, free)]
        for version in chosen:
            self._served[version.author] = next(self._turns)
        return chosen
