"""In Chromium: an author uploads a submission FOLDER from their page, which packs it (ustar, gzip) in the browser.

One real ``polignac league serve`` for the module (``archive_mb = 1``).  The first test follows
a folder's upload to accepted, through the server's own path.  The others hold the upload in the
browser (``page.route``) to read the archive the page made: what the server's archive checks
(:func:`~polignac_arena.archive.scan_archive`, :func:`~polignac_arena.archive.unpack_archive`)
make of it, and what the page says of a folder it cannot pack (a name too long for ustar, a
folder past ``archive_mb``) without sending anything.
"""

from __future__ import annotations

import gzip
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from polignac_arena.archive import scan_archive, unpack_archive
from tests.league.chromium import launched_chromium
from tests.league.league_process import LeagueProcess, add_author, bot_folder, write_league
from tests.test_web_browser import VIEWPORT  # skips this module where Chromium or Playwright is missing

VALIDATION_MS = 180_000
"""A build and a smoke match in the sandbox, on a loaded machine: generous."""
FOLDER_INPUT = "#upload input[name=folder]"
DEEP = "src/" + "d" * 60 + "/" + "f" * 60 + ".py"
"""128 bytes: past ustar's 100-byte name field, so the page splits it into the prefix field."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from launched_chromium()


class League:
    def __init__(self, process: LeagueProcess, token: str) -> None:
        self.process = process
        self.token = token


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    config = write_league(tmp_path_factory.mktemp("league"), limits="archive_mb = 1")
    token = add_author(config, "ada")
    with LeagueProcess.start(config) as process:
        yield League(process, token)


def signed_in(browser: Browser, league: League) -> Page:
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.goto(f"{league.process.web}/signin")
    page.fill("input[name=token]", league.token)
    with page.expect_navigation(url=f"{league.process.web}/me", timeout=60_000):
        page.click("#signin button[type=submit]")
    return page


def a_folder(parent: Path, name: str = "ada-bot") -> Path:
    """The sample bot with what a folder upload must keep: hidden files, a name past 100 bytes, a script, subfolders."""
    folder = bot_folder(parent, name)
    (folder / ".hidden-notes").write_text("kept: the archive path keeps what the author packs\n")
    (folder / ".settings").mkdir()
    (folder / ".settings" / "local.toml").write_text("kept = true\n")
    (folder / DEEP).parent.mkdir(parents=True)
    (folder / DEEP).write_text("VALUE = 1\n")
    (folder / "tools").mkdir()
    (folder / "tools" / "run.sh").write_text("#!/bin/sh\necho hello\n")
    return folder


def files_of(folder: Path) -> dict[str, tuple[bytes, bool]]:
    """Each file under ``folder`` by its relative name: its bytes and whether it is executable."""
    return {
        path.relative_to(folder).as_posix(): (path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def hold_uploads(page: Page) -> list[bytes]:
    """Answer the page's uploads in the browser (400, nothing reaches the league); the bodies sent, as they come."""
    bodies: list[bytes] = []

    def hold(route: Route) -> None:
        bodies.append(route.request.post_data_buffer or b"")
        assert route.request.headers["content-type"] == "application/gzip"
        assert route.request.headers["x-csrf-token"]
        route.fulfill(status=400, json={"error": "held by the test"})

    page.route("**/me/bots/*/versions", hold)
    return bodies


def ustar_headers(tar: bytes) -> list[bytes]:
    """The tar's member headers, walked block by block; each is checked to be a POSIX ustar header with a right checksum."""
    headers, offset = [], 0
    while tar[offset : offset + 512] != bytes(512):
        block = tar[offset : offset + 512]
        assert block[257:265] == b"ustar\x0000", block[:100]
        stored = int(block[148:156].strip(b"\0 "), 8)
        assert stored == sum(block[:148]) + 8 * 32 + sum(block[156:])
        headers.append(block)
        size = int(block[124:136].strip(b"\0 "), 8)
        offset += 512 + (size + 511) // 512 * 512
    assert tar[offset:] == bytes(len(tar) - offset) and len(tar) - offset >= 1024  # the end: empty blocks
    return headers


def test_an_author_uploads_a_bot_folder_from_their_page_and_follows_its_validation_to_accepted(
    tmp_path: Path, browser: Browser, league: League
) -> None:
    folder = a_folder(tmp_path / "bots")
    page = signed_in(browser, league)
    page.fill("#upload input[name=bot]", "ada-bot")
    page.set_input_files(FOLDER_INPUT, str(folder))
    page.click("#upload button[type=submit]")
    expect(page.locator("#upload-log")).to_contain_text("smoke match", timeout=VALIDATION_MS)
    expect(page.locator("#upload-state")).to_contain_text(re.compile(r"ada-bot@\S+: accepted"), timeout=VALIDATION_MS)
    row = page.locator("#my-bots tbody tr", has_text="ada-bot")
    expect(row).to_have_count(1)
    expect(row.locator("td.state-active")).to_have_text("active")


def test_the_page_packs_a_folder_as_a_ustar_archive_that_unpacks_to_the_same_files(
    tmp_path: Path, browser: Browser, league: League
) -> None:
    folder = a_folder(tmp_path / "bots")
    os.chmod(folder / "bot.py", 0o755)  # the browser cannot see this bit: the page goes by the file's first bytes
    page = signed_in(browser, league)
    bodies = hold_uploads(page)
    page.fill("#upload input[name=bot]", "ada-bot")
    page.set_input_files(FOLDER_INPUT, str(folder))
    page.click("#upload button[type=submit]")
    expect(page.locator("#upload-state")).to_contain_text("Upload refused: held by the test")
    assert len(bodies) == 1
    tar = gzip.decompress(bodies[0])
    headers = ustar_headers(tar)
    names = [(block[345:500].rstrip(b"\0") + b"/" if block[345] else b"") + block[:100].rstrip(b"\0") for block in headers]
    # Relative names (no "./", not the folder's own name), in name order.
    assert [name.decode() for name in names] == sorted(files_of(folder))
    assert all(block[156:157] == b"0" for block in headers)  # regular files only
    assert any(block[345] for block in headers)  # DEEP went through the prefix field

    scan = scan_archive(bodies[0])  # the server's own checks
    assert b'name = "ada-bot"' in (scan.manifest or b"")
    unpack_archive(bodies[0], tmp_path / "unpacked")
    unpacked = files_of(tmp_path / "unpacked")
    expected = files_of(folder)
    assert {name: content for name, (content, _) in unpacked.items()} == {name: content for name, (content, _) in expected.items()}
    executable = {name for name, (_, x) in unpacked.items() if x}
    assert executable == {"tools/run.sh"}  # "#!": 0755; the rest (bot.py too, whatever its mode here) 0644
    assert ".hidden-notes" in unpacked and ".settings/local.toml" in unpacked


@pytest.mark.parametrize(
    "long_name",
    ["n" * 120 + ".txt", "/".join(["a" * 90, "b" * 90, "c" * 90])],
    ids=["one-name-past-100-bytes", "no-cut-fits-155-and-100"],
)
def test_a_folder_with_a_name_too_long_for_ustar_is_refused_by_the_page_in_words(
    tmp_path: Path, browser: Browser, league: League, long_name: str
) -> None:
    folder = bot_folder(tmp_path / "bots", "ada-bot")
    (folder / long_name).parent.mkdir(parents=True, exist_ok=True)
    (folder / long_name).write_text("long\n")
    page = signed_in(browser, league)
    bodies = hold_uploads(page)
    page.set_input_files(FOLDER_INPUT, str(folder))
    page.click("#upload button[type=submit]")
    state = page.locator("#upload-state")
    expect(state).to_contain_text("Folder not sent:")
    expect(state).to_contain_text(long_name[:50])
    expect(state).to_contain_text("is too long for the tar this page makes")
    expect(state).to_contain_text("pack the folder with tar")
    expect(page.locator("#upload button[type=submit]")).to_be_enabled()
    assert bodies == []  # nothing sent: no broken archive


def test_a_folder_past_the_archive_limit_is_refused_by_the_page_in_words(tmp_path: Path, browser: Browser, league: League) -> None:
    folder = bot_folder(tmp_path / "bots", "ada-bot")
    (folder / "weights.bin").write_bytes(os.urandom(1_300_000))  # does not compress: past archive_mb = 1
    page = signed_in(browser, league)
    bodies = hold_uploads(page)
    page.set_input_files(FOLDER_INPUT, str(folder))
    page.click("#upload button[type=submit]")
    too_big = re.compile(r"Folder not sent: packed, the folder takes 1\.\d MB, more than the 1\.0 MB")
    expect(page.locator("#upload-state")).to_contain_text(too_big)
    assert bodies == []


def test_choosing_an_archive_or_a_folder_clears_the_other_and_an_empty_folder_is_not_sent(
    tmp_path: Path, browser: Browser, league: League
) -> None:
    folder = bot_folder(tmp_path / "bots", "ada-bot")
    archive = tmp_path / "ada-bot.tar.gz"
    archive.write_bytes(b"not looked at")
    page = signed_in(browser, league)
    page.set_input_files(FOLDER_INPUT, str(folder))
    page.set_input_files("#upload input[name=archive]", str(archive))
    assert page.eval_on_selector(FOLDER_INPUT, "input => input.files.length") == 0
    page.set_input_files(FOLDER_INPUT, str(folder))
    assert page.eval_on_selector("#upload input[name=archive]", "input => input.files.length") == 0
    (tmp_path / "empty").mkdir()
    page.set_input_files(FOLDER_INPUT, str(tmp_path / "empty"))  # a folder with no file in it: nothing to send
    page.click("#upload button[type=submit]")
    expect(page.locator("#upload-state")).to_contain_text("Choose an archive or a folder")
