"""The bridge between a ``stdio`` bot (JSON lines on its stdin and stdout) and the referee's gRPC stream.

The arena starts one bridge per stdio seat.  The bridge is the gRPC client: it connects
with the seat's token, says Hello for the bot, writes every PlayResponse to the bot's
stdin as JSON lines and turns each line of the bot's stdout into a Decision.  The
protocol is docs/stdio-protocol.md; its rules, in code:

- A line is at most :data:`MAX_LINE_BYTES` bytes before its newline.
- With a request pending, a well-formed answer is forwarded as is (the referee judges
  its request_id, card and contract); any other line, a blank one included, answers the
  pending request with an unparseable card, which the referee counts MALFORMED (the
  fallback is played).
- With no request pending, any output is unsolicited: an empty PlayRequest goes to the
  referee, which counts it MALFORMED (ignored and counted).  One such fault at a time:
  until the referee has answered it, whatever else the bot writes while nothing is
  pending is dropped, a whole chunk at a time, so a flood costs the bridge one search
  and one read per chunk, not a loop over its lines.  The one exception is a well-formed
  answer to the request that just timed out: it is forwarded, and the referee drops it.
- The fault notices of those MALFORMED faults reach the bot with the bridge's reason as
  their ``detail``.
- Once the seat forfeits, the bot's stdout is no longer read (a bot that writes on
  blocks); the stream stays open until the referee sends MatchEnded.
- The bot closing its stdout (or exiting) half-closes the stream: the referee then sees
  a disconnect or, once it learns the exit status, a crash.  The stream ending closes
  the bot's stdin.

Nothing a bot writes can make the bridge raise or hold more than a line in memory.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import Callable
from functools import cache
from typing import Final, cast

import grpc
import grpc.aio
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub
from polignac.jsontypes import JsonObject, JsonValue
from polignac.limits import DEBUG_MAX
from polignac.wire import PROTOCOL_VERSION
from polignac_arena.seats.base import SeatProcess
from polignac_arena.settings import NAME_MAX, VERSION_MAX

__all__ = ["MAX_LINE_BYTES", "TOO_LONG", "LineReader", "LinesHook", "message_json", "parse_answer", "response_lines", "run_bridge"]

log = logging.getLogger(__name__)

MAX_LINE_BYTES: Final = 8192
"""The longest line a bot may write, newline not counted."""
_CHANNEL_OPTIONS: Final = [("grpc.max_receive_message_length", 1 << 20), ("grpc.max_send_message_length", 16 << 10)]
_CONTRACTS: Final = {"pass": pb.CONTRACT_PASS, "capot": pb.CONTRACT_CAPOT, "general": pb.CONTRACT_GENERAL}
_MAX_ID: Final = (1 << 64) - 1
_READ_CHUNK: Final = 64 * 1024
LinesHook = Callable[[list[JsonObject]], list[JsonObject]]
"""Changes the lines of one message before the bot reads them (the conformance report adds a later version's keys)."""
TOO_LONG: Final = b"\n"
"""What :meth:`LineReader.next_line` returns for an over-long line (a newline: no real line holds one)."""


# -- arena -> bot: the messages as JSON objects ---------------------------------------------


@cache
def _enum_names(enum: EnumDescriptor) -> dict[int, str]:
    """Wire names of an enum's values: the proto name without the enum's prefix, lowercase (``CONTRACT_PASS`` -> ``pass``)."""
    prefix = next((v.name[: -len("UNSPECIFIED")] for v in enum.values if v.name.endswith("_UNSPECIFIED")), "")
    return {v.number: v.name.removeprefix(prefix).lower() for v in enum.values}


def _scalar(field: FieldDescriptor, value: object) -> JsonValue:
    if field.type == field.TYPE_ENUM:
        return _enum_names(field.enum_type).get(value, "unspecified") if isinstance(value, int) else "unspecified"
    if field.type == field.TYPE_MESSAGE:
        return message_json(value)
    return cast(JsonValue, value)  # a scalar field: a number, a string or a bool


def message_json(message: Message) -> JsonObject:
    """A protobuf message as a JSON object: every field under its proto name, defaults included.

    Enums are their value names in lowercase without the type's prefix; an unset
    ``optional`` field is ``null``; maps are objects; 64-bit integers are numbers; of a
    oneof, only the member that is set.
    """
    out: JsonObject = {}
    for field in message.DESCRIPTOR.fields:
        oneof = field.containing_oneof
        if oneof is not None and not oneof.name.startswith("_") and message.WhichOneof(oneof.name) != field.name:
            continue  # a real oneof's other members (proto3 optional fields sit alone in synthetic "_name" oneofs)
        value = getattr(message, field.name)
        if field.type == field.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            out[field.name] = dict(sorted(value.items()))  # a stable order: protobuf maps have none
        elif field.is_repeated:
            out[field.name] = [_scalar(field, v) for v in value]
        elif field.has_presence and field.type != field.TYPE_MESSAGE and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _scalar(field, value)
    return out


def response_lines(response: pb.PlayResponse) -> list[JsonObject]:
    """The JSON objects a PlayResponse becomes, in order: one per event, then its payload."""
    lines: list[JsonObject] = []
    for event in response.events:
        kind = event.WhichOneof("event")
        if kind is not None:
            lines.append({"type": "event", "event": kind, **message_json(getattr(event, kind))})
    payload = response.WhichOneof("payload")
    if payload is not None:
        lines.append({"type": payload, **message_json(getattr(response, payload))})
    return lines


def _encode(lines: list[JsonObject]) -> bytes:
    return b"".join(json.dumps(line, separators=(",", ":")).encode("ascii") + b"\n" for line in lines)


# -- bot -> arena: one line, judged -----------------------------------------------------------


def parse_answer(line: bytes) -> tuple[pb.Decision | None, str, str]:
    """A bot's line as a Decision, or ``(None, tag, reason)`` when it is not a well-formed answer.

    The tag (at most 20 characters, never a card) is what the pending request is answered
    with; the reason is the sentence the bot reads in its fault notice.
    """
    try:
        # Decoded first: json.loads on bytes would guess UTF-16 or UTF-32, or skip a BOM, and the wire is UTF-8.
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, "<not UTF-8>", f"the line is not UTF-8 ({_short(str(exc))}): {_snippet(line)}"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return None, "<not JSON>", f"the line is not JSON ({_short(str(exc))}): {_snippet(line)}"
    if not isinstance(value, dict):
        return None, "<not an object>", f"the line is JSON but not an object: {_snippet(line)}"
    request_id = value.get("request_id")
    if "request_id" not in value:
        return None, "<no request_id>", f"the answer has no request_id: {_snippet(line)}"
    if type(request_id) is not int or not 0 <= request_id <= _MAX_ID:
        return None, "<bad request_id>", f"request_id must be a non-negative integer, got {_short(repr(request_id))}"
    has_card, has_contract = "card" in value, "contract" in value
    if has_card == has_contract:
        return None, "<card or contract>", "an answer has exactly one of 'card' and 'contract'"
    debug = value.get("debug", "")
    if not isinstance(debug, str):
        return None, "<debug not text>", f"'debug' must be text, got {_short(repr(debug))}"
    # The referee keeps DEBUG_MAX characters; a lone surrogate escape is JSON, but no protobuf string.
    debug = debug[: DEBUG_MAX * 2].encode("utf-8", "replace").decode("utf-8")
    if has_card:
        card = value["card"]
        if not isinstance(card, str):
            return None, "<card not text>", f"'card' must be text such as \"JS\", got {_short(repr(card))}"
        if not _encodable(card):
            return None, "<card not UTF-8>", f"'card' is not UTF-8 text (a lone surrogate), got {_short(repr(card))}"
        return pb.Decision(request_id=request_id, card=card[:32], debug=debug), "", ""
    contract = _CONTRACTS.get(value["contract"]) if isinstance(value["contract"], str) else None
    if contract is None:
        return None, "<bad contract>", f'\'contract\' must be "pass", "capot" or "general", got {_short(repr(value["contract"]))}'
    return pb.Decision(request_id=request_id, contract=contract, debug=debug), "", ""


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _short(text: str, size: int = 60) -> str:
    return text if len(text) <= size else text[: size - 3] + "..."


def _snippet(line: bytes) -> str:
    return _short(repr(line.decode("utf-8", "replace")))


class LineReader:
    """The lines of a stream, bounded: memory stays within one chunk plus ``limit`` bytes, whatever the stream holds.

    :meth:`next_line` returns lines one by one; :meth:`drop_chunk` ignores a flood at the
    cost of one search and one read per chunk.
    """

    def __init__(self, reader: asyncio.StreamReader, limit: int = MAX_LINE_BYTES) -> None:
        self._reader = reader
        self._limit = limit
        self._chunk = b""
        self._start = 0
        self._buffer = bytearray()
        self._skipping = False

    async def next_line(self) -> bytes | None:
        """The next line without its newline, :data:`TOO_LONG` for a line longer than ``limit``, ``None`` at the end.

        An over-long line is reported as soon as it is too long, and the rest of it is
        dropped up to its newline.  Bytes after the last newline at the end are dropped.
        """
        while True:
            end = self._chunk.find(b"\n", self._start)
            if end >= 0:
                piece = self._chunk[self._start : end]
                self._start = end + 1
                if self._skipping:
                    self._skipping = False
                    continue
                too_long = len(self._buffer) + len(piece) > self._limit
                line = TOO_LONG if too_long else bytes(self._buffer + piece)
                self._buffer.clear()
                return line
            rest = self._chunk[self._start :]
            self._chunk, self._start = b"", 0
            if not self._skipping:
                if len(self._buffer) + len(rest) > self._limit:
                    self._buffer.clear()
                    self._skipping = True
                    return TOO_LONG
                self._buffer += rest
            self._chunk = await self._reader.read(_READ_CHUNK)
            if not self._chunk:
                return None

    async def drop_chunk(self) -> bool:
        """Drop the buffered lines, then read the next chunk (unsplit); False at the end of the stream.

        Everything up to the last newline buffered now is dropped, the line it ends included;
        bytes after it start the next line, as :meth:`next_line` would keep them.
        """
        end = self._chunk.rfind(b"\n", self._start)
        if end >= 0:
            self._buffer.clear()
            self._skipping = False
            self._start = end + 1
        rest = len(self._chunk) - self._start
        if rest and not self._skipping:
            if len(self._buffer) + rest > self._limit:
                self._buffer.clear()
                self._skipping = True  # an over-long line begun while dropping: dropped whole, unreported
            else:
                self._buffer += self._chunk[self._start :]
        self._chunk, self._start = b"", 0
        self._chunk = await self._reader.read(_READ_CHUNK)
        return bool(self._chunk)


# -- the bridge ---------------------------------------------------------------------------------


class _Bridge:
    """The state one bridge shares between its two directions (both run on one event loop)."""

    def __init__(self, stdin: asyncio.StreamWriter, call: grpc.aio.StreamStreamCall, lines_hook: LinesHook | None = None) -> None:
        self.stdin = stdin
        self.call = call
        self.lines_hook = lines_hook
        self.pending: int | None = None  # the request the bot has been asked and not answered
        self.timed_out: int | None = None  # the request that timed out last: its late answer is forwarded, and dropped
        self.unsolicited_in_flight = False  # an unsolicited fault is sent and not yet answered by the referee
        self.forfeited = asyncio.Event()  # the seat forfeited: its stdout is no longer read
        self.reasons: collections.deque[tuple[int, str]] = collections.deque(maxlen=64)  # our MALFORMED, by request_id
        self.bot_listens = True

    async def referee_to_bot(self) -> None:
        """Every PlayResponse to the bot's stdin, until the referee ends the stream."""
        while True:
            response = await self.call.read()
            if response is grpc.aio.EOF:
                return
            payload = response.WhichOneof("payload")
            if payload == "decision_request":
                self.pending = response.decision_request.request_id
            elif payload == "fault_notice":
                notice = response.fault_notice
                if notice.fault == pb.FAULT_TIMEOUT and notice.request_id == self.pending:
                    self.pending, self.timed_out = None, self.pending  # the referee played for the bot
                if notice.fault == pb.FAULT_MALFORMED:
                    if notice.request_id == 0:
                        self.unsolicited_in_flight = False  # the referee has judged our unsolicited message
                    self._explain(notice)
                if notice.forfeited:
                    self.forfeited.set()
            elif payload == "match_ended":
                self.pending = None
            lines = response_lines(response)
            await self._to_bot(_encode(lines if self.lines_hook is None else self.lines_hook(lines)))

    def _explain(self, notice: pb.FaultNotice) -> None:
        for entry in self.reasons:
            if entry[0] == notice.request_id:
                self.reasons.remove(entry)
                notice.detail = entry[1][:500]
                return

    async def _to_bot(self, data: bytes) -> None:
        if not self.bot_listens:
            return
        try:
            self.stdin.write(data)
            await self.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:  # the bot closed its stdin or exited
            log.info("a stdio bot stopped reading its stdin: %r", exc)
            self.bot_listens = False

    async def bot_to_referee(self, stdout: asyncio.StreamReader) -> None:
        """Each line of the bot's stdout as a PlayRequest, until the bot closes it (or the stream ends).

        Cancelling it stops the reading at once; a message being forwarded is still delivered.
        """
        lines = LineReader(stdout, MAX_LINE_BYTES)
        while True:
            if self.pending is None and self.unsolicited_in_flight:
                # Read while nothing is pending, so unsolicited: one fault of it is on its way already.
                if not await lines.drop_chunk():
                    return
                continue
            line = await lines.next_line()
            if line is None:
                return
            message = self._judge(line)
            try:
                # Shielded: cancelling the bridge's reading must not cancel the RPC with it.
                await asyncio.shield(self.call.write(message))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the stream is over (grpc raises several kinds): nothing more to forward
                log.info("stdio bridge: cannot forward a line: %r", exc)
                return

    def _judge(self, line: bytes) -> pb.PlayRequest:
        """What one line of the bot becomes on the stream."""
        if line is TOO_LONG:
            decision, tag, reason = None, "<line too long>", f"the line is longer than {MAX_LINE_BYTES} bytes"
        elif not line.strip():
            decision, tag, reason = None, "<blank line>", "a blank line (stdout is for answers only)"
        else:
            decision, tag, reason = parse_answer(line)
        if self.pending is None:
            if decision is not None and decision.request_id == self.timed_out:
                self.timed_out = None
                return pb.PlayRequest(decision=decision)  # a late answer: the referee drops it, no second fault
            # Nothing was asked: the referee counts a message that is not a Decision as MALFORMED.
            what = reason or _snippet(line)
            self.reasons.append((0, f"unsolicited output (no request is pending): {what}"))
            self.unsolicited_in_flight = True
            return pb.PlayRequest()
        if decision is not None:
            if decision.request_id == self.pending:
                self.pending = None
            return pb.PlayRequest(decision=decision)  # another request_id: the referee says STALE
        self.reasons.append((self.pending, reason))
        message = pb.PlayRequest(decision=pb.Decision(request_id=self.pending, card=tag))
        self.pending = None
        return message


async def _drain(reader: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await reader.read(_READ_CHUNK):
            pass


def _close_quietly(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()


async def run_bridge(
    process: SeatProcess,
    address: str,
    token: str,
    *,
    bot_name: str = "stdio-bot",
    bot_version: str = "0",
    connect_timeout: float = 10.0,
    lines_hook: LinesHook | None = None,
) -> None:
    """Bridge a started stdio bot to the referee at ``address`` for the seat of ``token``, until either side ends.

    ``bot_name`` and ``bot_version`` go in the Hello (the runner passes the submission's);
    ``lines_hook`` may change the lines of each message before the bot reads them.
    Never raises for anything the bot or the referee does; cancel it to stop it early.
    """
    stdin, stdout = process.stdin, process.stdout
    if stdin is None or stdout is None:
        log.error("stdio bridge: the seat has no stdin/stdout pipes (was it started for the stdio transport?)")
        return
    async with grpc.aio.insecure_channel(address, options=_CHANNEL_OPTIONS) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), connect_timeout)
        except TimeoutError:
            log.error("stdio bridge: cannot reach the referee at %s within %g s", address, connect_timeout)
            _close_quietly(stdin)
            return
        stub = RefereeServiceStub(channel)
        call = stub.Play(metadata=(("authorization", f"Bearer {token}"),))
        bridge = _Bridge(stdin, call, lines_hook)
        hello = pb.Hello(
            protocol_version=PROTOCOL_VERSION, bot_name=bot_name[:NAME_MAX] or "stdio-bot", bot_version=bot_version[:VERSION_MAX]
        )
        try:
            await call.write(pb.PlayRequest(hello=hello))  # first, and alone: only one task writes from here on
        except Exception as exc:  # the referee is gone or refused the stream
            log.warning("stdio bridge: cannot say Hello: %r", exc)
            _close_quietly(stdin)
            call.cancel()
            return
        to_bot = asyncio.ensure_future(bridge.referee_to_bot())
        from_bot = asyncio.ensure_future(bridge.bot_to_referee(stdout))
        forfeit = asyncio.ensure_future(bridge.forfeited.wait())
        try:
            done, _ = await asyncio.wait({to_bot, from_bot, forfeit}, return_when=asyncio.FIRST_COMPLETED)
            if to_bot not in done:
                if forfeit in done:
                    from_bot.cancel()  # the bot's output no longer matters: leave it in its pipe
                else:
                    # The bot closed its stdout: end our half of the stream (the referee counts a disconnect).
                    with contextlib.suppress(Exception):
                        await call.done_writing()
                # The referee ends the stream once the match is over, after MatchEnded.
                await asyncio.wait({to_bot})
            for task in (to_bot, from_bot):
                error = task.exception() if task.done() and not task.cancelled() else None
                if isinstance(error, grpc.aio.AioRpcError):
                    log.warning("stdio bridge: the referee ended the stream: %s: %s", error.code().name, error.details())
                elif error is not None:
                    log.error("stdio bridge: %r", error)
        finally:
            tasks = (to_bot, from_bot, forfeit)
            for pending_task in tasks:
                pending_task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            _close_quietly(stdin)  # the match is over for this bot: EOF on its stdin
            call.cancel()
            # Read what is left, unsplit, until the bot ends (or is stopped): a pipe left full
            # would never report its end, and its descriptor would outlive the bot.
            await _drain(stdout)
