"""Run one match through a real referee, each seat started by a seat launcher.

A bot is named by ``builtin:NAME`` (always the SDK's built-in bot ``NAME``: ``random``,
``cautious``, ``heuristic``, ``expert``), a bare built-in name (the same, where no folder of
that name is given), a submission folder holding ``bot.toml`` (always that folder's code,
whatever its name), or a Python file.  The referee gives each seat a unix socket
of its own, ``seatN-socket/referee.sock`` in a private temporary folder (the seat's sandbox
mounts that socket's folder; see :mod:`polignac_arena.match_folder`), and serves nothing
else: no health, no reflection, no shared address.  Every seat is stopped, with everything
it started, when the match ends.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from polignac import Ruleset
from polignac.bots import BUILTIN_NAMES
from polignac_arena.folders import FolderError, scan_folder
from polignac_arena.games import Game, GameRefused, check_seating, game_of
from polignac_arena.match_folder import match_folder
from polignac_arena.match_seats import MatchSeats, finish_shielded
from polignac_arena.record_lines import RerunOf
from polignac_arena.referee import MatchResult, RefereeServer, TimeControl
from polignac_arena.referee.server import raise_open_files_limit
from polignac_arena.seats import SeatKind, SeatLauncher, SeatLimits, launcher_for
from polignac_arena.settings import NAME_MAX
from polignac_arena.submission import Submission, SubmissionError, builtin_submission, load_submission

__all__ = ["BUILTIN_PREFIX", "BotSpecError", "bot_seed", "builtin_name", "check_seats", "resolve_bot", "run_local_match"]


class BotSpecError(ValueError):
    """A bot argument that names no usable bot."""


def bot_seed(seed: int, seat: int) -> int:
    """A seed for a bot's own randomness, derived one-way from the match seed: it tells nothing of the deal."""
    return int.from_bytes(hashlib.sha256(f"polignac-arena/bot-seed/{seed}/{seat}".encode()).digest()[:8], "big")


BUILTIN_PREFIX: Final = "builtin:"
"""``builtin:NAME`` names the built-in bot ``NAME``, whatever folders are around."""


def builtin_name(text: str, folder: Path) -> str | None:
    """The built-in bot ``text`` names (``builtin:NAME``, or a bare built-in name where ``folder`` is no folder), or None.

    Raises :class:`BotSpecError` for ``builtin:`` and no such bot, and for a bare built-in name
    that is also a folder here: which of the two is meant must be written out.
    """
    if text.startswith(BUILTIN_PREFIX):
        name = text.removeprefix(BUILTIN_PREFIX)
        if name not in BUILTIN_NAMES:
            raise BotSpecError(f"no built-in bot {name!r}: the built-in bots are {', '.join(BUILTIN_NAMES)}")
        return name
    if text not in BUILTIN_NAMES:
        return None
    if folder.is_dir():
        raise BotSpecError(
            f"{text!r} is both a built-in bot and the folder {str(folder)!r}: write {BUILTIN_PREFIX}{text} for the"
            f" built-in bot, or ./{text} for the folder"
        )
    return text


def resolve_bot(text: str) -> Submission:
    """``builtin:NAME``, a built-in name, a folder with ``bot.toml``, or a ``.py`` file, as a validated submission."""
    if (name := builtin_name(text, Path(text))) is not None:
        try:
            return builtin_submission(name)
        except SubmissionError as exc:
            raise BotSpecError("; ".join(exc.problems)) from None
    path = Path(text)
    if path.is_dir():
        try:
            return load_submission(path)
        except SubmissionError as exc:
            raise BotSpecError(str(exc)) from None
    if path.is_file() and path.suffix == ".py":
        try:
            scan_folder(path.resolve().parent)  # the seat gets the file's whole folder
        except FolderError as exc:
            raise BotSpecError(f"{exc} (a .py bot brings its whole folder: give it a folder of its own)") from None
        return Submission(
            path=path.resolve().parent, name=path.stem[:NAME_MAX], version="0", language="python", command=("python", path.name)
        )
    raise BotSpecError(
        f"no bot {text!r}: give a built-in name ({', '.join(BUILTIN_NAMES)}, or {BUILTIN_PREFIX}NAME), a folder with bot.toml,"
        " or a .py file"
    )


def check_seats(bots: Sequence[Submission], launcher: SeatLauncher, trusted: bool) -> None:
    """Raise :class:`BotSpecError` when ``launcher`` cannot seat ``bots`` here: its kind unavailable, or a refusal."""
    reason = launcher.unavailable()
    if reason is not None:
        raise BotSpecError(f"{launcher.kind} seats are not available here: {reason}")
    refusal = launcher.refusal(trusted)
    if refusal is not None:
        raise BotSpecError(refusal)
    for submission in bots:
        if (refused := launcher.refuses(submission, trusted)) is not None:
            raise BotSpecError(refused)


async def run_local_match(
    bots: Sequence[Submission],
    rules: Ruleset,
    seed: int,
    time_control: TimeControl | None = None,
    *,
    seat_kind: SeatKind | str = SeatKind.PROCESS,
    launcher: SeatLauncher | None = None,
    limits: SeatLimits | None = None,
    trusted: bool = False,
    record_path: Path | None = None,
    handle_signals: bool = False,
    match_id: str | None = None,
    bot_seeds: Sequence[int] | None = None,
    game: Game | None = None,
    rerun: RerunOf | None = None,
) -> tuple[MatchResult, list[str]]:
    """Start a referee and one seat per bot, play the match; returns the result and each bot's stderr.

    Each bot gets ``POLIGNAC_BOT_SEED``: ``bot_seeds[seat]`` if given, else :func:`bot_seed` of
    the match seed, so the same seed and bots play the same match.  With ``handle_signals``,
    SIGTERM and SIGINT abort the match cleanly: it is recorded as aborted.  A bot whose
    ``bot.toml`` does not declare the game (``game``, default :func:`~polignac_arena.games.game_of`
    the rules) is refused before anything starts.  ``rerun`` starts the match at a hand of
    another: the same deals from there on, with the totals so far.
    """
    if len(bots) != rules.players:
        raise BotSpecError(f"the ruleset seats {rules.players} players but {len(bots)} bots were given")
    try:
        check_seating(bots, game or game_of(rules))
    except GameRefused as exc:
        raise BotSpecError(str(exc)) from None
    launcher = launcher or launcher_for(SeatKind(seat_kind))
    check_seats(bots, launcher, trusted)
    limits = limits or SeatLimits()
    match_id = match_id or secrets.token_hex(6)
    seeds = list(bot_seeds) if bot_seeds is not None else [bot_seed(seed, seat) for seat in range(len(bots))]
    raise_open_files_limit()
    with match_folder() as root:
        seats = MatchSeats(root, len(bots))
        sockets = [seats.socket(number) for number in range(len(bots))]
        server = RefereeServer(None)
        await server.start()
        remove_handlers = server.install_signal_handlers() if handle_signals else None

        async def clean_up() -> None:
            await seats.stop()
            await server.stop(grace=1)

        try:
            host = await server.create_seated_match(
                rules,
                seed,
                time_control,
                sockets=sockets,
                record_path=record_path,
                exit_status=seats.exit_status,
                match_id=match_id,
                rerun=rerun,
            )
            host.notes.stderr_of = seats.stderr_since_answer
            for number, submission in enumerate(bots):
                await seats.start(server, host, launcher, number, submission, limits=limits, trusted=trusted, bot_seed=seeds[number])
            result = await server.run_match(host)
        finally:
            try:
                # Even when this match is being cancelled, its bots and server are cleaned up first.
                await finish_shielded(clean_up())
            finally:
                if remove_handlers is not None:
                    remove_handlers()
        return result, seats.stderr()
