"""A bot's debug text and stderr, kept per decision (protocol 1.3, docs/records.md "Debug text and stderr").

- In-process, gRPC (a process seat) and stdio bots: each decision's debug text and the stderr
  written for it land on that decision's action line, cleaned and capped.
- Bad input: huge debug text, control characters, non-UTF-8 stderr, a debug key that is not
  text, debug text on a stale answer: a clear result, the referee plays on.
- An old bot (protocol 1.0, no debug) is unaffected: its lines carry no new keys.
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from typer.testing import CliRunner

from polignac import Card, Contract, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import Bot
from polignac.limits import CUT_MARK, DEBUG_MAX
from polignac.view import PlayerView
from polignac_arena.cli import app
from polignac_arena.decision_notes import (
    DEBUG_PER_MATCH,
    STDERR_PER_DECISION,
    STDERR_PER_MATCH,
    DebugBudget,
    StderrPerDecision,
    clean_debug,
)
from polignac_arena.record_lines import ActionLine, parse_line
from polignac_arena.referee import TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.schedule import Fixture
from polignac_arena.seats.inprocess import InProcessLauncher
from polignac_arena.seats.stdio_bridge import parse_answer
from polignac_arena.store import Store
from tests.referee.helpers import FAST, RawSeat, match_with_raw_seat, referee, run

CLOCK = TimeControl(move_ms=2000, bank_ms=5000, startup_ms=20000)
RULES = preset("classic", players=3, limit=4)


class ThinkingBot(Bot):
    """Plays the first legal option and says why, with a control sequence to be removed."""

    name = "thinker"

    def declare(self, view: PlayerView) -> Contract:
        self.debug(f"auction hand {view.hand_number}")
        return view.legal_contracts[0]

    def play(self, view: PlayerView) -> Card:
        card = view.legal_cards[0]
        self.debug(f"\x1b[31mplaying {card}\x1b[0m")
        self.debug("second thought")
        return card


def seat_actions(lines: list[dict[str, Any]], seat: int) -> list[dict[str, Any]]:
    """The action lines of ``seat``'s answers (penalties and forfeits left out)."""
    return [line for line in lines if line["type"] == "action" and line.get("seat") == seat and "request_id" in line]


def test_an_in_process_bots_debug_text_lands_on_each_of_its_decisions_cleaned() -> None:
    bots = [resolve_bot("random")] * 3
    launcher = InProcessLauncher({0: ThinkingBot()})
    result, _ = run(run_local_match(bots, RULES, 7, CLOCK, launcher=launcher, trusted=True))
    assert result.status == "finished"
    mine = seat_actions(result.record, 0)
    assert mine and all("debug" in line for line in mine)
    for line in mine:
        if line["action"] in ("pass", "capot", "general"):
            assert line["debug"].startswith("auction hand ")
        else:
            assert line["debug"] == f"playing {line['action']}\nsecond thought"  # the escape sequences are gone
        assert "stderr" not in line  # an in-process bot has no stderr of its own
    assert not any("debug" in line for seat in (1, 2) for line in seat_actions(result.record, seat))
    # The typed reader reads them back.
    typed = [parse_line(line, n) for n, line in enumerate(result.record, 1)]
    assert any(isinstance(line, ActionLine) and line.debug is not None for line in typed)


GRPC_BOT = """
    import sys
    from polignac.bot import Bot, run

    class Noisy(Bot):
        name = "noisy"
        def declare(self, view):
            return view.legal_contracts[0]
        def play(self, view):
            card = view.legal_cards[0]
            print(f"thinking about {card} in hand {view.hand_number}\\x07", file=sys.stderr, flush=True)
            self.debug(f"chose {card}")
            return card

    run(Noisy())
"""

STDIO_BOT = """
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] != "decision_request":
            continue
        if message["kind"] == "card":
            choice = {"card": message["legal_cards"][0]}
        else:
            choice = {"contract": message["legal_contracts"][0]}
        sys.stderr.buffer.write(b"raw \\xff\\xfe bytes for " + str(message["request_id"]).encode() + b"\\n")
        sys.stderr.flush()
        answer = {"request_id": message["request_id"], "debug": "stdio says \\u202e" + json.dumps(choice), **choice}
        sys.stdout.write(json.dumps(answer) + "\\n")
        sys.stdout.flush()
"""


def bot_folder(tmp_path: Path, name: str, transport: str, code: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text(textwrap.dedent(code))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\nauthor = "t"\nlanguage = "python"\ncommand = ["python", "bot.py"]\ntransport = "{transport}"\n'
    )
    return folder


@pytest.mark.parametrize("transport", ["grpc", "stdio"])
def test_a_process_seats_debug_text_and_stderr_land_on_its_decisions(tmp_path: Path, transport: str) -> None:
    folder = bot_folder(tmp_path, f"bot-{transport}", transport, GRPC_BOT if transport == "grpc" else STDIO_BOT)
    bots = [resolve_bot(str(folder)), resolve_bot("random"), resolve_bot("random")]
    result, stderrs = run(run_local_match(bots, RULES, 11, CLOCK, seat_kind="process", trusted=True), timeout=120)
    assert result.status == "finished", stderrs
    mine = seat_actions(result.record, 0)
    cards = [line for line in mine if line["action"] not in ("pass", "capot", "general")]
    assert cards
    if transport == "grpc":
        assert all(line["debug"] == f"chose {line['action']}" for line in cards)
        assert all("\x07" not in line.get("stderr", "") for line in mine)
        written = [re.findall(r"thinking about (\w\w in hand \d+)", line.get("stderr", "")) for line in mine]
        owner = {f"{line['action']} in hand {line['hand']}": index for index, line in enumerate(mine) if line in cards}
    else:
        assert all(line["debug"] == "stdio says " + json.dumps({"card": line["action"]}) for line in cards)  # U+202E removed
        written = [re.findall(r"raw \ufffd\ufffd bytes for (\d+)", line.get("stderr", "")) for line in mine]
        owner = {str(line["request_id"]): index for index, line in enumerate(mine)}
    # Every line written arrives, in order, with the decision it was written for or (when the
    # pipe is read after the answer) a later one of the same seat: never an earlier one.  What
    # comes after the seat's last answer has no decision to go with (the whole stderr keeps it).
    flat = [item for items in written for item in items]
    in_order = sorted(owner, key=owner.__getitem__)
    assert flat in (in_order, in_order[:-1])
    for index, items in enumerate(written):
        assert all(owner[item] <= index for item in items)
    on_time = sum(1 for index, items in enumerate(written) for item in items if owner[item] == index)
    assert on_time >= len(owner) // 2, written
    shown = "\n".join(replay_lines(result.record).render())  # as polignac replay show prints it
    assert f"debug: {cards[0]['debug']}" in shown and "stderr: " in shown


def test_clean_debug_cuts_and_marks_long_text_and_removes_controls() -> None:
    assert clean_debug("") is None and clean_debug("\x1b[2J") is None
    assert clean_debug("a\tb\nc\rd\x00e\u202ef") == "a\tb\ncdef"
    long = clean_debug("x" * (DEBUG_MAX + 5))
    assert long == "x" * DEBUG_MAX + CUT_MARK
    huge = clean_debug("\x1b[0m" * 100_000 + "y")  # only controls in what is read: nothing, but it was cut
    assert huge == " [cut]"


def test_the_debug_budget_of_a_match_ends_with_one_note() -> None:
    budget = DebugBudget()
    kept = [budget.keep("z" * DEBUG_MAX) for _ in range(DEBUG_PER_MATCH // DEBUG_MAX + 3)]
    assert kept[: DEBUG_PER_MATCH // DEBUG_MAX] == ["z" * DEBUG_MAX] * (DEBUG_PER_MATCH // DEBUG_MAX)
    notes = kept[DEBUG_PER_MATCH // DEBUG_MAX :]
    assert notes[0] is not None and "passed" in notes[0] and notes[1:] == [None, None]
    assert budget.keep(None) is None


def test_stderr_is_cut_at_line_ends_capped_per_decision_and_per_match() -> None:
    buffer = bytearray()
    cut = StderrPerDecision(lambda: buffer)
    assert cut.take() is None
    buffer += b"one\ntwo\nhalf a li"
    assert cut.take() == "one\ntwo"
    buffer += b"ne\n\x1b]52;c;evil\x07\xff\n"
    assert cut.take() == "half a line\n\ufffd"  # OSC 52 (clipboard) removed, the bad byte replaced
    buffer += b"w" * (STDERR_PER_DECISION * 10) + b"\n"
    big = cut.take()
    assert big is not None and big.startswith("w" * STDERR_PER_DECISION) and big.endswith(" bytes written]")
    assert len(big) < STDERR_PER_DECISION + 60
    buffer += b"no line end " * 2_000  # a line that never ends is taken once it is longer than a decision keeps
    assert cut.take() is not None
    for _ in range(STDERR_PER_MATCH // STDERR_PER_DECISION + 2):
        buffer += b"v" * STDERR_PER_DECISION + b"\n"
        last = cut.take()
    assert last is None
    buffer += b"more\n"
    assert cut.take() is None


def test_the_stdio_bridge_reads_debug_and_refuses_a_debug_that_is_not_text() -> None:
    decision, _, _ = parse_answer(b'{"request_id": 4, "card": "JS", "debug": "why \\ud800 not"}')
    assert decision is not None and decision.debug == "why ? not"
    decision, tag, reason = parse_answer(b'{"request_id": 4, "card": "JS", "debug": 12}')
    assert decision is None and tag == "<debug not text>" and "'debug' must be text" in reason
    decision, _, _ = parse_answer(b'{"request_id": 4, "contract": "pass"}')
    assert decision is not None and decision.debug == ""


def raw_debug_match(debugs: list[str | bytes], version: str = "1.3") -> tuple[Any, list[pb.FaultNotice], list[grpc.StatusCode]]:
    """A match whose seat 0 answers politely, its first answers carrying ``debugs`` in turn."""

    async def scenario() -> tuple[Any, list[pb.FaultNotice]]:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server, preset("classic", players=4, limit=2), time_control=FAST)
            await raw.open()
            await raw.hello(version)
            left = list(debugs)
            try:
                await answer(raw, left)
            except grpc.aio.AioRpcError as exc:
                ended.append(exc.code())
            outcome = await asyncio.wait_for(result, 30)
            await asyncio.gather(*polite)
            await raw.close()
            return outcome, raw.faults()

    ended: list[grpc.StatusCode] = []
    return (*run(scenario()), ended)


async def answer(raw: RawSeat, left: list[str | bytes]) -> None:
    """Answer every request with its first option, the first ones carrying the debug texts ``left``, in turn."""
    while (message := await raw.read()) is not None:
        kind = message.WhichOneof("payload")
        if kind == "match_ended":
            break
        if kind != "decision_request":
            continue
        request = message.decision_request
        decision = pb.Decision(request_id=request.request_id)
        if request.kind == pb.DECISION_KIND_CARD:
            decision.card = request.legal_cards[0]
        else:
            decision.contract = request.legal_contracts[0]
        if left:
            debug = left.pop(0)
            if isinstance(debug, bytes):  # a stale answer first, carrying debug text
                stale = pb.Decision(request_id=request.request_id + 7, card="JS", debug=debug.decode())
                await raw.send(pb.PlayRequest(decision=stale))
            else:
                decision.debug = debug
        await raw.send(pb.PlayRequest(decision=decision))


def test_debug_text_on_the_wire_is_cut_cleaned_and_a_stale_answers_is_not_kept() -> None:
    result, faults, _ = raw_debug_match(["x" * 5000, "bell\x07 and \x1b[1mbold\x1b[0m", b"stale thoughts", "after"])
    assert result.status == "finished"
    mine = seat_actions(result.record, 0)
    assert mine[0]["debug"] == "x" * DEBUG_MAX + CUT_MARK
    assert mine[1]["debug"] == "bell and bold"
    assert "debug" not in mine[2]  # the stale answer's text is dropped with it; this answer had none
    assert mine[3]["debug"] == "after"
    assert [notice.fault for notice in faults] == [pb.FAULT_STALE]
    assert not any("stale thoughts" in json.dumps(line) for line in result.record)


def test_a_decision_too_big_for_the_wire_ends_that_seat_not_the_referee() -> None:
    result, _, ended = raw_debug_match(["y" * 40_000])
    assert ended == [grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert result.status == "finished"
    assert result.places is not None and result.places[0] == max(result.places)  # the seat forfeited
    assert not any("yyyy" in json.dumps(line) for line in result.record)


@pytest.mark.parametrize("version", ["1.0", "1.2"])
def test_an_old_bot_that_sends_no_debug_is_unaffected(version: str) -> None:
    result, faults, _ = raw_debug_match([], version)
    assert result.status == "finished" and faults == []
    for line in result.record:
        assert "debug" not in line and "stderr" not in line


# -- the SDK ---------------------------------------------------------------------------------------


def test_the_sdks_debug_joins_a_decisions_texts_cuts_them_and_starts_afresh() -> None:
    bot = ThinkingBot()
    assert bot.take_debug() == ""
    bot.debug("one")
    bot.debug(2)
    assert bot.take_debug() == "one\n2" and bot.take_debug() == ""
    for _ in range(50):
        bot.debug("y" * 100)
    text = bot.take_debug()
    assert text.endswith(CUT_MARK) and len(text) == DEBUG_MAX + len(CUT_MARK)


# -- shown by the commands -------------------------------------------------------------------------


def test_replay_show_and_match_show_print_the_notes_after_each_hand_and_hide_them_on_request(tmp_path: Path) -> None:
    bots = [resolve_bot("random")] * 3
    record = tmp_path / "match.jsonl"
    result, _ = run(
        run_local_match(bots, RULES, 7, CLOCK, launcher=InProcessLauncher({1: ThinkingBot()}), trusted=True, record_path=record)
    )
    runner = CliRunner()
    shown = runner.invoke(app, ["replay", "show", str(record)])
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert "bot notes (debug text and stderr, by step):" in text
    first = seat_actions(result.record, 1)[0]
    assert f"auction, seat 1 played {first['action']}:" in text and "debug: auction hand 1" in text
    card = next(line for line in seat_actions(result.record, 1) if line["action"] not in ("pass", "capot", "general"))
    assert f"seat 1 played {card['action']}:" in text and f"debug: playing {card['action']}" in text and "second thought" in text
    assert text.index("bot notes") > text.index("Hand 1,") and "\x1b" not in text
    hidden = runner.invoke(app, ["replay", "show", str(record), "--no-notes"])
    assert hidden.exit_code == 0 and "bot notes" not in hidden.output and "debug:" not in hidden.output
    db = tmp_path / "arena.db"
    with Store(db) as store:
        tid = store.create_tournament("t", {"format": "synthetic"}, [Fixture(0, ("a@1", "b@1", "c@1"), 7)])
        store.record_result(
            tid, 0, match_id="m1", status=result.status, places=list(result.places or ()), totals=list(result.totals),
            faults=[{}, {}, {}], hands=1, rate=lambda c, s, p: {b: (25.0, 8.0) for b in s}, record=result.record,
        )  # fmt: skip
    stored = runner.invoke(app, ["match", "show", "m1", "--db", str(db)])
    assert stored.exit_code == 0 and "debug: auction hand 1" in stored.output, stored.output
    assert "debug:" not in runner.invoke(app, ["match", "show", "m1", "--db", str(db), "--no-notes"]).output


def test_a_forfeit_line_with_notes_replays_and_shows_them() -> None:
    """A forfeit (or penalty) line may carry its seat's stderr: the replay applies the forfeit itself, not its text."""
    path = Path(__file__).parent / "data" / "records_v1_0" / "ace-high-6p-revoker-seed202.match.jsonl"
    lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    forfeit = next(i for i, line in enumerate(lines) if isinstance(line.get("action"), dict) and "forfeit" in line["action"])
    lines[forfeit]["stderr"] = "pthread_create failed: Resource temporarily unavailable"
    replay = replay_lines(lines)
    assert replay.divergence is None, replay.divergence
    assert [note.stderr for note in replay.notes] == ["pthread_create failed: Resource temporarily unavailable"]
