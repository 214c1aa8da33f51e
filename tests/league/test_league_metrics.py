"""The league's ``/metrics``: Prometheus text that counts what the ladder plays, for the operator's eyes only."""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from polignac_arena.league.config import parse_league_config
from polignac_arena.league.metrics import LeagueGauges, LeagueMetrics
from polignac_arena.league.serve import League, league_app
from polignac_arena.log_format import JsonFormatter
from polignac_arena.record_lines import ActionLine
from polignac_arena.statuses import MatchStatus
from tests.league.league_process import LeagueProcess, add_author, bot_folder, seed_active, write_league

AUTHOR = "ada"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus page: (name, sorted labels) -> value."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(page: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return page.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.slow
def test_metrics_scraped_while_the_ladder_plays_count_its_matches_decisions_and_bots(tmp_path: Path) -> None:
    path = write_league(tmp_path / "league", "parallel = 2")
    add_author(path, AUTHOR)
    seed_active(path, AUTHOR, [bot_folder(tmp_path / "bots", name) for name in ("b1", "b2", "b3")])
    with LeagueProcess.start(path) as server, httpx.Client(timeout=10) as client:

        def scrape() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
            answer = client.get(f"{server.web}/metrics")
            assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
            return samples(answer.text)

        first = scrape()
        assert value(first, "polignac_bots_active") == 3
        server.wait_for("two finished matches", lambda: value(scrape(), "polignac_matches_ended_total", status="finished") >= 2 or None)
        page = scrape()
        finished = value(page, "polignac_matches_ended_total", status="finished")
        assert value(page, "polignac_matches_started_total") >= finished >= 2
        decisions = value(page, "polignac_decisions_total")
        assert decisions >= finished * 10  # a match of random bots is dozens of decisions
        assert value(page, "polignac_decision_seconds_count") == decisions
        assert 0 < value(page, "polignac_decision_seconds_sum") < decisions * 5
        assert sum(v for (name, _), v in page.items() if name == "polignac_node_matches_total") >= finished
        for gauge in ("polignac_bots_online", "polignac_uploads_in_flight", "polignac_validation_backlog", "polignac_reruns_waiting"):
            assert (gauge, ()) in page
        assert 0 <= value(page, "polignac_matches_live") <= 2
        assert server.terminate() == 0, server.stderr()


def test_the_json_log_format_writes_one_object_a_line_on_stderr(tmp_path: Path) -> None:
    path = write_league(tmp_path / "league")
    with LeagueProcess.start(path, "--log-format", "json") as server:
        assert server.terminate() == 0, server.stderr()
    lines = server.stderr().splitlines()
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    draining = [e for e in entries if e["message"].startswith("draining:")]
    assert draining and draining[0]["level"] == "warning" and draining[0]["time"].endswith("+00:00")
    assert set(draining[0]) == {"time", "level", "logger", "message"}


def test_a_json_log_line_quoting_bot_text_is_plain_and_ascii() -> None:
    record = logging.LogRecord("league", logging.ERROR, __file__, 1, "bot said %s", ("\x1b]52;c;ZXZpbA==\x07hi\u202e\n",), None)
    line = JsonFormatter().format(record)
    assert "\n" not in line and line.isascii()
    assert json.loads(line)["message"] == "bot said hi\n"


def test_metrics_are_not_shown_to_a_client_off_loopback() -> None:
    with tempfile.TemporaryDirectory() as folder:
        league = League(parse_league_config('name = "main"\n', Path(folder) / "league.toml"))
        try:
            league.metrics.watch(lambda: LeagueGauges(0, 0, 0, 0, 0, 0))
            app = league_app(league)
            assert TestClient(app, client=("203.0.113.7", 5000)).get("/metrics").status_code == 404
            assert TestClient(app, client=("::1", 5000)).get("/metrics").status_code == 200
            answer = TestClient(app, client=("127.0.0.1", 5000)).get("/metrics")
            assert answer.status_code == 200 and "polignac_matches_started_total 0.0" in answer.text
            assert "/metrics" not in TestClient(app).get("/openapi.json").text  # not part of the public API
        finally:
            league.store.close()


def test_a_match_counts_its_seats_decisions_and_faults_and_no_label_names_a_bot() -> None:
    metrics = LeagueMetrics()
    metrics.watch(
        lambda: LeagueGauges(bots_online=4, bots_active=7, uploads_in_flight=1, validation_backlog=2, matches_live=3, reruns_waiting=0)
    )
    lines = [
        ActionLine(seat=0, hand=1, action="pass", ms=2.0),
        ActionLine(seat=1, hand=1, action="pass", ms=120.0),
        ActionLine(seat=None, hand=1, action="pass"),  # no seat's decision (a penalty or forfeit line): not counted
    ]
    metrics.match_started()
    metrics.match_ended(MatchStatus.FINISHED, "node-a", lines, [{"timeout": 2}, {}, {"illegal": 1, "timeout": 0}])
    metrics.match_started()
    metrics.match_withdrawn()
    metrics.match_ended(MatchStatus.ABORTED)
    page = samples(metrics.page().decode())
    assert value(page, "polignac_matches_started_total") == 2
    assert value(page, "polignac_matches_ended_total", status="finished") == 1
    assert value(page, "polignac_matches_ended_total", status="aborted") == 1
    assert value(page, "polignac_matches_ended_total", status="withdrawn") == 1
    assert value(page, "polignac_matches_ended_total", status="error") == 0  # every status is there from the start
    assert value(page, "polignac_decisions_total") == 2
    assert value(page, "polignac_decision_seconds_bucket", le="0.0025") == 1
    assert value(page, "polignac_decision_seconds_bucket", le="0.25") == 2
    assert value(page, "polignac_faults_total", kind="timeout") == 2 and value(page, "polignac_faults_total", kind="illegal") == 1
    assert value(page, "polignac_node_matches_total", node="node-a") == 1
    assert value(page, "polignac_bots_active") == 7 and value(page, "polignac_matches_live") == 3
    labels = {key for (_, pairs) in page for key, _ in pairs}
    assert labels <= {"status", "kind", "node", "le"}
