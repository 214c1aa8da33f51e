"""``polignac bench``: speed benchmarks."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from polignac import PRESETS
from polignac_arena.bench import DEFAULT_BATCH, EngineBench, bench_engine

app = typer.Typer(help="Measure how fast the arena's parts run.", no_args_is_help=True)


@app.command("engine")
def engine(
    seconds: Annotated[float, typer.Option(min=0.01, max=600, help="Seconds to run each part.")] = 3.0,
    rules: Annotated[str, typer.Option(help="Ruleset to play, or 'all' for every named ruleset in one run.")] = "classic",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON: one object, or a list with --rules all.")] = False,
    batched: Annotated[bool, typer.Option("--batched", help="Also measure batched playouts (Playout.run_batch, numpy).")] = False,
    batch_size: Annotated[int, typer.Option(min=1, max=1_000_000, help="Deals per batch with --batched.")] = DEFAULT_BATCH,
) -> None:
    """Card plays and hands per second: public engine API, fast playout, determinized playouts, batched playouts (one thread)."""
    names = list(PRESETS) if rules == "all" else [rules]
    if rules != "all" and rules not in PRESETS:
        raise typer.BadParameter(f"unknown ruleset {rules!r}; choose one of {', '.join(PRESETS)} or all", param_hint="--rules")
    console = Console(stderr=True)
    if not as_json:
        parts = 5 if batched else 3
        console.print(f"Benchmarking the engine ({rules}) for about {parts * seconds * len(names):g} s...")
    results = []
    for name in names:
        results.append(bench_engine(name, seconds, batch_size if batched else None))
        if not as_json and len(names) > 1:
            console.print(f"  {name} done")
    if as_json:
        out = [r.to_dict() for r in results]
        print(json.dumps(out if rules == "all" else out[0]))
        return
    Console().print(_table(results, rules))


def _table(results: list[EngineBench], rules: str) -> Table:
    python = results[0].python
    if len(results) == 1:
        result = results[0]
        table = Table(title=f"Engine speed ({rules}, Python {python}, one thread)")
        table.add_column("path")
        table.add_column("card plays/s", justify="right")
        table.add_column("per CPU s", justify="right")
        table.add_column("hands/s", justify="right")
        table.add_row("public API (random legal)", f"{result.api_card_plays_per_s:,.0f}", "", f"{result.api_hands_per_s:,.0f}")
        table.add_row(
            "fast playout",
            f"{result.playout_card_plays_per_s:,.0f}",
            f"{result.playout_card_plays_per_cpu_s or 0:,.0f}",
            f"{result.playout_hands_per_s:,.0f}",
        )
        table.add_row("determinized playout", "", "", f"{result.determinized_playouts_per_s:,.0f}")
        if result.batched_card_plays_per_s is not None:
            table.add_row(
                f"batched playout ({result.batch_size:,} deals)",
                f"{result.batched_card_plays_per_s:,.0f}",
                f"{result.batched_card_plays_per_cpu_s or 0:,.0f}",
                f"{result.batched_hands_per_s:,.0f}",
            )
            table.add_row(f"batched determinized ({result.batch_size:,} deals)", "", "", f"{result.batched_determinized_per_s:,.0f}")
        return table
    base = results[0].playout_card_plays_per_s or 1.0
    with_batched = results[0].batched_card_plays_per_s is not None
    batches = f", batches of {results[0].batch_size:,} deals" if with_batched else ""
    table = Table(title=f"Engine speed by ruleset (Python {python}, one thread, one run{batches})")
    columns = ["ruleset", "API plays/s", "playout plays/s", "vs " + results[0].rules, "determinized/s"]
    if with_batched:
        columns += ["batched plays/s", "vs playout", "batched determinized/s"]
    for column in columns:
        table.add_column(column, justify="left" if column == "ruleset" else "right")
    for r in results:
        row = [
            r.rules,
            f"{r.api_card_plays_per_s:,.0f}",
            f"{r.playout_card_plays_per_s:,.0f}",
            f"{r.playout_card_plays_per_s / base:.2f}",
            f"{r.determinized_playouts_per_s:,.0f}",
        ]
        if with_batched and r.batched_card_plays_per_s is not None:
            row += [
                f"{r.batched_card_plays_per_s:,.0f}",
                f"{r.batched_card_plays_per_s / (r.playout_card_plays_per_s or 1.0):.1f}x",
                f"{r.batched_determinized_per_s or 0:,.0f}",
            ]
        table.add_row(*row)
    return table
