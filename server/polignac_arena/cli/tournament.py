"""``polignac tournament``: run a tournament file, list tournaments, show one's progress."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from polignac_arena.cli._errors import fail
from polignac_arena.cli._options import ExecutorOption, RayAddress, executor_settings, integer
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store, store_for_a_run
from polignac_arena.cli.leaderboard import leaderboard_table
from polignac_arena.executors import ExecutorError
from polignac_arena.settings import ExecutorKind
from polignac_arena.signals import Stopped, until_signal
from polignac_arena.store import ConflictError, Store
from polignac_arena.tournament.config import ConfigError, TournamentConfig, load_config
from polignac_arena.tournament.runner import EntrantError, ProgressHook, TournamentRun, run_tournament

app = typer.Typer(help="Run tournaments and follow their progress.", no_args_is_help=True)


@app.command("run")
def run(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A tournament file (TOML), such as tournaments/quickstart.toml.")],
    parallel: Annotated[
        int | None, typer.Option("--parallel", "-j", parser=integer(1, 64), metavar="N", help="Matches at once (default: the file's).")
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Finish a tournament that was stopped or killed.")] = False,
    db: DbOption = DEFAULT_DB,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    executor: ExecutorOption = None,
    ray_address: RayAddress = None,
) -> None:
    """Play every match of a tournament, store each result with its rating update, print the leaderboard."""
    try:
        config = load_config(file)
    except ConfigError as exc:
        fail(f"{exc.path}: " + "; ".join(exc.problems))
    config = dataclasses.replace(config, executor=executor_settings(config.executor, executor, ray_address))
    console = Console()
    with store_for_a_run(db) as store:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("running {task.fields[running]}, faults {task.fields[faults]}{task.fields[nodes]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=quiet,
            transient=False,
        ) as bar:
            task: TaskID | None = None

            started = time.monotonic()

            def hook(event: str, done: int, total: int, running: int, faults: int, nodes: Mapping[str, int]) -> None:
                nonlocal task
                shown = _nodes_text(nodes, time.monotonic() - started) if config.executor.kind is not ExecutorKind.LOCAL else ""
                if task is None:
                    task = bar.add_task(config.name, total=total, completed=done, running=running, faults=faults, nodes=shown)
                bar.update(task, completed=done, total=total, running=running, faults=faults, nodes=shown)

            try:
                outcome = asyncio.run(_run_with_signals(config, store, parallel, resume, hook))
            except (EntrantError, ConflictError, ExecutorError) as exc:
                fail(str(exc).replace("\n", "; "))
        if outcome.already_finished:
            console.print(f"Tournament {config.name!r} is already finished in {db}: its leaderboard follows (use --db for a new store).")
        elif outcome.failed:
            console.print(f"{outcome.failed} match(es) did not finish: run again with --resume to play them.")
        if outcome.stop_reason:
            console.print(outcome.stop_reason[0].upper() + outcome.stop_reason[1:] + ".")
        rows = store.leaderboard(outcome.tournament_id)
    console.print(leaderboard_table(rows, f"Leaderboard: {config.name}"))
    if outcome.failed:
        raise typer.Exit(1)


def _nodes_text(nodes: Mapping[str, int], elapsed_s: float) -> str:
    """``; node-a 12 (3.1/min), node-b 9 (2.3/min)``: the matches each node played in this run, and its pace."""
    minutes = max(elapsed_s, 1e-3) / 60
    return "; " + ", ".join(f"{node} {count} ({count / minutes:.1f}/min)" for node, count in sorted(nodes.items())) if nodes else ""


async def _run_with_signals(
    config: TournamentConfig, store: Store, parallel: int | None, resume: bool, hook: ProgressHook
) -> TournamentRun:
    """Run the tournament; SIGTERM/SIGINT stop it between results (what is stored stays, --resume finishes)."""
    work = run_tournament(config, store, parallel=parallel, resume=resume, progress=hook)
    message = "stopped: the results so far are stored; run again with --resume to finish"
    try:
        return await until_signal(work, (signal.SIGTERM, signal.SIGINT), exit_code=130, exit_message=message)
    except Stopped:
        fail(message, 130)


@app.command("list")
def list_(db: DbOption = DEFAULT_DB) -> None:
    """Every tournament in the store, with its progress."""
    with open_store(db, create=False) as store:
        table = Table(title=f"Tournaments in {db}")
        for column in ("name", "status", "matches", "faults", "created"):
            table.add_column(column)
        for tournament in store.list_tournaments():
            progress = store.progress(tournament.id)
            faults = sum(progress.faults.values())
            table.add_row(tournament.name, tournament.status, f"{progress.done}/{progress.total}", str(faults), tournament.created_at)
    Console().print(table)


@app.command("status")
def status(name: Annotated[str, typer.Argument(metavar="NAME")], db: DbOption = DEFAULT_DB) -> None:
    """One tournament's progress and leaderboard."""
    with open_store(db, create=False) as store:
        tournament = store.get_tournament(name)
        if tournament is None:
            fail(f"no tournament {name!r} in {db}")
        progress = store.progress(tournament.id)
        rows = store.leaderboard(tournament.id)
        nodes = store.node_throughput(tournament.id)
    console = Console()
    faults = ", ".join(f"{k} {v}" for k, v in sorted(progress.faults.items())) or "none"
    console.print(f"{tournament.name}: {tournament.status}, {progress.done} of {progress.total} matches, faults: {faults}")
    if nodes:
        table = Table(title="Matches by node")
        for column in ("node", "matches", "matches/min", "busy s"):
            table.add_column(column, justify="left" if column == "node" else "right")
        for node in nodes:
            table.add_row(node.node or "(not recorded)", str(node.matches), f"{node.per_minute:.1f}", f"{node.busy_s:.0f}")
        console.print(table)
    console.print(leaderboard_table(rows, f"Leaderboard: {tournament.name}"))
