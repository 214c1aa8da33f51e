"""``polignac match``: one match among bots started as local processes, refereed over gRPC."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from polignac import PolignacError, Ruleset
from polignac_arena.cli._errors import fail
from polignac_arena.cli._options import RULESET_NAMES, Limit, NoNotes, Seed, integer, ruleset
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store
from polignac_arena.plaintext import plain
from polignac_arena.render import render_events, standings_table
from polignac_arena.replay import replay_lines
from polignac_arena.rerun_source import RerunSource, RerunSourceError, load_rerun
from polignac_arena.runner import BotSpecError, check_seats, resolve_bot, run_local_match
from polignac_arena.seats import SeatKind, launcher_for
from polignac_arena.settings import CLOCK_MAX_MS, TimeControl
from polignac_arena.statuses import MatchStatus

__all__ = ["app"]


def _clock_option(field: str, text: str) -> Any:  # what typer.Option returns: typer types it Any
    """The option ``--move-ms`` and the like, for ``field`` of the match's TimeControl."""
    return typer.Option(
        "--" + field.replace("_", "-"),
        parser=integer(TimeControl.lowest(field), CLOCK_MAX_MS),
        metavar="MS",
        show_default=False,
        help=text,
    )


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
    rules_name: Annotated[
        str | None,
        typer.Option(
            "--rules", "-r", show_default=False, help=f"The named ruleset: {RULESET_NAMES} (default: classic, or the record's with --from)."
        ),
    ] = None,
    limit: Limit = None,
    seed: Seed = None,
    rerun_from: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="MATCH[:HAND]",
            show_default=False,
            help=(
                "Rerun a recorded match with these bots: MATCH is a record file (--replay) or a match id in --db;"
                " the same deals from hand HAND on (default: its first), the same dealers, the totals so far."
                " Give as many --bot as the record has seats; its rules and clock hold unless given."
            ),
        ),
    ] = None,
    db: DbOption = DEFAULT_DB,
    replay: Annotated[Path | None, typer.Option("--replay", metavar="FILE", help="Write the match record (JSON lines) here.")] = None,
    move_ms: Annotated[int | None, _clock_option("move_ms", "Time per decision (default: 1000, or the record's with --from).")] = None,
    bank_ms: Annotated[int | None, _clock_option("bank_ms", "Time bank per seat (default: 10000, or the record's with --from).")] = None,
    startup_ms: Annotated[
        int | None,
        _clock_option("startup_ms", "Time to connect and make the first decision (default: 10000, or the record's with --from)."),
    ] = None,
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

    `polignac match show ID` shows a match stored by a tournament; `--from MATCH:HAND` plays a
    recorded match again from one of its hands with other bots (docs/reruns.md).
    """
    if ctx.invoked_subcommand is not None:
        return
    bots = bots or []
    source = None if rerun_from is None else _rerun_source(rerun_from, db, len(bots), seed)
    if not 3 <= len(bots) <= 6:
        fail(f"a match needs 3 to 6 bots (--bot ...), got {len(bots)}")
    try:
        specs = [resolve_bot(b) for b in bots]
    except BotSpecError as exc:
        fail(str(exc))
    if source is None:
        rules = ruleset(rules_name or "classic", len(specs), limit)
        clock = TimeControl(move_ms or 1000, 10_000 if bank_ms is None else bank_ms, startup_ms or 10_000)
    else:
        rules = _rerun_rules(source, rules_name, limit)
        given = source.header.time_control or TimeControl()
        clock = TimeControl(move_ms or given.move_ms, given.bank_ms if bank_ms is None else bank_ms, startup_ms or given.startup_ms)
    try:
        check_seats(specs, launcher_for(seat_kind), trusted)
    except BotSpecError as exc:
        fail(str(exc))
    # 64 bits: each bot's POLIGNAC_BOT_SEED is a hash of this seed, and a bot that searched a
    # small seed space for it would find the seed, and so every hand of the match.
    match_seed = source.header.seed if source is not None else secrets.randbits(64) if seed is None else seed
    console = Console(highlight=False)
    if not quiet:
        listed = ", ".join(plain(s.name) for s in specs)
        console.print(Text(f"Match: {listed}; {rules.name}, limit {rules.limit}, seed {match_seed}"))
        if source is not None:
            start = source.rerun.start
            said = f"A rerun of {source.rerun.match_id} from hand {start.hand}: dealer seat {start.dealer}, totals {list(start.totals)}"
            console.print(Text(plain(said)))
    try:
        outcome = asyncio.run(
            run_local_match(
                specs,
                rules,
                match_seed,
                clock,
                seat_kind=seat_kind,
                trusted=trusted,
                record_path=replay,
                handle_signals=True,
                rerun=None if source is None else source.rerun,
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


def _rerun_source(text: str, db: Path, bots: int, seed: int | None) -> RerunSource:
    """The record and hand ``--from`` names, checked against the other options."""
    if seed is not None:
        fail("--seed goes without --from: a rerun plays the record's seed, whose deals it repeats")
    try:
        source = load_rerun(text, db)
    except RerunSourceError as exc:
        fail(str(exc))
    players = source.rules.players
    if bots != players:
        fail(f"{source.rerun.match_id} seats {players} players: give {players} --bot to rerun it, got {bots}")
    return source


def _rerun_rules(source: RerunSource, name: str | None, limit: int | None) -> Ruleset:
    """The record's ruleset, or the one named, at the record's table size; ``--limit`` over either."""
    try:
        if name is not None:
            return ruleset(name, source.rules.players, limit)
        return source.rules if limit is None else Ruleset.from_record({**source.header.rules, "limit": limit})
    except PolignacError as exc:
        fail(str(exc))


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
