"""What the web face shows, as plain JSON-ready dicts read from the store (shared by the API, the pages and the report).

Every function here only reads.  Unknown tournaments, bots and matches raise :class:`NotFound`;
bad parameter values raise :class:`BadRequest` (the app maps them to 404 and 400).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from enum import StrEnum
from typing import Any

from polignac import Faces, Ruleset, card_name, cards_in, suit_name
from polignac.cards import ALL_CARDS_MASK, PIQUET_MASK
from polignac_arena.ratings import RatingEnv, win_probability
from polignac_arena.render import direction_text, is_polignac
from polignac_arena.replay import replay_lines
from polignac_arena.store import LeaderboardRow, Store, StoredResult, Tournament
from polignac_arena.web import confidence

__all__ = [
    "BadRequest",
    "NotFound",
    "SortKey",
    "bot_detail",
    "bots",
    "card_faces",
    "crosstable",
    "leaderboard",
    "match_detail",
    "matches",
    "replay",
    "tournament_detail",
    "tournaments",
]


class NotFound(LookupError):
    """An unknown tournament, bot or match; the message says which."""


class BadRequest(ValueError):
    """A parameter value that cannot be used; the message says why."""


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
            return RatingEnv(**settings)
        except (TypeError, ValueError):
            pass
    return RatingEnv()


def tournament_summary(store: Store, tournament: Tournament) -> dict[str, Any]:
    """A tournament's name, status, dates and progress."""
    progress = store.progress(tournament.id)
    return {
        "name": tournament.name,
        "status": tournament.status,
        "format": tournament.config.get("format"),
        "created_at": tournament.created_at,
        "updated_at": tournament.updated_at,
        "fixtures": progress.total,
        "done": progress.done,
        "rated": progress.rated,
        "void": progress.void,
        "attempts": progress.attempts,
        "faults": progress.faults,
    }


def tournaments(store: Store) -> list[dict[str, Any]]:
    """Every tournament, oldest first."""
    return [tournament_summary(store, t) for t in store.list_tournaments()]


def tournament_detail(store: Store, name: str) -> dict[str, Any]:
    """One tournament: its summary, entrants and configuration."""
    tournament = _tournament(store, name)
    assert tournament is not None
    return {**tournament_summary(store, tournament), "config": tournament.config, "entrants": tournament.config.get("entrants", [])}


def row_dict(row: LeaderboardRow) -> dict[str, Any]:
    """A leaderboard row with its conservative rating and fault total."""
    return {**asdict(row), "conservative": row.conservative, "fault_total": sum(row.faults.values())}


def leaderboard(store: Store, tournament: str | None = None, sort: SortKey = SortKey.RANK) -> list[dict[str, Any]]:
    """The leaderboard (one tournament, or all-time), sorted by ``sort``; ``rank`` always is the rating rank."""
    found = _tournament(store, tournament)
    rows = confidence.annotate([row_dict(row) for row in store.leaderboard(None if found is None else found.id)], found)
    if sort is SortKey.RANK:
        return rows
    field = {SortKey.FAULTS: "fault_total"}.get(sort, str(sort))
    present = [r for r in rows if r[field] is not None]
    missing = [r for r in rows if r[field] is None]
    present.sort(key=lambda r: r[field], reverse=sort in _DESCENDING)
    return present + missing


def crosstable(store: Store, tournament: str | None = None) -> dict[str, Any]:
    """The rated bots in leaderboard order, and per ordered pair the probability the row bot ranks above the column bot.

    ``cells[i][j]`` has ``p`` (TrueSkill, None on the diagonal) and the head-to-head record of
    the pair when they met (``meetings``, ``ahead``, ``behind``, ``ties``).
    """
    found = _tournament(store, tournament)
    tid = None if found is None else found.id
    env = env_of(found)
    rows = [r for r in store.leaderboard(tid) if r.mu is not None and r.sigma is not None]
    pairs = store.head_to_head(tid)
    cells: list[list[dict[str, Any]]] = []
    for a in rows:
        line = []
        for b in rows:
            cell: dict[str, Any] = {"p": None, "meetings": 0, "ahead": 0, "behind": 0, "ties": 0}
            if a.bot != b.bot:
                cell["p"] = win_probability(env, (a.mu or 0.0, a.sigma or 1.0), (b.mu or 0.0, b.sigma or 1.0))
            met = pairs.get((a.bot, b.bot))
            if met is not None:
                cell.update(meetings=met.meetings, ahead=met.a_ahead, behind=met.b_ahead, ties=met.ties)
            line.append(cell)
        cells.append(line)
    return {"tournament": tournament, "bots": [r.bot for r in rows], "cells": cells}


def bots(store: Store) -> list[dict[str, Any]]:
    """Every bot name with its versions and latest all-time rating."""
    board = {row.bot: row for row in store.leaderboard(None)}
    out: dict[str, dict[str, Any]] = {}
    for bot in store.list_bots():
        entry = out.setdefault(bot.name, {"name": bot.name, "versions": []})
        row = board.get(bot.key)
        entry["versions"].append(
            {
                "version": bot.version,
                "key": bot.key,
                "language": bot.language,
                "added_at": bot.added_at,
                "mu": None if row is None else row.mu,
                "sigma": None if row is None else row.sigma,
                "matches": 0 if row is None else row.matches,
            }
        )
    return list(out.values())


def _result_dict(result: StoredResult) -> dict[str, Any]:
    return {
        "match_id": result.match_id,
        "tournament": result.tournament,
        "idx": result.idx,
        "seats": list(result.seats),
        "status": result.status,
        "final": result.final,
        "places": None if result.places is None else list(result.places),
        "totals": list(result.totals),
        "penalties": list(result.penalties),
        "faults": [dict(f) for f in result.faults],
        "fault_total": sum(sum(f.values()) for f in result.faults),
        "hands": result.hands,
        "duration_s": result.duration_s,
        "finished_at": result.finished_at,
        "node": result.node,
    }


def _all_results(store: Store, tournament: str | None) -> list[StoredResult]:
    found = _tournament(store, tournament)
    chosen = store.list_tournaments() if found is None else [found]
    return [r for t in chosen for r in store.list_results(t.id)]


def _names(seats: Sequence[str]) -> set[str]:
    return {seat.rsplit("@", 1)[0] for seat in seats} | set(seats)


def matches(
    store: Store,
    tournament: str | None = None,
    bot: str | None = None,
    faults: bool | None = None,
    page: int = 1,
    per_page: int = 50,
) -> dict[str, Any]:
    """Final results, newest first, filtered by tournament, bot (name or ``name@version``) and faults, one page."""
    if page < 1:
        raise BadRequest(f"page must be 1 or more, got {page}")
    if per_page < 1:
        raise BadRequest(f"per_page must be 1 or more, got {per_page}")
    results = _all_results(store, tournament)
    if bot is not None:
        known = any(bot in (b.name, b.key) for b in store.list_bots())
        results = [r for r in results if bot in _names(r.seats)]
        if not results and not known:
            raise NotFound(f"no bot named {bot!r}")
    if faults is not None:
        results = [r for r in results if any(sum(f.values()) for f in r.faults) == faults]
    results.sort(key=lambda r: (r.finished_at, r.tournament_id, r.idx), reverse=True)
    start = (page - 1) * per_page
    return {
        "total": len(results),
        "page": page,
        "per_page": per_page,
        "pages": max(1, -(-len(results) // per_page)),
        "matches": [_result_dict(r) for r in results[start : start + per_page]],
    }


def bot_detail(store: Store, name: str, recent: int = 20) -> dict[str, Any]:
    """One bot (by name): its versions, rating history per tournament, place distribution, recent matches, faults."""
    versions = [b for b in store.list_bots() if b.name == name]
    board = {row.bot: row for row in store.leaderboard(None)}
    unregistered = sorted(key for key, row in board.items() if row.name == name and key not in {b.key for b in versions})
    if not versions and not unregistered:
        raise NotFound(f"no bot named {name!r}")
    keys = {b.key for b in versions} | set(unregistered)
    history: list[dict[str, Any]] = []
    places: Counter[int] = Counter()
    played: list[StoredResult] = []
    for tournament in store.list_tournaments():
        for point in store.rating_history(tournament.id):
            if point.bot in keys:
                history.append({"tournament": tournament.name, "idx": point.idx, "bot": point.bot, "mu": point.mu, "sigma": point.sigma})
        for result in store.list_results(tournament.id):
            seats = [i for i, seat in enumerate(result.seats) if seat in keys]
            if not seats:
                continue
            played.append(result)
            if result.places is not None:
                places.update(result.places[i] for i in seats)
    played.sort(key=lambda r: (r.finished_at, r.tournament_id, r.idx), reverse=True)
    fault_log = [
        {
            "match_id": r.match_id,
            "tournament": r.tournament,
            "bot": r.seats[i],
            "seat": i,
            "faults": dict(r.faults[i]),
            "finished_at": r.finished_at,
        }
        for r in played
        for i, seat in enumerate(r.seats)
        if seat in keys and r.faults[i]
    ]
    return {
        "name": name,
        "versions": [
            {
                "version": b.version,
                "key": b.key,
                "language": b.language,
                "digest": b.digest,
                "added_at": b.added_at,
                "rating": None if b.key not in board else row_dict(board[b.key]),
            }
            for b in versions
        ]
        + [
            {"version": board[key].version, "key": key, "language": None, "digest": None, "added_at": None, "rating": row_dict(board[key])}
            for key in unregistered
        ],
        "history": history,
        "places": {str(place): count for place, count in sorted(places.items())},
        "recent_matches": [_result_dict(r) for r in played[:recent]],
        "fault_log": fault_log,
    }


def match_detail(store: Store, match_id: str) -> dict[str, Any]:
    """One match's result (the final one, else the latest attempt), without its record."""
    result = store.get_result(match_id)
    if result is None:
        raise NotFound(f"no match with id {match_id!r}")
    return _result_dict(result)


def card_faces(rules: Ruleset) -> dict[str, dict[str, Any]]:
    """How the replay viewer shows each card of the ruleset's pack, by its wire text (:mod:`polignac.faces`).

    ``text`` is what the card shows (``10♥``, or the German name ``Herz-10``), ``name`` its
    full name, ``suit`` the name of its suit, ``colour`` a class for its suit's colour, and
    ``polignac`` whether it is the Polignac of this game.
    """
    german = rules.faces is Faces.GERMAN
    out: dict[str, dict[str, Any]] = {}
    for card in cards_in(ALL_CARDS_MASK if rules.pack == 52 else PIQUET_MASK):
        suit = suit_name(card.suit, rules.faces)
        out[str(card)] = {
            "text": card_name(card, rules.faces) if german else card.rank.text + card.suit.symbol,
            "name": card_name(card, rules.faces),
            "suit": suit,
            "colour": suit.lower() if german else "red" if card.suit.is_red else "black",
            "polignac": is_polignac(rules, card),
        }
    return out


def replay(store: Store, match_id: str) -> dict[str, Any]:
    """One match re-run through the engine: seat names, every engine event as JSON, and how to show it.

    ``rules`` is the match's ruleset (``Ruleset.to_dict``), ``direction`` which totals are
    better, in words, and ``cards`` how each card is shown (:func:`card_faces`); all three
    are empty when the record does not replay.
    """
    result = store.get_result(match_id)
    if result is None:
        raise NotFound(f"no match with id {match_id!r}")
    out: dict[str, Any] = {
        **_result_dict(result), "names": list(result.seats), "events": [], "divergence": None,
        "rules": None, "direction": None, "cards": {},
    }  # fmt: skip
    if not result.record:
        out["divergence"] = "the store holds no record of this match"
        return out
    try:
        replayed = replay_lines(result.record)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        out["divergence"] = f"the record does not replay: {exc}"
        return out
    rules = replayed.match.rules
    out["events"] = [event.to_dict() for event in replayed.match.events]
    out["divergence"] = replayed.divergence
    out["rules"] = rules.to_dict()
    out["direction"] = direction_text(rules.direction)
    out["cards"] = card_faces(rules)
    return out
