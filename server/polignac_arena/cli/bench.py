"""``polignac bench``: speed benchmarks."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from polignac import PRESETS
from polignac_arena.bench import bench_engine

app = typer.Typer(help="Measure how fast the arena's parts run.", no_args_is_help=True)


@app.command("engine")
def engine(
    seconds: Annotated[float, typer.Option(min=0.1, max=600, help="Seconds to run each part.")] = 3.0,
    rules: Annotated[str, typer.Option(help="Ruleset to play.")] = "classic",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Card plays and hands per second: public engine API vs fast playout path (one thread)."""
    if rules not in PRESETS:
        raise typer.BadParameter(f"unknown ruleset {rules!r}; choose one of {', '.join(PRESETS)}", param_hint="--rules")
    console = Console(stderr=True)
    if not as_json:
        console.print(f"Benchmarking the engine ({rules}) for about {2 * seconds:g} s...")
    result = bench_engine(rules, seconds)
    if as_json:
        print(json.dumps(result.to_dict()))
        return
    table = Table(title=f"Engine speed ({rules}, Python {result.python}, one thread)")
    table.add_column("path")
    table.add_column("card plays/s", justify="right")
    table.add_column("hands/s", justify="right")
    table.add_row("public API (random legal)", f"{result.api_card_plays_per_s:,.0f}", f"{result.api_hands_per_s:,.0f}")
    table.add_row("fast playout", f"{result.playout_card_plays_per_s:,.0f}", f"{result.playout_hands_per_s:,.0f}")
    Console().print(table)
