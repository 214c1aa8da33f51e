"""Issue 24, points 2 to 5: uploads that fill the disk or memory, hog the validation workers, or cost much to refuse.

Against a real ``polignac league serve`` (loopback, plaintext: the upload path is the same with
TLS), each attack at a small scale, and the league's own calls where only they can show it (no
unpacking on the way in, start-up after a kill).
"""

from __future__ import annotations

import gzip
import io
import tarfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from polignac import preset
from polignac_arena.archive import pack_folder
from polignac_arena.archive_store import ArchiveStore
from polignac_arena.league.authoring import SubmissionRefused
from polignac_arena.league.config import LeagueConfig, load_league_config
from polignac_arena.league.serve import League
from polignac_arena.league.store import LeagueStore, VersionState
from polignac_arena.league.validation import validate
from polignac_arena.referee import TimeControl
from polignac_arena.seats import BuildLimits, SeatKind, SeatLimits
from tests.aio import run_sync
from tests.league.abuse import wait_until
from tests.league.league_process import DEADLINE_S, LeagueProcess, add_author, bot_folder, sandbox_missing, write_league

LIMITS = "uploads_per_hour = 100\nactive_bots = 10"
"""Keys main knew too: the attacks run against its defaults (one upload at once per author, four in all, ...)."""


@dataclass
class Server:
    process: LeagueProcess
    path: Path
    config: LeagueConfig
    bots: Path

    def upload(self, token: str, bot: str, body: Any) -> httpx.Response:
        """POST an upload, on a connection of its own (the uploads of a test may run at once)."""
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"}
        with httpx.Client(timeout=DEADLINE_S) as client:
            return client.post(f"{self.process.web}/api/league/bots/{bot}/versions", content=body, headers=headers)

    def final(self, token: str, submission: str) -> dict[str, Any]:
        """The submission once its validation is over (polled on one kept-alive connection)."""
        with httpx.Client(timeout=DEADLINE_S) as client:

            def probe() -> dict[str, Any] | None:
                answer = client.get(f"{self.process.web}/api/league/submissions/{submission}", headers={"Authorization": f"Bearer {token}"})
                body: dict[str, Any] = answer.json()
                return body if body["final"] else None

            return self.process.wait_for(f"the validation of {submission}", probe, deadline_s=120)

    def files(self) -> tuple[set[str], set[str]]:
        """The archives and unpacked folders the league keeps."""
        archives = ArchiveStore(self.config.data)
        return archives.kept(), {p.name for p in archives.versions.iterdir()}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("uploads")
    path = write_league(folder, "parallel = 1", limits=LIMITS, drain="deadline_s = 0")
    config = load_league_config(path)
    with LeagueStore(config.store) as store:
        store.set_setting("paused", "1")  # no ladder: these tests are about uploads
    with LeagueProcess.start(path) as process:
        yield Server(process, path, config, folder / "bots")
        assert process.terminate() == 0, process.stderr()


# -- point 3: uploads are received to disk, as they come, a few at once --------------------------------------


def test_an_upload_goes_to_disk_as_it_arrives_and_only_a_few_are_received_at_once(server: Server) -> None:
    tokens = [add_author(server.path, f"up{n}") for n in range(5)]
    go_on = threading.Event()

    def slow_body() -> Iterator[bytes]:
        yield b"\x1f\x8b" + bytes(256 << 10)
        yield bytes(256 << 10)
        go_on.wait(DEADLINE_S)
        for _ in range(21):  # then more than the cap (archive_mb = 20): refused once past it
            yield bytes(1 << 20)

    incoming = server.config.data / "incoming"
    with ThreadPoolExecutor(4) as pool:
        slow = [pool.submit(server.upload, token, f"bot-{n}", slow_body()) for n, token in enumerate(tokens[:4])]
        try:
            # The bytes received are on disk before the body is over (never held whole in memory).
            wait_until(
                "four uploads half received on disk",
                lambda: incoming.is_dir() and sum(p.stat().st_size >= 512 << 10 for p in incoming.iterdir()) == 4,
            )
            again = server.upload(tokens[0], "bot-x", b"\x1f\x8b")
            assert again.status_code == 429 and "already uploading" in again.json()["error"], again.text  # uploads_at_once = 1
            assert again.headers["Retry-After"] == "5"
            busy = server.upload(tokens[4], "bot-y", b"\x1f\x8b")
            assert busy.status_code == 429 and "the league is receiving 4 upload(s)" in busy.json()["error"], busy.text
        finally:
            go_on.set()  # the bodies go on (and end), whatever the test found
        for future in slow:
            answer = future.result(DEADLINE_S)
            assert answer.status_code == 413 and f"more than the {20 << 20} bytes allowed" in answer.json()["error"], answer.text
    wait_until("the half-received uploads removed", lambda: list(incoming.iterdir()) == [])
    assert server.upload(tokens[4], "bot-y", b"\x1f\x8b").status_code == 400  # the places are free again


# -- point 2: the disk ---------------------------------------------------------------------------------------------


def test_a_refused_version_leaves_nothing_on_disk_but_a_small_log(server: Server) -> None:
    token = add_author(server.path, "filler")
    # Its build writes a large file and a long output, then fails.
    lines = "for i in 1 2 3 4 5 6 7 8; do head -c 12000 /dev/zero | tr '\\0' x; echo; done"
    build = ["sh", "-c", f"head -c 600000 /dev/zero > blob; {lines}; echo 'secret-in-the-build' >&2; exit 3"]
    before = server.files()
    answer = server.upload(token, "filler-1", pack_folder(bot_folder(server.bots, "filler-1", build=build)))
    assert answer.status_code == 202, answer.text
    final = server.final(token, answer.json()["id"])
    assert final["state"] == "refused" and final["reason"] == "build: the build step exited 3", final
    # No archive, no unpacked folder, no build output: removed just after the verdict is stored.
    wait_until("the refused version's files removed", lambda: server.files() == before)
    log = "\n".join(final["log"])
    assert len(log) <= 64 * 1024 + 200  # log_kb = 64
    with LeagueStore(server.config.store) as store:  # the cap holds whatever else is appended
        store.append_log(int(final["id"]), "y" * 100_000, server.config.author_limits.log_chars)
        kept = store.version(int(final["id"])).log  # type: ignore[union-attr]  # the version exists: it was just uploaded
    assert len(kept) <= 64 * 1024 + 100 and kept.endswith("[the log is cut here: too long]\n")


def test_what_a_build_installs_is_capped(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "builder", build=["sh", "-c", "head -c 3000000 /dev/urandom > weights.bin"])
    told: list[str] = []
    validation = run_sync(
        validate(
            folder,
            LeagueConfig(
                "caps",
                preset("classic", limit=5),
                tmp_path,
                tmp_path / "league.db",
                tmp_path / "data",
                time=TimeControl(),
                seat_kind=SeatKind.PROCESS,
                limits=SeatLimits(),
                trusted=sandbox_missing() is not None,
            ),
            log=told.append,
            build_caps=BuildLimits(result_bytes=1 << 20),  # what is left of its author's disk, or build_mb
        )
    )
    assert not validation.ok and "sent back results over the cap of 1 MiB" in validation.reason, validation.log_text
    assert not (folder / "weights.bin").exists()


def deep_archive(members: int, depth: int) -> bytes:
    """A tiny archive whose paths imply many folders: ``members`` files, each ``depth`` folders down a path of its own."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("bot.toml")
        toml = b'name = "deep"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'
        info.size = len(toml)
        tar.addfile(info, io.BytesIO(toml))
        for number in range(members):
            info = tarfile.TarInfo("/".join(f"d{number}-{level}" for level in range(depth)) + "/f")
            tar.addfile(info, io.BytesIO())
    return gzip.compress(raw.getvalue())


def test_an_archive_of_many_implied_folders_is_refused_before_it_is_unpacked(server: Server) -> None:
    token = add_author(server.path, "folders")
    before = server.files()
    data = deep_archive(100, 30)  # 101 members, but 3,000 folders (files = 2000)
    assert len(data) < 10_000
    answer = server.upload(token, "deep", data)
    assert answer.status_code == 413 and "files and folders an archive may hold (its folders counted)" in answer.json()["error"], (
        answer.text
    )
    assert server.files() == before


def league_of(tmp_path: Path, limits: str) -> League:
    return League(load_league_config(write_league(tmp_path, limits=limits)))


def test_an_authors_disk_budget_is_kept_before_anything_is_unpacked(tmp_path: Path) -> None:
    league = league_of(tmp_path, "disk_mb = 8\nunpacked_mb = 3\nactive_bots = 10\nuploads_per_hour = 100")
    try:
        league.store.add_author("hog")
        taken = []
        for number in range(5):  # each unpacks to about 1.9 MB
            folder = bot_folder(tmp_path / "bots", f"hog-{number}")
            (folder / "weights.bin").write_bytes(bytes(1_900_000))
            upload = league.admit("hog", f"hog-{number}")
            try:
                upload.write(pack_folder(folder))
                try:
                    taken.append(league.submit("hog", f"hog-{number}", upload))
                except SubmissionRefused as exc:
                    assert exc.http_status == 413 and "of your 8.0 MB on the league's disk" in exc.message, exc.message
                    break
            finally:
                upload.close()
        assert len(taken) == 4, taken
        assert league.store.disk_used("hog") <= 8 << 20
        # A retired version's files give way to a new one: the oldest inactive go first.
        with league.store._write() as conn:
            conn.execute("UPDATE league_versions SET state = 'retired' WHERE id = ?", (int(taken[0].id),))
        upload = league.admit("hog", "hog-4")
        folder = bot_folder(tmp_path / "bots", "hog-4b", declared="hog-4")
        (folder / "weights.bin").write_bytes(bytes(1_900_000))
        upload.write(pack_folder(folder))
        league.submit("hog", "hog-4", upload)
        upload.close()
        assert league.store.version(int(taken[0].id)).archive is None  # type: ignore[union-attr]  # the version exists: it was just uploaded
    finally:
        league.store.close()


# -- point 4: the validation workers are shared fairly --------------------------------------------------------------


def test_the_queue_serves_authors_in_turn_one_at_a_time() -> None:
    from polignac_arena.league.validation_queue import ValidationQueue

    @dataclass(frozen=True)
    class Queued:
        id: int
        author: str

    queue = ValidationQueue()
    pending = [Queued(1, "hog"), Queued(2, "hog"), Queued(3, "hog"), Queued(4, "ada"), Queued(5, "bob")]
    first = queue.pick(pending, running=(), free=2)
    assert [v.id for v in first] == [1, 4]  # one per author, oldest first among those never served
    second = queue.pick([v for v in pending if v not in first], running={"hog"}, free=1)
    assert [v.id for v in second] == [5]  # hog has one running: bob, never served, comes next
    third = queue.pick([Queued(2, "hog"), Queued(3, "hog"), Queued(6, "ada")], running=(), free=1)
    assert [v.id for v in third] == [2]  # hog was served longest ago
    assert [v.id for v in queue.pick([Queued(3, "hog"), Queued(6, "ada")], running=(), free=1)] == [6]


@pytest.mark.slow
def test_an_author_with_slow_builds_does_not_hold_up_another(server: Server) -> None:
    hog, quick = add_author(server.path, "slowpoke"), add_author(server.path, "quick")
    slow = ["sh", "-c", "sleep 45"]
    ids = []
    for name in ("slow-a", "slow-b"):
        answer = server.upload(hog, name, pack_folder(bot_folder(server.bots, name, build=slow)))
        assert answer.status_code == 202, answer.text
        ids.append(answer.json()["id"])
    answer = server.upload(quick, "quick-1", pack_folder(bot_folder(server.bots, "quick-1")))
    assert answer.status_code == 202, answer.text
    began = time.monotonic()
    final = server.final(quick, answer.json()["id"])
    assert final["state"] == "active", final
    took = time.monotonic() - began
    with LeagueStore(server.config.store) as store:
        states = [store.version(int(i)).state for i in ids]  # type: ignore[union-attr]  # the version exists: it was just uploaded
    # Accepted while the slow builds still run, one at a time (the second waits: one validation per author).
    assert sorted(states) == sorted([VersionState.VALIDATING, VersionState.QUEUED]), (states, took)


# -- point 5: refusals are cheap, and so is a restart ---------------------------------------------------------------


def test_an_upload_is_checked_without_unpacking_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    league = league_of(tmp_path, "")
    try:
        league.store.add_author("ann")

        def unpack(*_: object, **__: object) -> None:
            raise AssertionError("an upload was unpacked while it was received")

        monkeypatch.setattr("polignac_arena.archive.unpack_archive", unpack)
        for bot, data, status in (
            ("ann-1", pack_folder(bot_folder(tmp_path / "bots", "ann-1", declared="someone")), 400),  # bot.toml names another bot
            ("ann-2", deep_archive(100, 30), 413),  # its paths imply too many folders
        ):
            upload = league.admit("ann", bot)
            try:
                upload.write(data)
                with pytest.raises(SubmissionRefused) as refused:
                    league.submit("ann", bot, upload)
                assert refused.value.http_status == status, refused.value.message
            finally:
                upload.close()
        upload = league.admit("ann", "ann-3")
        upload.write(pack_folder(bot_folder(tmp_path / "bots", "ann-3")))
        queued = league.submit("ann", "ann-3", upload)  # stored, queued: unpacked by its validation, later
        upload.close()
        assert queued.state == "queued" and not any(league.archives.versions.iterdir())
    finally:
        league.store.close()


def test_start_up_puts_a_killed_unpack_aside_without_waiting_for_its_removal(tmp_path: Path) -> None:
    league = league_of(tmp_path, "")
    try:
        leftover = league.archives.versions / ".tmp-killed-mid-unpack"
        for number in range(2000):
            (leftover / f"d{number}").mkdir(parents=True)
        league.mend()  # what start-up runs before serving: renames only
        assert not leftover.exists() and any(league.archives.trash_folder.iterdir())
        league.tidy()  # in the background, once the league serves
        assert list(league.archives.trash_folder.iterdir()) == []
    finally:
        league.store.close()
