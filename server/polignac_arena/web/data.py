"""What the web face shows, read from the store as the API's models (:mod:`polignac_arena.web.models`).

The API returns them, and the pages and the static report read the same ones.

Every function here only reads.  Unknown tournaments, bots and matches raise :class:`NotFound`;
bad parameter values raise :class:`BadRequest` (the app maps them to 404 and 400).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar, cast

from polignac import Faces, Ruleset, card_name, cards_in, suit_name
from polignac.cards import ALL_CARDS_MASK, PIQUET_MASK
from polignac_arena.ratings import RatingEnv, win_probability
from polignac_arena.render import direction_text, is_polignac
from polignac_arena.replay import replay_lines
from polignac_arena.store import HeadToHead, LeaderboardRow, Store, StoredResult, Tournament
from polignac_arena.web import confidence
from polignac_arena.web.models import (
    BotDetailOut,
    BotSummaryOut,
    BotVersionOut,
    BotVersionSummaryOut,
    CardFaceOut,
    CrosstableCellOut,
    CrosstableOut,
    FaultEntryOut,
    LeaderboardRowOut,
    MatchPageOut,
    MatchResultOut,
    RatingPointOut,
    RatingRowOut,
    ReplayEventOut,
    ReplayNoteOut,
    ReplayOut,
    TournamentDetailOut,
    TournamentSummaryOut,
)
from polignac_arena.web.note_access import SeatFilter, no_seat

__all__ = [
    "BadRequest",
    "LeaderboardPage",
    "NotFound",
    "PastTheEnd",
    "SortKey",
    "bot_detail",
    "bots",
    "card_faces",
    "crosstable",
    "crosstable_csv",
    "leaderboard",
    "leaderboard_page",
    "match_detail",
    "matches",
    "page_cursor",
    "rating_row",
    "replay",
    "replay_of",
    "tournament_detail",
    "tournaments",
]


_Summary = TypeVar("_Summary", bound=TournamentSummaryOut)
_Rating = TypeVar("_Rating", bound=RatingRowOut)
_Result = TypeVar("_Result", bound=MatchResultOut)


class NotFound(LookupError):
    """An unknown tournament, bot or match; the message says which."""


class BadRequest(ValueError):
    """A parameter value that cannot be used; the message says why."""


class PastTheEnd(BadRequest):
    """A page number past the last page."""


class SortKey(StrEnum):
    """The leaderboard's sort keys: ``rank`` (conservative rating) unless told otherwise."""

    RANK = "rank"
    CONSERVATIVE = "conservative"
    MU = "mu"
    SIGMA = "sigma"
    MATCHES = "matches"
    WINS = "wins"
    AVERAGE_PLACE = "average_place"
    PENALTY = "average_penalty_per_hand"
    FAULTS = "faults"
    NAME = "name"


# Keys sorted high to low; the others low to high.  Missing values always sort last.
_DESCENDING = {SortKey.MU, SortKey.MATCHES, SortKey.WINS, SortKey.FAULTS, SortKey.CONSERVATIVE}

_SORT_VALUE: dict[SortKey, Callable[[LeaderboardRow], float | str | None]] = {
    SortKey.RANK: lambda row: row.rank,
    SortKey.CONSERVATIVE: lambda row: row.conservative,
    SortKey.MU: lambda row: row.mu,
    SortKey.SIGMA: lambda row: row.sigma,
    SortKey.MATCHES: lambda row: row.matches,
    SortKey.WINS: lambda row: row.wins,
    SortKey.AVERAGE_PLACE: lambda row: row.average_place,
    SortKey.PENALTY: lambda row: row.average_penalty_per_hand,
    SortKey.FAULTS: lambda row: sum(row.faults.values()),
    SortKey.NAME: lambda row: row.name,
}
"""What each sort key orders the rows by."""


def _tournament(store: Store, name: str | None) -> Tournament | None:
    if name is None:
        return None
    found = store.get_tournament(name)
    if found is None:
        raise NotFound(f"no tournament named {name!r}")
    return found


def env_of(tournament: Tournament | None) -> RatingEnv:
    """The TrueSkill environment of a tournament (its ``trueskill`` settings), or the default one."""
    settings = tournament.config.get("trueskill") if tournament is not None else None
    if isinstance(settings, dict) and settings:
        try:
            return RatingEnv(**cast("dict[str, float]", settings))  # a bad value raises, as caught below
        except (TypeError, ValueError):
            pass
    return RatingEnv()


def tournament_summary(store: Store, tournament: Tournament) -> TournamentSummaryOut:
    """A tournament's name, status, dates and progress."""
    return _summary(store, tournament, TournamentSummaryOut)


def _summary(store: Store, tournament: Tournament, model: type[_Summary], **more: object) -> _Summary:
    progress = store.progress(tournament.id)
    kind = tournament.config.get("format")
    return model(
        name=tournament.name, status=tournament.status, format=kind if isinstance(kind, str) else None,
        created_at=tournament.created_at, updated_at=tournament.updated_at, fixtures=progress.total, done=progress.done,
        rated=progress.rated, void=progress.void, attempts=progress.attempts, faults=progress.faults, **more,
    )  # fmt: skip


def tournaments(store: Store) -> list[TournamentSummaryOut]:
    """Every tournament, oldest first."""
    return [tournament_summary(store, t) for t in store.list_tournaments()]


def tournament_detail(store: Store, name: str) -> TournamentDetailOut:
    """One tournament: its summary, entrants and configuration."""
    tournament = _tournament(store, name)
    assert tournament is not None
    config = tournament.config
    return _summary(store, tournament, TournamentDetailOut, config=config, entrants=config.get("entrants", []))


def rating_row(row: LeaderboardRow) -> RatingRowOut:
    """A leaderboard row with its conservative rating and fault total."""
    return _rating(row, RatingRowOut)


def _rating(row: LeaderboardRow, model: type[_Rating], **more: object) -> _Rating:
    return model(
        rank=row.rank, bot=row.bot, name=row.name, version=row.version, mu=row.mu, sigma=row.sigma, matches=row.matches,
        wins=row.wins, average_place=row.average_place, average_penalty_per_hand=row.average_penalty_per_hand,
        faults=dict(row.faults), conservative=row.conservative, fault_total=sum(row.faults.values()),
        recent_mu=list(row.recent_mu), **more,
    )  # fmt: skip


def _annotated(rows: Sequence[LeaderboardRow], tournament: Tournament | None) -> list[LeaderboardRowOut]:
    """``rows`` (in rank order) with how sure the board is of each place (:mod:`polignac_arena.web.confidence`)."""
    marks = confidence.row_separations(rows)
    return _board_rows(list(zip(rows, marks, strict=True)), confidence.average_place_meaningful(tournament))


def _board_rows(marked: Sequence[tuple[LeaderboardRow, confidence.Separation]], meaningful: bool) -> list[LeaderboardRowOut]:
    return [
        _rating(row, LeaderboardRowOut, p_above_stronger=mark.p_above_stronger, tied=mark.tied, average_place_meaningful=meaningful)
        for row, mark in marked
    ]


LEADERBOARD_PER_PAGE = 100
"""Rows on a leaderboard page (and the API's default ``limit``)."""


def _board(store: Store, tournament: str | None, sort: SortKey, limit: int | None, offset: int) -> list[LeaderboardRowOut]:
    """Rows ``offset`` to ``offset + limit`` of the leaderboard sorted by ``sort``.

    In rating order the store reads only those rows; another order sorts every row's aggregates
    (and makes models of the rows shown only).
    """
    found = _tournament(store, tournament)
    tid = None if found is None else found.id
    if sort is SortKey.RANK:
        start = max(0, offset - 1)  # from the row above the page: the first row's confidence compares with it
        rows = store.leaderboard(tid, limit=None if limit is None else limit + offset - start, offset=start)
        return _annotated(rows, found)[offset - start :]
    every = store.leaderboard(tid)
    marks = confidence.row_separations(every)
    value = _SORT_VALUE[sort]
    keyed = [(value(row), row, mark) for row, mark in zip(every, marks, strict=True)]
    present = [(key, row, mark) for key, row, mark in keyed if key is not None]
    missing = [(row, mark) for key, row, mark in keyed if key is None]
    present.sort(key=lambda item: item[0], reverse=sort in _DESCENDING)
    ordered = [(row, mark) for _, row, mark in present] + missing
    return _board_rows(ordered[offset : None if limit is None else offset + limit], confidence.average_place_meaningful(found))


def leaderboard(
    store: Store, tournament: str | None = None, sort: SortKey = SortKey.RANK, *, limit: int | None = None, offset: int = 0
) -> list[LeaderboardRowOut]:
    """The leaderboard (one tournament, or all-time), sorted by ``sort``, rows ``offset`` to ``offset + limit``.

    ``rank`` always is the rating rank, whatever the sort.
    """
    if offset < 0:
        raise BadRequest(f"offset must be 0 or more, got {offset}")
    if limit is not None and limit < 1:
        raise BadRequest(f"limit must be 1 or more, got {limit}")
    return _board(store, tournament, sort, limit, offset)


@dataclass(frozen=True)
class LeaderboardPage:
    """One page of the leaderboard (a page of the site; the API pages by ``limit`` and ``offset``)."""

    rows: list[LeaderboardRowOut]
    page: int
    """From 1."""
    per_page: int
    previous: int | None
    """The page before, None on the first."""
    next: int | None
    """The page after, None on the last."""


def leaderboard_page(
    store: Store, tournament: str | None = None, sort: SortKey = SortKey.RANK, page: int = 1, per_page: int = LEADERBOARD_PER_PAGE
) -> LeaderboardPage:
    """One page of the leaderboard: its ``rows``, ``page``, and the ``previous`` and ``next`` page numbers (None: none).

    The rows past the page are not counted: one more row is read to know whether a next page exists.
    """
    if page < 1:
        raise BadRequest(f"page must be 1 or more, got {page}")
    if per_page < 1:
        raise BadRequest(f"per_page must be 1 or more, got {per_page}")
    rows = _board(store, tournament, sort, per_page + 1, (page - 1) * per_page)
    if page > 1 and not rows:
        raise BadRequest(f"page {page} is past the last page of the leaderboard")
    return LeaderboardPage(
        rows=rows[:per_page], page=page, per_page=per_page, previous=page - 1 if page > 1 else None,
        next=page + 1 if len(rows) > per_page else None,
    )  # fmt: skip


CROSSTABLE_TOP = 20
"""The bots a crosstable shows unless told otherwise: the top of the leaderboard."""
CROSSTABLE_MAX_TOP = 100
"""The most bots a crosstable page shows; the whole table is the CSV download (:func:`crosstable_csv`)."""


def _rated(store: Store, found: Tournament | None, top: int | None = None) -> list[LeaderboardRow]:
    """The first ``top`` rated bots of the leaderboard (every one with None): the rated come first."""
    rows = store.leaderboard(None if found is None else found.id, limit=top)
    return [r for r in rows if r.mu is not None and r.sigma is not None]


def crosstable(store: Store, tournament: str | None = None, top: int = CROSSTABLE_TOP) -> CrosstableOut:
    """The ``top`` rated bots in leaderboard order, and per ordered pair the probability the row bot finishes above the column bot.

    ``cells[i][j]`` has ``p`` (TrueSkill: the probability of finishing above in a single match,
    None on the diagonal) and the head-to-head record of the pair when they met
    (``meetings``, ``ahead``, ``behind``, ``ties``).  ``rated`` counts every rated bot, shown or not.
    """
    if not 1 <= top <= CROSSTABLE_MAX_TOP:
        raise BadRequest(f"top must be between 1 and {CROSSTABLE_MAX_TOP}, got {top}")
    found = _tournament(store, tournament)
    env = env_of(found)
    rows = _rated(store, found, top)
    keys = [r.bot for r in rows]
    pairs = store.head_to_head(None if found is None else found.id, bots=keys)
    cells: list[list[CrosstableCellOut]] = []
    for a in rows:
        line = []
        for b in rows:
            p = None if a.bot == b.bot else win_probability(env, (a.mu or 0.0, a.sigma or 1.0), (b.mu or 0.0, b.sigma or 1.0))
            met = pairs.get((a.bot, b.bot))
            if met is None:
                line.append(CrosstableCellOut(p=p, meetings=0, ahead=0, behind=0, ties=0))
            else:
                line.append(CrosstableCellOut(p=p, meetings=met.meetings, ahead=met.a_ahead, behind=met.b_ahead, ties=met.ties))
        cells.append(line)
    rated = len(rows) if len(rows) < top else store.leaderboard_size(None if found is None else found.id, rated=True)
    return CrosstableOut(tournament=tournament, bots=keys, cells=cells, top=top, rated=rated)


_CSV_CHUNK = 200
"""The crosstable CSV reads the records of this many row bots at a time."""


def crosstable_csv(store: Store, tournament: str | None = None) -> Iterator[str]:
    """The whole crosstable as CSV lines, every rated bot in leaderboard order, streamed a block of rows at a time.

    The header row is ``bot`` then every bot's key; each next row is a bot's key then one cell
    per column bot: ``meetings/ahead/behind/P`` (P: the probability that the row bot finishes
    above the column bot in a single match, :func:`win_probability`, four decimals),
    ``0/0/0/P`` for a pair that never met, empty on the diagonal.  Ties are
    ``meetings - ahead - behind``.  The memory it takes is a block of rows, whatever the
    number of bots.
    """
    found = _tournament(store, tournament)
    tid = None if found is None else found.id
    env = env_of(found)
    rows = _rated(store, found)
    keys = [r.bot for r in rows]
    means = [r.mu or 0.0 for r in rows]
    variances = [(r.sigma or 1.0) ** 2 for r in rows]
    noise = 2 * env.beta**2
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")

    def flush() -> str:
        text = out.getvalue()
        out.seek(0)
        out.truncate()
        return text

    writer.writerow(["bot", *keys])
    yield flush()
    for start in range(0, len(keys), _CSV_CHUNK):
        block = range(start, min(start + _CSV_CHUNK, len(keys)))
        met: dict[str, dict[str, HeadToHead]] = {keys[i]: {} for i in block}
        for (bot, other), record in store.head_to_head_of(met, tid).items():
            met[bot][other] = record
        for i in block:
            cells, mine = [keys[i]], met[keys[i]]
            row_mu, row_noise = means[i], noise + variances[i]
            for j, column in enumerate(keys):
                if i == j:
                    cells.append("")
                    continue
                # win_probability's formula, inlined: a thousand bots make a million cells.
                p = 0.5 * math.erfc(-(row_mu - means[j]) / (math.sqrt(row_noise + variances[j]) * _SQRT2))
                pair = mine.get(column)
                cells.append(f"0/0/0/{p:.4f}" if pair is None else f"{pair.meetings}/{pair.a_ahead}/{pair.b_ahead}/{p:.4f}")
            writer.writerow(cells)
        yield flush()


_SQRT2 = math.sqrt(2)


def bots(store: Store) -> list[BotSummaryOut]:
    """Every bot name with its versions and latest all-time rating."""
    board = {row.bot: row for row in store.leaderboard(None)}
    versions: dict[str, list[BotVersionSummaryOut]] = {}
    for bot in store.list_bots():
        row = board.get(bot.key)
        versions.setdefault(bot.name, []).append(
            BotVersionSummaryOut(
                version=bot.version,
                key=bot.key,
                language=bot.language,
                added_at=bot.added_at,
                mu=None if row is None else row.mu,
                sigma=None if row is None else row.sigma,
                matches=0 if row is None else row.matches,
            )
        )
    return [BotSummaryOut(name=name, versions=listed) for name, listed in versions.items()]


def _match_result(result: StoredResult) -> MatchResultOut:
    return _result(result, MatchResultOut)


def _result(result: StoredResult, model: type[_Result], **more: object) -> _Result:
    return model(
        match_id=result.match_id, tournament=result.tournament, idx=result.idx, seats=list(result.seats), status=result.status,
        final=result.final, places=None if result.places is None else list(result.places), totals=list(result.totals),
        penalties=list(result.penalties), faults=[dict(f) for f in result.faults],
        fault_total=sum(sum(f.values()) for f in result.faults), hands=result.hands, duration_s=result.duration_s,
        finished_at=result.finished_at, node=result.node, **more,
    )  # fmt: skip


MATCHES_PER_PAGE = 50
"""Matches on a page of the match list (and the API's default ``per_page``)."""


def _known_bot(store: Store, bot: str) -> bool:
    name, _, version = bot.partition("@")
    return store.get_bot(name, version or None) is not None or bool(store.bot_keys(name))


def _narrowed(store: Store, bot: str, keys: Iterable[str] | None = None) -> str:
    """``bot`` as the store filters it fastest: a name with one version (``keys``, or looked up) becomes that version's key.

    The store reads one version's matches newest first a page at a time, but every match of
    every version of a name to find a name's newest ones.
    """
    if "@" in bot:
        return bot
    if keys is None:
        latest = store.get_bot(bot)  # a second registered version without a match has no seat to miss
        keys = {*store.bot_keys(bot), *([] if latest is None else [latest.key])}
    found = set(keys)
    return found.pop() if len(found) == 1 else bot


def _fetch(
    store: Store, tid: int | None, bot: str | None, faults: bool | None, before: int | None, per_page: int
) -> tuple[list[StoredResult], int | None]:
    if before is not None and before < 1:
        raise BadRequest(f"before must be a cursor a page handed out (1 or more), got {before}")
    return store.results_page(tid, None if bot is None else _narrowed(store, bot), faults, before=before, limit=per_page)


def page_cursor(
    store: Store, tournament: str | None, bot: str | None, faults: bool | None, page: int, per_page: int = MATCHES_PER_PAGE
) -> int | None:
    """The cursor (``before``) of page ``page`` (from 1) of a match list, walking the pages before it; None for page 1.

    :class:`BadRequest` when the list has fewer pages.
    """
    if page < 1:
        raise BadRequest(f"page must be 1 or more, got {page}")
    found = _tournament(store, tournament)
    tid = None if found is None else found.id
    cursor = None
    for done in range(1, page):
        cursor = _fetch(store, tid, bot, faults, cursor, per_page)[1]
        if cursor is None:
            raise PastTheEnd(f"page {page} is past the last page of these matches ({done})")
    return cursor


def matches(
    store: Store,
    tournament: str | None = None,
    bot: str | None = None,
    faults: bool | None = None,
    page: int = 1,
    per_page: int = MATCHES_PER_PAGE,
    before: int | None = None,
) -> MatchPageOut:
    """Final results, newest first, filtered by tournament, bot (name or ``name@version``) and faults: ``per_page`` of them.

    Pages are keyset pages: ``next`` is the cursor of the next (older) page, None on the last
    one; pass it back as ``before``.  ``page`` (from 1) is the older way to ask for a page: it
    walks the pages before it (:func:`page_cursor`), so a cursor is the cheap way past the first
    few; with ``before``, ``page`` is None.  ``total`` (and ``pages``) count the matches of the
    list when no bot or fault filter is given, and are None otherwise (counting them would cost
    as much as listing them all).
    """
    if per_page < 1:
        raise BadRequest(f"per_page must be 1 or more, got {per_page}")
    if before is not None and page != 1:
        raise BadRequest(f"give either before or page, not both (got page {page})")
    found = _tournament(store, tournament)
    tid = None if found is None else found.id
    results: list[StoredResult] = []
    cursor: int | None = None
    try:
        if before is None and page != 1:
            before = page_cursor(store, tournament, bot, faults, page, per_page)
        results, cursor = _fetch(store, tid, bot, faults, before, per_page)
    except PastTheEnd:
        pass  # an empty page, as an offset past the end gives
    if bot is not None and not results and before is None and not _known_bot(store, bot):
        raise NotFound(f"no bot named {bot!r}")
    # Without a bot or fault filter the count is a sum of the tournaments' counters; with one it would count every
    # matching match, which is what a page must not cost.
    total = store.count_results(tid) if bot is None and faults is None else None
    return MatchPageOut(
        total=total, page=None if before is not None and page == 1 else page, per_page=per_page,
        pages=None if total is None else max(1, -(-total // per_page)), next=cursor, matches=[_match_result(r) for r in results],
    )  # fmt: skip


HISTORY_POINTS = 300
"""The most rating points a bot page reads per tournament and version (long histories are downsampled, the last points exact)."""


def bot_detail(store: Store, name: str, recent: int = 20, faults: int = 50) -> BotDetailOut:
    """One bot (by name): its versions, rating history per tournament, place distribution, recent matches, faults.

    ``recent`` matches and ``faults`` fault log entries at most, newest first; the history is
    at most :data:`HISTORY_POINTS` points per tournament and version.
    """
    versions = [b for b in store.list_bots() if b.name == name]
    registered = {b.key for b in versions}
    unregistered = [key for key in store.bot_keys(name) if key not in registered]
    if not versions and not unregistered:
        raise NotFound(f"no bot named {name!r}")
    names = {t.id: t.name for t in store.list_tournaments()}
    board: dict[str, LeaderboardRow] = {}
    places: Counter[int] = Counter()
    history: list[RatingPointOut] = []
    keys = [*(b.key for b in versions), *unregistered]
    for key in keys:
        summary = store.bot_summary(key)
        if summary is None:
            continue
        board[key] = summary.row
        places.update(summary.places)
        for tid in summary.tournaments:
            history += [
                RatingPointOut(tournament=names[tid], idx=point.idx, bot=point.bot, mu=point.mu, sigma=point.sigma)
                for point in store.rating_history(tid, key, max_points=HISTORY_POINTS)
            ]
    fault_log = [
        FaultEntryOut(
            match_id=f.match_id, tournament=f.tournament, bot=f.bot, seat=f.seat, faults=dict(f.faults), finished_at=f.finished_at
        )
        for f in store.fault_log(_narrowed(store, name, keys), faults)
    ]
    registered_versions = [
        BotVersionOut(
            version=b.version,
            key=b.key,
            language=b.language,
            digest=b.digest,
            added_at=b.added_at,
            rating=None if b.key not in board else rating_row(board[b.key]),
        )
        for b in versions
    ]
    seen_versions = [
        BotVersionOut(version=board[key].version, key=key, language=None, digest=None, added_at=None, rating=rating_row(board[key]))
        for key in unregistered
    ]
    return BotDetailOut(
        name=name, versions=registered_versions + seen_versions, history=history,
        places={str(place): count for place, count in sorted(places.items()) if count},
        recent_matches=[_match_result(r) for r in store.recent_results(_narrowed(store, name, keys), recent)], fault_log=fault_log,
    )  # fmt: skip


def match_detail(store: Store, match_id: str) -> MatchResultOut:
    """One match's result (the final one, else the latest attempt), without its record."""
    result = store.get_result(match_id)
    if result is None:
        raise NotFound(f"no match with id {match_id!r}")
    return _match_result(result)


def card_faces(rules: Ruleset) -> dict[str, CardFaceOut]:
    """How the replay viewer shows each card of the ruleset's pack, by its wire text (:mod:`polignac.faces`).

    ``text`` is what the card shows (``10♥``, or the German name ``Herz-10``), ``name`` its
    full name, ``suit`` the name of its suit, ``colour`` a class for its suit's colour, and
    ``polignac`` whether it is the Polignac of this game.
    """
    german = rules.faces is Faces.GERMAN
    out: dict[str, CardFaceOut] = {}
    for card in cards_in(ALL_CARDS_MASK if rules.pack == 52 else PIQUET_MASK):
        suit = suit_name(card.suit, rules.faces)
        out[str(card)] = CardFaceOut(
            text=card_name(card, rules.faces) if german else card.rank.text + card.suit.symbol,
            name=card_name(card, rules.faces),
            suit=suit,
            colour=suit.lower() if german else "red" if card.suit.is_red else "black",
            polignac=is_polignac(rules, card),
        )
    return out


def replay(store: Store, match_id: str, notes_of: SeatFilter = no_seat) -> ReplayOut:
    """One match re-run through the engine: seat names, every engine event as JSON, and how to show it.

    ``rules`` is the match's ruleset (``Ruleset.to_dict``), ``direction`` which totals are
    better, in words, and ``cards`` how each card is shown (:func:`card_faces`); all three
    are empty when the record does not replay.  ``notes`` holds the bots' debug text and
    stderr of the seats ``notes_of`` names, and of no other.
    """
    result = store.get_result(match_id)
    if result is None:
        raise NotFound(f"no match with id {match_id!r}")
    return replay_of(result, notes_of)


def replay_of(result: StoredResult, notes_of: SeatFilter = no_seat) -> ReplayOut:
    """A stored (or otherwise kept) match with its record re-run through the engine, as :func:`replay` shows it."""
    if not result.record:
        return _unreplayed(result, "the store holds no record of this match")
    try:
        replayed = replay_lines(result.record)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        return _unreplayed(result, f"the record does not replay: {exc}")
    rules = replayed.match.rules
    events = [ReplayEventOut.model_validate(event.to_dict()) for event in replayed.match.events]
    readable = set(notes_of(result.seats)) if replayed.notes else set()
    notes = [ReplayNoteOut.model_validate(dataclasses.asdict(note)) for note in replayed.notes if note.seat in readable]
    return _result(
        result, ReplayOut, names=list(result.seats), events=events, divergence=replayed.divergence, rules=rules.to_dict(),
        direction=direction_text(rules.direction), cards=card_faces(rules), notes=notes,
    )  # fmt: skip


def _unreplayed(result: StoredResult, why: str) -> ReplayOut:
    """A match whose record is missing or does not replay: its result and ``why``."""
    return _result(result, ReplayOut, names=list(result.seats), events=[], divergence=why, rules=None, direction=None, cards={})
