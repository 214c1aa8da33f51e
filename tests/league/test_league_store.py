"""The league's tables: authors and their tokens, bots owned by one author, versions, limits."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from polignac_arena.league.store import LeagueLimits, LeagueStore, LimitReached, NotOwner, VersionState
from polignac_arena.league.tokens import FAST_TAG, BadTokenThrottle, Throttled, is_slow_hash, parse_token, scrypt_secret
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import ConflictError, Store, StoreError


def prior(inherited: tuple[float, float] | None) -> tuple[float, float]:
    return ((inherited[0] if inherited else 25.0), 25.0 / 3)


@pytest.fixture
def store(tmp_path: Path) -> LeagueStore:
    return LeagueStore(tmp_path / "league.db")


def league(store: LeagueStore) -> int:
    return store.arena.create_tournament("league", {"league": True}, [])


def test_a_token_is_shown_once_and_only_its_keyed_hash_is_stored(store: LeagueStore) -> None:
    author, token = store.add_author("ada")
    parts = parse_token(token)
    assert parts is not None and author.name == "ada"
    assert store.author_of(token) == "ada"
    conn = sqlite3.connect(store.path)
    rows = conn.execute("SELECT id, salt, hash FROM league_tokens").fetchall()
    conn.close()
    assert [r[0] for r in rows] == [parts.id]
    assert parts.secret.encode() not in rows[0][1] + rows[0][2]
    assert rows[0][2].startswith(FAST_TAG) and len(rows[0][2]) == len(FAST_TAG) + 32
    raw = store.path.read_bytes() + (
        store.path.with_name(store.path.name + "-wal").read_bytes() if store.path.with_name(store.path.name + "-wal").exists() else b""
    )
    assert parts.secret.encode() not in raw


def _as_made_before(store: LeagueStore, token: str) -> None:
    """Store ``token``'s hash as the league did before keyed hashes: scrypt, untagged."""
    parts = parse_token(token)
    assert parts is not None
    with store.arena.write() as conn:
        salt = conn.execute("SELECT salt FROM league_tokens WHERE id = ?", (parts.id,)).fetchone()[0]
        conn.execute("UPDATE league_tokens SET hash = ? WHERE id = ?", (scrypt_secret(parts.secret, salt), parts.id))


def _stored_hash(path: Path, token: str) -> bytes:
    parts = parse_token(token)
    assert parts is not None
    conn = sqlite3.connect(path)
    try:
        return bytes(conn.execute("SELECT hash FROM league_tokens WHERE id = ?", (parts.id,)).fetchone()[0])
    finally:
        conn.close()


def test_a_token_stored_with_the_old_scrypt_hash_still_passes_and_is_rewritten_once(tmp_path: Path) -> None:
    path = tmp_path / "league.db"
    with LeagueStore(path) as admin:
        _, token = admin.add_author("ada")
        _, other = admin.add_author("bob")
        _as_made_before(admin, token)
        _as_made_before(admin, other)
    old = _stored_hash(path, token)
    assert is_slow_hash(old) and len(old) == 32
    parts = parse_token(token)
    assert parts is not None
    with LeagueStore(path) as server:
        assert server.author_of(f"plg_{parts.id}_{'B' * 43}") is None  # a wrong secret: refused, and nothing rewritten
        assert _stored_hash(path, token) == old
        assert server.author_of(token) == "ada"
    new = _stored_hash(path, token)
    assert new.startswith(FAST_TAG) and not is_slow_hash(new)
    assert is_slow_hash(_stored_hash(path, other))  # a token not used keeps its old hash, and still passes
    with LeagueStore(path) as restarted:  # a new process: checked with the keyed hash
        assert restarted.author_of(token) == "ada" and restarted.author_of(other) == "bob"
        assert restarted.author_of(f"plg_{parts.id}_{'B' * 43}") is None


def test_a_revoked_token_with_an_old_hash_is_refused_and_not_rewritten(store: LeagueStore) -> None:
    _, token = store.add_author("ada")
    _as_made_before(store, token)
    parts = parse_token(token)
    assert parts is not None
    store.revoke_token(parts.id)
    assert store.author_of(token) is None
    assert is_slow_hash(_stored_hash(store.path, token))


@pytest.mark.parametrize("bad", ["", "Bearer x", "plg_00000000_" + "A" * 43, "plg_zz_" + "A" * 43, "x" * 10_000])
def test_missing_malformed_and_unknown_tokens_name_no_author(store: LeagueStore, bad: str) -> None:
    store.add_author("ada")
    assert store.author_of(bad) is None


def test_a_guessed_secret_for_a_real_token_id_is_refused(store: LeagueStore) -> None:
    _, token = store.add_author("ada")
    parts = parse_token(token)
    assert parts is not None
    assert store.author_of(f"plg_{parts.id}_{'B' * 43}") is None


def test_revoked_and_rotated_tokens_stop_working_at_once_even_when_remembered(tmp_path: Path) -> None:
    path = tmp_path / "league.db"
    server, admin = LeagueStore(path), LeagueStore(path)  # the server process and the operator's command
    _, first = admin.add_author("ada")
    second = admin.new_token("ada")
    assert server.author_of(first) == "ada" and server.author_of(second) == "ada"
    parts = parse_token(first)
    assert parts is not None
    assert admin.revoke_token(parts.id).revoked_at is not None
    assert server.author_of(first) is None and server.author_of(second) == "ada"
    third = admin.rotate_tokens("ada")
    assert server.author_of(second) is None and server.author_of(third) == "ada"
    assert [t.active for t in admin.tokens("ada")] == [False, False, True]
    with pytest.raises(StoreError, match="no token with id 'nope'"):
        admin.revoke_token("nope")
    with pytest.raises(StoreError, match="no author named 'bob'"):
        admin.rotate_tokens("bob")


def test_author_names_are_checked_and_unique(store: LeagueStore) -> None:
    store.add_author("ada")
    with pytest.raises(ConflictError, match="already an author named 'ada'"):
        store.add_author("ada")
    for bad in ("", "-x", "a b", "a" * 65, "é"):
        with pytest.raises(ValueError, match="an author's name must be"):
            store.add_author(bad)


def test_a_bot_belongs_to_the_author_who_first_submits_it(store: LeagueStore) -> None:
    store.add_author("ada")
    store.add_author("bob")
    store.add_upload("ada", "lovelace", "a" * 64, LeagueLimits())
    with pytest.raises(NotOwner, match="'lovelace' belongs to another author"):
        store.add_upload("bob", "lovelace", "b" * 64, LeagueLimits())
    with pytest.raises(NotOwner):
        store.claim_remote("bob", "lovelace", "1.0", LeagueLimits(), prior, league(store))
    assert [v.author for v in store.versions("lovelace")] == ["ada"]


def test_uploads_per_hour_are_limited(store: LeagueStore) -> None:
    store.add_author("ada")
    limits = LeagueLimits(uploads_per_hour=2)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    store.add_upload("ada", "x", "a" * 64, limits, now=start)
    store.add_upload("ada", "x", "b" * 64, limits, now=start + timedelta(minutes=1))
    with pytest.raises(LimitReached, match="2 upload\\(s\\) per hour"):
        store.add_upload("ada", "x", "c" * 64, limits, now=start + timedelta(minutes=2))
    store.add_upload("ada", "x", "c" * 64, limits, now=start + timedelta(minutes=61))


def test_active_bots_are_limited_and_a_new_version_of_one_is_not(store: LeagueStore) -> None:
    store.add_author("ada")
    limits = LeagueLimits(active_bots=1, uploads_per_hour=100)
    store.add_upload("ada", "one", "a" * 64, limits)
    with pytest.raises(LimitReached, match="1 active bot\\(s\\) per author is reached \\(one\\)"):
        store.add_upload("ada", "two", "b" * 64, limits)
    store.add_upload("ada", "one", "c" * 64, limits)
    assert store.bot("two") is None


def test_validation_activates_a_version_retires_the_previous_and_resets_its_sigma(store: LeagueStore) -> None:
    tid = league(store)
    store.add_author("ada")
    first, _ = store.add_upload("ada", "x", "a" * 64, LeagueLimits())
    assert first.state is VersionState.QUEUED and first.label == "x@1"
    store.start_validation(first.id)
    store.append_log(first.id, "building\n")
    active = store.finish_validation(first.id, True, "", tid, prior)
    assert active.state is VersionState.ACTIVE and active.log == "building\n"
    assert store.arena.ratings(tid)["x@1"] == (25.0, 25.0 / 3)
    with store._write() as conn:  # the ladder moved its rating meanwhile
        conn.execute("UPDATE ratings SET mu = 31.0, sigma = 1.5 WHERE bot = 'x@1'")
    second, _ = store.add_upload("ada", "x", "b" * 64, LeagueLimits())
    store.finish_validation(second.id, True, "", tid, prior)
    states = {v.label: v.state for v in store.versions("x")}
    assert states == {"x@1": VersionState.RETIRED, "x@2": VersionState.ACTIVE}
    assert store.arena.ratings(tid)["x@2"] == (31.0, 25.0 / 3)  # the mean carried over, the uncertainty fresh
    assert store.arena.ratings(tid)["x@1"] == (31.0, 1.5)  # the retired version keeps its history
    assert [v.label for v in store.active_versions()] == ["x@2"]
    refused, _ = store.add_upload("ada", "x", "c" * 64, LeagueLimits())
    assert store.finish_validation(refused.id, False, "the build failed", tid, prior).reason == "the build failed"
    assert [v.label for v in store.active_versions()] == ["x@2"]


def test_versions_kept_prunes_the_oldest_inactive_archives(store: LeagueStore) -> None:
    tid = league(store)
    store.add_author("ada")
    limits = LeagueLimits(versions_kept=2, uploads_per_hour=100)
    pruned_all = []
    for n in range(4):
        version, pruned = store.add_upload("ada", "x", f"{n}" * 64, limits)
        store.finish_validation(version.id, True, "", tid, prior)
        pruned_all += pruned
    assert pruned_all == ["0" * 64, "1" * 64]
    assert [v.archive is not None for v in store.versions("x")] == [False, False, True, True]


def test_a_disabled_bot_leaves_the_ladder_and_takes_no_version(store: LeagueStore) -> None:
    tid = league(store)
    store.add_author("ada")
    version, _ = store.add_upload("ada", "x", "a" * 64, LeagueLimits())
    store.finish_validation(version.id, True, "", tid, prior)
    store.set_disabled("x", True)
    assert store.active_versions() == []
    with pytest.raises(LimitReached, match="disabled"):
        store.add_upload("ada", "x", "b" * 64, LeagueLimits())
    store.set_disabled("x", False)
    assert [v.label for v in store.active_versions()] == ["x@1"]


def test_a_remote_version_is_active_on_its_first_connection(store: LeagueStore) -> None:
    tid = league(store)
    store.add_author("ada")
    first = store.claim_remote("ada", "far", "1.0", LeagueLimits(), prior, tid)
    assert first.state is VersionState.ACTIVE and first.label == "far@1.0"
    assert store.claim_remote("ada", "far", "1.0", LeagueLimits(), prior, tid).id == first.id
    store.claim_remote("ada", "far", "2.0", LeagueLimits(), prior, tid)
    assert {v.label: v.state for v in store.versions("far")} == {"far@1.0": VersionState.RETIRED, "far@2.0": VersionState.ACTIVE}
    with pytest.raises(ValueError, match="remote bot's version"):
        store.claim_remote("ada", "far", "a b", LeagueLimits(), prior, tid)


def test_a_rerun_is_scheduled_once(store: LeagueStore) -> None:
    tid = league(store)
    idx = store.schedule(tid, ["a@1", "b@1", "c@1"], 7)
    store.arena.record_result(
        tid,
        idx,
        match_id="m1",
        status=MatchStatus.FINISHED,
        places=[1, 2, 3],
        totals=[0, 1, 2],
        faults=[{}, {}, {}],
        hands=1,
        rate=lambda c, s, p: {b: (25.0, 8.0) for b in s},
    )
    with pytest.raises(StoreError, match="no match 'nope'"):
        store.request_rerun("nope")
    request = store.request_rerun("m1")
    assert store.pending_reruns() == [(request, "m1")]
    again = store.schedule(tid, ["a@1", "b@1", "c@1"], 7, rerun=request)
    assert again == idx + 1 and store.pending_reruns() == []


def test_an_arena_store_of_schema_1_gains_the_league_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from polignac_arena.store import schema

    path = tmp_path / "old.db"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
    with Store(path) as old:
        old.add_bot("alpha", "1", "/bots/alpha", "d1", "python")
    monkeypatch.undo()
    with LeagueStore(path) as new:
        new.add_author("ada")
        assert new.arena.get_bot("alpha") is not None


def test_bad_tokens_from_one_address_are_slowed_down_and_a_good_one_clears_it() -> None:
    now = [0.0]
    throttle = BadTokenThrottle(free=2, first_block_s=1, max_block_s=8, clock=lambda: now[0])
    for _ in range(2):
        throttle.check("10.0.0.1")
        throttle.failed("10.0.0.1")
    throttle.check("10.0.0.1")  # the free ones cost nothing
    blocks = []
    for _ in range(6):
        throttle.failed("10.0.0.1")
        with pytest.raises(Throttled) as info:
            throttle.check("10.0.0.1")
        blocks.append(info.value.retry_after_s)
        throttle.check("10.0.0.2")  # another address is not slowed
    assert blocks == [1, 2, 4, 8, 8, 8]
    now[0] += 9
    throttle.check("10.0.0.1")
    throttle.succeeded("10.0.0.1")
    throttle.failed("10.0.0.1")
    throttle.check("10.0.0.1")


def test_the_throttle_remembers_a_bounded_number_of_addresses() -> None:
    throttle = BadTokenThrottle(free=0, max_addresses=100)
    for n in range(1000):
        throttle.failed(f"addr{n}")
    assert len(throttle._records) == 100
    with pytest.raises(Throttled):
        throttle.check("addr999")


def test_checking_an_upload_refuses_as_adding_would_and_writes_nothing(store: LeagueStore) -> None:
    store.add_author("ada")
    store.add_author("bob")
    limits = LeagueLimits(active_bots=1)
    store.check_upload("ada", "new", limits)
    assert store.bot("new") is None
    store.add_upload("ada", "one", "a" * 64, limits)
    with pytest.raises(LimitReached):
        store.check_upload("ada", "two", limits)
    with pytest.raises(NotOwner):
        store.check_upload("bob", "one", limits)
    assert store.archive_in_use("a" * 64) and store.archives_in_use() == {"a" * 64}


def _last_seen(store: LeagueStore, label: str, when: datetime) -> None:
    """Make a remote version look last seen at ``when`` (as if it had left the lobby then)."""
    bot, _, version = label.rpartition("@")
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute(
            "UPDATE league_versions SET updated_at = ? WHERE version = ? AND bot_id = (SELECT id FROM league_bots WHERE name = ?)",
            (when.astimezone(UTC).isoformat(timespec="milliseconds"), version, bot),
        )
    conn.close()


def test_the_limit_each_join_counts_agrees_with_the_bots_listed_as_counting(store: LeagueStore) -> None:
    """A Join checks ``active_bots`` with a count made by SQLite; it refuses exactly when the list of counted bots
    (the operator's, the author API's) says the limit is reached without the new name."""
    tid = league(store)
    store.add_author("ada")
    store.add_author("bob")
    roomy = LeagueLimits(active_bots=100, uploads_per_hour=1000, remote_idle_s=3600)
    for bot in ("fresh", "stale_online", "stale_offline", "disabled", "retired"):
        store.claim_remote("ada", bot, "1.0", roomy, prior, tid)
    store.claim_remote("bob", "bobs", "1.0", roomy, prior, tid)
    for label in ("stale_online@1.0", "stale_offline@1.0"):
        _last_seen(store, label, datetime.now(UTC) - timedelta(hours=2))
    store.set_disabled("disabled", True)
    store.retire("ada", "retired")
    online = {"stale_online", "bobs"}
    for active in range(1, 5):
        limits = LeagueLimits(active_bots=active, uploads_per_hour=1000, remote_idle_s=3600)
        counted = store.counted_bots("ada", limits, online)
        assert counted == {"fresh", "stale_online"}
        for name in ("fresh", "stale_online", "stale_offline", "retired", "new"):
            refused = name not in counted and len(counted) >= active
            if refused:
                with pytest.raises(LimitReached, match="active bot"):
                    store.check_upload("ada", name, limits, online=online)
            else:
                store.check_upload("ada", name, limits, online=online)


def test_a_remote_bot_counts_toward_active_bots_while_online_and_for_the_idle_time_after(store: LeagueStore) -> None:
    tid = league(store)
    store.add_author("ada")
    limits = LeagueLimits(active_bots=1, remote_idle_s=3600)
    store.claim_remote("ada", "far", "1.0", limits, prior, tid)
    assert store.counted_bots("ada", limits) == {"far"}
    with pytest.raises(LimitReached, match=r"the limit of 1 active bot\(s\) per author is reached \(far\)"):
        store.claim_remote("ada", "other", "1.0", limits, prior, tid)
    # Gone for longer than the idle time: it no longer counts, unless it is online now.
    _last_seen(store, "far@1.0", datetime.now(UTC) - timedelta(hours=2))
    assert store.counted_bots("ada", limits, online={"far"}) == {"far"}
    with pytest.raises(LimitReached):
        store.claim_remote("ada", "other", "1.0", limits, prior, tid, online={"far"})
    assert store.counted_bots("ada", limits) == set()
    store.claim_remote("ada", "other", "1.0", limits, prior, tid)
    # Seen again (it joined or left the lobby): it counts again.
    store.seen("other@1.0")
    assert store.counted_bots("ada", limits) == {"other"}


def test_an_author_retires_a_bot_which_stops_counting_and_comes_back_when_it_connects(store: LeagueStore) -> None:
    tid = league(store)
    store.add_author("ada")
    store.add_author("bob")
    limits = LeagueLimits(active_bots=1)
    store.claim_remote("ada", "far", "1.0", limits, prior, tid)
    with pytest.raises(NotOwner):
        store.retire("bob", "far")
    with pytest.raises(StoreError, match="there is no bot named 'nobody'"):
        store.retire("ada", "nobody")
    retired = store.retire("ada", "far")
    assert retired.state is VersionState.RETIRED and retired.reason == "retired by its author"
    assert store.counted_bots("ada", limits) == set()
    with pytest.raises(StoreError, match="has no active version to retire"):
        store.retire("ada", "far")
    store.claim_remote("ada", "other", "1.0", limits, prior, tid)  # the slot is free
    store.retire("ada", "other")
    again = store.claim_remote("ada", "far", "1.0", limits, prior, tid)
    assert again.state is VersionState.ACTIVE


def test_a_burst_of_checks_of_one_old_token_hashes_it_only_as_often_as_hashes_run_at_once(
    store: LeagueStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many bots of one author joining at once (a restarted bot farm) with a token stored by scrypt: the first checks hash
    it, the ones that waited for them find it checked and do not hash it again."""
    import threading

    import polignac_arena.league.store as league_store
    import polignac_arena.league.store_tokens as store_tokens
    from polignac_arena.league.tokens import verify_secret

    _, token = store.add_author("ada")
    _as_made_before(store, token)
    hashed = []

    def counted(secret: str, salt: bytes, digest: bytes) -> bool:
        hashed.append(1)
        return verify_secret(secret, salt, digest)

    monkeypatch.setattr(store_tokens, "verify_secret", counted)
    start = threading.Barrier(20)
    authors: list[str | None] = []

    def check() -> None:
        start.wait()
        authors.append(store.author_of(token))

    threads = [threading.Thread(target=check) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert authors == ["ada"] * 20
    assert len(hashed) <= league_store.HASHES_AT_ONCE
