"""A submission folder's Python bot, run in the arena's own process (``inprocess`` seats).

An in-process seat runs a folder's own code, never a built-in bot of the same name.  It can
only do so for a Python bot of the SDK (``language = "python"``, ``transport = "grpc"``)
started as ``python FILE.py [ARGS]``, and only when the tournament trusts its bots: the code
runs with the arena's rights, in its memory.  Anything else is refused in one line
(:func:`folder_refusal`), before any match starts.

The script runs as ``__main__``, as ``python FILE.py`` would run it, up to its call of
``polignac.bot.run(bot)`` (or ``run_async``): that call hands the bot to the seat, which plays
it on the arena's event loop.  While the script runs it sees what a process of its own would
(``sys.argv``, its folder first on ``sys.path``, the seat's ``POLIGNAC_*`` variables in
``os.environ``), and it gets a ``random`` module of its own, so that its random choices,
seeded from ``POLIGNAC_BOT_SEED``, are the ones it makes in a process seat however many bots
share the arena.  A script that ends without calling ``run`` is a bot that exited: its seat
forfeits, as a process seat's would.  Its working folder stays the arena's.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import runpy
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import polignac.bot
import polignac.bot.client
from polignac.bot import Bot
from polignac_arena.settings import Transport
from polignac_arena.submission import Submission

__all__ = ["FolderBot", "entry_script", "folder_refusal", "load_folder_bot"]

_PRIVATE_MODULES = ("random",)
"""Modules whose state a bot keeps at module level: each in-process bot gets its own copy."""


def entry_script(submission: Submission) -> Path | None:
    """The script an in-process seat runs for ``submission``: FILE of ``python FILE.py``, or None when it has none."""
    command = submission.command
    if submission.language != "python" or submission.transport is not Transport.GRPC or len(command) < 2:
        return None
    if command[0] not in ("python", "python3") or not command[1].endswith(".py") or command[1].startswith("-"):
        return None
    script = (submission.path / command[1]).resolve()
    if not script.is_relative_to(submission.path.resolve()) or not script.is_file():
        return None
    return script


def folder_refusal(submission: Submission, trusted: bool) -> str | None:
    """Why an in-process seat will not run ``submission``, in one line, or None when it will."""
    if submission.builtin:
        return None
    if not trusted:
        return (
            f"{submission.label}: in-process seats run a folder's code in the arena's own process, with its rights:"
            " only for trusted bots (--trusted, or trusted = true in [seats]); or use process or docker seats"
        )
    if entry_script(submission) is None:
        return (
            f"{submission.label}: in-process seats run only a Python bot of the SDK started as `python FILE.py`"
            f" (its bot.toml says language {submission.language!r}, transport {submission.transport!r},"
            f" command {' '.join(submission.command)!r}); use process or docker seats"
        )
    return None


@dataclass
class FolderBot:
    """What a folder's script did: the bot it handed to ``run``, or how it ended without one."""

    bot: Bot | None
    exit_status: int = 0
    output: str = ""
    """The traceback of an exception it raised (what its stderr would have shown)."""


class _Seated(BaseException):
    """Raised by the stand-in for ``run``: the script's bot, taken out of the script at that call."""

    def __init__(self, bot: object) -> None:
        super().__init__("seated")
        self.bot = bot


def _take(bot: object, *args: object, **kwargs: object) -> NoReturn:
    raise _Seated(bot)


def load_folder_bot(submission: Submission, environment: dict[str, str]) -> FolderBot:
    """Run ``submission``'s script up to its ``run(bot)`` with ``environment`` set; what it handed over or how it ended.

    The caller checked :func:`folder_refusal`.
    """
    script = entry_script(submission)
    if script is None:
        raise ValueError(f"{submission.label} has no Python script to run in-process")
    try:
        with _as_its_own_process(submission.path, [str(script), *submission.command[2:]], environment):
            runpy.run_path(str(script), run_name="__main__")
    except _Seated as seated:
        if not isinstance(seated.bot, Bot):
            return FolderBot(None, 1, f"polignac.bot.run() was given {type(seated.bot).__name__}, not a Bot\n")
        return FolderBot(seated.bot)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return FolderBot(None, code, "" if exc.code is None or isinstance(exc.code, int) else f"{exc.code}\n")
    except Exception:  # the bot's own error: a crash of its seat, as in a process
        return FolderBot(None, 1, traceback.format_exc())
    return FolderBot(None, 0)


@contextlib.contextmanager
def _as_its_own_process(folder: Path, argv: list[str], environment: dict[str, str]) -> Iterator[None]:
    """What the script sees while it runs: its argv, path, environment and private modules; all put back after."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_env = {name: os.environ.get(name) for name in environment}
    saved_modules = {name: sys.modules.get(name) for name in _PRIVATE_MODULES}
    loaded_before = set(sys.modules)
    saved_run = (polignac.bot.run, polignac.bot.run_async, polignac.bot.client.run, polignac.bot.client.run_async)
    sys.argv = argv
    sys.path.insert(0, str(folder))
    os.environ.update(environment)
    for name in _PRIVATE_MODULES:
        sys.modules[name] = _fresh_module(name)
    polignac.bot.run = polignac.bot.run_async = polignac.bot.client.run = polignac.bot.client.run_async = _take
    try:
        yield
    finally:
        polignac.bot.run, polignac.bot.run_async, polignac.bot.client.run, polignac.bot.client.run_async = saved_run
        for name, module in saved_modules.items():
            if module is not None:
                sys.modules[name] = module
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        sys.argv, sys.path[:] = saved_argv, saved_path
        # The folder's own modules stay with the bot that imported them, not in sys.modules: another
        # folder's module of the same name is then its own.
        for name in set(sys.modules) - loaded_before:
            origin = getattr(sys.modules[name], "__file__", None)
            if origin is not None and Path(origin).resolve().is_relative_to(folder.resolve()):
                del sys.modules[name]


def _fresh_module(name: str) -> ModuleType:
    """A new instance of the module ``name``, with state of its own."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module {name!r}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
