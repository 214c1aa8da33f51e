"""The authors' HTTP API against a fake league: each refusal with its status and headers, the body cap, following a log."""

from __future__ import annotations

import gzip
from collections.abc import MutableMapping
from dataclasses import replace
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from polignac_arena.league.author_api import author_router
from polignac_arena.league.authoring import SubmissionState
from tests.aio import run_sync
from tests.league.fake_league import FakeLeague

ADA = {"Authorization": "Bearer tok-ada"}
GZIP = {"Content-Type": "application/gzip"}
UPLOAD = gzip.compress(b"pretend this is a tar")
CAP = 4096


@pytest.fixture
def league() -> FakeLeague:
    return FakeLeague()


@pytest.fixture
def app(league: FakeLeague) -> FastAPI:
    app = FastAPI()
    app.include_router(author_router(league, max_upload_bytes=CAP))
    return app


@pytest.fixture
def client(app: FastAPI) -> TestClient:
    return TestClient(app)


def upload(client: TestClient, bot: str = "ada-bot", body: bytes = UPLOAD, headers: dict[str, str] | None = None) -> Any:
    return client.post(f"/api/league/bots/{bot}/versions", content=body, headers={**ADA, **GZIP, **(headers or {})})


# -- tokens ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "challenge", "words"),
    [
        ({}, "Bearer", "this needs an API token"),
        ({"Authorization": "Basic YWRhOnB3"}, 'Bearer error="invalid_request"', "must be 'Bearer <token>'"),
        ({"Authorization": "Bearer "}, 'Bearer error="invalid_request"', "must be 'Bearer <token>'"),
        ({"Authorization": "Bearer tok-eve"}, 'Bearer error="invalid_token"', "not a valid API token"),
        ({"Authorization": "Bearer " + "x" * 600}, 'Bearer error="invalid_token"', "not a valid API token"),
    ],
    ids=["missing", "basic", "empty", "bad", "too-long"],
)
@pytest.mark.parametrize("route", ["GET /api/league/me", "GET /api/league/submissions/1", "POST /api/league/bots/ada-bot/versions"])
def test_a_missing_or_bad_token_is_refused_with_a_bearer_challenge(
    client: TestClient, league: FakeLeague, headers: dict[str, str], challenge: str, words: str, route: str
) -> None:
    method, path = route.split()
    answer = client.request(method, path, headers={**GZIP, **headers}, content=UPLOAD if method == "POST" else None)
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"] == challenge
    assert words in answer.json()["error"]
    assert not any(call.startswith(("admit", "submit")) for call in league.calls)
    if "x" * 600 in headers.get("Authorization", ""):
        assert league.calls == []  # refused without hashing it


def test_an_address_sending_bad_tokens_is_throttled(client: TestClient, league: FakeLeague) -> None:
    league.throttled.add("testclient")
    answer = client.get("/api/league/me", headers=ADA)
    assert answer.status_code == 429
    assert answer.headers["Retry-After"] == "13"
    assert answer.json() == {"error": "too many bad tokens from this address: retry in 12 s"}


# -- uploads ---------------------------------------------------------------------------------------------------------


def test_an_upload_is_queued(client: TestClient, league: FakeLeague) -> None:
    answer = upload(client)
    assert answer.status_code == 202, answer.text
    assert answer.headers["Location"] == "/api/league/submissions/1"
    body = answer.json()
    assert (body["id"], body["bot"], body["state"], body["final"], body["log"], body["log_next"]) == (
        "1",
        "ada-bot",
        "queued",
        False,
        [],
        0,
    )
    assert league.calls[-3:] == ["admit ada ada-bot", f"submit ada ada-bot {len(UPLOAD)} bytes", "close"]  # its place given back


def test_another_authors_bot_is_refused_before_the_body_is_read(client: TestClient, league: FakeLeague) -> None:
    answer = upload(client, "bob-bot")
    assert answer.status_code == 403
    assert answer.json() == {"error": "bot 'bob-bot' belongs to another author"}
    assert not any(call.startswith("submit") for call in league.calls)


def test_an_author_over_a_limit_is_told_when_to_retry(client: TestClient, league: FakeLeague) -> None:
    league.over_limit.add("ada")
    answer = upload(client)
    assert answer.status_code == 429
    assert answer.headers["Retry-After"] == "1801"
    assert "the limit" in answer.json()["error"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [(b"not gzip", 400, "not a gzip'd tar"), (b"too big unpacked", 413, "unpacks to more than 100 MB")],
)
def test_a_bad_archive_is_refused_with_the_leagues_status(client: TestClient, body: bytes, status: int, words: str) -> None:
    answer = upload(client, body=body)
    assert answer.status_code == status
    assert words in answer.json()["error"]


def test_an_upload_of_another_type_is_refused(client: TestClient, league: FakeLeague) -> None:
    answer = upload(client, headers={"Content-Type": "application/json"})
    assert answer.status_code == 415
    assert "'Content-Type: application/gzip'" in answer.json()["error"]


def test_a_bad_bot_name_is_refused(client: TestClient) -> None:
    answer = upload(client, "bad%20name")
    assert answer.status_code == 400
    rule = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    assert answer.json() == {"error": f"'bad name' is not a bot name: {rule}"}


def test_an_upload_declaring_more_than_the_cap_is_refused_unread(client: TestClient, league: FakeLeague) -> None:
    answer = upload(client, body=b"\x1f\x8b" + bytes(CAP))
    assert answer.status_code == 413
    assert answer.json() == {"error": f"the upload has {CAP + 2} bytes, more than the {CAP} allowed"}
    assert not any(call.startswith("admit") for call in league.calls)


def test_an_endless_upload_is_refused_once_past_the_cap(app: FastAPI, league: FakeLeague) -> None:
    """A client streaming 10 GB without a length: the server reads just past the cap, answers 413, and stops."""
    chunk = 1024
    pulled = 0
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": b"\x1f\x8b" + bytes(chunk - 2), "more_body": pulled < 10 * 1024 * 1024}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/league/bots/ada-bot/versions",
        "raw_path": b"/api/league/bots/ada-bot/versions",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"authorization", b"Bearer tok-ada"), (b"content-type", b"application/gzip"), (b"transfer-encoding", b"chunked")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 80),
    }
    run_sync(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert pulled <= CAP // chunk + 1
    assert b"more than the 4096 bytes allowed" in b"".join(m.get("body", b"") for m in sent)
    assert not any(call.startswith("submit") for call in league.calls)


# -- following a submission -------------------------------------------------------------------------------------------


def test_the_log_is_followed_from_where_the_client_left_off(client: TestClient, league: FakeLeague) -> None:
    sid = upload(client).json()["id"]
    script = [
        (SubmissionState.VALIDATING, ["reading bot.toml", "ok  bot.toml: ada-bot@1.0"]),
        (SubmissionState.VALIDATING, ["smoke match: classic"]),
        (SubmissionState.ACTIVE, ["ok  smoke match: 27 decisions", "accepted: ada-bot@1.0 is ready for the ladder"]),
    ]
    seen: list[str] = []
    since = 0
    for state, lines in script:
        old = league.statuses[sid]
        league.statuses[sid] = replace(old, state=state, log=(*old.log, *lines), label="ada-bot@1.0")
        body = client.get(f"/api/league/submissions/{sid}", params={"since": since}, headers=ADA).json()
        assert body["log_from"] == since
        seen += body["log"]
        since = body["log_next"]
    assert seen == [line for _, lines in script for line in lines]
    assert body["final"] and body["state"] == "active" and body["label"] == "ada-bot@1.0"
    past = client.get(f"/api/league/submissions/{sid}", params={"since": 99}, headers=ADA).json()
    assert (past["log"], past["log_from"], past["log_next"]) == ([], 5, 5)


def test_another_authors_submission_is_forbidden_and_an_unknown_one_not_found(client: TestClient) -> None:
    sid = upload(client).json()["id"]
    answer = client.get(f"/api/league/submissions/{sid}", headers={"Authorization": "Bearer tok-bob"})
    assert answer.status_code == 403 and answer.json() == {"error": f"submission {sid!r} is another author's"}
    for unknown in ("999", "x" * 65):
        answer = client.get(f"/api/league/submissions/{unknown}", headers=ADA)
        assert answer.status_code == 404 and answer.json() == {"error": f"no submission {unknown!r}"}
    assert client.get(f"/api/league/submissions/{sid}", params={"since": -1}, headers=ADA).status_code == 422


def test_me_lists_the_authors_bots_and_versions(client: TestClient) -> None:
    upload(client)
    upload(client, "ada-other")
    body = client.get("/api/league/me", headers=ADA).json()
    assert body["author"] == "ada" and body["max_upload_bytes"] == CAP
    assert [(b["name"], [v["submission"] for v in b["versions"]]) for b in body["bots"]] == [("ada-bot", ["1"]), ("ada-other", ["2"])]
    assert client.get("/api/league/me", headers={"Authorization": "Bearer tok-bob"}).json()["bots"] == []


def test_every_route_declares_its_response_model(app: FastAPI, league: FakeLeague) -> None:
    routes = [r for r in author_router(league).routes if isinstance(r, APIRoute)]
    assert {r.path for r in routes} == {
        "/api/league/bots/{name}/versions",
        "/api/league/bots/{name}/retire",
        "/api/league/submissions/{submission_id}",
        "/api/league/me",
    }
    assert all(route.response_model is not None for route in routes)
    assert "/api/league/me" in app.openapi()["paths"]


def test_bot_text_in_answers_is_made_plain(client: TestClient, league: FakeLeague) -> None:
    sid = upload(client).json()["id"]
    league.statuses[sid] = replace(league.statuses[sid], log=("\x1b]52;c;ZXZpbA==\x07build said \x1b[31mhi",))
    assert client.get(f"/api/league/submissions/{sid}", headers=ADA).json()["log"] == ["build said hi"]


def test_an_author_retires_their_bot_and_only_theirs(client: TestClient, league: FakeLeague) -> None:
    league.scripts["ada-bot"] = [(SubmissionState.ACTIVE, ("accepted",), "accepted")]
    sid = upload(client).json()["id"]
    client.get(f"/api/league/submissions/{sid}", headers=ADA)  # one step of its validation: accepted
    answer = client.post("/api/league/bots/ada-bot/retire", headers=ADA)
    assert answer.status_code == 200, answer.text
    assert [v["state"] for v in answer.json()["versions"]] == ["retired"]
    assert client.post("/api/league/bots/ada-bot/retire", headers=ADA).status_code == 409  # nothing active any more
    refused = client.post("/api/league/bots/bob-bot/retire", headers=ADA)
    assert refused.status_code == 403 and "another author" in refused.json()["error"]
    assert client.post("/api/league/bots/nobody/retire", headers=ADA).status_code == 404
    assert client.post("/api/league/bots/a%20b/retire", headers=ADA).status_code == 400
    assert client.post("/api/league/bots/ada-bot/retire").status_code == 401
