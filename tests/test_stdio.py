"""The stdio transport: JSON lines bridged to the referee (docs/stdio-protocol.md).

The conversions and the line reader on their own, then whole matches through a real
referee with stdio bots in process seats: a good bot, bots that write junk, and bots
that leave mid-hand.
"""

from __future__ import annotations

import asyncio
import json
import resource
import textwrap
from pathlib import Path
from typing import Any

import pytest

from polignac import Ruleset, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.wire import ruleset_to_pb
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.seats.stdio_bridge import MAX_LINE_BYTES, TOO_LONG, LineReader, _Bridge, parse_answer, response_lines
from polignac_arena.submission import Submission, load_submission
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[1]
CLOCK = TimeControl(move_ms=2000, bank_ms=5000, startup_ms=10_000)


def play(bots: list[Submission | str], rules: Ruleset | None = None, seed: int = 5) -> tuple[MatchResult, list[str]]:
    """One match through a real referee, each bot in a process seat (trusted: the sandbox is not under test here)."""
    subs = [b if isinstance(b, Submission) else resolve_bot(b) for b in bots]

    async def capped() -> tuple[MatchResult, list[str]]:
        async with asyncio.timeout(60):
            return await run_local_match(subs, rules or preset("classic"), seed, CLOCK, seat_kind="process", trusted=True)

    return run_sync(capped())


def stdio_bot(folder: Path, name: str, code: str) -> Submission:
    """A stdio submission running ``code`` (a Python script) from ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(textwrap.dedent(code), encoding="utf-8")
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\ntransport = "stdio"\n', encoding="utf-8"
    )
    return load_submission(folder)


# -- arena -> bot ------------------------------------------------------------------------------


def test_welcome_line_mirrors_the_message_with_every_field() -> None:
    rules = preset("classic")
    welcome = pb.Welcome(
        match_id="m", seat=0, ruleset=ruleset_to_pb(rules), time_control=pb.TimeControl(move_ms=1, bank_ms=0, startup_ms=3)
    )
    [line] = response_lines(pb.PlayResponse(welcome=welcome))
    assert list(line) == ["type", "match_id", "seat", "ruleset", "time_control", "seat_names"]
    assert line["type"] == "welcome" and line["seat"] == 0 and line["seat_names"] == []  # defaults are present
    assert line["ruleset"] == rules.to_dict()
    assert line["time_control"] == {"move_ms": 1, "bank_ms": 0, "startup_ms": 3}


def test_events_come_first_one_line_each_then_the_request() -> None:
    plays = [pb.Play(seat=0, card="9D"), pb.Play(seat=1, card="7D")]
    response = pb.PlayResponse(
        events=[
            pb.Event(declared=pb.Declaration(seat=3, contract=pb.CONTRACT_CAPOT)),
            pb.Event(trick_won=pb.TrickWon(trick_number=1, winner=0, plays=plays)),
            pb.Event(hand_ended=pb.HandEnded(hand_number=1, contract=pb.CONTRACT_CAPOT, declarer=3, scores=[0, 1], totals=[0, 1])),
            pb.Event(hand_ended=pb.HandEnded(hand_number=2)),
        ],
        decision_request=pb.DecisionRequest(
            request_id=(1 << 52) + 1,
            kind=pb.DECISION_KIND_CONTRACT,
            legal_contracts=[pb.CONTRACT_PASS, pb.CONTRACT_GENERAL],
            view=pb.PlayerView(seat=1, declarer=0),
        ),
    )
    lines: list[dict[str, Any]] = response_lines(response)
    declared, trick, ended, ended_plain, request = lines
    assert declared == {"type": "event", "event": "declared", "seat": 3, "contract": "capot"}
    assert trick["plays"] == [{"seat": 0, "card": "9D"}, {"seat": 1, "card": "7D"}]
    assert ended["declarer"] == 3 and ended["contract_made"] is None and ended["contract"] == "capot"
    assert ended_plain["declarer"] is None and ended_plain["contract"] == "unspecified"
    assert request["type"] == "decision_request" and request["request_id"] == (1 << 52) + 1
    assert request["kind"] == "contract" and request["legal_contracts"] == ["pass", "general"] and request["legal_cards"] == []
    assert request["view"]["declarer"] == 0 and request["view"]["seat"] == 1 and request["view"]["current_trick"] == []


def test_fault_notice_and_match_end_lines() -> None:
    notice = pb.FaultNotice(request_id=7, fault=pb.FAULT_STALE, detail="é", faults=1)
    [line] = response_lines(pb.PlayResponse(fault_notice=notice))
    assert line == {
        "type": "fault_notice",
        "request_id": 7,
        "fault": "stale",
        "detail": "é",
        "fallback": "",
        "points": 0,
        "faults": 1,
        "forfeited": False,
    }
    ended = pb.MatchEnded(places=[1, 2], totals=[3, 4], status="finished", status_code=pb.MATCH_STATUS_FINISHED)
    [end] = response_lines(pb.PlayResponse(match_ended=ended))
    assert end == {"type": "match_ended", "places": [1, 2], "totals": [3, 4], "status": "finished", "status_code": "finished"}


# -- bot -> arena ------------------------------------------------------------------------------


def test_well_formed_answers_become_decisions() -> None:
    decision, _, _ = parse_answer(b' {"request_id": 12, "card": "JS", "note": "ignored"}\r')
    assert decision == pb.Decision(request_id=12, card="JS")
    decision, _, _ = parse_answer(b'{"contract":"general","request_id":3}')
    assert decision == pb.Decision(request_id=3, contract=pb.CONTRACT_GENERAL)
    decision, _, _ = parse_answer(b'{"request_id": 1, "card": "XX"}')  # the referee judges the card text
    assert decision == pb.Decision(request_id=1, card="XX")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"7D", "not JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[" * 4000, "not JSON"),
        (b"[1, 2]", "not an object"),
        (b'"JS"', "not an object"),
        (b'{"card": "JS"}', "no request_id"),
        (b'{"request_id": "5", "card": "JS"}', "non-negative integer"),
        (b'{"request_id": -1, "card": "JS"}', "non-negative integer"),
        (b'{"request_id": 5.0, "card": "JS"}', "non-negative integer"),
        (b'{"request_id": true, "card": "JS"}', "non-negative integer"),
        (b'{"request_id": 18446744073709551616, "card": "JS"}', "non-negative integer"),
        (b'{"request_id": 5}', "exactly one"),
        (b'{"request_id": 5, "card": "JS", "contract": "pass"}', "exactly one"),
        (b'{"request_id": 5, "card": 7}', "must be text"),
        (b'{"request_id": 5, "contract": "PASS"}', '"pass", "capot" or "general"'),
        (b'{"request_id": 5, "contract": 1}', '"pass", "capot" or "general"'),
    ],
)
def test_malformed_answers_are_refused_with_a_reason(line: bytes, reason: str) -> None:
    decision, tag, why = parse_answer(line)
    assert decision is None and reason in why
    assert 0 < len(tag) <= 20 and tag.startswith("<")  # never a card: the referee counts it MALFORMED


def read_all(chunks: list[bytes], limit: int = 8) -> list[bytes]:
    async def scenario() -> list[bytes]:
        reader = asyncio.StreamReader()
        for chunk in chunks:
            reader.feed_data(chunk)
        reader.feed_eof()
        lines = LineReader(reader, limit)
        out = []
        while (line := await lines.next_line()) is not None:
            out.append(line)
            assert len(lines._buffer) <= limit
        return out

    return run_sync(scenario())


def test_line_reader_splits_joins_and_bounds_lines() -> None:
    assert read_all([b"ab\ncd", b"ef\n\n", b"12345678\n"]) == [b"ab", b"cdef", b"", b"12345678"]
    # Too long: reported once, as soon as it is too long, and the rest of it dropped.
    assert read_all([b"123456789", b"abc", b"def\nok\n"]) == [TOO_LONG, b"ok"]
    assert read_all([b"1234", b"56789\nok\n"]) == [TOO_LONG, b"ok"]
    assert read_all([b"x" * 1_000_000 + b"\n", b"tail"]) == [TOO_LONG]  # a last line without newline is dropped
    assert read_all([b"ok\n", b"a tail too long"]) == [b"ok", TOO_LONG]  # ... but too long is too long
    assert read_all([b"a\r\n"], limit=MAX_LINE_BYTES) == [b"a\r"]


# -- whole matches -------------------------------------------------------------------------------


def test_python_stdio_sample_plays_a_whole_match() -> None:
    result, _ = play([str(ROOT / "sample_bots" / "python_stdio"), "heuristic", "cautious", "random"])
    assert result.status == "finished" and result.places is not None
    assert result.faults == [{}, {}, {}, {}]
    assert result.names[0] == "python-stdio" and result.versions[0] == "1.1"  # the bridge's Hello, from bot.toml
    assert replay_lines(result.record).divergence is None


JUNK = """
    import json, sys

    cards = 0
    auction_done = False
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "fault_notice":
            print("notice:", m["fault"], m["detail"], file=sys.stderr, flush=True)
        if m["type"] != "decision_request":
            continue
        rid = m["request_id"]
        choice = {"card": m["legal_cards"][0]} if m["kind"] == "card" else {"contract": "pass"}
        good = json.dumps({"request_id": rid, **choice})
        if m["kind"] == "contract":
            out = [good]
            if not auction_done:  # and then a well-formed answer that nothing asked for
                out.append(json.dumps({"request_id": rid, "contract": "pass"}))
            auction_done = True
        else:
            cards += 1
            out = {
                1: ["this is not json"],
                2: ["[1, 2]"],
                3: ["x" * 10000],  # past MAX_LINE_BYTES
                4: [json.dumps({"request_id": 0, "card": "7S"}), good],  # stale, then the answer
                5: [json.dumps({"request_id": rid, "contract": "pass"})],
                6: [json.dumps({"request_id": rid})],
            }.get(cards, [good])
        sys.stdout.write("".join(o + "\\n" for o in out))
        sys.stdout.flush()
"""


def test_junk_lines_are_malformed_or_stale_and_the_match_goes_on(tmp_path: Path) -> None:
    junk = stdio_bot(tmp_path / "junk", "junk", JUNK)
    # Seed 5 deals hand 1 from seat 3: the junk bot speaks last in the auction, so its
    # unsolicited line is read long before the next request to it.
    rules = preset("classic", max_faults=50)
    result, stderrs = play(["heuristic", "cautious", "random", junk], rules=rules, seed=5)
    assert result.status == "finished" and result.places is not None
    assert result.faults[3] == {"malformed": 6, "stale": 1}, (result.faults, stderrs[3])
    assert result.faults[:3] == [{}, {}, {}]
    assert replay_lines(result.record).divergence is None
    # Each fault notice reaches the bot, those of MALFORMED lines with the bridge's reason.
    notices = stderrs[3].splitlines()
    expected = [
        'malformed unsolicited output (no request is pending): \'{"request_id": ',
        "malformed the line is not JSON (Expecting value: line 1 column 1 (char 0)): 'this is not json'",
        "malformed the line is JSON but not an object: '[1, 2]'",
        f"malformed the line is longer than {MAX_LINE_BYTES} bytes",
        "stale request_id 0 is not the pending request's",
        "malformed a card is needed",  # the referee's own reason: the line was a well-formed answer
        "malformed an answer has exactly one of 'card' and 'contract'",
    ]
    assert len(notices) == len(expected), notices
    for notice, start in zip(notices, expected, strict=True):
        assert notice.startswith("notice: " + start), notices


def test_a_garbage_printer_forfeits_after_max_faults(tmp_path: Path) -> None:
    garbage = stdio_bot(
        tmp_path / "garbage",
        "garbage",
        """
        import sys
        for line in sys.stdin:
            if '"decision_request"' in line:
                sys.stdout.write("this is not json\\n{{]\\n" + "x" * 100_000 + "\\n")
                sys.stdout.flush()
        """,
    )
    result, _ = play([garbage, "heuristic", "cautious", "random"])
    assert result.faults[0] == {"malformed": 3}
    assert result.status == "finished" and result.places is not None and result.places[0] == 4
    assert replay_lines(result.record).divergence is None


LEAVER = """
    import json, os, sys, time

    asked = 0
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decision_request":
            continue
        asked += 1
        if asked == 3:  # mid-hand: the auction and two cards played
            {how}
        answer = {{"request_id": m["request_id"]}}
        answer.update({{"card": m["legal_cards"][0]}} if m["kind"] == "card" else {{"contract": "pass"}})
        print(json.dumps(answer), flush=True)
"""


@pytest.mark.parametrize(
    ("how", "fault"),
    [
        ("sys.exit(3)", "crashed"),
        ("os.kill(os.getpid(), 9)", "crashed"),
        ("sys.exit(0)", "disconnected"),
    ],
)
def test_a_bot_that_leaves_mid_hand_forfeits(tmp_path: Path, how: str, fault: str) -> None:
    leaver = stdio_bot(tmp_path / "leaver", "leaver", LEAVER.format(how=how))
    result, _ = play(["heuristic", leaver, "cautious", "random"])
    assert result.faults[1] == {fault: 1}, result.faults
    assert result.status == "finished" and result.places is not None and result.places[1] == 4
    assert replay_lines(result.record).divergence is None


def test_a_bot_that_closes_its_stdout_is_disconnected(tmp_path: Path) -> None:
    # Unsandboxed: under bubblewrap the sandbox's own monitor process holds the pipe too,
    # so the close is seen only when the bot exits (until then it times out).
    leaver = stdio_bot(tmp_path / "leaver", "leaver", LEAVER.format(how="os.close(1); time.sleep(30)"))
    subs = [resolve_bot("heuristic"), leaver, resolve_bot("cautious"), resolve_bot("random")]

    async def capped() -> tuple[MatchResult, list[str]]:
        async with asyncio.timeout(60):
            return await run_local_match(subs, preset("classic"), 5, CLOCK, launcher=ProcessLauncher(), trusted=True)

    result, _ = run_sync(capped())
    assert result.faults[1] == {"disconnected": 1}, result.faults
    assert result.status == "finished" and result.places is not None and result.places[1] == 4


def test_a_bot_that_never_answers_times_out(tmp_path: Path) -> None:
    mute = stdio_bot(
        tmp_path / "mute",
        "mute",
        """
        import json, sys
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "decision_request" and m["kind"] == "contract":
                print(json.dumps({"request_id": m["request_id"], "contract": "pass"}), flush=True)
            elif m["type"] == "decision_request":
                sys.stdout.write(json.dumps({"request_id": m["request_id"], "card": m["legal_cards"][0]}))  # no newline
                sys.stdout.flush()
        """,
    )
    subs = [mute, resolve_bot("heuristic"), resolve_bot("cautious"), resolve_bot("random")]

    async def capped() -> tuple[MatchResult, list[str]]:
        async with asyncio.timeout(60):
            clock = TimeControl(move_ms=300, bank_ms=1000, startup_ms=10_000)
            return await run_local_match(subs, preset("classic"), 5, clock, seat_kind="process", trusted=True)

    result, _ = run_sync(capped())
    assert result.faults[0] == {"timeout": 3} and result.places is not None and result.places[0] == 4


def test_the_bridge_survives_a_bot_that_writes_binary_noise(tmp_path: Path) -> None:
    noisy = stdio_bot(
        tmp_path / "noisy",
        "noisy",
        """
        import os, sys
        for line in sys.stdin:
            if '"decision_request"' in line:
                sys.stdout.buffer.write(os.urandom(20_000))
                sys.stdout.flush()
        """,
    )
    result, _ = play([noisy, "heuristic", "cautious", "random"])
    assert result.status == "finished" and result.places is not None and result.places[0] == 4
    assert result.faults[0] == {"malformed": 3}


def test_docs_example_lines_are_what_the_bridge_writes() -> None:
    doc = (ROOT / "docs" / "stdio-protocol.md").read_text(encoding="utf-8")
    lines = [line[2:] for line in doc.splitlines() if line.startswith("> {")]
    assert len(lines) >= 10
    for text in lines:
        value: dict[str, Any] = json.loads(text)
        kind = value["type"]
        # Every documented line round-trips to the exact text the bridge would write for it.
        message = _message_of(value)
        [again] = [json.dumps(x, separators=(",", ":")) for x in response_lines(message)]
        assert again == text, kind
    answers = [line[2:] for line in doc.splitlines() if line.startswith("< {")]
    assert answers and all(parse_answer(a.encode())[0] is not None for a in answers)


def _message_of(value: dict[str, Any]) -> pb.PlayResponse:
    """The PlayResponse a documented line comes from (through protobuf's own JSON parser)."""
    from google.protobuf import json_format

    def enums(v: Any, key: str = "") -> Any:
        prefix = {
            "contract": "CONTRACT_",
            "legal_contracts": "CONTRACT_",
            "kind": "DECISION_KIND_",
            "fault": "FAULT_",
            "status_code": "MATCH_STATUS_",
            "exception": "SCORE_EXCEPTION_",
        }.get(key)
        if isinstance(v, dict):
            return {k: enums(x, k) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [enums(x, key) for x in v]
        return prefix + v.upper() if prefix and isinstance(v, str) else v

    body = enums({k: v for k, v in value.items() if k not in ("type", "event")})
    response = pb.PlayResponse()
    if value["type"] == "event":
        json_format.ParseDict({"events": [{value["event"]: body}]}, response)
    else:
        json_format.ParseDict({value["type"]: body}, response)
    return response


# -- unsolicited output, late answers, strict cards ------------------------------------------------


class _Writes:
    """A stand-in for the gRPC call: what the bridge forwards to the referee."""

    def __init__(self) -> None:
        self.sent: list[pb.PlayRequest] = []

    async def write(self, message: pb.PlayRequest) -> None:
        self.sent.append(message)


def test_a_blank_line_answers_the_pending_request_as_malformed() -> None:
    bridge = _Bridge(None, _Writes())  # type: ignore[arg-type]  # no stdin: the test hands the bridge its lines
    bridge.pending = 7
    message = bridge._judge(b"\r")
    assert message == pb.PlayRequest(decision=pb.Decision(request_id=7, card="<blank line>"))
    assert bridge.pending is None and bridge.reasons[-1] == (7, "a blank line (stdout is for answers only)")


def test_a_flood_while_nothing_is_pending_is_one_fault_then_dropped_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> tuple[list[pb.PlayRequest], int, int]:
        stdout = asyncio.StreamReader()
        stdout.feed_data(b"\n" * 3_000_000 + b"junk, a partial line")
        stdout.feed_eof()
        writes = _Writes()
        bridge = _Bridge(None, writes)  # type: ignore[arg-type]  # no stdin: the test hands the bridge its lines
        judged = reads = 0
        judge, read = bridge._judge, stdout.read

        def counting_judge(line: bytes) -> pb.PlayRequest:
            nonlocal judged
            judged += 1
            return judge(line)

        async def counting_read(n: int = -1) -> bytes:
            nonlocal reads
            reads += 1
            return await read(n)

        monkeypatch.setattr(bridge, "_judge", counting_judge)
        monkeypatch.setattr(stdout, "read", counting_read)
        await bridge.bot_to_referee(stdout)
        return writes.sent, judged, reads

    sent, judged, reads = run_sync(scenario())
    assert sent == [pb.PlayRequest()]  # one unsolicited fault, the referee not having answered it yet
    assert judged == 1  # the rest was never split into lines
    assert reads <= 3_000_000 // (64 * 1024) + 2


def test_line_reader_drops_whole_chunks_and_keeps_the_tail_as_the_next_line() -> None:
    async def scenario() -> list[bytes | None]:
        reader = asyncio.StreamReader()
        reader.feed_data(b"a\nb\nc")
        reader.feed_eof()
        lines = LineReader(reader, 8)
        first = await lines.next_line()
        assert await lines.drop_chunk() is False  # "b" dropped, "c" kept, then the end
        return [first, await lines.next_line()]

    assert run_sync(scenario()) == [b"a", None]  # a last line without newline is dropped, as ever

    async def tail() -> list[bytes | None]:
        reader = asyncio.StreamReader()
        reader.feed_data(b"x\n" * 10 + b"start of")
        lines = LineReader(reader, 64)
        assert await lines.drop_chunk()  # reads the chunk
        reader.feed_data(b" a line\nnext\n")
        reader.feed_eof()
        assert await lines.drop_chunk()  # drops its lines, keeps its tail, reads the next chunk
        return [await lines.next_line(), await lines.next_line(), await lines.next_line()]

    assert run_sync(tail()) == [b"start of a line", b"next", None]


BLANKS = """
    import json, sys

    cards = 0
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decision_request":
            continue
        if m["kind"] == "card":
            cards += 1
        if cards == 1 and m["kind"] == "card":
            sys.stdout.write("\\n")  # a blank line as the answer
        else:
            choice = {"card": m["legal_cards"][0]} if m["kind"] == "card" else {"contract": "pass"}
            sys.stdout.write(json.dumps({"request_id": m["request_id"], **choice}) + "\\n")
            if cards == 3:
                sys.stdout.write("\\n")  # a blank line nobody asked for
        sys.stdout.flush()
"""


def test_blank_lines_are_faults_like_any_other_line(tmp_path: Path) -> None:
    blanks = stdio_bot(tmp_path / "blanks", "blanks", BLANKS)
    result, _ = play([blanks, "heuristic", "cautious", "random"], rules=preset("classic", max_faults=10))
    assert result.faults[0] == {"malformed": 2}, result.faults
    assert result.faults[1:] == [{}, {}, {}] and result.status == "finished"


FLOOD = """
    import json, os, sys

    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "decision_request":
            choice = {"card": m["legal_cards"][0]} if m["kind"] == "card" else {"contract": "pass"}
            sys.stdout.write(json.dumps({"request_id": m["request_id"], **choice}) + "\\n")
            sys.stdout.flush()
            for _ in range(64):  # 64 MB of blank lines, as fast as the pipe takes them
                os.write(1, b"\\n" * (1 << 20))
"""


def test_a_blank_line_flood_forfeits_and_costs_the_arena_little(tmp_path: Path) -> None:
    flood = stdio_bot(tmp_path / "flood", "flood", FLOOD)
    before = resource.getrusage(resource.RUSAGE_SELF)
    result, _ = play([flood, "heuristic", "cautious", "random"])
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert result.faults[0] == {"malformed": 3} and result.places is not None and result.places[0] == 4, result.faults
    assert result.faults[1:] == [{}, {}, {}]
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert cpu < 10, f"the arena spent {cpu:.1f} s of CPU on the match"


LATE = """
    import json, sys, time

    cards = 0
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decision_request":
            continue
        if m["kind"] == "card":
            cards += 1
            if cards == 2:
                time.sleep(1.5)  # past move_ms, and there is no bank: a timeout, then this late answer
        choice = {"card": m["legal_cards"][0]} if m["kind"] == "card" else {"contract": "pass"}
        print(json.dumps({"request_id": m["request_id"], **choice}), flush=True)
"""


def test_a_late_answer_after_a_timeout_costs_no_second_fault(tmp_path: Path) -> None:
    late = stdio_bot(tmp_path / "late", "late", LATE)
    subs = [late, resolve_bot("heuristic"), resolve_bot("cautious"), resolve_bot("random")]

    async def capped() -> tuple[MatchResult, list[str]]:
        async with asyncio.timeout(60):
            clock = TimeControl(move_ms=1000, bank_ms=0, startup_ms=10_000)
            return await run_local_match(subs, preset("classic", limit=3), 5, clock, seat_kind="process", trusted=True)

    result, _ = run_sync(capped())
    assert result.faults[0] == {"timeout": 1}, result.faults


LOWER = """
    import json, sys

    cards = 0
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decision_request":
            continue
        if m["kind"] == "card":
            cards += 1
            card = m["legal_cards"][0]
            choice = {"card": card.lower() if cards == 1 else card}
        else:
            choice = {"contract": "pass"}
        print(json.dumps({"request_id": m["request_id"], **choice}), flush=True)
"""


def test_card_text_from_a_stdio_bot_is_taken_only_as_documented(tmp_path: Path) -> None:
    lower = stdio_bot(tmp_path / "lower", "lower", LOWER)
    result, _ = play([lower, "heuristic", "cautious", "random"])
    assert result.faults[0] == {"malformed": 1}, result.faults
