"""The authors' API for test matches (under ``/api/league``, with the author's token as every route there).

- ``POST /matches/{match}/reruns?version=V&hand=K``: ask for a test match (202, ``Location`` its URL);
- ``GET /reruns``: the author's test matches, newest first;
- ``GET /reruns/{id}[?record=true]``: one of them (its record too, once played).

Another author's test match is 403, an unknown one 404; refusals as the rest of the API's.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations, and `author` is a value passed in.

from collections.abc import Mapping
from typing import Annotated, Any, Final, Protocol

from fastapi import APIRouter, Path, Query, Response
from starlette.concurrency import run_in_threadpool

from polignac.jsontypes import JsonObject
from polignac_arena.league.author_models import ErrorOut, TestRunOut
from polignac_arena.league.test_run_store import TestRun
from polignac_arena.league.test_runs import TestRunRefused, TestRuns
from polignac_arena.web.models import Responses

__all__ = ["MAX_HAND", "add_test_run_routes", "test_run_out", "test_run_url"]

MAX_HAND: Final = 100_000
"""A hand number past any match's length: a larger one is refused before the store is read."""
_MATCH_ID: Final = Path(min_length=1, max_length=200, description="a league match's id")


class Refuse(Protocol):
    """Makes the router's refusal: an exception answered with ``status``, ``{"error": message}`` and ``headers``."""

    def __call__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> Exception: ...


def test_run_url(run_id: int) -> str:
    """Where the author sees a test match in the browser (signed in)."""
    return f"/me/reruns/{run_id}"


def test_run_out(run: TestRun, record: list[JsonObject] | None = None) -> TestRunOut:
    return TestRunOut(
        id=run.id,
        match=run.match_id,
        hand=run.hand,
        version=run.version,
        seats=list(run.seats),
        state=run.state.value,
        reason=run.reason,
        requested_at=run.requested_at,
        finished_at=run.finished_at,
        status=run.status,
        places=None if run.places is None else list(run.places),
        totals=None if run.totals is None else list(run.totals),
        url=test_run_url(run.id),
        record=record,
    )


def add_test_run_routes(router: APIRouter, author: Any, test_runs: TestRuns, refusal: Refuse) -> None:
    """Add the routes to ``router``.

    ``author`` is the router's dependency naming the token's author, ``refusal(status, message, headers)`` its error.
    """

    def refused(exc: TestRunRefused) -> Exception:
        headers = {"Retry-After": str(max(1, round(exc.retry_after_s)))} if exc.retry_after_s is not None else None
        return refusal(exc.http_status, exc.message, headers)

    errors: Responses = {code: {"model": ErrorOut} for code in (400, 403, 404, 409)}

    @router.post("/matches/{match_id}/reruns", status_code=202, response_model=TestRunOut, responses=errors, tags=["league test matches"])
    async def ask_rerun(
        response: Response,
        who: author,
        match_id: Annotated[str, _MATCH_ID],
        version: Annotated[str, Query(min_length=1, max_length=200, description="N (a version of your bot in the match) or BOT@N")],
        hand: Annotated[int | None, Query(ge=1, le=MAX_HAND, description="the hand to start at (default: the match's first)")] = None,
    ) -> TestRunOut:
        """Ask for an unrated test match: MATCH's deals from HAND on, your VERSION in your bot's seats, the same opponents."""
        try:
            run = await run_in_threadpool(test_runs.request, who, match_id, version, hand)
        except TestRunRefused as exc:
            raise refused(exc) from None
        response.headers["Location"] = f"/api/league/reruns/{run.id}"
        return test_run_out(run)

    @router.get("/reruns", response_model=list[TestRunOut], tags=["league test matches"])
    async def my_reruns(who: author) -> list[TestRunOut]:
        """Your test matches, newest first (the last few are kept)."""
        return [test_run_out(run) for run in await run_in_threadpool(test_runs.of_author, who)]

    @router.get("/reruns/{run_id}", response_model=TestRunOut, responses=errors, tags=["league test matches"])
    async def one_rerun(
        who: author,
        run_id: Annotated[int, Path(ge=1, le=2**62)],
        record: Annotated[bool, Query(description="include its record (JSON lines) once it has one")] = False,
    ) -> TestRunOut:
        """One of your test matches: where it stands, how it ended, and its record if asked."""
        run = await run_in_threadpool(test_runs.get, run_id)
        if run is None:
            raise refusal(404, f"no test match {run_id}")
        if run.author != who:
            raise refusal(403, f"test match {run_id} is another author's")
        lines = await run_in_threadpool(test_runs.record, run_id) if record else None
        return test_run_out(run, lines)
