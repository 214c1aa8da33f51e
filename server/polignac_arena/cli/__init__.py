"""The ``polignac`` command: a Typer app with one sub-app per noun."""

from __future__ import annotations

import typer

app = typer.Typer(name="polignac", help="Polignac Arena: rules engine, matches, tournaments.", no_args_is_help=True)


@app.callback()
def _root() -> None:
    """Polignac Arena: rules engine, matches, tournaments."""


def main() -> None:
    """Entry point of the ``polignac`` console script."""
    app()
