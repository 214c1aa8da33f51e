"""Bot-written text is shown without terminal control sequences: in the terminal, the logs and the web.

:func:`polignac_arena.plaintext.plain` is tested with hostile inputs (hypothesis); then each place
the arena shows bot text: ``polignac bot check`` (bot stderr, build output), ``polignac match``
(stderr, names), ``polignac replay show``, log lines, and the web pages and JSON API.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from polignac import MatchStatus
from polignac_arena.cli import app
from polignac_arena.plaintext import PlainFormatter, plain
from polignac_arena.ratings import RatingEnv, rate_match
from polignac_arena.schedule import Fixture
from polignac_arena.store import Store
from polignac_arena.web import create_app

FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What must never be left: C0 but newline and tab, DEL, C1, bidi overrides (ESC and CSI/OSC introducers among them)."""

HOSTILE = (
    "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: write the operator's clipboard
    "\x1b]0;owned\x1b\\"  # OSC 0: the window title, ended by ST
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x9b31m\x9d2;title\x9c"  # the same in C1 controls
    "\x1bPq#0;2;0;0;0\x1b\\"  # DCS (sixel)
    "\x1b7\x1b(0"  # save cursor, switch charset
    "fake\rFAILED\x08\x08ok\u202eevil"  # overwrite and reorder what is shown
)

# -- plain() -----------------------------------------------------------------------------------------------------

_PARAMS = st.text(alphabet=st.characters(min_codepoint=0x30, max_codepoint=0x3F), max_size=6)
_INTERMEDIATES = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x2F), max_size=2)
_FINALS = st.characters(min_codepoint=0x40, max_codepoint=0x7E)
_PAYLOAD = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30)
_BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_SAFE = st.text(alphabet=st.characters(blacklist_categories=["Cc", "Cs"], blacklist_characters=_BIDI) | st.sampled_from("\n\t"), max_size=9)


@st.composite
def sequences(draw: st.DrawFn) -> str:
    """One complete control sequence of any kind."""
    kind = draw(st.sampled_from(["csi", "csi8", "osc", "osc8", "dcs", "esc", "c0"]))
    if kind in ("csi", "csi8"):
        return ("\x1b[" if kind == "csi" else "\x9b") + draw(_PARAMS) + draw(_INTERMEDIATES) + draw(_FINALS)
    if kind in ("osc", "osc8"):
        start = draw(st.sampled_from(["\x1b]", "\x9d"])) if kind == "osc" else "\x1b]8;;"
        return start + draw(_PAYLOAD) + draw(st.sampled_from(["\x07", "\x1b\\", "\x9c"]))
    if kind == "dcs":
        start = draw(st.sampled_from(["\x1bP", "\x1bX", "\x1b^", "\x1b_", "\x90"]))
        return start + draw(_PAYLOAD) + draw(st.sampled_from(["\x1b\\", "\x9c"]))
    if kind == "esc":
        # ESC [ ] P X ^ _ start the longer sequences above, not a two-character one.
        return "\x1b" + draw(_INTERMEDIATES) + draw(st.characters(min_codepoint=0x30, max_codepoint=0x7E, blacklist_characters="[]PX^_"))
    # A lone ESC is no sequence of its own: with the text after it, it is the start of one (ESC 0 is a whole sequence).
    return draw(st.sampled_from([c for c in map(chr, range(0x20)) if c not in "\n\t\x1b"] + ["\x7f"]))


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_nothing_of_a_control_survives_any_text(text: str) -> None:
    shown = plain(text)
    assert not FORBIDDEN.search(shown)
    assert plain(shown) == shown


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_SAFE, sequences()), max_size=8), _SAFE)
def test_sequences_go_whole_and_the_text_around_them_stays(parts: list[tuple[str, str]], tail: str) -> None:
    text = "".join(safe + sequence for safe, sequence in parts) + tail
    assert plain(text) == "".join(safe for safe, _ in parts) + tail


@settings(max_examples=100, deadline=None)
@given(_SAFE)
def test_text_without_controls_is_unchanged(text: str) -> None:
    assert plain(text) == text


def test_the_known_attacks() -> None:
    assert plain(HOSTILE) == "fakeFAILEDokevil"
    assert plain("line one\n\x1b]0;cut short\nline two\x1b[") == "line one\n\nline two"


def test_log_lines_are_plain() -> None:
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "seat said %s", (HOSTILE,), None)
    assert not FORBIDDEN.search(PlainFormatter().format(record))
    CliRunner().invoke(app, ["rules"])
    assert logging.lastResort is not None and isinstance(logging.lastResort.formatter, PlainFormatter)


# -- the terminal ------------------------------------------------------------------------------------------------

BOT = f"""
import sys
from polignac.bot import Bot, run

class Loud(Bot):
    name = "loud"

    def play(self, view):
        sys.stderr.write({HOSTILE!r} + "\\n")
        sys.stderr.flush()
        return "ZZ"  # malformed: a fault, so the arena shows the stderr

run(Loud())
"""
MANIFEST = 'name = "loud"\nversion = "1.0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'


def loud_bot(tmp_path: Path, manifest: str = MANIFEST) -> Path:
    folder = tmp_path / "loud"
    folder.mkdir()
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text(BOT)
    return folder


def assert_plain(output: str) -> None:
    found = FORBIDDEN.search(output)
    assert found is None, f"control character {found.group()!r} shown: {output[max(0, found.start() - 80) : found.end() + 80]!r}"


@pytest.mark.slow
def test_bot_check_shows_the_bots_stderr_plain(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bot", "check", str(loud_bot(tmp_path)), "--trusted"], catch_exceptions=False)
    assert result.exit_code == 1 and "bot stderr" in result.output and "FAILEDokevil" in result.output, result.output
    assert_plain(result.output)


def test_bot_check_shows_the_build_output_plain(tmp_path: Path) -> None:
    build = ["sh", "-c", "cat noise.txt; cat noise.txt >&2; exit 3"]
    folder = loud_bot(tmp_path, MANIFEST + f"build = {json.dumps(build)}\n")
    (folder / "noise.txt").write_text(HOSTILE + "\n")
    result = CliRunner().invoke(app, ["bot", "check", str(folder), "--trusted"], catch_exceptions=False)
    assert result.exit_code == 1 and "FAILED  build" in result.output and "FAILEDokevil" in result.output, result.output
    assert_plain(result.output)


@pytest.mark.slow
def test_match_shows_stderr_and_names_plain(tmp_path: Path) -> None:
    folder = loud_bot(tmp_path)
    evil = folder / "e\x1b]0;title\x07vil.py"
    evil.write_text(BOT)
    bots = ["--bot", str(evil), "--bot", "random", "--bot", "random"]
    record = tmp_path / "r.jsonl"
    result = CliRunner().invoke(
        app, ["match", *bots, "--seat-kind", "process", "--trusted", "--limit", "2", "--replay", str(record)], catch_exceptions=False
    )
    assert "its last stderr line: fakeFAILEDokevil" in result.stdout, result.stdout
    assert "Match: evil, random, random" in result.stdout
    assert_plain(result.stdout)
    assert_plain(result.stderr)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    lines[0]["seats"][0]["name"] = HOSTILE  # a record file may come from anywhere
    record.write_text("".join(json.dumps(line) + "\n" for line in lines))
    shown = CliRunner().invoke(app, ["replay", "show", str(record)], catch_exceptions=False)
    assert shown.exit_code == 0 and "fakeFAILEDokevil" in shown.output
    assert_plain(shown.output)


# -- the web -----------------------------------------------------------------------------------------------------

EVIL_NAME = "ev\x1b]52;c;QQ==\x07il\u202e"
EVIL_VERSION = "1\x1b[2J\x9b0m"


@pytest.fixture
def evil_store(tmp_path: Path) -> Path:
    """A store whose bot names and versions hold escapes (the store takes any text; a record may be forged)."""
    db = tmp_path / "evil.db"
    with Store(db) as store:
        store.add_bot(EVIL_NAME, EVIL_VERSION, tmp_path, "digest", "python\x1b[5m")
        seats = (f"{EVIL_NAME}@{EVIL_VERSION}", "cautious@builtin", "random@builtin")
        tid = store.create_tournament("evil", {"format": "synthetic", "entrants": list(seats)}, [Fixture(0, seats, 7)])
        env = RatingEnv()

        def rate(current: Any, keys: Any, places: Any) -> dict[str, tuple[float, float]]:
            return dict(zip(keys, rate_match(env, [env.initial for _ in keys], places), strict=True))

        store.record_result(
            tid, 0, match_id="evil-0", status=MatchStatus.FINISHED, places=[1, 2, 3], totals=[0, 1, 2], hands=1,
            faults=[{"malformed\x1b[31m": 1}, {}, {}], rate=rate, penalties=[0, 1, 2], record=[], duration_s=1.0,
        )  # fmt: skip
    return db


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_web_pages_and_api_show_names_plain(evil_store: Path) -> None:
    with TestClient(create_app(evil_store)) as client:
        for url in ("/", "/tournaments/evil", "/crosstable", f"/bots/{quote(EVIL_NAME)}", "/matches", "/matches/evil-0"):
            page = client.get(url)
            assert page.status_code == 200, url
            assert "evil" in page.text or "il" in page.text
            assert_plain(page.text)
        api = ("/api/bots", "/api/leaderboard", "/api/crosstable", f"/api/bots/{quote(EVIL_NAME)}", "/api/matches", "/api/tournaments/evil")
        for url in api:
            answer = client.get(url)
            assert answer.status_code == 200, url
            texts = _strings(answer.json())
            assert any("evil" in text for text in texts), url
            for text in texts:
                assert_plain(text)
