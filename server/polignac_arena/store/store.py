"""The :class:`Store`: one SQLite file, every write one transaction (see the package's docstring)."""

from __future__ import annotations

from polignac_arena.store.queries import StoreQueries
from polignac_arena.store.writer import StoreWriter

__all__ = ["Store"]


class Store(StoreWriter, StoreQueries):
    """An arena store in one SQLite file; ``Store(path)`` creates or migrates it.

    Its writes are :class:`~polignac_arena.store.writer.StoreWriter`'s, its reads
    :class:`~polignac_arena.store.queries.StoreQueries`'s, over one
    :class:`~polignac_arena.store.database.Database`.  Safe to share between threads (one operation
    at a time); every process opens its own.  Use it as a context manager, or call :meth:`close`.
    """
