"""Whole answers of the web face, compared with golden copies: every JSON route and every HTML page on one store.

The store is built the same way on every run (matches played locally from fixed seeds, results recorded with
fixed times); what it cannot fix (the times a tournament or bot row was written, the live stamp's key made from
them) is replaced by a placeholder before comparing.  Everything else must match byte for byte, so a refactoring
of the data layer, the models or the templates that changes an answer fails here.

A deliberate change of an answer: ``python -m tests.test_web_golden`` rewrites tests/golden/web.json; review its
diff like code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from polignac import Match, preset
from polignac_arena.players import play_local, random_players
from polignac_arena.ratings import RatingEnv, rate_match
from polignac_arena.schedule import Fixture
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store
from polignac_arena.web import create_app
from polignac_arena.web.report import write_report

GOLDEN = Path(__file__).parent / "golden" / "web.json"

START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

URLS = [
    "/api/tournaments",
    "/api/tournaments/rr",
    "/api/tournaments/lad",
    "/api/tournaments/nope",
    "/api/leaderboard",
    "/api/leaderboard?tournament=rr",
    "/api/leaderboard?tournament=rr&sort=name",
    "/api/leaderboard?tournament=rr&sort=faults",
    "/api/leaderboard?tournament=rr&sort=average_place&limit=2&offset=1",
    "/api/leaderboard?sort=mu&offset=2",
    "/api/leaderboard?tournament=lad&sort=sigma",
    "/api/leaderboard?offset=-1",
    "/api/tournaments/rr/leaderboard?limit=2",
    "/api/tournaments/lad/leaderboard?sort=wins",
    "/api/crosstable",
    "/api/crosstable?tournament=rr&top=2",
    "/api/crosstable?tournament=lad",
    "/api/bots",
    "/api/bots/north",
    "/api/bots/ghost",
    "/api/bots/nobody",
    "/api/matches",
    "/api/matches?per_page=2",
    "/api/matches?per_page=2&page=2",
    "/api/matches?per_page=2&before=3",
    "/api/matches?tournament=rr&faults=true",
    "/api/matches?bot=north&faults=false",
    "/api/matches?bot=north@2",
    "/api/matches?bot=nobody",
    "/api/matches/rr-0",
    "/api/matches/rr-3",
    "/api/matches/nope",
    "/api/matches/rr-0/replay",
    "/api/matches/rr-2/replay",
    "/api/matches/rr-3/replay",
    "/api/matches/lad-0/replay",
    "/api/stamp",
    "/api/nowhere",
    "/",
    "/?sort=faults",
    "/tournaments/rr",
    "/tournaments/lad?sort=name",
    "/crosstable",
    "/crosstable?tournament=rr&top=2",
    "/crosstable.csv",
    "/crosstable.csv?tournament=rr",
    "/bots/north",
    "/bots/ghost",
    "/bots/nobody",
    "/matches",
    "/matches?tournament=rr&faults=true",
    "/matches?bot=east",
    "/matches/rr-0",
    "/matches/rr-2",
    "/matches/rr-3",
    "/nowhere",
]

# What the store writes with its own clock, and the stamp's key made from it.
_VOLATILE = [
    (re.compile(rb"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), b"<time>"),
    (re.compile(rb'"key":"[0-9a-f]{16}"'), b'"key":"<key>"'),
    (re.compile(rb'data-live-stamp="[0-9a-f]{16}"'), b'data-live-stamp="<key>"'),
]


def record_of(match: Match, names: list[str]) -> list[dict[str, Any]]:
    """The lines of a match record (referee/record.py) for a match played locally."""
    return [
        {"type": "header", "rules": match.rules.to_dict(), "seed": match.seed, "seats": [{"name": n} for n in names]},
        *({"type": "action", "action": action} for action in match.actions),
        {"type": "result", "status": "finished", "places": list(match.places or ()), "totals": list(match.totals)},
    ]


def _rate(env: RatingEnv) -> Any:
    def rate(current: Any, seats: Any, places: Any) -> dict[str, tuple[float, float]]:
        before = [current.get(s) or env.initial for s in seats]
        return dict(zip(seats, rate_match(env, before, places), strict=True))

    return rate


def build_store(path: Path) -> Path:
    """Two tournaments: "rr" (a round robin with its own TrueSkill beta) and "lad" (a ladder).

    Their matches: played and replayable, with faults, aborted, retried, without a record and with one that
    does not replay; bots with two versions, and one ("ghost") only ever seen in results.
    """
    with Store(path) as store:
        for name, version in (("north", "1"), ("north", "2"), ("east", "1"), ("south", "1")):
            store.add_bot(name, version, f"/bots/{name}-{version}", f"sha256:{name}{version}", "python")
        rr_seats = [("north@2", "east@1", "south@1", "ghost@1"), ("east@1", "south@1", "ghost@1", "north@2")]
        fixtures = [Fixture(i, rr_seats[i % 2], 40 + i) for i in range(5)]
        config = {"format": "round-robin", "entrants": ["north", "east", "south", "ghost"], "trueskill": {"beta": 5.0}}
        rr = store.create_tournament("rr", config, fixtures)
        env = RatingEnv(beta=5.0)
        when = iter(START + timedelta(minutes=m) for m in range(100))
        for i in range(2):
            seats = list(fixtures[i].seats)
            match = play_local(preset("classic", players=4), 40 + i, random_players(40 + i, 4))
            store.record_result(
                rr, i, match_id=f"rr-{i}", status=MatchStatus.FINISHED, places=list(match.places or ()), totals=list(match.totals),
                faults=[{}, {"timeout": 2, "illegal": 1}, {}, {}] if i else [{} for _ in seats], hands=match.hand_number,
                rate=_rate(env), record=record_of(match, seats), duration_s=1.25 * (i + 1), finished_at=next(when),
                node="node-a" if i else None,
            )  # fmt: skip
        seats = list(fixtures[2].seats)
        store.record_result(
            rr, 2, match_id="rr-2-try", status=MatchStatus.ERROR, places=None, totals=[0, 0, 0, 0], faults=[{} for _ in seats],
            hands=0, rate=_rate(env), final=False, finished_at=next(when),
        )  # fmt: skip
        store.record_result(
            rr, 2, match_id="rr-2", status=MatchStatus.FINISHED, places=[2, 1, 4, 2], totals=[3, 1, 9, 3], faults=[{} for _ in seats],
            hands=3, rate=_rate(env), penalties=[3, 1, 9, 3], record=[{"type": "header"}], finished_at=next(when),
        )  # fmt: skip
        store.record_result(
            rr, 3, match_id="rr-3", status=MatchStatus.ABORTED, places=None, totals=[0, 0, 0, 0], faults=[{}, {}, {"crash": 1}, {}],
            hands=1, rate=_rate(env), finished_at=next(when), duration_s=0.5,
        )  # fmt: skip
        lad = store.create_tournament("lad", {"format": "ladder", "entrants": ["north", "east"]}, [Fixture(0, ("north@1", "east@1"), 9)])
        store.record_result(
            lad, 0, match_id="lad-0", status=MatchStatus.FINISHED, places=[1, 2], totals=[2, 8], faults=[{}, {}], hands=2,
            rate=_rate(RatingEnv()), finished_at=next(when), node="node-b",
        )  # fmt: skip
    return path


def normalised(body: bytes) -> str:
    for pattern, placeholder in _VOLATILE:
        body = pattern.sub(placeholder, body)
    return body.decode("utf-8")


def answer(client: TestClient, url: str) -> dict[str, Any]:
    """A URL's status, media type and whole body (normalised)."""
    response = client.get(url, follow_redirects=False)
    return {"status": response.status_code, "type": response.headers["content-type"], "body": normalised(response.content)}


def report_pages(db: Path, out: Path) -> dict[str, str]:
    """The static report's pages and CSV files (not its static folder), by path, normalised."""
    with Store(db, create=False) as store:
        write_report(store, out)
    files = sorted(p for p in out.rglob("*") if p.is_file() and "static" not in p.relative_to(out).parts)
    return {f"report/{p.relative_to(out).as_posix()}": normalised(p.read_bytes()) for p in files}


def answers(db: Path, folder: Path) -> dict[str, Any]:
    """Every URL's answer and every report file."""
    with TestClient(create_app(db, live_poll_s=5.0)) as test_client:
        out: dict[str, Any] = {url: answer(test_client, url) for url in URLS}
    return {**out, **report_pages(db, folder / "report")}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("golden-web") / "arena.db")


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db, live_poll_s=5.0)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("url", URLS)
def test_the_answer_is_the_golden_one(client: TestClient, golden: dict[str, Any], url: str) -> None:
    assert url in golden, f"{url} has no golden answer: run python -m tests.test_web_golden"
    assert answer(client, url) == golden[url]


def test_the_static_report_is_the_golden_one(db: Path, golden: dict[str, Any], tmp_path: Path) -> None:
    pages = report_pages(db, tmp_path / "report")
    assert sorted(pages) == sorted(k for k in golden if k.startswith("report/"))
    for path, text in pages.items():
        assert text == golden[path], path


def test_every_golden_answer_is_asked(golden: dict[str, Any]) -> None:
    assert sorted(k for k in golden if not k.startswith("report/")) == sorted(URLS)


def main() -> None:
    """Rewrite the golden answers from the code as it is."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = answers(build_store(Path(folder) / "arena.db"), Path(folder))
    GOLDEN.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN} ({len(out)} answers)")


if __name__ == "__main__":
    main()
