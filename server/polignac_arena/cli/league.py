"""``polignac league``: run a league server, manage its authors and tokens, steer its ladder; submit bots to one.

The commands on the server's host read the league file (``--config``, default ``league.toml``)
for the store's path; they work whether the server runs or not (the store takes one writer at a
time, and the running server reads each change at its next step).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from polignac_arena.cli._errors import fail
from polignac_arena.cli._options import ExecutorOption, RayAddress, executor_settings
from polignac_arena.log_format import LogFormat

if TYPE_CHECKING:  # the league's modules load when a command runs: `--help` stays quick
    from polignac_arena.league.author_models import BotOut, TestRunOut
    from polignac_arena.league.config import LeagueConfig
    from polignac_arena.league.store import LeagueStore
    from polignac_arena.league.submit import LeagueClient

__all__ = ["app", "bots", "retire", "submit"]

T = TypeVar("T")

app = typer.Typer(help="A league server: authors submit bots or connect them, and a ladder plays them for good.")
user_app = typer.Typer(help="The league's authors (on the server's host).")
token_app = typer.Typer(help="Authors' API tokens (on the server's host).")
app.add_typer(user_app, name="user")
app.add_typer(token_app, name="token")

ConfigOption = Annotated[Path, typer.Option("--config", "-c", metavar="FILE", help="The league file (default: league.toml).")]
DEFAULT_CONFIG = Path("league.toml")
TokenFile = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        metavar="FILE",
        help="A file holding your API token (else $POLIGNAC_LEAGUE_TOKEN, else token in ~/.config/polignac/league.toml).",
    ),
]


def _config(path: Path) -> LeagueConfig:
    from polignac_arena.league.config import load_league_config
    from polignac_arena.tournament.config import ConfigError

    try:
        return load_league_config(path)
    except ConfigError as exc:
        print(f"polignac: error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None


def _store(path: Path) -> tuple[LeagueConfig, LeagueStore]:
    from polignac_arena.league.store import LeagueStore
    from polignac_arena.store import StoreError

    config = _config(path)
    try:
        return config, LeagueStore(config.store)
    except StoreError as exc:
        fail(str(exc))


def _in_store(path: Path, do: Callable[[LeagueStore], T], also: tuple[type[Exception], ...] = ()) -> T:
    """``do(store)`` on the league's store; a :class:`StoreError` (or one of ``also``) is the command's error."""
    from polignac_arena.store import StoreError

    errors: tuple[type[Exception], ...] = (StoreError, *also)
    _, store = _store(path)
    with store:
        try:
            return do(store)
        except errors as exc:
            fail(str(exc))


def _show_token(token: str, author: str) -> None:
    print(f"the API token of {author} (shown once: keep it in a file only they can read):")
    print(token)


@app.command("serve")
def serve(
    config: ConfigOption = DEFAULT_CONFIG,
    executor: ExecutorOption = None,
    ray_address: RayAddress = None,
    log_format: Annotated[
        LogFormat, typer.Option("--log-format", help="The log on stderr: text lines, or one JSON object a line for a log collector.")
    ] = LogFormat.TEXT,
) -> None:
    """Run the league: web pages and JSON API, the authors' API, the gRPC endpoint for remote bots, the ladder.

    SIGTERM (or Ctrl-C) drains: no new matches; running ones finish within [drain] deadline_s or are recorded aborted.
    With --executor ray, matches of uploaded versions are played on a Ray cluster (docs/cluster.md).
    Prometheus metrics are on the web address's /metrics, for loopback clients (docs/league.md).
    """
    import dataclasses

    from polignac_arena.league.serve import serve_league

    settings = _config(config)
    settings = dataclasses.replace(settings, executor=executor_settings(settings.executor, executor, ray_address))
    code = serve_league(settings, log_format)
    raise typer.Exit(code)


@user_app.command("add")
def user_add(
    name: Annotated[str, typer.Argument(help="The author's name: 1-64 letters, digits, '.', '_', '-'.")],
    config: ConfigOption = DEFAULT_CONFIG,
) -> None:
    """Add an author and print their first API token (once: only its hash is kept)."""
    author, token = _in_store(config, lambda store: store.add_author(name), also=(ValueError,))
    _show_token(token, author.name)


@user_app.command("list")
def user_list(config: ConfigOption = DEFAULT_CONFIG) -> None:
    """The authors, their bots and their active tokens."""
    _, store = _store(config)
    with store:
        authors = store.authors()
        if not authors:
            print("no authors yet: polignac league user add NAME")
        for author in authors:
            tokens = [t for t in store.tokens(author.name) if t.active]
            bots = ", ".join(b.name for b in store.bots(author.name)) or "-"
            print(f"{author.name}  since {author.created_at}  tokens: {len(tokens)}  bots: {bots}")


@token_app.command("list")
def token_list(
    author: Annotated[str | None, typer.Option("--author", help="Only this author's tokens.")] = None, config: ConfigOption = DEFAULT_CONFIG
) -> None:
    """Every token's id, author and dates (never a secret)."""
    tokens = _in_store(config, lambda store: store.tokens(author))
    for token in tokens:
        state = f"revoked {token.revoked_at}" if token.revoked_at else "active"
        print(f"plg_{token.id}_...  {token.author}  created {token.created_at}  last used {token.last_used_at or 'never'}  {state}")


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[str, typer.Argument(metavar="ID", help="The token's id: the 8 hex digits after plg_.")],
    config: ConfigOption = DEFAULT_CONFIG,
) -> None:
    """Revoke one token: it stops working at once, on a running server too."""
    token = _in_store(config, lambda store: store.revoke_token(token_id.removeprefix("plg_").split("_")[0]))
    print(f"revoked plg_{token.id}_... of {token.author}")


@token_app.command("rotate")
def token_rotate(
    author: Annotated[str, typer.Argument(help="The author whose tokens to replace.")], config: ConfigOption = DEFAULT_CONFIG
) -> None:
    """Revoke every token of an author and print a new one."""
    token = _in_store(config, lambda store: store.rotate_tokens(author))
    _show_token(token, author)


def _set_paused(paused: bool, config: Path) -> None:
    _, store = _store(config)
    with store:
        store.set_setting("paused", "1" if paused else "0")


@app.command("pause")
def pause(config: ConfigOption = DEFAULT_CONFIG) -> None:
    """Stop starting matches (running ones finish); uploads are still validated."""
    _set_paused(True, config)
    print("the ladder is paused: running matches finish, no new ones start (polignac league resume)")


@app.command("resume")
def resume(config: ConfigOption = DEFAULT_CONFIG) -> None:
    """Start matches again after a pause."""
    _set_paused(False, config)
    print("the ladder runs")


def _set_disabled(bot: str, disabled: bool, config: Path) -> None:
    _in_store(config, lambda store: store.set_disabled(bot, disabled))
    print(f"{bot} is {'disabled: it plays no new match' if disabled else 'enabled again'}")


@app.command("disable")
def disable(bot: Annotated[str, typer.Argument(help="The bot's name.")], config: ConfigOption = DEFAULT_CONFIG) -> None:
    """Take a bot out of matchmaking (its versions and history stay; its author cannot submit it meanwhile)."""
    _set_disabled(bot, True, config)


@app.command("enable")
def enable(bot: Annotated[str, typer.Argument(help="The bot's name.")], config: ConfigOption = DEFAULT_CONFIG) -> None:
    """Put a disabled bot back into matchmaking."""
    _set_disabled(bot, False, config)


@app.command("rerun")
def rerun(
    match_id: Annotated[str, typer.Argument(metavar="MATCH", help="The league match id (its replay page's, /matches/MATCH).")],
    version: Annotated[
        str | None,
        typer.Option(
            "--version",
            metavar="V",
            help=(
                "An author's test match: your version V (N of your bot in the match, or BOT@N; uploaded and accepted) takes your"
                " bot's seats against the same opponents' versions, on the same deals; unrated, shown to you only. Needs --server."
            ),
        ),
    ] = None,
    hand: Annotated[
        int | None,
        typer.Option(
            "--hand", metavar="K", min=1, max=100_000, help="With --version: start at hand K, with the totals so far (default 1)."
        ),
    ] = None,
    server: Annotated[
        str | None, typer.Option("--server", metavar="URL", help="With --version: the league server, https://HOST[:PORT].")
    ] = None,
    token_file: TokenFile = None,
    ca: CaFile = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="With --version: follow the test match until it is played.")] = True,
    config: ConfigOption = DEFAULT_CONFIG,
) -> None:
    """Without --version, on the server's host: play a match again with the same versions and deal (a new, rated match).

    With --version: ask the league server for your unrated test match of version V on the match's deals (docs/reruns.md).
    """
    if version is None:
        if server is not None or hand is not None:
            fail("--server and --hand go with --version (an author's test match); without it, rerun plays the match again as it was")
        _operator_rerun(match_id, config)
        return
    if server is None:
        fail("--version asks the league server for a test match: give --server URL (and your token, as for league submit)")
    _test_match(match_id, version, hand, server, token_file, ca, wait)


def _operator_rerun(match_id: str, config: Path) -> None:
    request = _in_store(config, lambda store: store.request_rerun(match_id))
    print(f"rerun #{request} of {match_id} requested: the ladder plays it next")


def _test_match(match_id: str, version: str, hand: int | None, server: str, token_file: Path | None, ca: Path | None, wait: bool) -> None:
    from polignac_arena.league.submit import SubmitError
    from polignac_arena.plaintext import plain

    def said(run: TestRunOut) -> str:
        if run.state == "finished":
            return f"{plain(run.status or '')}: places {run.places}, totals {run.totals}"
        return f"failed: {plain(run.reason)}" if run.state == "failed" else str(run.state)

    with _author_client(server, token_file, ca) as client:
        try:
            run = client.ask_rerun(match_id, version, hand)
            where = f"{server.rstrip('/')}{run.url}"
            seats = ", ".join(plain(label) for label in run.seats)
            print(f"test match {run.id}: {plain(run.version)} in {plain(run.match)} from hand {run.hand} (seats: {seats}): {run.state}")
            print(f"its result and replay: {where} (signed in), or polignac league rerun-status {run.id}")
            if not wait:
                return
            run = client.follow_test_run(run, lambda now: print(f"test match {now.id}: {said(now)}", flush=True))
        except SubmitError as exc:
            fail(str(exc), 1)
        except KeyboardInterrupt:
            fail(f"stopped following; test match {run.id} goes on on the server: {where}", 130)
    if run.state == "failed":
        raise typer.Exit(1)


@app.command("rerun-status")
def rerun_status(
    run_id: Annotated[int, typer.Argument(metavar="ID", min=1, help="The test match's number (league rerun printed it).")],
    server: ServerUrl,
    token_file: TokenFile = None,
    ca: CaFile = None,
    record: Annotated[
        Path | None,
        typer.Option("--record", metavar="FILE", help="Write its record (JSON lines) here, once played: polignac replay show FILE."),
    ] = None,
) -> None:
    """Where one of your test matches stands, how it ended, and (with --record) its record."""
    from polignac_arena.league.submit import SubmitError
    from polignac_arena.plaintext import plain
    from polignac_arena.referee.record import write_record

    with _author_client(server, token_file, ca) as client:
        try:
            run = client.test_run(run_id, record=record is not None)
        except SubmitError as exc:
            fail(str(exc), 1)
    state = f"{run.status}: places {run.places}, totals {run.totals}" if run.state == "finished" else run.state
    print(
        f"test match {run.id}: {plain(run.version)} in {plain(run.match)} from hand {run.hand}: {plain(state)} {plain(run.reason)}".rstrip()
    )
    if record is not None:
        if run.record is None:
            fail(f"test match {run.id} has no record yet ({run.state})", 1)
        write_record(record, run.record)
        print(f"record written to {record}")


@app.command("test-matches")
def test_matches(
    config: ConfigOption = DEFAULT_CONFIG,
    author: Annotated[str | None, typer.Option("--author", help="Only this author's.")] = None,
    show: Annotated[int | None, typer.Option("--show", metavar="ID", min=1, help="Print test match ID trick by trick.")] = None,
) -> None:
    """The operator's view of authors' test matches (on the server's host): the latest 100, or one trick by trick."""
    from polignac_arena.league.test_run_store import TestRunStore
    from polignac_arena.league.test_runs import run_state_text
    from polignac_arena.plaintext import plain
    from polignac_arena.replay import replay_lines

    _, store = _store(config)
    with store:
        runs = TestRunStore(store)
        if show is not None:
            lines = runs.record(show)
            if lines is None:
                fail(f"test match {show} does not exist or has no record yet")
            for line in replay_lines(lines).render():
                print(plain(line))
            return
        listed = runs.of_author(author, 100) if author is not None else runs.every(100)
    if not listed:
        print("no test matches")
    for run in listed:
        about = f"{run.version} in {run.match_id} from hand {run.hand}"
        print(plain(f"{run.id}  {run.author}  {about}  {run_state_text(run)}  {run.requested_at}"))


class ExportFormat(StrEnum):
    """How ``league export`` writes its rows."""

    CSV = "csv"
    JSON = "json"


EXPORT_COLUMNS = ("index", "match_id", "status", "seats", "places", "totals", "faults", "hands", "duration_s", "finished_at")


@app.command("export")
def export(
    format_: Annotated[ExportFormat, typer.Option("--format", help="The rows' format.")] = ExportFormat.CSV,
    out: Annotated[Path | None, typer.Option("--out", metavar="FILE", help="Write here (default: standard output).")] = None,
    config: ConfigOption = DEFAULT_CONFIG,
) -> None:
    """Every result of the league, one row per match (seats, places, totals and faults by seat), as CSV or JSON."""
    league, store = _store(config)
    with store:
        tournament = store.arena.get_tournament(league.name)
        results = [] if tournament is None else store.arena.list_results(tournament.id)
    rows = [
        {
            "index": r.idx,
            "match_id": r.match_id,
            "status": str(r.status),
            "seats": list(r.seats),
            "places": None if r.places is None else list(r.places),
            "totals": list(r.totals),
            "faults": list(r.faults),
            "hands": r.hands,
            "duration_s": r.duration_s,
            "finished_at": r.finished_at,
        }
        for r in results
    ]
    if format_ is ExportFormat.JSON:
        text = json.dumps(rows, indent=1) + "\n"
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, list) else ("" if v is None else v) for k, v in row.items()})
        text = buffer.getvalue()
    if out is None:
        sys.stdout.write(text)
    else:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {str(out)!r}: {exc.strerror}")
        print(f"wrote {len(rows)} result(s) to {out}", file=sys.stderr)


@app.command("connect")
def connect(
    bot_dir: Annotated[Path, typer.Argument(metavar="BOT_DIR", help="The bot's folder (with bot.toml).")],
    server: Annotated[str, typer.Option("--server", metavar="HOST:PORT", help="The league's gRPC address.")],
    token_file: TokenFile = None,
    ca: Annotated[
        Path | None,
        typer.Option(
            "--ca", metavar="FILE", help="Trust only this CA certificate (PEM) for the league (else $POLIGNAC_TLS_CA, else the system's)."
        ),
    ] = None,
    max_matches: Annotated[int, typer.Option("--max-matches", min=1, max=64, help="Matches to play at a time.")] = 1,
) -> None:
    """Connect a bot from this machine: it stays online and plays the matches the league assigns, until Ctrl-C.

    The bot runs here, unsandboxed, as ``polignac match --trusted`` runs it; build it first if it needs a build.
    """
    import asyncio
    import signal

    from polignac.bot import BotConnectionError
    from polignac.bot.league import ChannelSecurity
    from polignac_arena.league.relay import connect_folder
    from polignac_arena.league.submit import TOKEN_ENV, SubmitError, find_token
    from polignac_arena.plaintext import plain
    from polignac_arena.signals import Stopped, until_signal
    from polignac_arena.submission import SubmissionError, load_submission

    def say(text: str) -> None:
        print(f"polignac: {plain(text)}", file=sys.stderr, flush=True)

    try:
        token = find_token(token_file, os.environ, lambda text: say(f"warning: {text}"))
        load_submission(bot_dir)
        security = ChannelSecurity.of(ca)
        security.plaintext(server)  # refuses an insecure remote address now rather than at the first connection
    except SubmitError as exc:
        fail(str(exc))
    except SubmissionError as exc:
        fail(f"{bot_dir} is not a bot folder: {'; '.join(exc.problems)}")
    except BotConnectionError as exc:
        fail(str(exc))
    # The bot started for each match gets a seat token of its own, never the author's.
    for name in (TOKEN_ENV, "POLIGNAC_TOKEN"):
        os.environ.pop(name, None)
    try:
        work = connect_folder(bot_dir, server, token, security, max_matches=max_matches, on_status=say)
        asyncio.run(until_signal(work, (signal.SIGTERM, signal.SIGINT)))
    except BotConnectionError as exc:
        fail(str(exc), 1)
    except (KeyboardInterrupt, Stopped):
        say("offline")


@app.command("submit")
def submit(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The submission folder (holding bot.toml).")],
    server: Annotated[
        str, typer.Option("--server", metavar="URL", help="The league server, https://HOST[:PORT] (http:// only to this machine).")
    ],
    token_file: TokenFile = None,
    ca: Annotated[
        Path | None, typer.Option("--ca", metavar="FILE", help="Trust only this CA certificate (PEM) for the server: a private CA.")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", metavar="NAME", help="The bot to upload a version of (default: the name in bot.toml).")
    ] = None,
) -> None:
    """Pack DIR, upload it as a new version of the bot, and follow its validation until it is accepted (exit 0) or refused (exit 1)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from polignac_arena.archive import ArchiveError, pack_folder
    from polignac_arena.league.authoring import SubmissionState
    from polignac_arena.league.submit import LeagueClient, SubmitError, find_token, server_url
    from polignac_arena.plaintext import plain
    from polignac_arena.submission import SubmissionError, load_submission

    errors = Console(stderr=True, highlight=False)
    try:
        server_url(server)  # a wrong address is told before the folder is packed
        token = find_token(
            token_file, os.environ, lambda text: errors.print(f"polignac: warning: {plain(text)}", markup=False, soft_wrap=True)
        )
        bot = name or load_submission(folder).name
        data = pack_folder(folder)
    except (SubmitError, ArchiveError) as exc:
        fail(str(exc), 1)
    except SubmissionError as exc:
        fail(f"{folder} is not a submission to upload: {'; '.join(exc.problems)}", 1)
    try:
        with LeagueClient(server, token, ca=ca) as client:
            columns = (TextColumn(f"uploading {len(data)} bytes"), BarColumn(), DownloadColumn(binary_units=True), TransferSpeedColumn())
            with Progress(*columns, console=errors, transient=True, disable=not errors.is_terminal) as progress:
                task = progress.add_task("upload", total=len(data))

                def waiting(seconds: float, why: str) -> None:
                    progress.reset(task)
                    errors.print(f"polignac: {plain(why)}: trying again in {seconds:g} s", markup=False, soft_wrap=True)

                status = client.upload(bot, data, lambda sent: progress.advance(task, sent), on_wait=waiting)
            print(f"uploaded {plain(str(folder))} as a version of {plain(bot)}: submission {plain(status.id)}, {status.state}")
            try:
                status = client.follow(status, lambda line: print(f"  {line}", flush=True))
            except KeyboardInterrupt:
                fail(f"stopped following; submission {plain(status.id)} is still being validated on the server", 130)
    except SubmitError as exc:
        fail(str(exc), 1)
    if status.state is SubmissionState.REFUSED:
        print(f"refused: {plain(status.reason)}")
        raise typer.Exit(1)
    print(f"accepted: {plain(status.label)} ({status.state})")


ServerUrl = Annotated[
    str, typer.Option("--server", metavar="URL", help="The league server, https://HOST[:PORT] (http:// only to this machine).")
]
CaFile = Annotated[Path | None, typer.Option("--ca", metavar="FILE", help="Trust only this CA certificate (PEM) for the server.")]


def _author_client(server: str, token_file: Path | None, ca: Path | None) -> LeagueClient:
    from polignac_arena.league.submit import LeagueClient, SubmitError, find_token, server_url

    try:
        server_url(server)
        token = find_token(token_file, os.environ, lambda text: print(f"polignac: warning: {text}", file=sys.stderr))
        return LeagueClient(server, token, ca=ca)
    except SubmitError as exc:
        fail(str(exc), 1)


def _bot_line(bot: BotOut) -> str:
    from polignac_arena.plaintext import plain

    active = [v for v in bot.versions if v.state == "active"]
    where = "online" if bot.online else ("offline" if any(v.kind == "remote" for v in active) else "")
    counted = "counts toward active_bots" if bot.counted else "does not count toward active_bots"
    version = f"{plain(active[-1].label)} ({active[-1].kind})" if active else "no active version"
    return "  ".join(part for part in (plain(bot.name), version, where, counted) if part)


@app.command("bots")
def bots(server: ServerUrl, token_file: TokenFile = None, ca: CaFile = None) -> None:
    """List your bots on a league server: the active version of each, uploaded or remote, online or not, and whether it counts
    toward your active_bots limit (an offline remote bot stops counting after the league's idle time)."""
    from polignac_arena.league.submit import SubmitError

    with _author_client(server, token_file, ca) as client:
        try:
            me = client.me()
        except SubmitError as exc:
            fail(str(exc), 1)
    if not me.bots:
        print(f"{me.author} has no bots in this league")
    for bot in me.bots:
        print(_bot_line(bot))


@app.command("retire")
def retire(
    bot: Annotated[str, typer.Argument(metavar="BOT", help="The bot's name.")],
    server: ServerUrl,
    token_file: TokenFile = None,
    ca: CaFile = None,
) -> None:
    """Retire one of your bots: its active version leaves the ladder and stops counting toward your active_bots limit.

    A remote bot online now is taken offline (its connection ends); if it joins again it is active again.
    """
    from polignac_arena.league.submit import SubmitError

    with _author_client(server, token_file, ca) as client:
        try:
            out = client.retire(bot)
        except SubmitError as exc:
            fail(str(exc), 1)
    print(f"retired: {_bot_line(out)}")
