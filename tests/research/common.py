"""What the research tests share: the rulesets and table sizes they go through, and skips without the extra."""

from __future__ import annotations

import pytest

from polignac import PRESETS

EVERY_TABLE = [(name, players) for name, rules in PRESETS.items() for players in rules.table_sizes()]
"""Every named ruleset at every table size it can be played at."""
EVERY_TABLE_IDS = [f"{name}-{players}" for name, players in EVERY_TABLE]


def need_pettingzoo() -> None:
    pytest.importorskip("pettingzoo", reason="PettingZoo is not installed (pip install -e '.[research]'; .ci/run installs it)")


def need_openspiel() -> None:
    pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install -e '.[research]'; .ci/run installs it)")
