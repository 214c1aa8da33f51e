"""A match's journal read back: every way a file can be damaged is a JournalError naming the line, never a crash."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from polignac import Match, preset
from polignac_arena.referee.journal import JournalError, JournalHead, JournalWriter, read_journal, token_digest
from polignac_arena.settings import TimeControl

RULES = preset("classic", players=3)
SEATS = ("a@1", "b@1", "c@1")
HEAD = JournalHead("m-1", 4, 9, RULES, TimeControl(), SEATS, (None, token_digest("secret"), None), "2026-12-03T00:00:00+00:00")


def line(obj: object) -> bytes:
    text = json.dumps(obj).encode()
    return b"%08x %s\n" % (zlib.crc32(text), text)


def journal(tmp_path: Path, *extra: bytes) -> Path:
    path = tmp_path / "m-1.journal"
    JournalWriter.create(path, HEAD).close()
    with path.open("ab") as out:
        out.writelines(extra)
    return path


def first_card() -> str:
    return str(Match(RULES, 9).legal_decisions()[0])


def test_a_journal_reads_back_its_head_its_lines_and_the_match_they_make(tmp_path: Path) -> None:
    card = first_card()
    path = journal(
        tmp_path,
        line({"type": "seated", "names": ["a", "b", "c"], "versions": ["1", "1", "1"]}),
        line({"type": "action", "seat": 0, "hand": 1, "action": card, "request_id": 5, "status": "ok"}),
        line({"type": "bank", "seat": 0, "bank_ms": 9000.5}),
        line({"type": "away", "seat": 1, "hand": 1, "detail": "lost its stream"}),
    )
    state = read_journal(path)
    assert state.head == HEAD and state.names == ("a", "b", "c") and state.banks == {0: 9000.5}
    assert [item.type for item in state.lines] == ["action", "away"]
    assert state.match.to_act == 1 and state.match.event_count > 0
    assert "secret" not in path.read_text(), "the journal keeps a seat token's digest, never the token"
    assert token_digest("secret").hex() in path.read_text()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "it is empty"),
        (b"garbage", "it is cut short in line 1"),
        (b"not a journal\n", "line 1: not a journal line"),
        (b"zzzzzzzz {}\n", "line 1: not a journal line (its checksum is not hexadecimal)"),
        (b"%08x {}\n" % zlib.crc32(b"{} "), "line 1: its checksum does not match"),
        (line([1, 2]), "line 1: each line must be an object with a 'type'"),
        (b"%08x %s\n" % (zlib.crc32(b"{nope"), b"{nope"), "line 1: not JSON"),
        (line({"type": "header"}), "line 1: the first line must be the journal's head"),
        (line({**HEAD.to_dict(), "format": "polignac-journal/9"}), "unknown journal format"),
        (line({**HEAD.to_dict(), "seed": "9"}), "line 1: the head does not describe a match"),
        (line({**HEAD.to_dict(), "rules": {"players": 99}}), "line 1: the head does not describe a match"),
        (line({**HEAD.to_dict(), "labels": ["a@1"]}), "line 1: the head names 1 seats"),
        (line({**HEAD.to_dict(), "token_sha256": [None, "ab", None]}), "line 1: a token digest is not a SHA-256"),
        (line({**HEAD.to_dict(), "token_sha256": [None, "xyz", None]}), "line 1: the head does not describe a match"),
        (b"%08x %s\n" % (0, b"x" * (2 << 20)), "a line is longer than"),
    ],
)
def test_a_damaged_head_or_file_is_refused_with_the_reason(content: bytes, why: str, tmp_path: Path) -> None:
    path = tmp_path / "m-1.journal"
    path.write_bytes(content)
    with pytest.raises(JournalError) as caught:
        read_journal(path)
    assert why in str(caught.value), caught.value


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({"type": "result", "status": "finished", "totals": [0, 0, 0]}, "line 2: a 'result' line has no place"),
        ({"type": "bank", "seat": 7, "bank_ms": 1.0}, "line 2: a bank of 1.0 ms for seat 7 is out of range"),
        ({"type": "bank", "seat": 0, "bank_ms": 1e12}, "is out of range"),
        ({"type": "bank", "seat": 0}, "line 2: a bad bank line"),
        ({"type": "seated", "names": ["a"], "versions": ["1"]}, "line 2: 'seated' names 1 seats for 3 players"),
        ({"type": "action", "seat": 0, "hand": 1, "action": 5}, "line 2: a bad action line"),
        ({"type": "action", "seat": 0, "hand": 1, "action": "ZZ"}, "its actions do not replay"),
        ({"type": "away", "seat": "x", "hand": 1, "detail": ""}, "line 2: a bad away line"),
    ],
)
def test_a_line_that_is_not_what_it_should_be_is_refused_naming_it(bad: dict[str, object], why: str, tmp_path: Path) -> None:
    with pytest.raises(JournalError) as caught:
        read_journal(journal(tmp_path, line(bad)))
    assert why in str(caught.value), caught.value


def test_an_action_the_engine_refuses_is_refused_though_its_line_is_well_made(tmp_path: Path) -> None:
    match = Match(RULES, 9)
    illegal = next(card for card in match.view(1).hand)  # seat 1's card, played as if seat 0's: not in seat 0's hand
    path = journal(tmp_path, line({"type": "action", "seat": 0, "hand": 1, "action": str(illegal), "status": "ok"}))
    with pytest.raises(JournalError, match="its actions do not replay"):
        read_journal(path)


def test_a_writer_that_cannot_write_drops_its_journal_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "m-1.journal"
    writer = JournalWriter.create(path, HEAD)
    writer._file.close()  # type: ignore[union-attr]  # as a full disk or a vanished folder would make it fail
    assert writer.write({"type": "bank", "seat": 0, "bank_ms": 1.0}) is False
    assert not writer.open and not path.exists()
    assert "cannot be written" in caplog.text
    assert writer.write({"type": "bank", "seat": 0, "bank_ms": 1.0}) is False
