"""Authors' test matches: a league match's deals played again with another version, unrated, shown to its author only."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from polignac.events import HandDealt
from polignac_arena.league.config import load_league_config
from polignac_arena.league.limits import LeagueLimits
from polignac_arena.league.serve import League, league_app
from polignac_arena.league.store import LimitReached
from polignac_arena.league.test_run_store import KEPT_PER_AUTHOR, TestRunState, TestRunStore
from polignac_arena.league.test_runs import TestRunRefused
from polignac_arena.ratings import rate_match
from polignac_arena.replay import replay_lines
from polignac_arena.runner import run_local_match
from polignac_arena.seats import launcher_for
from polignac_arena.tournament.runner import store_result
from tests.aio import run_sync
from tests.league.league_process import add_author, bot_folder, seed_active, write_league

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
MATCH = "main-000000"


class Arena:
    """A league store holding one played match of ada-bot@1, bob-bot@1 and carol-bot@1; ada-bot also has a version 2."""

    def __init__(self, folder: Path, limits: str) -> None:
        self.config = write_league(folder / "league", limits=limits)
        self.tokens = {name: add_author(self.config, name) for name in ("ada", "bob", "carol", "dave")}
        bots = folder / "bots"
        for author in ("ada", "bob", "carol"):
            seed_active(self.config, author, [bot_folder(bots, f"{author}-bot")])
        second = folder / "bots2"
        second.mkdir()
        shutil.copytree(bots / "ada-bot", second / "ada-bot")
        (second / "ada-bot" / "changed.txt").write_text("version 2\n")
        seed_active(self.config, "ada", [second / "ada-bot"], hours_ago=1.5)
        self.league = League(load_league_config(self.config))
        run_sync(self._play_original())
        self.app = league_app(self.league)

    async def _play_original(self) -> None:
        league, config = self.league, self.league.config
        versions = {v.label: v for v in league.store.versions()}
        labels = ["ada-bot@1", "bob-bot@1", "carol-bot@1"]
        bots = [league.submission_of(versions[label]) for label in labels]
        assert all(b is not None for b in bots)
        seed = 4242
        result, _ = await run_local_match(
            [b for b in bots if b is not None],
            config.rules,
            seed,
            config.time,
            launcher=launcher_for(config.seat_kind),
            limits=config.limits,
            trusted=config.trusted,
            game=config.game,
            match_id=MATCH,
        )
        league.store.schedule(league.tournament_id, labels, seed, index=0)

        def rate(current: Any, seats: Any, places: Any) -> Any:
            before = [current.get(label) or league.env.initial for label in seats]
            return dict(zip(seats, rate_match(league.env, before, places), strict=True))

        store_result(league.store.arena, league.tournament_id, 0, result, rate, 1.0, final=True)
        self.original = result.record

    def client(self, author: str | None = None) -> TestClient:
        headers = {} if author is None else {"Authorization": f"Bearer {self.tokens[author]}"}
        return TestClient(self.app, headers=headers, follow_redirects=False)

    def play_queued(self) -> int:
        """Play every queued test match as the league's worker does; how many."""

        async def play() -> int:
            played = 0
            while (run := self.league.test_runs.runs.take_next()) is not None:
                await self.league.test_runs.play(run)
                played += 1
            return played

        return run_sync(play())


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    made = Arena(tmp_path_factory.mktemp("test-runs"), "reruns_per_hour = 100\nreruns_waiting = 100")
    try:
        yield made
    finally:
        made.league.store.close()


def _deals(lines: list[dict[str, Any]]) -> dict[int, tuple[Any, ...]]:
    return {e.hand_number: tuple(e) for e in replay_lines(lines).match.events if isinstance(e, HandDealt)}


def test_a_test_match_plays_the_same_deals_with_the_new_version_and_is_never_rated(arena: Arena) -> None:
    results_before = len(arena.league.store.arena.list_results(arena.league.tournament_id))
    answer = arena.client("ada").post(f"/api/league/matches/{MATCH}/reruns", params={"version": "2", "hand": 2})
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert body["state"] == "queued" and body["version"] == "ada-bot@2" and body["hand"] == 2
    assert body["seats"] == ["ada-bot@2", "bob-bot@1", "carol-bot@1"] and body["url"] == f"/me/reruns/{body['id']}"
    assert answer.headers["location"] == f"/api/league/reruns/{body['id']}"
    arena.play_queued()
    done = arena.client("ada").get(f"/api/league/reruns/{body['id']}", params={"record": "true"}).json()
    assert done["state"] == "finished", done
    assert done["status"] == "finished" and len(done["places"]) == 3
    record = done["record"]
    header = record[0]
    assert header["rerun_of"] == MATCH and header["first_hand"] == 2 and header["seed"] == arena.original[0]["seed"]
    assert header["time_control"] == arena.original[0]["time_control"]
    original, rerun = _deals(arena.original), _deals(record)
    assert min(rerun) == 2
    assert all(rerun[k] == original[k] for k in rerun if k in original and not rerun[k][4]), "the same deals from hand 2"
    assert 2 in original and rerun[2] == original[2]
    # Unrated and unlisted: the league's results and the public pages know nothing of it.
    assert len(arena.league.store.arena.list_results(arena.league.tournament_id)) == results_before
    public = arena.client()
    assert f"test-{body['id']}" not in public.get("/api/matches").text
    board = {row["bot"]: row for row in public.get("/api/leaderboard").json()}
    assert board["ada-bot@2"]["matches"] == 0 and board["ada-bot@2"]["sigma"] == board["ada-bot@2"]["sigma"]
    assert board["bob-bot@1"]["matches"] == 1
    assert public.get(f"/api/matches/test-{body['id']}").status_code == 404


def test_the_author_lists_their_test_matches_and_no_one_else_sees_them(arena: Arena) -> None:
    run = arena.league.test_runs.request("ada", MATCH, "ada-bot@1")
    mine = arena.client("ada").get("/api/league/reruns").json()
    assert run.id in [r["id"] for r in mine]
    assert all(r["id"] != run.id for r in arena.client("bob").get("/api/league/reruns").json())
    other = arena.client("bob").get(f"/api/league/reruns/{run.id}")
    assert other.status_code == 403 and "another author's" in other.json()["error"]
    anonymous = arena.client().get(f"/api/league/reruns/{run.id}")
    assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Bearer")
    assert arena.client().post(f"/api/league/matches/{MATCH}/reruns", params={"version": "2"}).status_code == 401
    assert arena.client("ada").get("/api/league/reruns/999999").status_code == 404


@pytest.mark.parametrize(
    ("author", "match", "version", "hand", "status", "words"),
    [
        ("dave", MATCH, "1", None, 403, "none of your bots played"),
        ("bob", MATCH, "ada-bot@2", None, 403, "another author's version"),
        ("ada", "nosuchmatch", "2", None, 404, "no match 'nosuchmatch'"),
        ("ada", MATCH, "9", None, 404, "no version 'ada-bot@9'"),
        ("ada", MATCH, "bob-bot@1", None, 403, "another author's"),
        ("ada", MATCH, "2", 999, 400, "has no hand 999"),
        ("ada", MATCH, " ", None, 400, "not a version"),
    ],
)
def test_bad_requests_are_refused_with_a_reason(
    arena: Arena, author: str, match: str, version: str, hand: int | None, status: int, words: str
) -> None:
    params: dict[str, Any] = {"version": version} | ({} if hand is None else {"hand": hand})
    answer = arena.client(author).post(f"/api/league/matches/{match}/reruns", params=params)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"]


@pytest.mark.parametrize("params", [{"version": "2", "hand": "0"}, {"version": "2", "hand": "x"}, {"version": "x" * 201}, {}])
def test_malformed_parameters_are_400s(arena: Arena, params: dict[str, str]) -> None:
    answer = arena.client("ada").post(f"/api/league/matches/{MATCH}/reruns", params=params)
    assert answer.status_code in (400, 422) and "error" in answer.json()


def test_a_version_that_did_not_pass_validation_is_refused(arena: Arena) -> None:
    version = next(v for v in arena.league.store.versions() if v.label == "ada-bot@1")
    with arena.league.store.arena.write() as conn:
        conn.execute("UPDATE league_versions SET state = 'refused' WHERE id = ?", (version.id,))
    try:
        with pytest.raises(TestRunRefused, match="ada-bot@1 is refused") as info:
            arena.league.test_runs.request("ada", MATCH, "1")
        assert info.value.http_status == 409
    finally:
        with arena.league.store.arena.write() as conn:
            conn.execute("UPDATE league_versions SET state = 'retired' WHERE id = ?", (version.id,))


def _csrf(text: str) -> str | None:
    found = re.search(r'id="rerun-form".*?name="csrf" value="([^"]+)"', text, re.DOTALL)
    return None if found is None else found.group(1)


def _signed_in(arena: Arena, author: str) -> TestClient:
    client = TestClient(arena.app, follow_redirects=False)
    page = client.get("/signin")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    answer = client.post("/signin", data={"csrf": token.group(1), "token": arena.tokens[author]})
    assert answer.status_code == 303, answer.text
    return client


def test_the_replay_page_offers_the_author_a_rerun_form_and_shows_where_its_result_appears(arena: Arena) -> None:
    ada = _signed_in(arena, "ada")
    page = ada.get(f"/matches/{MATCH}")
    assert page.status_code == 200 and "no-store" in page.headers["cache-control"]
    csrf = _csrf(page.text)
    assert csrf is not None and 'value="ada-bot@2"' in page.text and "your page" in page.text
    assert "bob-bot@1</option>" not in page.text  # only the author's own versions are offered
    asked = ada.post(f"/matches/{MATCH}/rerun", data={"csrf": csrf, "version": "ada-bot@2", "hand": "1"}, headers=FORM)
    assert asked.status_code == 303 and asked.headers["location"].startswith("/me/reruns/")
    where = asked.headers["location"]
    waiting = ada.get(where)
    assert waiting.status_code == 200 and "queued" in waiting.text and "ada-bot@2" in waiting.text
    assert 'id="test-runs"' in ada.get("/me").text and where in ada.get("/me").text
    arena.play_queued()
    played = ada.get(where)
    assert played.status_code == 200 and 'id="replay-data"' in played.text and "Test match" in played.text
    # Nobody else sees it, nor the form.
    bob = _signed_in(arena, "bob")
    assert bob.get(where).status_code == 404
    assert where not in bob.get("/me").text
    assert _csrf(bob.get(f"/matches/{MATCH}").text) is not None  # bob's bot played too: his own versions
    assert 'value="ada-bot@2"' not in bob.get(f"/matches/{MATCH}").text
    dave = _signed_in(arena, "dave")
    assert _csrf(dave.get(f"/matches/{MATCH}").text) is None
    anonymous = TestClient(arena.app, follow_redirects=False)
    assert _csrf(anonymous.get(f"/matches/{MATCH}").text) is None
    assert anonymous.get(where).status_code == 303
    refused = anonymous.post(f"/matches/{MATCH}/rerun", data={"version": "ada-bot@2"}, headers=FORM)
    assert refused.status_code == 401


@pytest.mark.parametrize(
    ("fields", "headers", "status"),
    [
        ({"version": "ada-bot@2"}, FORM, 403),
        ({"csrf": "wrong", "version": "ada-bot@2"}, FORM, 403),
        ({"csrf": None, "version": "ada-bot@2"}, {**FORM, "Origin": "https://evil.example"}, 403),
        ({"csrf": None, "version": "ada-bot@2", "hand": "-1"}, FORM, 400),
        ({"csrf": None, "version": "bob-bot@1"}, FORM, 403),
    ],
)
def test_the_form_needs_its_csrf_token_and_good_values(arena: Arena, fields: dict[str, Any], headers: dict[str, str], status: int) -> None:
    ada = _signed_in(arena, "ada")
    csrf = _csrf(ada.get(f"/matches/{MATCH}").text)
    data = {key: csrf if value is None else value for key, value in fields.items()}
    before = len(arena.league.test_runs.of_author("ada"))
    answer = ada.post(f"/matches/{MATCH}/rerun", data=data, headers=headers)
    assert answer.status_code == status, answer.text
    assert len(arena.league.test_runs.of_author("ada")) == before


def test_the_hourly_limit_and_the_waiting_limit(tmp_path: Path) -> None:
    arena = Arena(tmp_path, "reruns_per_hour = 2\nreruns_waiting = 5")
    try:
        client = arena.client("ada")
        for _ in range(2):
            assert client.post(f"/api/league/matches/{MATCH}/reruns", params={"version": "2"}).status_code == 202
        third = client.post(f"/api/league/matches/{MATCH}/reruns", params={"version": "2"})
        assert third.status_code == 429 and "2 test match(es) per hour" in third.json()["error"]
        assert 3000 < int(third.headers["retry-after"]) <= 3600
        # Another author is not held to ada's limit.
        assert arena.client("bob").post(f"/api/league/matches/{MATCH}/reruns", params={"version": "1"}).status_code == 202
        runs = arena.league.test_runs.of_author("ada")
        assert len(runs) == 2 and all(r.state is TestRunState.QUEUED for r in runs)
    finally:
        arena.league.store.close()
    waiting = Arena(tmp_path / "w", "reruns_per_hour = 50\nreruns_waiting = 1")
    try:
        client = waiting.client("ada")
        assert client.post(f"/api/league/matches/{MATCH}/reruns", params={"version": "2"}).status_code == 202
        second = client.post(f"/api/league/matches/{MATCH}/reruns", params={"version": "2"})
        assert second.status_code == 429 and "waiting or being played" in second.json()["error"] and second.headers["retry-after"] == "30"
        waiting.play_queued()
        assert client.post(f"/api/league/matches/{MATCH}/reruns", params={"version": "2"}).status_code == 202
    finally:
        waiting.league.store.close()


def test_the_league_wide_queue_is_capped_and_old_test_matches_are_dropped(arena: Arena) -> None:
    runs = TestRunStore(arena.league.store)
    version = next(v for v in arena.league.store.versions() if v.label == "carol-bot@1")
    seats = ["carol-bot@1", "bob-bot@1", "ada-bot@2"]
    cap = LeagueLimits(reruns_per_hour=1000, reruns_waiting=1000, reruns_queued=runs.waiting() + 1)
    runs.add("carol", MATCH, 1, version.id, seats, cap)
    with pytest.raises(LimitReached, match="test matches waiting, the most it takes") as info:
        runs.add("dave", MATCH, 1, version.id, seats, cap)
    assert info.value.retry_after_s == 30
    arena.play_queued()
    roomy = LeagueLimits(reruns_per_hour=1000, reruns_waiting=1000, reruns_queued=1000)
    made = []
    for _ in range(KEPT_PER_AUTHOR + 5):
        run = runs.add("carol", MATCH, 1, version.id, seats, roomy)
        made.append(run.id)
        runs.finish(run.id, "finished", [1, 2, 3], [0, 1, 2], [{"type": "header"}])
    kept = runs.of_author("carol", 1000)
    assert len(kept) == KEPT_PER_AUTHOR and made[0] not in {r.id for r in kept} and made[-1] in {r.id for r in kept}
    assert runs.record(made[0]) is None
