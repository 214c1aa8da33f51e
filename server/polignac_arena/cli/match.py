"""``polignac match``: one match among bots started as local processes, refereed over gRPC."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from polignac_arena.cli._errors import fail
from polignac_arena.cli._options import Limit, NoNotes, RulesName, Seed, integer, ruleset
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store
from polignac_arena.plaintext import plain
from polignac_arena.render import render_events, standings_table
from polignac_arena.replay import replay_lines
from polignac_arena.runner import BotSpecError, check_seats, resolve_bot, run_local_match
from polignac_arena.seats import SeatKind, launcher_for
from polignac_arena.settings import CLOCK_MAX_MS, TimeControl
from polignac_arena.statuses import MatchStatus

__all__ = ["app"]

app = typer.Typer(help="Referee one match among local bots, or show a stored match.")


@app.callback(invoke_without_command=True)
def match(
    ctx: typer.Context,
    bots: Annotated[
        list[str] | None,
        typer.Option(
            "--bot",
            "-b",
            metavar="PATH_OR_BUILTIN",
            help=(
                "A seat, in seat order: a built-in bot (random, cautious, heuristic, expert; openspiel:ismcts and"
                " openspiel:random with the research extra; builtin:NAME where a folder has that name), a folder"
                " with bot.toml (always its own code), or a .py file. Give 3 to 6."
            ),
        ),
    ] = None,
    rules_name: RulesName = "classic",
    limit: Limit = None,
    seed: Seed = None,
    replay: Annotated[Path | None, typer.Option("--replay", metavar="FILE", help="Write the match record (JSON lines) here.")] = None,
    move_ms: Annotated[
        int, typer.Option("--move-ms", parser=integer(TimeControl.lowest("move_ms"), CLOCK_MAX_MS), metavar="MS", help="Time per decision.")
    ] = 1000,
    bank_ms: Annotated[
        int,
        typer.Option("--bank-ms", parser=integer(TimeControl.lowest("bank_ms"), CLOCK_MAX_MS), metavar="MS", help="Time bank per seat."),
    ] = 10_000,
    startup_ms: Annotated[
        int,
        typer.Option(
            "--startup-ms",
            parser=integer(TimeControl.lowest("startup_ms"), CLOCK_MAX_MS),
            metavar="MS",
            help="Time to connect and make the first decision.",
        ),
    ] = 10_000,
    seat_kind: Annotated[
        SeatKind,
        typer.Option(
            "--seat-kind",
            help="How bots are run: process (the sandbox), docker, or inprocess (built-ins; a folder's Python bot with --trusted).",
        ),
    ] = SeatKind.PROCESS,
    trusted: Annotated[
        bool,
        typer.Option(
            "--trusted",
            help=(
                "Vouch for the bots: without bubblewrap, process seats then run them unsandboxed;"
                " in-process seats run folders' Python bots."
            ),
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the standings.")] = False,
    no_notes: NoNotes = False,
) -> None:
    """Referee one match among bots run as local processes; print it hand by hand and the standings.

    `polignac match show ID` shows a match stored by a tournament.
    """
    if ctx.invoked_subcommand is not None:
        return
    bots = bots or []
    if not 3 <= len(bots) <= 6:
        fail(f"a match needs 3 to 6 bots (--bot ...), got {len(bots)}")
    try:
        specs = [resolve_bot(b) for b in bots]
    except BotSpecError as exc:
        fail(str(exc))
    rules = ruleset(rules_name, len(specs), limit)
    try:
        check_seats(specs, launcher_for(seat_kind), trusted)
    except BotSpecError as exc:
        fail(str(exc))
    # 64 bits: each bot's POLIGNAC_BOT_SEED is a hash of this seed, and a bot that searched a
    # small seed space for it would find the seed, and so every hand of the match.
    match_seed = secrets.randbits(64) if seed is None else seed
    console = Console(highlight=False)
    if not quiet:
        listed = ", ".join(plain(s.name) for s in specs)
        console.print(Text(f"Match: {listed}; {rules.name}, limit {rules.limit}, seed {match_seed}"))
    try:
        outcome = asyncio.run(
            run_local_match(
                specs,
                rules,
                match_seed,
                TimeControl(move_ms, bank_ms, startup_ms),
                seat_kind=seat_kind,
                trusted=trusted,
                record_path=replay,
                handle_signals=True,
            )
        )
    except BotSpecError as exc:
        fail(str(exc))
    result, stderrs = outcome
    if not quiet:
        replayed = replay_lines(result.lines)
        for line in render_events(replayed.match.events, rules, () if no_notes else replayed.notes):
            console.print(line, markup=False, soft_wrap=True)
        console.print()
    # Names come from the bots' Hello and stderr from the bots: shown as plain text, never as markup or escapes.
    names = [plain(name) for name in result.names]
    for seat, (counts, err) in enumerate(zip(result.faults, stderrs, strict=True)):
        if counts:
            console.print(Text(f"seat {seat} ({names[seat]}) faults: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))))
            last = plain(err).strip().splitlines()
            if last:
                console.print(Text(f"  its last stderr line: {last[-1][:200]}"))
    if result.status is not MatchStatus.FINISHED or result.places is None:
        fail(f"the match did not finish: {result.status}", 1)
    console.print(f"Final standings ({rules.name}, seed {match_seed})", markup=False)
    table = standings_table(result.places, result.totals, (), rules.direction)
    console.print(table)
    console.print(Text("Seats: " + ", ".join(f"{i} {n}" for i, n in enumerate(names))))
    if replay is not None:
        console.print(f"Record written to {replay}", markup=False)


@app.command("show")
def show(
    match_id: Annotated[str, typer.Argument(metavar="ID", help="A match id, as listed by polignac tournament status.")],
    db: DbOption = DEFAULT_DB,
    no_notes: NoNotes = False,
) -> None:
    """Show a stored match trick by trick, from its replay record, with the bots' debug text and stderr after each hand."""
    with open_store(db, create=False) as store:
        stored = store.get_result(match_id)
    if stored is None or not stored.record:
        fail(f"no match {match_id!r} in {db}")
    replay = replay_lines(stored.record)
    console = Console(highlight=False)
    where = f", played on {stored.node}" if stored.node else ""
    console.print(Text(plain(f"{stored.tournament}, match {stored.idx}: {stored.status}{where}")))
    for line in replay.render(notes=not no_notes):  # the record's header holds the bots' names: shown as plain text
        console.print(Text(plain(line)), soft_wrap=True)
    if replay.divergence:
        console.print(Text(plain(f"warning: the record does not replay: {replay.divergence}")))
