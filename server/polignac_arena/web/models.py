"""What the JSON API answers with: one pydantic model per body, so ``/openapi.json`` describes every route's answer.

:mod:`polignac_arena.web.data` builds these from the store's records, the routes of
:mod:`polignac_arena.web.api` return them, and the HTML pages and the static report read them.
Models refuse keys they do not declare.

Every body's class ends in ``Out`` (the store, the referee and ``replay.py`` have their own
``LeaderboardRow``, ``MatchResult`` and ``Replay``); the schema publishes it without the suffix
(its title, which :func:`polignac_arena.web.app.tidy_openapi` also makes its component's name),
so clients see the names they always did.  ``ErrorOut`` keeps its suffix in the schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from polignac.jsontypes import JsonObject
from polignac_arena.statuses import MatchStatus, TournamentStatus

__all__ = [
    "BotDetailOut",
    "BotSummaryOut",
    "BotVersionOut",
    "BotVersionSummaryOut",
    "CardFaceOut",
    "CrosstableCellOut",
    "CrosstableOut",
    "ErrorOut",
    "FaultEntryOut",
    "JsonObjectField",
    "LeaderboardRowOut",
    "MatchPageOut",
    "MatchResultOut",
    "RatingPointOut",
    "RatingRowOut",
    "ReplayEventOut",
    "ReplayNoteOut",
    "ReplayOut",
    "Responses",
    "StampOut",
    "TournamentDetailOut",
    "TournamentStampOut",
    "TournamentSummaryOut",
]


def _published_name(model: type) -> str:
    """The name a body's schema has: its class's name without ``Out``."""
    return model.__name__.removesuffix("Out")


if TYPE_CHECKING:
    JsonObjectField: TypeAlias = JsonObject
else:
    JsonObjectField = dict[str, object]
"""A body's field that holds a JSON object as stored (a configuration, a ruleset, a record line).

Pydantic reads it as ``dict[str, object]``: it takes the object as it is (its values come from JSON) and
the schema says "an object", as it always did.  Pydantic cannot build our recursive ``JsonObject``."""

Responses = dict[int | str, dict[str, object]]
"""A route's ``responses=``: by status, what FastAPI publishes of that answer (its ``model``, ``description``...)."""


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", model_title_generator=_published_name)


class ErrorOut(_Out):
    """A refusal: a bad parameter (400), an unknown tournament, bot, match or path (404), or an author's refusal."""

    model_config = ConfigDict(title="ErrorOut")  # the name the league's author API published first

    error: str = Field(description="what was wrong, in one lowercase sentence quoting the bad value")


class TournamentSummaryOut(_Out):
    """A tournament's name, status, dates and progress."""

    name: str
    status: TournamentStatus
    format: str | None = Field(description="round-robin, duplicate or ladder (None for a league)")
    created_at: str
    updated_at: str
    fixtures: int = Field(description="matches scheduled")
    done: int = Field(description="fixtures with their final result")
    rated: int = Field(description="fixtures whose result the ratings include")
    void: int = Field(description="final results that were not finished (aborted or errored)")
    attempts: int = Field(description="failed attempts that were retried")
    faults: dict[str, int] = Field(description="fault counts by kind over the final results")


class TournamentDetailOut(TournamentSummaryOut):
    """One tournament: its summary, entrants and configuration."""

    config: JsonObjectField = Field(description="the stored configuration (the tournament or league file, as JSON)")
    entrants: list[str]


class RatingRowOut(_Out):
    """One bot version's rating and statistics over its finished matches."""

    rank: int = Field(description="the place in rating order (mu - 3 sigma, highest first), from 1")
    bot: str = Field(description="name@version")
    name: str
    version: str
    mu: float | None = Field(description="None before its first rated match")
    sigma: float | None
    matches: int
    wins: int = Field(description="matches in first place, shared first places included")
    average_place: float | None
    average_penalty_per_hand: float | None
    faults: dict[str, int]
    conservative: float | None = Field(description="mu - 3 sigma, the order of the leaderboard")
    fault_total: int
    recent_mu: list[float] = Field(default_factory=list, description="the bot's latest mu values, oldest first (the rating trend)")


class LeaderboardRowOut(RatingRowOut):
    """A leaderboard line: the rating, and how sure the board is of its place."""

    p_above_stronger: float | None = Field(
        default=None,
        description="the probability that the bot one rank above is really stronger than this one "
        "(None for the first rated bot and for unrated ones)",
    )
    tied: bool = Field(default=False, description="not separated from the bot one rank above at 95 %: the order of the two is not known")
    average_place_meaningful: bool = Field(
        default=True,
        description="false where the schedule makes average places incomparable: the all-time board, ladders and leagues",
    )


class CrosstableCellOut(_Out):
    """The row bot against the column bot."""

    p: float | None = Field(
        description="the probability that the row bot finishes above the column bot in ONE match (TrueSkill, performance noise "
        "included); None on the diagonal"
    )
    meetings: int = Field(description="finished matches where both sat at the table")
    ahead: int = Field(description="of them, those the row bot finished ahead in")
    behind: int
    ties: int


class CrosstableOut(_Out):
    """The top rated bots in leaderboard order, and a cell per ordered pair (the whole table: /crosstable.csv)."""

    tournament: str | None
    bots: list[str]
    cells: list[list[CrosstableCellOut]] = Field(description="cells[i][j]: bots[i] against bots[j]")
    top: int = Field(description="the most bots asked for")
    rated: int = Field(description="every rated bot, shown or not")


class BotVersionSummaryOut(_Out):
    """One version of a bot, with its latest all-time rating."""

    version: str
    key: str = Field(description="name@version")
    language: str
    added_at: str
    mu: float | None
    sigma: float | None
    matches: int


class BotSummaryOut(_Out):
    """A bot name and its versions."""

    name: str
    versions: list[BotVersionSummaryOut]


class RatingPointOut(_Out):
    """The rating of one version after one rated match of a tournament."""

    tournament: str
    idx: int = Field(description="the fixture's index in the tournament's schedule")
    bot: str
    mu: float
    sigma: float


class MatchResultOut(_Out):
    """A stored match result (the final one of its fixture, or an attempt)."""

    match_id: str
    tournament: str
    idx: int
    seats: list[str] = Field(description="name@version by seat")
    status: MatchStatus
    final: bool
    places: list[int] | None = Field(description="by seat, 1 the best; None for a match that did not finish")
    totals: list[int]
    penalties: list[int]
    faults: list[dict[str, int]] = Field(description="fault counts by kind, by seat")
    fault_total: int
    hands: int
    duration_s: float | None
    finished_at: str
    node: str | None = Field(description="the machine or cluster node that played it, when known")


class FaultEntryOut(_Out):
    """Faults of one version in one match."""

    match_id: str
    tournament: str
    bot: str
    seat: int
    faults: dict[str, int]
    finished_at: str


class BotVersionOut(_Out):
    """One version of a bot: registered, or only seen in results."""

    version: str
    key: str
    language: str | None = Field(description="None for a version that is in results but not registered")
    digest: str | None
    added_at: str | None
    rating: RatingRowOut | None = Field(description="its all-time leaderboard line; None before its first match")


class BotDetailOut(_Out):
    """One bot: versions, rating history, place counts, recent matches and fault log."""

    name: str
    versions: list[BotVersionOut]
    history: list[RatingPointOut]
    places: dict[str, int] = Field(description="how often it finished in each place (the place as text)")
    recent_matches: list[MatchResultOut]
    fault_log: list[FaultEntryOut]


class MatchPageOut(_Out):
    """One page of final results, newest first."""

    total: int | None = Field(description="matches in the list; None with a bot or fault filter (counting would cost a full scan)")
    page: int | None = Field(description="the page number asked for; None for a page asked by its cursor (before)")
    per_page: int
    pages: int | None = Field(description="pages in the list, when total is known")
    next: int | None = Field(description="the cursor of the next (older) page: pass it as before; None on the last page")
    matches: list[MatchResultOut]


class ReplayEventOut(BaseModel):
    """One engine event (``polignac.engine``'s ``to_dict``): its kind in ``event``, the rest by kind."""

    model_config = ConfigDict(extra="allow", model_title_generator=_published_name)

    event: str


class CardFaceOut(_Out):
    """How the replay viewer shows one card."""

    text: str
    name: str
    suit: str
    colour: str = Field(description="a class for the suit's colour")
    polignac: bool = Field(description="the Polignac of this game")


class ReplayNoteOut(_Out):
    """A bot's own notes on one of its decisions: shown only to the bot's author in a league."""

    event: int = Field(description="the index in events of the decision's event (declared or card_played): step event + 1 shows it")
    hand: int
    step: str = Field(description="auction, or trick N")
    seat: int
    action: str = Field(description="what was played for the decision")
    debug: str | None = Field(description="the bot's debug text (protocol 1.3), cleaned and capped")
    stderr: str | None = Field(
        description="what the bot wrote on stderr from its request for this decision to its next, cleaned and capped"
    )


class ReplayOut(MatchResultOut):
    """A match re-run through the engine from its record."""

    names: list[str]
    events: list[ReplayEventOut]
    divergence: str | None = Field(description="why the record does not replay, or where it departs from the engine; None when it replays")
    rules: JsonObjectField | None = Field(description="the ruleset (Ruleset.to_dict); None when the record does not replay")
    direction: str | None = Field(description="which totals are better, in words")
    cards: dict[str, CardFaceOut] = Field(description="by card as wire text")
    notes: list[ReplayNoteOut] = Field(
        default_factory=list,
        description="the bots' debug text and stderr by decision: only of the seats whose author asks (signed in, or with an API token)",
    )


class TournamentStampOut(_Out):
    """What changes in a tournament when a result is stored."""

    name: str
    status: TournamentStatus
    rated: int
    updated_at: str


class StampOut(_Out):
    """A cheap mark of the store's state: a page polls it and reloads its live parts when it changes."""

    key: str = Field(description="changes whenever anything below changes: compare it with the one a page was drawn with")
    last_result: int = Field(description="the id of the latest stored result (0: none yet); it grows with every result")
    last_fixture: int = Field(description="grows with every fixture scheduled (a ladder schedules as it starts matches)")
    tournaments: list[TournamentStampOut]
