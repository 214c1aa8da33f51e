"""Smoke test of benchmarks/referee.py: a quick run finishes, prints one JSON object with the promised keys, and no bot timed out.

About 8 s (spawned processes, real sockets); not marked slow, as it stays well under 15 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "referee.py"
KEYS = {
    "referee_median_us",
    "referee_p99_us",
    "bare_median_us",
    "bare_p99_us",
    "ratio",
    "concurrent_matches",
    "decisions_per_s",
    "timeouts",
    "peak_rss_mb",
    "transport",
    "referee_full_view_median_us",
    "ratio_full_view",
    "ratio_by_process_pair",
}


def test_referee_benchmark_quick_run() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", "--quick", "--matches", "4"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result.keys() >= KEYS, f"missing keys: {sorted(KEYS - result.keys())}"
    assert result["timeouts"] == 0
    assert result["transport"] == "unix"
    assert result["concurrent_matches"] == 4
    assert result["concurrent"]["finished"] == 4
    for key in ("referee_median_us", "referee_p99_us", "bare_median_us", "bare_p99_us", "ratio", "decisions_per_s", "peak_rss_mb"):
        assert result[key] > 0, key
    assert result["referee_p99_us"] >= result["referee_median_us"]
    assert result["ratio"] == pytest.approx(result["referee_median_us"] / result["bare_median_us"], abs=0.01)
    assert len(result["ratio_by_process_pair"]) == 1  # --quick runs one process pair
    assert result["referee_full_view_median_us"] > 0


SEATS_SCRIPT = ROOT / "benchmarks" / "seats.py"


def test_seats_benchmark_quick_run() -> None:
    """benchmarks/seats.py --json: seat start-up and match wall time keyed by seat kind (unavailable kinds say why)."""
    done = subprocess.run(
        [sys.executable, str(SEATS_SCRIPT), "--json", "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert {"seat_start_ms", "match_wall_s", "bot_connect_ms", "unavailable"} <= result.keys()
    measured = set(result["match_wall_s"])
    assert measured | set(result["unavailable"]) == {"inprocess", "process", "docker"}
    assert "inprocess" in measured and "process" in measured
    for kind in measured - {"inprocess"}:
        assert result["seat_start_ms"][kind] > 0
        assert result["bot_connect_ms"][kind] >= result["seat_start_ms"][kind]
    assert all(wall > 0 for wall in result["match_wall_s"].values())
    assert result["seat_start_ms"]["unsandboxed"] > 0


FLOODS_SCRIPT = ROOT / "benchmarks" / "floods.py"
FLOOD_CASES = {"quiet", "busy", "syscall-storm", "stdio-flood", "grpc-flood", "unjoined-flood", "polite-flood"}


def test_floods_benchmark_quick_run() -> None:
    """benchmarks/floods.py --json --quick: every case's match finishes and the polite seats are never faulted."""
    done = subprocess.run(
        [sys.executable, str(FLOODS_SCRIPT), "--json", "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    if "process" in result["unavailable"]:
        pytest.skip(f"process seats unavailable: {result['unavailable']['process']}")
    assert {name.split("/", 1)[1] for name in result["cases"]} == FLOOD_CASES
    for name, row in result["cases"].items():
        assert row["finished"], name
        assert row["polite_faults"] == 0, name
        assert row["polite_decisions"] > 0 and row["polite_p95_ms"] >= row["polite_median_ms"] > 0, name
        if not name.endswith("/quiet"):
            assert row["p95_ratio"] is not None and row["p95_ratio"] > 0, name
    for flood in ("stdio-flood", "grpc-flood"):
        assert sum(result["cases"][f"process/{flood}"]["seat0_faults"][0].values()) > 0, f"{flood} was never faulted"
    assert result["cases"]["process/unjoined-flood"]["seat0_place"][0] is not None


LEAGUE_SCRIPT = ROOT / "benchmarks" / "league.py"
LEAGUE_KEYS = {
    "config",
    "submits",
    "submit_median_s",
    "server_start_s",
    "matches_per_minute",
    "window_s",
    "window_matches",
    "window_void",
    "cpu_per_match_s",
    "cpus_busy",
    "new_version",
    "drain_s",
    "exit_code",
    "matches_total",
    "void_total",
    "matches_played",
}


@pytest.mark.slow
def test_league_benchmark_smoke_run() -> None:
    """benchmarks/league.py --json with a tiny window: bots accepted, the ladder plays, a new version is rated, SIGTERM drains."""
    done = subprocess.run(
        [
            sys.executable,
            str(LEAGUE_SCRIPT),
            "--json",
            "--seconds",
            "1",
            "--bots",
            "3",
            "--table-size",
            "3",
            "--parallel",
            "1",
            "--limit",
            "3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result.keys() >= LEAGUE_KEYS, f"missing keys: {sorted(LEAGUE_KEYS - result.keys())}"
    config = result["config"]
    assert (config["bots"], config["table_size"], config["parallel"], config["limit"], config["seat_kind"]) == (3, 3, 1, 3, "process")
    labels = [s["label"] for s in result["submits"]] + [result["new_version"]["label"]]
    assert len(set(labels)) == 4 and all(label.endswith("@1") for label in labels), labels
    assert all(s["accepted_s"] > 0 for s in result["submits"])
    assert result["new_version"]["first_rated_s"] >= result["new_version"]["accepted_s"] > 0
    assert result["new_version"]["match_index"] >= 0
    # the warm-up waits for one match and the new version is rated after one more
    assert result["matches_total"] >= 2 and result["matches_played"] >= 1
    assert result["matches_per_minute"] == pytest.approx(result["window_matches"] * 60 / result["window_s"], rel=0.01, abs=0.01)
    assert result["void_total"] == 0
    assert result["exit_code"] == 0 and result["drain_s"] > 0
    assert result["cpus_busy"] is not None and result["cpus_busy"] >= 0


KITS_SCRIPT = ROOT / "benchmarks" / "kits.py"


def test_kits_benchmark_quick_run(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: the C kit cannot be built")
    command = [sys.executable, str(KITS_SCRIPT), "--json", "--langs", "c,python", "--matches", "1", "--out", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert [kit["lang"] for kit in result["kits"]] == ["c", "python"] and result["unavailable"] == {}
    for kit in result["kits"]:
        assert 0 < kit["code_lines"] < kit["lines"] < 250
        assert kit["start_ms"] > 0 and kit["decision_ms"] > 0 and kit["decisions"] > 10 and kit["prepare_s"] is None
    assert result["kits"][0]["build_s"] > 0 and result["kits"][1]["build_s"] == 0  # the Python kit has nothing to build
    assert (tmp_path / "c-kit" / "bot").is_file()


ABUSE_SCRIPT = ROOT / "benchmarks" / "league_abuse.py"
ABUSE_PHASES = ("slow_connections", "slow_connections_spread", "bad_tokens", "upload_flood")


@pytest.mark.slow
def test_league_abuse_benchmark_quick_run() -> None:
    """benchmarks/league_abuse.py --json --quick: every attack runs, the figures are there, and the limits that do not hang on
    the machine's load hold (memory, the token throttle, the flood refused); latencies are reported, not judged: the machine is shared.
    """
    done = subprocess.run(
        [sys.executable, str(ABUSE_SCRIPT), "--json", "--quick", "--connections", "200", "--seconds", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result.keys() >= {"idle_rss_mb", "unloaded", "goals", *ABUSE_PHASES}
    assert result["unloaded"]["upload_to_active_s"] > 0 and result["upload_flood"]["upload_to_active_s"] > 0
    for phase in ABUSE_PHASES:
        assert result[phase]["leaderboard_requests"] > 0 and result[phase]["leaderboard_p99_ms"] > 0, phase
    single = result["slow_connections"]
    assert single["opened"] <= 16 + 1 and single["refused"] > 0  # one address holds its share only
    for phase in ("slow_connections", "slow_connections_spread"):
        assert result[phase]["peak_over_idle"] < 2.5 and result[phase]["after_over_idle"] < 1.25, result[phase]
    assert result["bad_tokens"]["author_from_the_same_address"] == {"200": 10}
    assert "429" in result["bad_tokens"]["guesses"] and "429" in result["upload_flood"]["flood_answers"]
    assert set(result["goals"]) >= {"rss_under_2x_idle", "rss_back_to_idle", "upload_within_2x_unloaded", "leaderboard_p99_under_200ms"}


CHAOS_SCRIPT = ROOT / "benchmarks" / "league_chaos.py"
CHAOS_KEYS = {
    "matches_finished",
    "matches_void",
    "network_forfeits",
    "forfeits_by_reason",
    "timeouts",
    "away",
    "back",
    "away_at_end",
    "detect_server_s",
    "detect_client_s",
    "freezes",
    "resets",
}


@pytest.mark.slow
def test_league_chaos_benchmark_smoke_run() -> None:
    """benchmarks/league_chaos.py --json on a small, fast, very faulty network: faults are injected, and none costs a forfeit."""
    command = [sys.executable, str(CHAOS_SCRIPT), "--json", "--only", "faulty", "--bots", "4", "--seconds", "10"]
    command += ["--latency-ms", "5", "--jitter-ms", "2", "--fault-every", "2,3"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert (result["table_size"], result["latency_ms"], result["fault_every_s"], result["grace_s"]) == (4, 5, [2, 3], 10)
    faulty = result["faulty"]
    assert faulty.keys() >= CHAOS_KEYS, f"missing keys: {sorted(CHAOS_KEYS - faulty.keys())}"
    assert "clean" not in result
    assert faulty["freezes"] + faulty["resets"] > 0, "the proxy injected faults"
    assert faulty["network_forfeits"] == 0, faulty
    assert faulty["away_at_end"] <= faulty["away"]


LOAD_SCRIPT = ROOT / "benchmarks" / "league_load.py"
LOAD_KEYS = {
    "referee_processes",
    "decisions_per_s",
    "matches_per_min",
    "league_cpu_ms_per_decision",
    "referee_cpu_ms_per_decision",
    "client_cpu_ms_per_decision",
    "handoff_ms",
}


@pytest.mark.slow
def test_league_load_benchmark_quick_run() -> None:
    """benchmarks/league_load.py --json --quick: both configurations play over TLS, and with referee processes the league
    process's own CPU per decision is the smaller one (the referee's work left it)."""
    done = subprocess.run([sys.executable, str(LOAD_SCRIPT), "--json", "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    one, many = result["runs"]
    for run in (one, many):
        assert run.keys() >= LOAD_KEYS, f"missing keys: {sorted(LOAD_KEYS - run.keys())}"
        assert run["decisions_per_s"] > 0 and run["handoff_ms"]["p50"] is not None
    assert (one["referee_processes"], many["referee_processes"]) == (1, max(2, os.cpu_count() or 2))
    assert one["referee_cpu_ms_per_decision"] == 0 and many["referee_cpu_ms_per_decision"] > 0
    assert many["league_cpu_ms_per_decision"] < one["league_cpu_ms_per_decision"]


@pytest.mark.slow
def test_league_load_benchmark_idle_quick_run() -> None:
    """benchmarks/league_load.py --json --quick --idle: a few idle bots join the Lobby, and the figures are there."""
    command = [sys.executable, str(LOAD_SCRIPT), "--json", "--quick", "--idle", "1000"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    idle = json.loads(done.stdout)["idle"]
    assert idle["bots"] == 20
    assert idle["join_s"] > 0 and idle["idle_cpu_share"] >= 0 and "memory_per_connection_kb" in idle
