"""``polignac report``: the web pages written as a static site (relative links: it works from the file system)."""

from __future__ import annotations

import shutil
from pathlib import Path

from polignac_arena.store import Store
from polignac_arena.web import pages
from polignac_arena.web.app import STATIC_DIR
from polignac_arena.web.pages import Links, slug

__all__ = ["write_report"]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_report(store: Store, out: Path) -> int:
    """Write every page of the store under ``out``; the number of pages written.

    ``index.html`` (the all-time leaderboard), ``tournaments/``, ``crosstable/``, ``bots/``,
    ``matches/`` (the lists and one replay page per match) and ``static/``.
    """
    top, inner = Links(static_site=True, depth=0), Links(static_site=True, depth=1)
    out.mkdir(parents=True, exist_ok=True)
    count = 0

    def page(relative: str, text: str) -> None:
        nonlocal count
        _write(out / relative, text)
        count += 1

    page("index.html", pages.page_leaderboard(store, top))
    page("crosstable/all.html", pages.page_crosstable(store, inner))
    page("matches/index.html", _all_matches(store, inner, None))
    for tournament in store.list_tournaments():
        page(f"tournaments/{slug(tournament.name)}.html", pages.page_leaderboard(store, inner, tournament.name))
        page(f"crosstable/t-{slug(tournament.name)}.html", pages.page_crosstable(store, inner, tournament.name))
        page(f"matches/t-{slug(tournament.name)}.html", _all_matches(store, inner, tournament.name))
        for result in store.list_results(tournament.id):
            page(f"matches/{slug(result.match_id)}.html", pages.page_replay(store, inner, result.match_id))
    for name in sorted({bot.name for bot in store.list_bots()}):
        page(f"bots/{slug(name)}.html", pages.page_bot(store, inner, name))
    shutil.copytree(STATIC_DIR, out / "static", dirs_exist_ok=True)
    return count


def _all_matches(store: Store, links: Links, tournament: str | None) -> str:
    """The match list on one page (a static site cannot page through a query)."""
    total = sum(len(store.list_results(t.id)) for t in store.list_tournaments() if tournament in (None, t.name))
    return pages.page_matches(store, links, tournament, per_page=max(1, total))
