"""``polignac report``: the web pages written as a static site (relative links: it works from the file system)."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from polignac_arena.store import Store
from polignac_arena.web import data, pages
from polignac_arena.web.app import STATIC_DIR
from polignac_arena.web.pages import Links, slug

__all__ = ["write_report"]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as file:
        file.writelines(lines)


def write_report(store: Store, out: Path) -> int:
    """Write every page of the store under ``out``; the number of pages written.

    ``index.html`` (the all-time leaderboard), ``tournaments/``, ``crosstable/``, ``bots/``,
    ``matches/`` (the lists and one replay page per match) and ``static/``; each crosstable's
    whole table as CSV beside it (not counted as a page).
    """
    top, inner = Links(static_site=True, depth=0), Links(static_site=True, depth=1)
    out.mkdir(parents=True, exist_ok=True)
    count = 0

    def page(relative: str, text: str) -> None:
        nonlocal count
        _write(out / relative, text)
        count += 1

    every_row = max(1, store.leaderboard_size(None))  # a static page cannot page through a query: one page holds them all
    page("index.html", pages.page_leaderboard(store, top, per_page=every_row))
    page("crosstable/all.html", pages.page_crosstable(store, inner))
    _write_lines(out / "crosstable" / "all.csv", data.crosstable_csv(store))
    page("matches/index.html", _all_matches(store, inner, None))
    for tournament in store.list_tournaments():
        rows = max(1, store.leaderboard_size(tournament.id))
        page(f"tournaments/{slug(tournament.name)}.html", pages.page_leaderboard(store, inner, tournament.name, per_page=rows))
        page(f"crosstable/t-{slug(tournament.name)}.html", pages.page_crosstable(store, inner, tournament.name))
        _write_lines(out / "crosstable" / f"t-{slug(tournament.name)}.csv", data.crosstable_csv(store, tournament.name))
        page(f"matches/t-{slug(tournament.name)}.html", _all_matches(store, inner, tournament.name))
        for result in store.list_results(tournament.id):
            page(f"matches/{slug(result.match_id)}.html", pages.page_replay(store, inner, result.match_id))
    for name in sorted({bot.name for bot in store.list_bots()}):
        page(f"bots/{slug(name)}.html", pages.page_bot(store, inner, name))
    shutil.copytree(STATIC_DIR, out / "static", dirs_exist_ok=True)
    return count


def _all_matches(store: Store, links: Links, tournament: str | None) -> str:
    """The match list on one page (a static site cannot page through a query)."""
    found = None if tournament is None else store.get_tournament(tournament)
    total = store.count_results(None if found is None else found.id)
    return pages.page_matches(store, links, tournament, per_page=max(1, total))
