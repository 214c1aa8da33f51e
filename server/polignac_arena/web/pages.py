"""The HTML pages: Jinja2 templates filled with the models of :mod:`polignac_arena.web.data`, for the server and the static report."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import jinja2
from markupsafe import Markup
from pydantic import BaseModel

from polignac_arena.plaintext import plain
from polignac_arena.store import Store, StoredResult
from polignac_arena.web import data
from polignac_arena.web.live import LiveMark
from polignac_arena.web.note_access import SeatFilter, no_seat
from polignac_arena.web.svg import rating_chart, sparkline

__all__ = [
    "Links",
    "environment",
    "page_bot",
    "page_crosstable",
    "page_error",
    "page_leaderboard",
    "page_matches",
    "page_replay",
    "page_replay_of",
    "render",
    "slug",
]


def slug(text: str) -> str:
    """A file-name-safe form of a name (for the static report)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"


@dataclass(frozen=True)
class Links:
    """Where each page lives: absolute paths on the server, relative ``.html`` files in the static report."""

    static_site: bool = False
    depth: int = 0

    @property
    def _root(self) -> str:
        return "../" * self.depth if self.static_site else "/"

    def home(self) -> str:
        return self._root + ("index.html" if self.static_site else "")

    def tournament(self, name: str) -> str:
        return self._root + (f"tournaments/{slug(name)}.html" if self.static_site else f"tournaments/{quote(name, safe='')}")

    def leaderboard(self, tournament: str | None, sort: str, page: int) -> str:
        """A leaderboard page (the static site has one page holding every row)."""
        if self.static_site:
            return self.home() if tournament is None else self.tournament(tournament)
        query = urlencode({k: v for k, v in (("sort", sort if sort != "rank" else None), ("page", page if page > 1 else None)) if v})
        return (self.home() if tournament is None else self.tournament(tournament)) + ("?" + query if query else "")

    def crosstable(self, tournament: str | None = None, top: int | None = None) -> str:
        if self.static_site:
            return self._root + f"crosstable/{'all' if tournament is None else 't-' + slug(tournament)}.html"
        query = urlencode({k: v for k, v in (("tournament", tournament), ("top", top)) if v is not None})
        return self._root + "crosstable" + ("?" + query if query else "")

    def crosstable_csv(self, tournament: str | None = None) -> str:
        """The whole crosstable as CSV."""
        if self.static_site:
            return self._root + f"crosstable/{'all' if tournament is None else 't-' + slug(tournament)}.csv"
        return self._root + "crosstable.csv" + ("" if tournament is None else "?" + urlencode({"tournament": tournament}))

    def bot(self, name: str) -> str:
        return self._root + (f"bots/{slug(name)}.html" if self.static_site else f"bots/{quote(name, safe='')}")

    def matches(self, tournament: str | None = None, bot: str | None = None, faults: bool | None = None, before: int | None = None) -> str:
        if self.static_site:
            return self._root + f"matches/{'index' if tournament is None else 't-' + slug(tournament)}.html"
        query = {"tournament": tournament, "bot": bot, "faults": None if faults is None else str(faults).lower(), "before": before}
        text = urlencode({k: v for k, v in query.items() if v is not None})
        return self._root + "matches" + ("?" + text if text else "")

    def match(self, match_id: str) -> str:
        return self._root + (f"matches/{slug(match_id)}.html" if self.static_site else f"matches/{quote(match_id, safe='')}")

    def static(self, name: str) -> str:
        return self._root + "static/" + name


def _colour(p: float | None) -> str:
    """Red (the row bot is likely below) through white to green (likely above)."""
    if p is None:
        return "#eeeeee"
    strength = min(1.0, abs(p - 0.5) * 2)
    hue = 120 if p >= 0.5 else 0
    return f"hsl({hue}, 60%, {100 - 45 * strength:.0f}%)"


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _tojson(value: BaseModel) -> Markup:
    """A model as JSON for a ``<script type="application/json">`` block (``<``, ``>`` and ``&`` escaped)."""
    text = json.dumps(value.model_dump(mode="json"), separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _trend(recent_mu: Iterable[float] | None) -> Markup:
    """A leaderboard cell's rating trend: a sparkline of the latest mu values and the change over them."""
    values = [float(v) for v in recent_mu or ()]
    if len(values) < 2:
        return Markup("")
    change = values[-1] - values[0]
    arrow = "▲" if change > 0 else "▼" if change < 0 else "="
    kind = "up" if change > 0 else "down" if change < 0 else "flat"
    return Markup(sparkline(values)) + Markup(f' <span class="delta {kind}">{arrow}{abs(change):.1f}</span>')


def _percent(p: float | None) -> str:
    """A probability as a whole percentage, never rounded to a certainty it is not (99.97 % shows as >99 %)."""
    if p is None:
        return "-"
    if p > 0.99:
        return ">99%"
    if p < 0.01:
        return "<1%"
    return f"{p * 100:.0f}%"


def _shown(value: object) -> object:
    """Every value a template prints: text goes through :func:`plain` (autoescaping covers HTML, not control characters)."""
    if isinstance(value, Markup):
        return Markup(plain(str(value)))
    return plain(value) if isinstance(value, str) else value


def environment() -> jinja2.Environment:
    """The template environment (autoescaping on; bot text shown plain)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("polignac_arena.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_shown,
    )
    env.filters["num"] = _number
    env.filters["colour"] = _colour
    env.filters["tojson_script"] = _tojson
    env.filters["trend"] = _trend
    env.filters["percent"] = _percent
    env.filters["faults"] = lambda counts: ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"
    return env


_ENV = environment()


def render(name: str, links: Links, store: Store | None, live: LiveMark | None = None, **context: object) -> str:
    tournaments = [t.name for t in store.list_tournaments()] if store is not None else []
    return _ENV.get_template(name).render(links=links, nav_tournaments=tournaments, live=live, **context)


def _tie_bands(tied: Sequence[bool]) -> list[str | None]:
    """Per row (in rank order, ``tied`` to the one above or not), the shade of its run of tied rows (a row and those tied
    to it below), None outside one.

    Neighbouring runs alternate shades; a page that starts inside a run continues it.
    """
    bands: list[str | None] = [None] * len(tied)
    run = 0
    for i, row_tied in enumerate(tied):
        if row_tied:
            shade = "odd" if run % 2 else "even"
            bands[i] = shade
            if i > 0 and bands[i - 1] is None:
                bands[i - 1] = shade  # the head of the run: the row the tied one is not separated from
        elif i > 0 and tied[i - 1]:
            run += 1
    return bands


def page_leaderboard(
    store: Store, links: Links, tournament: str | None = None, sort: data.SortKey = data.SortKey.RANK, page: int = 1,
    per_page: int = data.LEADERBOARD_PER_PAGE, live: LiveMark | None = None,
) -> str:  # fmt: skip
    """The leaderboard page (all-time or one tournament), ``per_page`` rows from ``page``; ``live``: it redraws itself."""
    board = data.leaderboard_page(store, tournament, sort, page, per_page)
    rows = board.rows
    detail = data.tournament_detail(store, tournament) if tournament is not None else None
    bands = _tie_bands([row.tied for row in rows])
    return render(
        "leaderboard.html", links, store, live, rows=rows, board=board, tournament=tournament, detail=detail, sort=str(sort),
        sort_keys=[str(k) for k in data.SortKey], title=f"Leaderboard: {tournament or 'all-time'}",
        tournaments=data.tournaments(store) if tournament is None else [], bands=bands,
        average_place_meaningful=all(row.average_place_meaningful for row in rows),
    )  # fmt: skip


def page_bot(store: Store, links: Links, name: str, live: LiveMark | None = None) -> str:
    """A bot's page: versions, rating chart, places, recent matches, fault log."""
    bot = data.bot_detail(store, name)
    series: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for point in bot.history:
        series.setdefault((point.tournament, point.bot), []).append((point.mu, point.sigma))
    charts = [
        (tournament, Markup(rating_chart([(key, pts)])))  # built from numbers and escaped labels
        for (tournament, key), pts in series.items()
    ]
    return render("bot.html", links, store, live, bot=bot, charts=charts, title=f"Bot {name}")


def page_crosstable(store: Store, links: Links, tournament: str | None = None, top: int = data.CROSSTABLE_TOP) -> str:
    """The crosstable of the ``top`` bots, cells coloured by the probability that the row bot finishes above the column bot."""
    table = data.crosstable(store, tournament, top)
    return render("crosstable.html", links, store, table=table, tournament=tournament, title=f"Crosstable: {tournament or 'all-time'}")


def page_matches(
    store: Store, links: Links, tournament: str | None = None, bot: str | None = None, faults: bool | None = None,
    before: int | None = None, per_page: int = data.MATCHES_PER_PAGE, live: LiveMark | None = None,
) -> str:  # fmt: skip
    """The match list with its filters: ``per_page`` matches, older than the cursor ``before``."""
    listing = data.matches(store, tournament, bot, faults, per_page=per_page, before=before)
    return render(
        "matches.html", links, store, live, listing=listing, tournament=tournament, bot=bot, faults=faults, before=before,
        title="Matches",
    )  # fmt: skip


def page_replay(store: Store, links: Links, match_id: str, notes_of: SeatFilter = no_seat, **extra: object) -> str:
    """The replay viewer of one match, with the notes of the seats ``notes_of`` names (default: none).

    ``extra``: more for the page, such as a signed-in author's rerun form.
    """
    replay = data.replay(store, match_id, notes_of)
    return render("replay.html", links, store, None, replay=replay, title=f"Replay {match_id}", **extra)


def page_replay_of(store: Store, links: Links, result: StoredResult, title: str, notes_of: SeatFilter = no_seat, **extra: object) -> str:
    """The replay viewer of a match kept outside the results (an author's test match), with the notes ``notes_of`` names."""
    return render("replay.html", links, store, None, replay=data.replay_of(result, notes_of), title=title, **extra)


def page_error(links: Links, status: int, message: str) -> str:
    """A 404 (or other error) page."""
    return render("error.html", links, None, status=status, message=message, title="Not found" if status == 404 else "Error")
