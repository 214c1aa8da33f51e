"""One-line errors for the ``polignac`` command, however it is invoked.

Click (vendored by Typer) shows a usage error as a multi-line panel, and an engine error
raised inside a command would end in a traceback.  :class:`OneLineErrors` is the app's
group class: it runs the command line in Click's non-standalone mode and turns every
usage error and every :class:`polignac.PolignacError` into a single line on stderr,
``polignac: error: <message>``, with exit code 2 (Click's code for usage errors; any other
Click error keeps its own).  Living in the group (not only in the console script's
``main``) means ``CliRunner`` tests see exactly what users see.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

import typer
from typer.core import TyperGroup

from polignac import PolignacError
from polignac_arena.plaintext import PlainFormatter, plain

__all__ = ["USAGE_EXIT", "OneLineErrors", "fail", "one_line"]

USAGE_EXIT = 2
"""Exit code for bad command lines and bad option values (as Click uses)."""


def one_line(message: str) -> str:
    """``message`` on one line, starting lowercase unless it starts with an acronym."""
    # Typer checks an option's choices with pydantic, whose messages start with the exception's kind.
    text = " ".join(message.split()).replace(": Value error, ", ": ")
    if text[:1].isupper() and text[1:2].islower():
        text = text[0].lower() + text[1:]
    return text


def fail(message: str, code: int = USAGE_EXIT) -> NoReturn:
    """Print ``polignac: error: <message>`` on stderr and exit with ``code`` (a message may quote a bot: shown plain)."""
    print(f"polignac: error: {one_line(plain(message))}", file=sys.stderr)
    sys.exit(code)


class OneLineErrors(TyperGroup):
    """The root group: a bare ``polignac`` shows the help; every user error is one line."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: object,
    ) -> object:
        """Run the command line; exit (or, when not standalone, return) with its exit code."""
        argv = list(sys.argv[1:] if args is None else args) or ["--help"]
        # The arena's log lines (warnings and errors, printed by logging's last-resort handler
        # while nothing else is configured) may quote bot text: they are shown plain.
        if logging.lastResort is not None:
            logging.lastResort.setFormatter(PlainFormatter())
        try:
            result = super().main(argv, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.TyperException as exc:  # Click's ClickException and UsageError derive from it
            fail(exc.format_message(), exc.exit_code)
        except PolignacError as exc:
            fail(str(exc))
        except typer.Abort:
            fail("aborted", 1)
        # Non-standalone Click returns the exit code of an Exit (such as --help's) or the
        # command's return value; commands here return None on success.
        code = result if isinstance(result, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)
