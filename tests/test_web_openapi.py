"""The JSON API's OpenAPI schemas: the checked-in ones (docs/openapi/) are what the code draws, and every route in them
answers, on a populated store, what they say: a schema-driven client (openapi-core) calls each route with each
documented query parameter, and with bad values and unknown names, and validates every answer, errors included."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from pydantic import BaseModel

from polignac_arena.league.config import parse_league_config
from polignac_arena.league.serve import League, league_app
from polignac_arena.store import Store
from polignac_arena.web import create_app, models
from polignac_arena.web.app import tidy_openapi
from tests.test_web_api import build_store

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "python scripts/gen_openapi.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_openapi", ROOT / "scripts" / "gen_openapi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def checked_in(name: str) -> dict[str, Any]:
    return dict(json.loads((GEN.OUT / name).read_text(encoding="utf-8")))


def differences(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Which paths and component schemas differ, for the failure message."""

    def paths(spec: dict[str, Any]) -> dict[str, Any]:
        return dict(spec.get("paths", {}))

    def schemas(spec: dict[str, Any]) -> dict[str, Any]:
        return dict(spec.get("components", {}).get("schemas", {}))

    out = []
    for section, get in (("path", paths), ("schema", schemas)):
        old, new = get(want), get(got)
        out += [f"{section} {key}: " + ("added" if key not in old else "removed" if key not in new else "changed")
                for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]  # fmt: skip
    return out or ["the top-level fields (info, openapi version)"]


# -- the checked-in schemas are current -----------------------------------------------------------


@pytest.mark.parametrize("name", ["web.json", "league.json"])
def test_the_checked_in_schema_is_what_the_code_draws(name: str) -> None:
    draw: Callable[[], dict[str, Any]] = GEN.schemas()[name]
    drawn = draw()
    kept = checked_in(name)
    assert kept == drawn, (
        f"docs/openapi/{name} differs from the API the code serves ({'; '.join(differences(kept, drawn))}): "
        f"if the change is meant, run `{REGENERATE}` and commit the file"
    )
    assert GEN.render(drawn) == (GEN.OUT / name).read_text(encoding="utf-8"), f"docs/openapi/{name} is not formatted: run `{REGENERATE}`"


def test_the_league_schema_is_the_web_schema_plus_the_league_routes() -> None:
    web, league = checked_in("web.json"), checked_in("league.json")
    assert {k: v for k, v in league["paths"].items() if not k.startswith("/api/league/")} == web["paths"]
    shared = web["components"]["schemas"]
    assert {k: v for k, v in league["components"]["schemas"].items() if k in shared} == shared
    assert {"/api/league/status", "/api/league/me", "/api/league/submissions/{submission_id}", "/api/league/bots/{name}/versions"} <= set(
        league["paths"]
    )


def test_body_classes_end_in_out_and_are_published_without_it() -> None:
    ref = {"$ref": "#/components/schemas/RowOut"}
    schema: dict[str, Any] = {
        "paths": {"/x": {"get": {"operationId": "x", "responses": {"200": {"content": {"application/json": {"schema": ref}}}}}}},
        "components": {
            "schemas": {
                "RowOut": {"title": "Row", "properties": {"cells": {"items": {"$ref": "#/components/schemas/CellOut"}}}},
                "CellOut": {"title": "Cell"},
                "ErrorOut": {"title": "ErrorOut"},
            }
        },
    }
    tidy: Any = tidy_openapi(schema)
    assert list(tidy["components"]["schemas"]) == ["Cell", "ErrorOut", "Row"]
    assert tidy["paths"]["/x"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Row"}
    assert tidy["components"]["schemas"]["Row"]["properties"]["cells"]["items"] == {"$ref": "#/components/schemas/Cell"}
    taken: dict[str, Any] = {"paths": {}, "components": {"schemas": {"RowOut": {"title": "Row"}, "Row": {"title": "Row"}}}}
    with pytest.raises(ValueError, match="two schema components would be named \\['Row'\\]"):
        tidy_openapi(taken)


def test_the_web_models_share_no_name_with_another_layer() -> None:
    """One name per type: an API body is not mistaken for the store's, the referee's or replay.py's type of the same name."""
    bodies = {name for name, value in vars(models).items() if isinstance(value, type) and issubclass(value, BaseModel)} - {"BaseModel"}
    assert bodies and all(name.endswith("Out") for name in bodies), sorted(bodies)
    elsewhere = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / "server").rglob("*.py")
        if path.parent.name != "web" and "_proto" not in path.parts
        for name in re.findall(r"^class (\w+)\b", path.read_text(encoding="utf-8"), re.M)
        if name in bodies
    }
    assert not elsewhere, sorted(elsewhere)


def test_every_operation_declares_its_answers_and_no_422() -> None:
    for name in ("web.json", "league.json"):
        spec = checked_in(name)
        ids = []
        for path, item in spec["paths"].items():
            for method, operation in item.items():
                ids.append(operation["operationId"])
                answers = operation["responses"]
                assert "422" not in answers, (name, path)  # a bad parameter is a 400 {"error": ...}
                ok = next(code for code in answers if code.startswith("2"))
                assert "schema" in answers[ok]["content"]["application/json"], (name, path, method)
                for code, answer in answers.items():
                    if code.startswith("4"):
                        assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorOut"}, (path, code)
                if operation.get("parameters"):
                    has_query = any(p["in"] == "query" for p in operation["parameters"])
                    assert "400" in answers or not has_query, (name, path, "a query parameter can be bad: declare the 400")
        assert len(ids) == len(set(ids)), ids
        assert "ValidationError" not in spec["components"]["schemas"] and "HTTPValidationError" not in spec["components"]["schemas"]


# -- a schema-driven client -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("openapi") / "arena.db")


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db)) as test_client:
        yield test_client


class Checker:
    """Calls routes through a TestClient and validates each answer against the schema with openapi-core."""

    def __init__(self, client: TestClient, spec: dict[str, Any], *, check_spec: bool = True) -> None:
        self.client = client
        # Checking that the document is valid OpenAPI takes seconds: once, for league.json (web.json is a part of it).
        self.openapi = OpenAPI.from_dict(spec) if check_spec else OpenAPI.from_dict(spec, config=Config(spec_validator_cls=None))
        self.statuses: dict[tuple[str, str], set[int]] = {}

    def call(self, method: str, pattern: str, path_args: dict[str, str], query: dict[str, str], **kwargs: Any) -> Response:
        path = pattern.format(**path_args)
        url = path + ("?" + urlencode(query) if query else "")
        answer: Response = self.client.request(method.upper(), url, **kwargs)
        headers = dict(kwargs.get("headers") or {})
        request = MockRequest(
            "http://testserver", method, path, path_pattern=pattern, args=query, view_args=path_args, headers=headers,
            data=kwargs.get("content"), content_type=headers.get("Content-Type", "application/json"),
        )  # fmt: skip
        reply = MockResponse(
            answer.content, status_code=answer.status_code, headers=dict(answer.headers),
            content_type=answer.headers.get("content-type", "").split(";")[0],
        )  # fmt: skip
        try:
            self.openapi.validate_response(request, reply)
        except Exception as exc:  # openapi-core's errors nest the reason: show it with the call
            cause = exc.__cause__ or exc
            details = getattr(cause, "schema_errors", None) or [cause]
            raise AssertionError(f"{method.upper()} {url} -> {answer.status_code} does not match the schema: {details}") from exc
        self.statuses.setdefault((method, pattern), set()).add(answer.status_code)
        return answer


def sample_values(db: Path, client: TestClient) -> dict[str, list[str]]:
    """Values for each parameter the schema has, from the store: by name for a query, by ``collection/{name}`` in a path."""
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        match_id = store.list_results(small.id)[0].match_id
    return {
        "tournament": ["small", "faulty"],
        "bot": ["heuristic", "random@builtin"],
        "faults": ["true", "false"],
        "page": ["1", "2"],
        "per_page": ["3"],
        "limit": ["2"],
        "offset": ["1", "100"],
        "top": ["2"],
        "before": [str(client.get("/api/matches?per_page=3").json()["next"])],
        "matches/{match_id}": [match_id, "faulty-1"],
        "tournaments/{name}": ["small", "faulty"],
        "bots/{name}": ["random"],
    }


def path_key(pattern: str, name: str) -> str:
    """``tournaments/{name}`` for the ``name`` of ``/api/tournaments/{name}/leaderboard``: the collection it names a member of."""
    parts = pattern.split("/")
    return f"{parts[parts.index('{' + name + '}') - 1]}/{{{name}}}"


BAD_QUERY = {
    "sort": "elo", "page": "0", "per_page": "501", "faults": "maybe", "tournament": "", "bot": "", "since": "-1", "limit": "0",
    "offset": "-1", "top": "0", "before": "x",
}  # fmt: skip


def enum_values(spec: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    target = schema
    if "$ref" in target:
        target = spec["components"]["schemas"][target["$ref"].rsplit("/", 1)[1]]
    return [str(v) for v in target.get("enum", [])]


def test_every_route_of_the_schema_answers_as_it_says(client: TestClient, db: Path) -> None:
    spec = checked_in("web.json")
    checker = Checker(client, spec, check_spec=False)
    samples = sample_values(db, client)
    for pattern, item in spec["paths"].items():
        for method, operation in item.items():
            params = operation.get("parameters", [])
            path_names = [p["name"] for p in params if p["in"] == "path"]
            queries = [p for p in params if p["in"] == "query"]
            keys = [path_key(pattern, name) for name in path_names]
            for key in keys:
                assert key in samples, f"no sample value for {key} of {pattern}: add one to sample_values"
            first = {name: samples[key][0] for name, key in zip(path_names, keys, strict=True)}
            for values in zip(*(samples[key] for key in keys), strict=False) if keys else [()]:
                args = dict(zip(path_names, values, strict=True))
                assert checker.call(method, pattern, args, {}).status_code == 200, (pattern, args)
            for query in queries:
                choices = enum_values(spec, query["schema"]) or samples.get(query["name"], [])
                assert choices, f"no sample value for the query parameter {query['name']!r} of {pattern}: add one to sample_values"
                for value in choices:
                    checker.call(method, pattern, first, {query["name"]: value})
                if query["name"] in BAD_QUERY:
                    assert checker.call(method, pattern, first, {query["name"]: BAD_QUERY[query["name"]]}).status_code == 400
            if path_names:
                unknown = {name: "no-such-thing" for name in path_names}
                assert checker.call(method, pattern, unknown, {}).status_code == 404, pattern
            if "tournament" in {q["name"] for q in queries}:
                assert checker.call(method, pattern, first, {"tournament": "no-such-thing"}).status_code == 404
    called = {key for key in checker.statuses}
    assert called == {(m, p) for p, item in spec["paths"].items() for m in item}
    for (method, pattern), seen in checker.statuses.items():
        declared = {int(code) for code in spec["paths"][pattern][method]["responses"]}
        assert seen <= declared, (method, pattern, seen, declared)


def test_the_confidence_fields_are_in_the_api(client: TestClient) -> None:
    rows = client.get("/api/tournaments/small/leaderboard").json()
    assert rows[0]["p_above_stronger"] is None and rows[0]["tied"] is False
    assert all(0 < r["p_above_stronger"] < 1 for r in rows[1:])
    assert all(r["average_place_meaningful"] for r in rows)  # a round robin
    assert not any(r["average_place_meaningful"] for r in client.get("/api/leaderboard").json())  # all-time


# -- the league's own routes --------------------------------------------------------------------------


@pytest.fixture
def league(tmp_path: Path) -> Iterator[tuple[League, dict[str, str]]]:
    config = parse_league_config('name = "schema"\ntable_size = 3\n', tmp_path / "league.toml")
    league = League(config)
    tokens = {name: league.store.add_author(name)[1] for name in ("ada", "bob")}
    accepted, _ = league.store.add_upload("ada", "alpha", "a" * 64, league.limits)
    league.store.append_log(accepted.id, "building alpha\nsmoke match: ok\n")
    league.store.finish_validation(accepted.id, True, "", league.tournament_id, league.prior)
    league.store.claim_remote("bob", "far", "2.0", league.limits, league.prior, league.tournament_id)
    yield league, tokens
    league.store.close()


def test_the_league_routes_answer_as_the_schema_says(league: tuple[League, dict[str, str]]) -> None:
    instance, tokens = league
    spec = checked_in("league.json")
    submission = str(next(v.id for v in instance.store.versions("alpha")))
    ada = {"Authorization": f"Bearer {tokens['ada']}"}
    bob = {"Authorization": f"Bearer {tokens['bob']}"}
    gzip = {"Content-Type": "application/gzip"}
    text = {"Content-Type": "text/plain"}
    with TestClient(league_app(instance)) as client:
        checker = Checker(client, spec)
        calls: list[tuple[str, str, dict[str, str], dict[str, str], dict[str, Any], int]] = [
            ("get", "/api/league/status", {}, {}, {}, 200),
            ("get", "/api/league/me", {}, {}, {"headers": ada}, 200),
            ("get", "/api/league/me", {}, {}, {}, 401),
            ("get", "/api/league/submissions/{submission_id}", {"submission_id": submission}, {}, {"headers": ada}, 200),
            ("get", "/api/league/submissions/{submission_id}", {"submission_id": submission}, {"since": "1"}, {"headers": ada}, 200),
            ("get", "/api/league/submissions/{submission_id}", {"submission_id": submission}, {"since": "-1"}, {"headers": ada}, 400),
            ("get", "/api/league/submissions/{submission_id}", {"submission_id": submission}, {}, {"headers": bob}, 403),
            ("get", "/api/league/submissions/{submission_id}", {"submission_id": "9999"}, {}, {"headers": ada}, 404),
            ("post", "/api/league/bots/{name}/versions", {"name": "alpha"}, {}, {"headers": {**ada, **gzip}, "content": b"not gzip"}, 400),
            ("post", "/api/league/bots/{name}/versions", {"name": "far"}, {}, {"headers": {**ada, **gzip}, "content": b"x"}, 403),
            ("post", "/api/league/bots/{name}/versions", {"name": "alpha"}, {}, {"headers": {**ada, **text}, "content": b"x"}, 415),
            ("post", "/api/league/bots/{name}/retire", {"name": "far"}, {}, {"headers": ada}, 403),
            ("post", "/api/league/bots/{name}/retire", {"name": "nobody"}, {}, {"headers": ada}, 404),
            ("post", "/api/league/bots/{name}/retire", {"name": "alpha"}, {}, {"headers": ada}, 200),
            ("post", "/api/league/bots/{name}/retire", {"name": "alpha"}, {}, {"headers": ada}, 409),
            ("post", "/api/league/bots/{name}/retire", {"name": "far"}, {}, {"headers": bob}, 200),
            ("get", "/api/league/reruns", {}, {}, {"headers": ada}, 200),
            ("get", "/api/league/reruns/{run_id}", {"run_id": "9999"}, {}, {"headers": ada}, 404),
            ("get", "/api/league/reruns/{run_id}", {"run_id": "x"}, {}, {"headers": ada}, 400),
            ("post", "/api/league/matches/{match_id}/reruns", {"match_id": "nope"}, {"version": "1"}, {"headers": ada}, 404),
            ("post", "/api/league/matches/{match_id}/reruns", {"match_id": "nope"}, {"hand": "0", "version": "1"}, {"headers": ada}, 400),
            ("post", "/api/league/matches/{match_id}/reruns", {"match_id": "nope"}, {"version": "1"}, {}, 401),
        ]  # fmt: skip
        for method, pattern, args, query, kwargs, status in calls:
            assert checker.call(method, pattern, args, query, **kwargs).status_code == status, (method, pattern, query, status)
    league_routes = {(m, p) for p, item in spec["paths"].items() if p.startswith("/api/league/") for m in item}
    assert set(checker.statuses) == league_routes


def test_polignac_web_prints_the_schema(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from polignac_arena.cli import app as cli_app

    done = CliRunner().invoke(cli_app, ["web", "--openapi", "--db", str(tmp_path / "none.db")])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output) == checked_in("web.json") and not (tmp_path / "none.db").exists()
