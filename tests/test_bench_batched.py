"""``polignac bench engine --batched``: the batched playout's figure beside the scalar playout's, in one run."""

from __future__ import annotations

import json

from typer.testing import CliRunner, Result

from polignac import PRESETS
from polignac_arena.cli import app

ENV: dict[str, str | None] = {"COLUMNS": "200", "LINES": "50", "NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None}


def run(*args: str) -> Result:
    return CliRunner().invoke(app, ["bench", "engine", *args], env=ENV, catch_exceptions=False)


def test_batched_json_reports_both_paths() -> None:
    result = run("--batched", "--seconds", "0.02", "--batch-size", "512", "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["rules"] == "classic" and figures["batch_size"] == 512
    assert figures["playout_card_plays_per_s"] > 0 and figures["batched_card_plays_per_s"] > 0
    assert figures["batched_hands_per_s"] > 0 and figures["batched_determinized_per_s"] > 0
    assert figures["batched_card_plays_per_cpu_s"] > 0 and figures["playout_card_plays_per_cpu_s"] > 0


def test_batched_table_and_every_ruleset() -> None:
    result = run("--batched", "--seconds", "0.02", "--batch-size", "64", "--rules", "all")
    assert result.exit_code == 0, result.output
    assert "batched plays/s" in result.stdout and "batches of 64 deals" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("│") and any(f" {name} " in line for name in PRESETS)]
    assert len(rows) == len(PRESETS), result.stdout
    single = run("--batched", "--seconds", "0.02", "--batch-size", "64", "--rules", "knaves")
    assert "batched playout (64 deals)" in single.stdout and "fast playout" in single.stdout
    assert "batched determinized (64 deals)" in single.stdout and "per CPU s" in single.stdout


def test_without_batched_nothing_batched_is_reported() -> None:
    figures = json.loads(run("--seconds", "0.02", "--json").stdout)
    assert figures["batched_card_plays_per_s"] is None and figures["batch_size"] is None
    assert figures["batched_determinized_per_s"] is None and figures["batched_card_plays_per_cpu_s"] is None
