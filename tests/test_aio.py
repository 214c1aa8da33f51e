"""tests/aio.py: fixtures and helpers run their coroutines whether or not the thread already runs an event loop.

Playwright's sync API keeps a loop running in the main thread while a browser is open, and pytest may set a module's
fixtures up in either order (pytest 8 and 9 differ), so a store built with ``asyncio.run`` failed only on some installs.
"""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path

import pytest

from tests.aio import run_sync
from tests.test_web_api import build_store

TESTS = Path(__file__).resolve().parent


async def _thread_name() -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


async def _fails() -> None:
    raise ValueError("from the coroutine")


def test_without_a_running_loop_the_coroutine_runs_in_this_thread() -> None:
    assert run_sync(_thread_name()) == threading.current_thread().name


def test_under_a_running_loop_the_coroutine_runs_in_a_thread_of_its_own() -> None:
    async def outer() -> str:
        return run_sync(_thread_name())  # what a synchronous fixture does under Playwright's loop

    assert asyncio.run(outer()) == "run_sync"


def test_errors_and_timeouts_reach_the_caller_in_both_cases() -> None:
    with pytest.raises(ValueError, match="from the coroutine"):
        run_sync(_fails())

    async def outer() -> None:
        with pytest.raises(ValueError, match="from the coroutine"):
            run_sync(_fails())
        with pytest.raises(TimeoutError):
            run_sync(asyncio.Event().wait(), timeout=0.05)

    asyncio.run(outer())


def test_the_web_store_is_built_even_while_a_loop_runs(tmp_path: Path) -> None:
    async def under_a_loop() -> Path:
        return build_store(tmp_path / "arena.db")

    assert asyncio.run(under_a_loop()).stat().st_size > 0


def _direct_asyncio_runs(path: Path) -> list[int]:
    """Lines of ``path`` that call ``asyncio.run`` outside an ``if __name__ == "__main__":`` block."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    main_blocks = [
        node for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and ast.unparse(node.test) == "__name__ == '__main__'"
    ]  # fmt: skip
    in_main = {id(inner) for block in main_blocks for inner in ast.walk(block)}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "asyncio.run" and id(node) not in in_main
    ]


def test_no_test_helper_calls_asyncio_run_directly() -> None:
    """Every synchronous entry into a coroutine goes through run_sync (scripts run as __main__, bots and this module's
    own loops that stand for Playwright's excepted)."""
    offenders = {
        str(path.relative_to(TESTS)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in ("aio.py", "test_aio.py") and "hostile/bots" not in path.as_posix() and (lines := _direct_asyncio_runs(path))
    }
    assert offenders == {}, f"call tests.aio.run_sync instead of asyncio.run: {offenders}"
