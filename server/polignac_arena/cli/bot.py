"""``polignac bot``: make and check bot submissions (one command per function below)."""

from __future__ import annotations

import json
import shlex
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from polignac_arena.botcheck import check_submission
from polignac_arena.cli._errors import fail
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store
from polignac_arena.plaintext import plain
from polignac_arena.protofiles import PROTO_FILES, ProtoCopyRefused, ProtoFilesMissing, copy_proto, stale_protos
from polignac_arena.seats import SeatKind
from polignac_arena.settings import NAME_RULE
from polignac_arena.signals import Stopped
from polignac_arena.store import ConflictError
from polignac_arena.submission import SubmissionError, content_digest, load_submission
from polignac_arena.templates import PREPARE, ScaffoldError, scaffold

app = typer.Typer(help="Make and check bot submissions.", no_args_is_help=True)


class Language(StrEnum):
    """The languages ``polignac bot new`` has a starter kit for (docs/languages.md)."""

    PYTHON = "python"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    C = "c"
    CPP = "cpp"
    GO = "go"
    RUST = "rust"
    JAVA = "java"


@app.command("new")
def new(
    name: Annotated[str, typer.Argument(help=f"The bot's name: {NAME_RULE}.")],
    lang: Annotated[Language, typer.Option("--lang", "-l", help="The language of the starter bot.")] = Language.PYTHON,
    directory: Annotated[
        Path | None, typer.Option("--dir", "-d", metavar="PATH", help="The folder to create (default: ./NAME); never overwritten.")
    ] = None,
) -> None:
    """Make a folder holding a working starter bot: bot.toml, its code, a README, a build step (docs/languages.md)."""
    folder = directory if directory is not None else Path(name)
    try:
        written = scaffold(name, lang.value, folder)
        submission = load_submission(folder)
    except (ScaffoldError, SubmissionError) as exc:
        fail(str(exc))
    except ProtoFilesMissing as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {folder}: {exc.strerror or exc}")
    print(f"Made {lang.value} bot {name!r} in {folder}/ ({len(written)} files).")
    where = shlex.quote(str(folder))
    if lang.value in PREPARE:
        print(f"Install its packages:  (cd {where} && {PREPARE[lang.value]})")
    if submission.build:
        print(f"Build it:  (cd {where} && {shlex.join(submission.build)})")
    print(f"Play it:   polignac match --bot {where} --bot random --bot cautious --bot heuristic")
    print(f"Check it:  polignac bot check {where} --conformance")
    print(f"Then edit it: see {where}/README.md.")


@app.command("proto")
def proto(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A bot's folder: the files go to PATH/proto/.")] = Path("."),
    check_only: Annotated[
        bool, typer.Option("--check", help="Write nothing: exit 1 when PATH/proto/ is missing a file or holds an old one.")
    ] = False,
) -> None:
    """Copy the protocol's .proto files (this arena's version) into a bot's folder, for code generated from them."""
    try:
        if check_only:
            stale = stale_protos(path)
            for name in stale:
                print(f"{path / 'proto' / name}: missing or not this arena's (polignac bot proto {shlex.quote(str(path))} copies it)")
            if stale:
                raise typer.Exit(1)
            print(f"{path / 'proto'} holds this arena's protocol ({', '.join(PROTO_FILES)}).")
            return
        if not path.is_dir():
            fail(f"{path} is not a folder")
        written = copy_proto(path)
    except (ProtoFilesMissing, ProtoCopyRefused) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {path / 'proto'}: {exc.strerror or exc}")
    for file in written:
        print(f"Wrote {file}")


@app.command("check")
def check(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A submission folder (holding bot.toml).")],
    seat_kind: Annotated[
        SeatKind, typer.Option("--seat-kind", help="Where the bot runs: its build, the smoke match and the conformance report.")
    ] = SeatKind.PROCESS,
    trusted: Annotated[bool, typer.Option("--trusted", help="Without bubblewrap, run the bot unsandboxed.")] = False,
    no_build: Annotated[bool, typer.Option("--no-build", help="Skip the build step.")] = False,
    conformance: Annotated[
        bool,
        typer.Option(
            "--conformance",
            help="Then play every scripted situation (every game and table size, the auction, a void, the last trick, a tie-break"
            " hand, a time-pressed request, a reattach, a later protocol version's fields) and print what held; see docs/languages.md.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as one JSON object on stdout (progress goes to stderr); see docs/languages.md.")
    ] = False,
) -> None:
    """Validate bot.toml, run its build step, and play a short smoke match against random bots (in a game it declares).

    Each step is printed as it ends; with --conformance, so is each situation of the conformance report.
    """
    console = Console(highlight=False, stderr=as_json)  # with --json, stdout holds the JSON alone
    try:
        report = check_submission(
            path,
            seat_kind=seat_kind,
            trusted=trusted,
            build=not no_build,
            conformance=conformance,
            progress=lambda text: _show(console, text),
        )
    except Stopped as exc:
        fail(str(exc), 128 + exc.signum)
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
    elif conformance and report.conformance is None:
        console.print("The conformance report was not run: a step above failed.")
    if not report.ok:
        if not as_json:
            failed_situation = report.conformance is not None and not report.conformance.ok
            console.print(f"The bot is not ready: see {'the FAILED situation' if failed_situation else 'the FAILED step'} above.")
        raise typer.Exit(1)
    if not as_json:
        console.print("The bot is ready to enter a tournament.")


_MARKS = {"ok": "green", "FAILED": "red", "held": "green", "n/a": "dim"}


def _show(console: Console, text: str) -> None:
    """One line of the check's progress: a step or situation as it ends (marked), or a step starting (dim)."""
    # Details quote the bot (its stderr, its build's output): shown as plain text, never as markup or escapes.
    lines = plain(text.removeprefix("conformance: ")).splitlines() or [""]
    mark, _, rest = lines[0].partition("  ")
    if mark in _MARKS and rest:
        console.print(Text.assemble(Text(mark, style=_MARKS[mark]), f"  {rest}"))
        for line in lines[1:]:
            console.print(Text(f"      {line}"))
    else:
        console.print(Text("\n".join(lines), style="dim"))


@app.command("add")
def add(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A submission folder (holding bot.toml).")], db: DbOption = DEFAULT_DB
) -> None:
    """Register a submission in the store, so tournaments can name it as NAME or NAME@VERSION."""
    try:
        submission = load_submission(path)
        digest = content_digest(submission.path)
    except SubmissionError as exc:
        fail(str(exc))
    with open_store(db) as store:
        try:
            store.add_bot(submission.name, submission.version, submission.path, digest, submission.language)
        except ConflictError as exc:
            fail(str(exc))
    print(f"Registered {submission.label} from {submission.path} in {db}.")


@app.command("list")
def list_(db: DbOption = DEFAULT_DB) -> None:
    """Every registered bot and version."""
    with open_store(db, create=False) as store:
        bots = store.list_bots()
    table = Table(title=f"Bots in {db}")
    for column in ("name", "version", "language", "path", "added"):
        table.add_column(column)
    for bot in bots:
        table.add_row(*(Text(plain(cell)) for cell in (bot.name, bot.version, bot.language, str(bot.path), bot.added_at)))
    Console().print(table)


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A bot name (its versions are listed).")], db: DbOption = DEFAULT_DB
) -> None:
    """A bot's versions and their all-time ratings."""
    with open_store(db, create=False) as store:
        versions = [bot for bot in store.list_bots() if bot.name == name]
        if not versions:
            fail(f"no bot {name!r} in {db} (polignac bot list shows them)")
        rows = {row.bot: row for row in store.leaderboard()}
    table = Table(title=Text(plain(name)))
    for column in ("version", "language", "mu", "sigma", "mu-3sigma", "matches", "wins", "avg place", "path"):
        table.add_column(column)
    for bot in versions:
        row = rows.get(bot.key)
        rating = (row.mu, row.sigma, row.conservative) if row is not None and row.mu is not None else None
        table.add_row(
            Text(plain(bot.version)), Text(plain(bot.language)),
            *(f"{value:.2f}" for value in rating) if rating else ("-", "-", "-"),
            str(row.matches) if row else "0", str(row.wins) if row else "0",
            f"{row.average_place:.2f}" if row and row.average_place is not None else "-", Text(plain(str(bot.path))),
        )  # fmt: skip
    Console().print(table)
