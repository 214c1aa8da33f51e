"""What a remote bot's author and a league's operator read is what the code does: every number and text, in the docs."""

from __future__ import annotations

from pathlib import Path

from polignac.bot import league as sdk_league
from polignac_arena.league import interrupted, lobby, play
from polignac_arena.league.config import parse_league_config
from polignac_arena.referee import options

ROOT = Path(__file__).resolve().parents[2]


def _doc(name: str) -> str:
    return " ".join((ROOT / "docs" / name).read_text(encoding="utf-8").split())  # line breaks do not matter


def test_the_protocol_page_tells_the_lobby_and_every_remote_timing() -> None:
    doc = _doc("protocol.md")
    config = parse_league_config("", ROOT / "league.toml")
    for words in (
        # The lobby's events and what they mean for a client.
        "`Withdrawn` (`match_id`, `reason`)",
        "`Paused` (`pause_ms`, `reason`)",
        "**One match at a time.**",
        "**A declined or unanswered assignment costs the others nothing.**",
        "**A bot that declines is paused.**",
        "**The same seat token takes the seat back even while the referee still holds the old stream**",
        "The seat token is the secret of the seat",
        # Every lobby status and its text.
        "missing, unknown or revoked API token (send 'authorization: Bearer <token>')",
        "the bot 'NAME' belongs to another author: choose another name",
        "the bot 'NAME' is disabled by the league's operator",
        "NAME@VERSION was retired by its author: it stays out of the league until it joins again",
        "the first message must be a Join",
        f"more than {lobby.MAX_UNSOLICITED} replies that answer no pending assignment",
        "no Join within 10 s",
        f"no answer to assignment 'ID' within {config.reply_ms} ms: the bot is taken offline",
        "bot 'NAME@VERSION' joined on another stream, which replaces this one",
        # TLS as the code applies it.
        "serves TLS on **every** address it listens on, loopback ones included",
        "(plaintext: loopback only)",
        "speaks TLS, and this client connected in plaintext",
        # Timings.
        f"{config.reattach_grace_s:g} s by default, counted from when the referee found the stream gone",
        f"{config.decline_pause_s:g} s; {config.pause_s:g} s after {config.pause_after} in a row",
        f"{config.idle_minutes:g} minutes after it was last seen",
        f"until the grace plus {sdk_league.DETECTION_S + sdk_league.RESTART_S:g} s after you noticed the break",
        f"{sdk_league.DETECTION_S:g} s because your side may notice the break before the referee does",
        f"{sdk_league.RESTART_S:g} s so that a restart of the league costs you nothing",
        f"`reattach_grace_ms` + {sdk_league.DETECTION_S + sdk_league.RESTART_S:g} s after the break",
        "**A restart of the league.**",
        "your **old seat token** takes it back",
        "0.5 s doubling to 15 s",
        "50 ms doubling to 1 s",
        # What a Node, Go or Java author needs.
        "keepCase: true",
        "longs: String",
        "enums: String",
        "defaults: true",
        "oneofs: true",
        f"'grpc.keepalive_time_ms': {sdk_league.KEEPALIVE_TIME_MS}",
        f"'grpc.keepalive_timeout_ms': {sdk_league.KEEPALIVE_TIMEOUT_MS}",
        "'grpc.keepalive_permit_without_calls': 1",
        "`grpc.http2.max_pings_without_data` 0",
        "grpc-go raises a `Time` under 10 s to 10 s",
    ):
        assert words in doc, words


def test_the_sdk_pings_as_the_referee_permits_and_finds_a_dead_path_well_inside_the_grace() -> None:
    config = parse_league_config("", ROOT / "league.toml")
    assert sdk_league.KEEPALIVE_TIME_MS >= options.MIN_PING_INTERVAL_MS * 2, "room for jitter before a ping counts as too soon"
    for time_ms, timeout_ms in (
        (options.KEEPALIVE_TIME_MS, options.KEEPALIVE_TIMEOUT_MS),
        (sdk_league.KEEPALIVE_TIME_MS, sdk_league.KEEPALIVE_TIMEOUT_MS),
    ):
        assert (time_ms + timeout_ms) / 1000 <= config.reattach_grace_s / 2
    sdk = dict(sdk_league.KEEPALIVE_OPTIONS)
    assert sdk["grpc.http2.ping_timeout_ms"] == sdk["grpc.keepalive_timeout_ms"] == sdk_league.KEEPALIVE_TIMEOUT_MS
    assert sdk["grpc.http2.max_pings_without_data"] == 0
    server = dict(options.server_options(remote=True))
    assert server["grpc.http2.ping_timeout_ms"] == server["grpc.keepalive_timeout_ms"] == options.KEEPALIVE_TIMEOUT_MS
    assert (
        dict(options.server_options())["grpc.http2.min_ping_interval_without_data_ms"]
        == server["grpc.http2.min_ping_interval_without_data_ms"]
    ), "one client configuration works on every socket"


def test_the_league_page_tells_the_operator_and_the_author() -> None:
    doc = _doc("league.md")
    config = parse_league_config("", ROOT / "league.toml")
    for words in (
        f"reattach_grace_s = {config.reattach_grace_s:g}",
        f"reply_ms = {config.reply_ms}",
        f"decline_pause_s = {config.decline_pause_s:g}",
        f"pause_after = {config.pause_after}",
        f"pause_s = {config.pause_s:g}",
        f"idle_minutes = {config.idle_minutes:g}",
        "remote bots connect to 0.0.0.0:50051 (TLS)",
        "(plaintext: loopback only)",
        "polignac league bots --server",
        "polignac league retire my_bot --server",
        "POST /api/league/bots/NAME/retire",
        f"pings every connection {options.KEEPALIVE_TIME_MS // 1000} s after the last ping was answered",
        f"drops one that does not answer within {options.KEEPALIVE_TIMEOUT_MS // 1000} s",
        "the last 10,000 seats of ended matches",
        f"its last {lobby.MAX_WITHDRAWN} withdrawn matches",
        "offers it one match at a time",
        interrupted.INTERRUPTED,
        interrupted.JOURNAL_UNREADABLE.format(why="WHY"),
        f"{play.AWAY_AFTER_RESTART}; it may come back within G s",
        "data/journals",
    ):
        assert words in doc, words
