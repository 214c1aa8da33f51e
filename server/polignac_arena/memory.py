"""Giving freed memory back to the system, for a long-running server on glibc.

glibc serves a large allocation (a TLS connection's buffers: a quarter of a megabyte) with its
own ``mmap`` and unmaps it when freed, but after the first such free it raises that threshold
and serves later ones from its heap, where freed memory stays with the process: a server that
held thousands of connections for a moment keeps their memory for good.  Fixing the threshold
(``mallopt``) keeps large buffers unmapped on free; :func:`trim` hands back the heap's free
pages too.  Elsewhere (another C library) both do nothing.  A connection's objects hold one
another (its transport, its protocol, its buffers): once it is gone they wait for Python's cycle
collector, so :func:`release` runs that first; :func:`settle`, once a server is up, keeps what
it will hold for good out of every later collection, which then costs what is new only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from typing import Final

__all__ = ["MMAP_THRESHOLD", "release", "return_large_frees", "settle", "trim"]

MMAP_THRESHOLD: Final = 128 * 1024
"""Allocations of this size and more get their own mapping, given back when freed (glibc's initial threshold)."""
_M_MMAP_THRESHOLD: Final = -3


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name)
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def return_large_frees() -> bool:
    """Keep large allocations in mappings of their own, given back to the system when freed; whether it could."""
    libc = _libc()
    return libc is not None and bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def trim() -> bool:
    """Give the heap's free pages back to the system; whether any was (False without glibc)."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))


def release() -> None:
    """Collect what only cycles keep alive, then give the freed memory back (what a server does once a flood has gone)."""
    gc.collect()
    trim()


def settle() -> None:
    """Collect once, then leave everything alive now out of later collections (a started server's modules and state)."""
    gc.collect()
    gc.freeze()
