"""What the runner concludes from watching a cluster: its head is lost, or no worker node can take a match.

Plain bookkeeping over timed observations (does the head answer, can any alive node hold a
match, how many matches wait), so it is tested without a cluster; the Ray executor feeds it
about once a second.
"""

from __future__ import annotations

from typing import Final

from polignac_arena.executors.base import NodeWait

__all__ = ["HEAD_LOST_AFTER_S", "ClusterWatch"]

HEAD_LOST_AFTER_S: Final = 3.0
"""A head that has not answered for this long is taken for gone (a restart of its machine takes longer)."""


class ClusterWatch:
    """Turns observations into conclusions; times are ``time.monotonic()`` seconds."""

    def __init__(self, lost_after_s: float = HEAD_LOST_AFTER_S) -> None:
        self.lost_after_s = lost_after_s
        self._silent_since: float | None = None
        self._waiting_since: float | None = None

    def head(self, answers: bool, now: float) -> float | None:
        """Whether the head is lost: how long it has not answered, once that reaches :attr:`lost_after_s`; else None."""
        if answers:
            self._silent_since = None
            return None
        if self._silent_since is None:
            self._silent_since = now
        silent = now - self._silent_since
        return silent if silent >= self.lost_after_s else None

    def nodes(self, can_play: bool | None, waiting: int, now: float) -> NodeWait | None:
        """What to say about the worker nodes: a wait (begun or going on), its end, or nothing.

        ``can_play``: whether an alive node can hold a match (None: not known now, nothing changes);
        ``waiting``: the matches handed to the cluster and not back.  A wait begins only while
        matches wait; once begun it lasts until a node can play again, even if none waits meanwhile.
        """
        if can_play is None:
            return None
        if can_play:
            if self._waiting_since is None:
                return None
            since, self._waiting_since = self._waiting_since, None
            return NodeWait(waiting, now - since, over=True)
        if self._waiting_since is None:
            if waiting == 0:
                return None
            self._waiting_since = now
        return NodeWait(waiting, now - self._waiting_since) if waiting else None

    @property
    def waiting(self) -> bool:
        """Whether a wait for a node has begun and is not over."""
        return self._waiting_since is not None
