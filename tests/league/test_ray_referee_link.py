"""The link from a referee on a Ray node back to the league: both ends prove the task's key, and a stranger is dropped.

The league's half runs on real sockets here, without Ray: the other end plays the node's half
(:func:`~polignac_arena.league.ray_referees.serve_on_node` does the same before it referees), or
a stranger's.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge

import pytest

from polignac_arena.league import ray_referees
from polignac_arena.league.referee_orders import Ping, Pong

KEY = b"k" * 32


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """The league's socket and the other end, closed after the test."""
    league, node = socket.socketpair()
    try:
        yield league, node
    finally:
        league.close()
        node.close()


def _node_side(node: socket.socket, key: bytes, outcome: list[object]) -> Callable[[], None]:
    """What a referee task does on connecting (its half of the challenge, then one message), its outcome noted."""

    def run() -> None:
        conn = Connection(node.detach())
        try:
            answer_challenge(conn, key)
            deliver_challenge(conn, key)
            conn.send(Ping(1))
            outcome.append(conn.recv())
        except (AuthenticationError, EOFError, OSError) as exc:
            outcome.append(exc)
        finally:
            conn.close()

    return run


def test_a_referee_with_the_tasks_key_is_let_in_and_both_ends_talk(pair: tuple[socket.socket, socket.socket]) -> None:
    league, node = pair
    outcome: list[object] = []
    task = threading.Thread(target=_node_side(node, KEY, outcome))
    task.start()
    conn = ray_referees._handshake(league, KEY)
    assert conn is not None
    try:
        assert conn.recv() == Ping(1)
        conn.send(Pong(1))
        task.join()
        assert outcome == [Pong(1)]
    finally:
        conn.close()


def test_a_connection_with_another_key_is_dropped(pair: tuple[socket.socket, socket.socket]) -> None:
    league, node = pair
    outcome: list[object] = []
    task = threading.Thread(target=_node_side(node, b"x" * 32, outcome))
    task.start()
    assert ray_referees._handshake(league, KEY) is None
    task.join()
    assert len(outcome) == 1 and isinstance(outcome[0], AuthenticationError | EOFError | OSError), outcome
    assert league.fileno() == -1, "the league closed it"


def test_a_silent_stranger_is_dropped_in_time(pair: tuple[socket.socket, socket.socket], monkeypatch: pytest.MonkeyPatch) -> None:
    league, _ = pair
    monkeypatch.setattr(ray_referees, "HANDSHAKE_S", 1)
    assert ray_referees._handshake(league, KEY) is None  # the league's half waits its bounded time, then gives up
    assert league.fileno() == -1
