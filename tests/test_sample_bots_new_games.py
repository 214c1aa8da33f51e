"""The sample bots play the games of protocol 1.1 through a real referee, to the end and without a fault.

Knaves (3 players, 52 cards, a turned trump, higher is better) and Bassadewitz (Ace-Ten
order, card points, a score by place) are games the samples were not written for by name:
they read them from the ruleset and the view.  The Python SDK samples (random, cautious,
heuristic folders) say protocol 1.1 through the SDK, the JavaScript one in its Hello, the
stdio ones through the bridge.  Each bot runs in a process seat as in a tournament; the
builds are those of tests/test_polyglot_bots.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from polignac import Match, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.wire import request_to_pb, ruleset_to_pb
from polignac_arena.seats.stdio_bridge import response_lines
from polignac_arena.submission import Submission
from tests.sample_builds import SAMPLES
from tests.test_polyglot_bots import play

PYTHON = [str(SAMPLES / name) for name in ("random", "cautious", "heuristic", "python_stdio")]


@pytest.mark.parametrize("seed", [3, 8])
def test_knaves_with_the_c_javascript_and_python_samples(c_bot: Submission, js_bot: Submission, seed: int) -> None:
    result = play([c_bot, js_bot, PYTHON[2]], rules=preset("knaves"), seed=seed)
    assert result.names == ("c-stdio", "javascript", "heuristic")
    assert max(result.totals) >= 20  # played to the limit (higher is better)


def test_knaves_with_the_other_python_samples() -> None:
    result = play([PYTHON[0], PYTHON[1], PYTHON[3]], rules=preset("knaves"), seed=5)
    assert result.names == ("random", "cautious", "python-stdio")


def test_bassadewitz_with_every_sample(c_bot: Submission, js_bot: Submission) -> None:
    result = play([c_bot, js_bot, *PYTHON[:3]], rules=preset("bassadewitz", players=5), seed=4)
    assert result.names == ("c-stdio", "javascript", "random", "cautious", "heuristic")
    result = play([PYTHON[3], c_bot, js_bot, PYTHON[2]], rules=preset("bassadewitz"), seed=6)
    assert result.names[0] == "python-stdio"


def test_a_german_faced_game_with_the_c_and_javascript_samples(c_bot: Submission, js_bot: Submission) -> None:
    play([c_bot, js_bot, PYTHON[1], PYTHON[2]], rules=preset("eichel-obern"), seed=2)


# -- the strategy, one decision at a time ------------------------------------------------------------


def knaves_position() -> tuple[dict[str, object], dict[str, object]]:
    """The welcome and request lines of a Knaves position: clubs trumps (QC turned), seat 1 void in the spades led.

    The trick holds 7S and 8S, no Jack: worth taking.  The weakest card that takes it is the
    eight of clubs, a trump (JC would too, but costs more than the trick brings).
    """
    rules = preset("knaves")
    match = Match(rules, 1)
    while not (match.to_act == 1 and len(match.current_trick) == 2 and len(match.tricks) == 9):
        match.apply(min(match.legal_cards(), key=lambda c: (rules.strength[c.index], c.index)))
    welcomes: list[dict[str, Any]] = response_lines(pb.PlayResponse(welcome=pb.Welcome(seat=1, ruleset=ruleset_to_pb(rules))))
    requests: list[dict[str, Any]] = response_lines(pb.PlayResponse(decision_request=request_to_pb(7, match.view(1), 1000, 1000)))
    [welcome], [request] = welcomes, requests
    view = request["view"]
    assert view["turned"] == "QC" and [p["card"] for p in view["current_trick"]] == ["7S", "8S"]
    assert "8C" in request["legal_cards"] and not any(c.endswith("S") for c in request["legal_cards"])
    return welcome, request


def stdio_answer(command: list[str], welcome: dict[str, object], request: dict[str, object]) -> str:
    lines = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in (welcome, request))
    done = subprocess.run(command, input=lines, capture_output=True, text=True, timeout=30, check=True)
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[0])
    assert answer["request_id"] == 7
    return str(answer["card"])


def test_the_c_sample_trumps_a_trick_worth_taking(c_bot: Submission) -> None:
    assert stdio_answer([str(c_bot.path / "bot")], *knaves_position()) == "8C"


def test_the_python_stdio_sample_trumps_a_trick_worth_taking() -> None:
    assert stdio_answer([sys.executable, str(SAMPLES / "python_stdio" / "bot.py")], *knaves_position()) == "8C"


def test_the_javascript_sample_trumps_a_trick_worth_taking(js_bot: Submission) -> None:
    welcome, request = knaves_position()
    script = "const b = require(process.argv[1]); const [w, r] = JSON.parse(process.argv[2]);"
    script += " process.stdout.write(b.chooseCard(r, b.gameOf(w.ruleset)));"
    arguments = [str(js_bot.path / "bot.js"), json.dumps([welcome, request])]
    done = subprocess.run(["node", "-e", script, *arguments], capture_output=True, text=True, timeout=30, check=True, cwd=js_bot.path)
    assert done.stdout == "8C"
