"""The author's page's upload form: the authors' API's checks and limits, behind the session cookie and its CSRF token."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from polignac_arena.archive import pack_folder
from polignac_arena.league.config import load_league_config
from polignac_arena.league.serve import League, league_app
from tests.league.league_process import add_author, bot_folder, seed_active, write_league
from tests.league.test_signin import sign_in

GZIP = {"Content-Type": "application/gzip"}


class Site:
    """A league (no validation workers: uploads stay queued) with ada, who has a bot, and bob; at most 3 uploads an hour."""

    def __init__(self, folder: Path) -> None:
        self.config = write_league(folder / "league", limits="uploads_per_hour = 3\narchive_mb = 1")
        self.ada = add_author(self.config, "ada")
        self.bob = add_author(self.config, "bob")
        seed_active(self.config, "ada", [bot_folder(folder / "bots", "ada-bot")])
        self.archive = pack_folder(bot_folder(folder / "new", "ada-bot"))
        self.league = League(load_league_config(self.config))
        self.app = league_app(self.league)

    def client(self) -> TestClient:
        return TestClient(self.app, follow_redirects=False)

    def signed_in(self, token: str) -> tuple[TestClient, str]:
        """A client signed in with ``token``, and its session's CSRF token (read from the upload form)."""
        client = self.client()
        sign_in(client, token)
        found = re.search(r'id="upload" data-csrf="([^"]+)"', client.get("/me").text)
        assert found is not None
        return client, found.group(1)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    made = Site(tmp_path)
    try:
        yield made
    finally:
        made.league.store.close()


def upload(client: TestClient, csrf: str | None, body: bytes, bot: str = "ada-bot", **headers: str) -> tuple[int, dict[str, object]]:
    sent = dict(GZIP, **headers)
    if csrf is not None:
        sent["X-CSRF-Token"] = csrf
    answer = client.post(f"/me/bots/{bot}/versions", content=body, headers=sent)
    return answer.status_code, answer.json()


def test_the_author_page_shows_the_form_and_an_upload_is_queued_and_followed_by_its_author(site: Site) -> None:
    client, csrf = site.signed_in(site.ada)
    page = client.get("/me").text
    assert 'id="upload"' in page and "upload.js" in page and 'id="my-bots"' in page
    status, body = upload(client, csrf, site.archive)
    assert status == 202 and body["bot"] == "ada-bot" and body["final"] is False, body
    followed = client.get(f"/me/submissions/{body['id']}")
    assert followed.status_code == 200 and followed.json()["id"] == body["id"]
    assert followed.headers["cache-control"] == "private, no-store"
    assert client.get(f"/me/submissions/{body['id']}", params={"since": 10_000}).json()["log"] == []
    # The same version is on the author's API: the form and `polignac league submit` share one path.
    api = site.client().get(f"/api/league/submissions/{body['id']}", headers={"Authorization": f"Bearer {site.ada}"})
    assert api.status_code == 200 and api.json()["state"] == body["state"]


def test_an_upload_without_the_csrf_token_or_from_another_site_is_refused(site: Site) -> None:
    client, csrf = site.signed_in(site.ada)
    assert upload(client, None, site.archive)[0] == 403
    assert upload(client, "forged", site.archive)[0] == 403
    status, body = upload(client, csrf, site.archive, Origin="https://evil.example")
    assert status == 403 and "CSRF" in str(body["error"])
    _, other_csrf = site.signed_in(site.bob)
    assert upload(client, other_csrf, site.archive)[0] == 403  # another session's token is not this one's
    assert site.league.store.pending_validations() == []


def test_an_anonymous_visitor_can_neither_upload_nor_follow_an_upload(site: Site) -> None:
    client, csrf = site.signed_in(site.ada)
    _, body = upload(client, csrf, site.archive)
    anonymous = site.client()
    status, refused = upload(anonymous, csrf, site.archive)
    assert status == 401 and "sign in" in str(refused["error"])
    assert anonymous.get(f"/me/submissions/{body['id']}").status_code == 401
    anonymous.cookies.set("polignac_session", "forged")
    assert anonymous.get(f"/me/submissions/{body['id']}").status_code == 401


def test_the_validation_log_is_its_authors_only(site: Site) -> None:
    ada, csrf = site.signed_in(site.ada)
    _, body = upload(ada, csrf, site.archive)
    bob, _ = site.signed_in(site.bob)
    answer = bob.get(f"/me/submissions/{body['id']}")
    assert answer.status_code == 404 and "ada" not in answer.text  # another's is as unknown as a missing one
    for bad in ("nope", "9" * 40, "-1", "99999"):
        assert ada.get(f"/me/submissions/{bad}").status_code == 404
    assert ada.get(f"/me/submissions/{body['id']}", params={"since": -1}).status_code == 400


@pytest.mark.parametrize(
    ("body", "kind", "status", "words"),
    [
        (b"not a gzip at all", "application/gzip", 400, "archive"),
        (b"", "application/gzip", 400, "archive"),
        (b"PK\x03\x04 a zip", "application/zip", 415, "gzip"),
    ],
)
def test_a_bad_archive_is_refused_with_a_clear_message(site: Site, body: bytes, kind: str, status: int, words: str) -> None:
    client, csrf = site.signed_in(site.ada)
    answer = client.post("/me/bots/ada-bot/versions", content=body, headers={"Content-Type": kind, "X-CSRF-Token": csrf})
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"]


def test_a_bad_bot_name_and_another_authors_bot_are_refused(site: Site) -> None:
    bob, csrf = site.signed_in(site.bob)
    assert upload(bob, csrf, site.archive, bot="..bad")[0] in (400, 404)
    status, body = upload(bob, csrf, site.archive, bot="ada-bot")
    assert status == 403, body


def test_the_upload_limits_hold_for_the_form(site: Site) -> None:
    client, csrf = site.signed_in(site.ada)
    too_big = os.urandom(1024 * 1024 + 10)  # [limits] archive_mb = 1
    status, body = upload(client, csrf, too_big)
    assert status == 413, body
    answers = [upload(client, csrf, site.archive) for _ in range(4)]  # ada's seeded version is out of the hour's window
    assert [status for status, _ in answers[:3]] == [202, 202, 202]
    status, body = answers[3]
    assert status == 429 and "hour" in str(body["error"]), body


def test_the_author_page_shows_every_state_of_a_version_with_the_reason_of_a_refusal(site: Site) -> None:
    league, store = site.league, site.league.store
    sha = league.archives.add(site.archive, league.caps)
    versions = [store.add_upload("ada", "ada-bot", sha, league.limits)[0] for _ in range(3)]
    store.start_validation(versions[0].id)
    store.finish_validation(versions[0].id, False, "smoke match: crashed 1 <b>", league.tournament_id, league.prior)
    store.finish_validation(versions[1].id, True, "accepted", league.tournament_id, league.prior)  # retires the seeded one
    store.start_validation(versions[2].id)
    client, _ = site.signed_in(site.ada)
    page = client.get("/me").text
    rows = re.findall(r'<td class="state-(\w+)">\w+</td><td>([^<]*)</td>', page)
    assert [state for state, _ in rows] == ["retired", "refused", "active", "validating"], rows
    assert ("refused", "smoke match: crashed 1 &lt;b&gt;") in rows  # the reason, as text


def test_the_author_page_says_so_when_there_is_nothing_yet(site: Site) -> None:
    client, _ = site.signed_in(site.bob)
    page = client.get("/me").text
    assert 'id="no-bots"' in page and "None of your versions has played yet." in page and 'id="upload"' in page


def test_the_form_offers_an_archive_or_a_folder_and_carries_the_leagues_archive_caps(site: Site) -> None:
    client, _ = site.signed_in(site.bob)
    page = client.get("/me").text
    assert re.search(r'<input type="file" name="archive"[^>]*>', page)
    assert '<input type="file" name="folder" webkitdirectory>' in page
    caps = site.league.caps
    assert f'data-archive-bytes="{1 << 20}"' in page  # [limits] archive_mb = 1: the page refuses a bigger packed folder itself
    assert f'data-unpacked-bytes="{caps.unpacked_bytes}"' in page and f'data-files="{caps.files}"' in page
    assert "at most 1 MB" in page
