"""A real ``polignac league serve`` killed outright mid-upload and mid-match, then restarted; and drained by SIGTERM.

After ``kill -9`` and a restart on the same files nothing is lost or counted twice: every
fixture of the league's tournament has exactly one final result (the killed matches played on
from their journals, or void when the kill came before a journal began), the
results from before the kill are all there, the ratings are a replay of the finished results in
fixture order, each upload is wholly stored (version, archive, unpacked folder) or not at all,
no temporary file is left, the versions cut in their validation are validated again, and the
ladder plays on.  The bots are sandboxed (bubblewrap) where it is installed.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from polignac_arena.archive import TEMP_PREFIX, pack_folder
from polignac_arena.archive_store import ArchiveStore
from polignac_arena.league.config import LeagueConfig, load_league_config
from polignac_arena.league.interrupted import INTERRUPTED
from polignac_arena.league.store import LeagueStore, VersionState
from polignac_arena.ratings import RatingEnv, rate_match
from polignac_arena.statuses import MatchStatus
from polignac_arena.store.records import StoredResult
from tests.league.league_process import (
    DEADLINE_S,
    LeagueProcess,
    add_author,
    bot_folder,
    processes_mentioning,
    seed_active,
    versions_by_state,
    write_league,
)

AUTHOR = "ada"


def slow_build(marker: Path) -> tuple[str, ...]:
    """A build step long enough for a kill to cut it (it runs in the version's validation only, never in a match).

    Its command line holds ``marker``, so a test sees it running.
    """
    return ("python", "-c", f"import time; time.sleep(2)  # {marker}")


SLEEPY_BOT = """\
import random
import time

from polignac.bot import Bot, run


class SleepyBot(Bot):
    name = "sleepy"

    def play(self, view):
        time.sleep(0.2)  # a fifth of its move clock: a match of some thirty such moves outlasts the drain deadline
        return random.choice(view.legal_cards)


if __name__ == "__main__":
    run(SleepyBot())
"""


@dataclass
class Upload:
    """One upload sent by a test: its bot, its archive's SHA-256, and the server's answer (None: none came)."""

    bot: str
    declared: str
    """The name its bot.toml gives: another than :attr:`bot` has it refused in its validation, without a smoke match."""
    sha: str
    files: dict[str, bytes]
    status: int | None = None
    submission: str | None = None


@dataclass
class Uploader:
    """Sends uploads with raw HTTP requests and remembers each one."""

    token: str
    folder: Path
    sent: list[Upload] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    """Set to let the stalled uploads send the rest of their bodies."""
    threads: list[threading.Thread] = field(default_factory=list)

    def _archive(self, bot: str, declared: str | None = None, build: Sequence[str] = ()) -> tuple[Upload, bytes]:
        """A new version of ``bot`` (see :func:`bot_folder`): sample_bots/random with a file of its own, so archives differ."""
        number = len(self.sent)
        extra = f"upload {number}\n" + "x" * 200_000
        folder = bot_folder(self.folder / f"upload-{number}", bot, declared=declared, build=build, extra=extra)
        data = pack_folder(folder)
        files = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        upload = Upload(bot, declared or bot, hashlib.sha256(data).hexdigest(), files)
        self.sent.append(upload)
        return upload, data

    def _post(self, web: str, upload: Upload, body: bytes | Iterator[bytes]) -> None:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/gzip"}
        try:
            answer = httpx.post(f"{web}/api/league/bots/{upload.bot}/versions", content=body, headers=headers, timeout=DEADLINE_S)
        except httpx.TransportError:
            return  # the server died under it
        upload.status = answer.status_code
        if answer.status_code == 202:
            upload.submission = answer.json()["id"]

    def post(self, web: str, bot: str, build: Sequence[str] = ()) -> Upload:
        """Upload a new version of ``bot`` (with its ``build`` step) and wait for the answer."""
        upload, data = self._archive(bot, build=build)
        self._post(web, upload, data)
        return upload

    def start(self, web: str, bot: str, declared: str | None = None) -> Upload:
        """Upload a new version of ``bot`` (its bot.toml naming ``declared``) from a thread."""
        upload, data = self._archive(bot, declared)
        thread = threading.Thread(target=self._post, args=(web, upload, data))
        self.threads.append(thread)
        thread.start()
        return upload

    def stall(self, web: str, bot: str) -> threading.Event:
        """Upload a new version of ``bot`` from a thread, sending half its body until :attr:`release`; set once half is sent."""
        upload, data = self._archive(bot)
        sent = threading.Event()

        def body() -> Iterator[bytes]:
            yield data[: len(data) // 2]
            sent.set()  # the first half is written: the server is reading the request
            self.release.wait(DEADLINE_S)
            yield data[len(data) // 2 :]

        thread = threading.Thread(target=self._post, args=(web, upload, body()))
        self.threads.append(thread)
        thread.start()
        return sent

    def join(self) -> None:
        self.release.set()
        for thread in self.threads:
            thread.join(DEADLINE_S)
        self.threads.clear()


@dataclass
class Kill:
    """What a SIGKILL cut: the results stored before it, the matches and validations it interrupted."""

    results: list[StoredResult]
    matches: list[int]
    validations: list[str]


def open_store(config: LeagueConfig) -> tuple[LeagueStore, int]:
    store = LeagueStore(config.store, create=False)
    tournament = store.arena.get_tournament(config.name)
    assert tournament is not None
    return store, tournament.id


def stored_results(config: LeagueConfig) -> list[StoredResult]:
    store, tid = open_store(config)
    with store:
        return store.arena.list_results(tid)


def kill(server: LeagueProcess, config: LeagueConfig, before: list[StoredResult]) -> Kill:
    """SIGKILL the server; what it cut, read from its store."""
    server.kill()
    store, tid = open_store(config)
    with store:
        matches = [f.index for f in store.arena.pending_fixtures(tid)]
        validations = [v.label for v in store.pending_validations()]
    return Kill(before, matches, validations)


def live_and_building(server: LeagueProcess, marker: Path) -> bool:
    """A match is live and the slow build (of the version being validated) runs."""
    return bool(server.status()["live"]) and bool(processes_mentioning(f"time.sleep(2)  # {marker}"))


def settled(server: LeagueProcess, played: int) -> bool:
    """Every upload validated, and the ladder played on past ``played`` finished matches."""
    status = server.status()
    states = versions_by_state(status)
    return not states.get("queued") and not states.get("validating") and status["matches_played"] > played


def no_sandbox_left(data: Path) -> None:
    """No process of a killed league's matches (they run the unpacked versions) outlives it."""
    deadline = time.monotonic() + DEADLINE_S
    while left := processes_mentioning(str(data / "versions")):
        assert time.monotonic() < deadline, f"processes outlived the killed league: {left}"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_league_killed_mid_upload_and_mid_match_restarts_with_nothing_lost_or_doubled(tmp_path: Path) -> None:
    # Uploads race each other here: as many at once as the test sends.
    limits = "active_bots = 10\nuploads_per_hour = 100\nuploads_at_once = 10\nuploads_in_flight = 10"
    path = write_league(tmp_path / "league", "parallel = 2", limits=limits, drain="deadline_s = 0")
    config = load_league_config(path)
    token = add_author(path, AUTHOR)
    seed_active(path, AUTHOR, [bot_folder(tmp_path / "bots", name) for name in ("b1", "b2", "b3")])
    uploader = Uploader(token, tmp_path / "uploads")
    kills = []

    # First kill: matches running, uploads half sent, others racing the kill, and a version in its validation.
    with LeagueProcess.start(path) as server:
        stalled = [uploader.stall(server.web, "b2"), uploader.stall(server.web, "b5")]
        for sent in stalled:
            assert sent.wait(DEADLINE_S)
        first = uploader.post(server.web, "b1", build=slow_build(tmp_path))
        assert first.status == 202, first
        server.wait_for("a live match while b1@2 is built", lambda: live_and_building(server, tmp_path))
        before = stored_results(config)
        # Refused as they arrive (their bot.toml names another bot): they race the kill.
        racing = [uploader.start(server.web, "b3", declared="b3x"), uploader.start(server.web, "b4", declared="b4x")]
        server.wait_for("an answer to a racing upload", lambda: any(u.status is not None for u in racing) or None)
        kills.append(kill(server, config, before))
    uploader.join()
    no_sandbox_left(config.data)

    # Second kill: just after the restart, while the cut version is built again and the first matches play.
    with LeagueProcess.start(path) as server:
        server.wait_for("a live match while the cut version is built again", lambda: live_and_building(server, tmp_path))
        kills.append(kill(server, config, stored_results(config)))
    no_sandbox_left(config.data)
    leftovers = plant_leftovers(config, tmp_path / "leftovers")

    with LeagueProcess.start(path) as server:
        played = server.status()["matches_played"]
        server.wait_for("every upload validated and a new match played", lambda: settled(server, played))
        assert server.terminate() == 0, server.stderr()

    assert all(k.matches and "b1@2" in k.validations for k in kills), f"a kill cut no match or no validation: {kills}"
    check_results(config, kills)
    check_ratings(config)
    check_uploads(config, uploader.sent, kills)
    assert [p for p in leftovers if p.exists()] == []


def plant_leftovers(config: LeagueConfig, folder: Path) -> list[Path]:
    """What a kill may leave of an upload before its version is stored, at each step: the next start removes it all."""
    archives = ArchiveStore(config.data)
    kept = archives.add(pack_folder(bot_folder(folder, "orphan", extra="kept, then killed before its version was stored")))
    unpacked = archives.version_path(hashlib.sha256(b"unpacked, then killed before it was kept").hexdigest())
    unpacked.mkdir()
    (unpacked / "bot.toml").write_text("half")
    half_archive = archives.archive_path(kept).with_name(f"{TEMP_PREFIX}half-written")
    half_archive.write_bytes(b"\x1f\x8b")
    half_unpacked = archives.versions / f"{TEMP_PREFIX}{kept}-half"
    half_unpacked.mkdir()
    (half_unpacked / "bot.py").write_text("half")
    return [archives.archive_path(kept), archives.version_path(kept), unpacked, half_archive, half_unpacked]


def check_results(config: LeagueConfig, kills: list[Kill]) -> None:
    """One final result per fixture but those the last SIGTERM suspended (each with its journal, and only they have
    one); the cut matches finished after a restart (their records say so), or void when cut before their journal began;
    the results from before each kill unchanged."""
    store, tid = open_store(config)
    with store:
        assert store.arena.check() == []
        suspended = [f.index for f in store.arena.pending_fixtures(tid)]
        fixtures = [f for f in store.arena.fixtures(tid) if f.index not in suspended]
        results = store.arena.list_results(tid)
        with sqlite3.connect(config.store) as conn:
            finals = conn.execute("SELECT idx, count(*) FROM results WHERE tournament_id = ? AND final = 1 GROUP BY idx", (tid,)).fetchall()
    assert sorted(finals) == [(f.index, 1) for f in fixtures]
    assert [r.idx for r in results] == [f.index for f in fixtures]
    journals = sorted(p.name for p in (config.data / "journals").iterdir())
    assert journals == [f"{config.name}-{index:06d}.journal" for index in suspended], "a journal for each suspended match, no other"
    by_index = {r.idx: r for r in results}
    resumed = 0
    for cut in kills:
        for index in cut.matches:
            if index in suspended:
                continue  # resumed, then suspended again by the last SIGTERM: its journal is checked above
            result = by_index[index]
            stored = stored_result(config, result.match_id)
            assert stored is not None and stored.record is not None, result
            if result.status is MatchStatus.FINISHED:
                assert any(line["type"] == "resumed" for line in stored.record), f"match {index} finished without being cut"
                resumed += 1
            else:
                assert result.status is MatchStatus.ABORTED and result.places is None, result
                assert stored.record[-1]["reason"] == INTERRUPTED, stored.record[-1]
        for earlier in cut.results:
            assert by_index[earlier.idx] == earlier
    assert resumed, "no match cut by a kill was played on from its journal"
    finished = [r for r in results if r.status is MatchStatus.FINISHED]
    assert len(finished) > sum(r.status is MatchStatus.FINISHED for r in kills[-1].results)  # the ladder played on


def check_ratings(config: LeagueConfig) -> None:
    """The ratings are the league's priors, then every finished result rated in fixture order (as the ladder rates one)."""
    env = RatingEnv(**vars(config.trueskill))
    store, tid = open_store(config)
    with store:
        results = store.arena.list_results(tid)
        stored = store.arena.ratings(tid)
        priors = {p.bot: (p.mu, p.sigma) for p in store.arena.rating_history(tid) if p.idx == -1}
        history = store.arena.rating_history(tid)
        labels = {v.label: v for v in store.versions()}
    assert set(priors) == {label for label, v in labels.items() if v.activated_at is not None}
    for label, (mu, sigma) in priors.items():
        version = labels[label]
        assert sigma == env.sigma
        if version.version == "1":
            assert mu == env.mu
        else:  # a new version starts from its predecessor's mean at the time it was activated
            predecessor = f"{version.bot}@{int(version.version) - 1}"
            assert mu in {p.mu for p in history if p.bot == predecessor}, label
    replayed = dict(priors)
    for result in results:
        if result.status is MatchStatus.FINISHED:
            assert result.places is not None
            new = rate_match(env, [replayed[label] for label in result.seats], result.places)
            replayed.update(zip(result.seats, new, strict=True))
    flat = {(label, i): value for label, rating in stored.items() for i, value in enumerate(rating)}
    assert flat == pytest.approx({(label, i): value for label, rating in replayed.items() for i, value in enumerate(rating)})


def check_uploads(config: LeagueConfig, uploads: list[Upload], kills: list[Kill]) -> None:
    """Each upload wholly stored (version, archive, whole unpacked folder) or wholly absent; no temporary file anywhere."""
    archives = ArchiveStore(config.data)
    store, _ = open_store(config)
    with store:
        versions = {v.archive: v for v in store.versions() if v.archive is not None}
        by_label = {v.label: v for v in store.versions()}
        in_use = store.archives_in_use()
    for upload in uploads:
        version = versions.get(upload.sha)
        unpacked = archives.version_path(upload.sha)
        if upload.status == 202:
            assert version is not None and version.id == int(upload.submission or 0), upload
        if version is None:
            assert not archives.has(upload.sha) and not unpacked.exists(), f"half an upload of {upload.bot} is stored"
            continue
        assert version.bot == upload.bot, version
        assert upload.declared == upload.bot, f"an upload naming another bot was stored: {version}"  # refused as it arrived
        assert version.state is VersionState.ACTIVE, version
        assert archives.has(upload.sha) and unpacked.is_dir()
        for name, content in upload.files.items():
            assert (unpacked / name).read_bytes() == content, name
    for cut in kills:
        for label in cut.validations:
            assert by_label[label].state in (VersionState.ACTIVE, VersionState.REFUSED), by_label[label]
    assert archives.kept() == in_use
    assert {p.name for p in (config.data / "versions").iterdir()} == in_use
    assert [p for p in config.data.rglob("*") if p.name.startswith(TEMP_PREFIX)] == []


@pytest.mark.slow
def test_sigterm_drains_the_league_within_its_deadline_and_the_next_start_finishes_the_match_it_cut(tmp_path: Path) -> None:
    deadline_s = 2.0
    path = write_league(tmp_path / "league", "parallel = 1", drain=f"deadline_s = {deadline_s}", time="move_ms = 1000")
    config = load_league_config(path)
    add_author(path, AUTHOR)
    bots = [bot_folder(tmp_path / "bots", "sleepy", code=SLEEPY_BOT), *(bot_folder(tmp_path / "bots", n) for n in ("r1", "r2"))]
    seed_active(path, AUTHOR, bots)
    with LeagueProcess.start(path) as server:
        live = server.wait_for("a live match", lambda: server.status()["live"] or None)
        started = time.monotonic()
        code = server.terminate()
        took = time.monotonic() - started
        assert code == 0, server.stderr()
        assert "stopped" in server.stdout_rest()
    assert deadline_s <= took < deadline_s + 10, f"the league took {took:.1f} s to stop"
    index = live[0]["index"]
    store, tid = open_store(config)
    with store:
        assert store.arena.check() == []
        assert [f.index for f in store.arena.pending_fixtures(tid)] == [index], "the match cut is suspended: no result yet"
        match_id = next(f"{config.name}-{f.index:06d}" for f in store.arena.pending_fixtures(tid))
    assert [p.name for p in (config.data / "journals").iterdir()] == [f"{match_id}.journal"]
    assert not processes_mentioning(str(config.data / "versions")), "its seats were stopped"
    # The next start plays it on from its journal: its sandboxed seats are started again and it finishes, rated once.
    with LeagueProcess.start(path) as server:
        server.wait_for("the cut match's result", lambda: stored_result(config, match_id))
        assert server.terminate() == 0, server.stderr()
    store, tid = open_store(config)
    with store:
        assert store.arena.check() == []
        finished = store.arena.get_result(match_id)
        history = store.arena.rating_history(tid)
        with sqlite3.connect(config.store) as conn:
            rows = conn.execute("SELECT status, final FROM results WHERE match_id = ?", (match_id,)).fetchall()
    assert finished is not None and finished.status is MatchStatus.FINISHED and finished.record is not None
    assert rows == [("finished", 1)]
    assert [line["type"] for line in finished.record].count("resumed") == 1
    assert sum(p.idx == index for p in history) == 3, "rated once: one rating per seat"


def stored_result(config: LeagueConfig, match_id: str) -> StoredResult | None:
    store, _ = open_store(config)
    with store:
        return store.arena.get_result(match_id)
