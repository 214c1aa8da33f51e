"""Signing in to the league's pages: a session cookie for an API token, CSRF on every form, bounded sessions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from polignac_arena.league.config import load_league_config
from polignac_arena.league.serve import League, league_app
from polignac_arena.league.sessions import Sessions, SessionsFull
from polignac_arena.league.signin import MAX_FORM_BYTES, SESSION_COOKIE
from polignac_arena.league.store import LeagueStore
from tests.league.league_process import add_author, bot_folder, seed_active, write_league

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


class Site:
    def __init__(self, folder: Path) -> None:
        self.config = write_league(folder / "league")
        self.ada = add_author(self.config, "ada")
        self.bob = add_author(self.config, "bob")
        seed_active(self.config, "ada", [bot_folder(folder / "bots", "ada-bot")])
        self.league = League(load_league_config(self.config))
        self.app = league_app(self.league)

    def client(self, base_url: str = "http://testserver") -> TestClient:
        return TestClient(self.app, base_url=base_url, follow_redirects=False)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    made = Site(tmp_path)
    try:
        yield made
    finally:
        made.league.store.close()


def form_token(client: TestClient) -> str:
    page = client.get("/signin")
    assert page.status_code == 200
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


def sign_in(client: TestClient, token: str) -> str:
    answer = client.post("/signin", data={"csrf": form_token(client), "token": token})
    assert answer.status_code == 303 and answer.headers["location"] == "/me", answer.text
    return str(answer.headers["set-cookie"])


def session_csrf(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/me").text)
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize(("base_url", "secure"), [("http://testserver", False), ("https://testserver", True)])
def test_an_author_signs_in_with_their_token_and_sees_their_bots_in_a_locked_down_cookie(site: Site, base_url: str, secure: bool) -> None:
    client = site.client(base_url)
    signin_page = client.get("/signin")
    assert "HttpOnly" in signin_page.headers["set-cookie"] and "SameSite=strict" in signin_page.headers["set-cookie"]
    cookie = sign_in(client, site.ada)
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert ("Secure" in cookie) is secure
    assert site.ada not in cookie  # the cookie is a session id, never the token
    me = client.get("/me")
    assert me.status_code == 200 and "Signed in as ada" in me.text and "ada-bot" in me.text
    assert me.headers["cache-control"] == "no-store"
    assert site.ada not in me.text
    assert client.get("/signin").headers["location"] == "/me"  # already signed in


def test_the_sign_in_form_needs_its_own_csrf_token_and_this_sites_origin(site: Site) -> None:
    client = site.client()
    assert client.post("/signin", data={"token": site.ada}).status_code == 403  # no token in the form
    client.get("/signin")
    assert client.post("/signin", data={"csrf": "guessed", "token": site.ada}).status_code == 403
    other = site.client()  # a token from another visitor's form is not this visitor's
    assert client.post("/signin", data={"csrf": form_token(other), "token": site.ada}).status_code == 403
    token = form_token(client)
    answer = client.post("/signin", data={"csrf": token, "token": site.ada}, headers={"Origin": "https://evil.example"})
    assert answer.status_code == 403 and SESSION_COOKIE not in answer.headers.get("set-cookie", "")
    assert client.get("/me").status_code == 303


def test_a_bad_token_is_refused_and_an_address_that_keeps_guessing_is_slowed_down(site: Site) -> None:
    client = site.client()
    answers = [client.post("/signin", data={"csrf": form_token(client), "token": f"plg_nope{n}_secret"}) for n in range(8)]
    assert answers[0].status_code == 401 and "not a valid API token" in answers[0].text
    throttled = [a for a in answers if a.status_code == 429]
    assert throttled and int(throttled[0].headers["Retry-After"]) >= 1
    for bad in ("", "x" * 600, "tok\x01en"):
        assert client.post("/signin", data={"csrf": form_token(client), "token": bad}).status_code == 401


def test_a_form_that_is_too_big_or_not_a_form_is_refused(site: Site) -> None:
    client = site.client()
    token = form_token(client)
    assert client.post("/signin", content=f"csrf={token}&token=" + "x" * MAX_FORM_BYTES, headers=FORM).status_code == 413
    assert client.post("/signin", json={"csrf": token, "token": site.ada}).status_code == 415
    assert client.post("/signin", content=b"csrf=\xff\xfe", headers=FORM).status_code in (400, 403)


def test_pages_refuse_a_missing_or_forged_session(site: Site) -> None:
    client = site.client()
    assert client.get("/me").headers["location"] == "/signin"
    client.cookies.set(SESSION_COOKIE, "forged")
    assert client.get("/me").headers["location"] == "/signin"
    client.cookies.set(SESSION_COOKIE, "x" * 10_000)
    assert client.get("/me").status_code == 303


def test_signing_out_needs_the_sessions_csrf_token_and_ends_the_session(site: Site) -> None:
    client = site.client()
    sign_in(client, site.ada)
    csrf = session_csrf(client)
    assert client.post("/signout", data={"other": "1"}).status_code == 403
    assert client.post("/signout", data={"csrf": "wrong"}).status_code == 403
    bob = site.client()
    sign_in(bob, site.bob)
    assert client.post("/signout", data={"csrf": session_csrf(bob)}).status_code == 403  # another session's token
    assert client.get("/me").status_code == 200  # still signed in after every refusal
    answer = client.post("/signout", data={"csrf": csrf})
    assert answer.status_code == 303 and f'{SESSION_COOKIE}=""' in answer.headers["set-cookie"]
    assert client.get("/me").status_code == 303
    assert bob.get("/me").status_code == 200  # another author's session is untouched


def test_each_author_sees_only_their_own_bots(site: Site) -> None:
    bob = site.client()
    sign_in(bob, site.bob)
    page = bob.get("/me").text
    assert "Signed in as bob" in page and "ada-bot" not in page


def test_revoking_the_token_ends_the_sessions_opened_with_it(site: Site) -> None:
    client = site.client()
    sign_in(client, site.ada)
    assert client.get("/me").status_code == 200
    with LeagueStore(load_league_config(site.config).store) as store:  # as `polignac league token rotate` does, from another process
        store.rotate_tokens("ada")
    assert client.get("/me").status_code == 303


def test_sessions_are_bounded_in_all_per_author_and_in_time() -> None:
    now = [0.0]
    sessions = Sessions(ttl_s=100, idle_s=10, max_sessions=3, per_author=2, clock=lambda: now[0])
    first, _ = sessions.open("ada", "t1")
    second, _ = sessions.open("ada", "t1")
    third, _ = sessions.open("ada", "t1")  # past two for ada: her oldest ends
    assert sessions.get(first) is None and sessions.get(second) is not None and sessions.get(third) is not None
    sessions.open("bob", "t2")
    with pytest.raises(SessionsFull):
        sessions.open("eve", "t3")
    now[0] = 9.0
    assert sessions.get(third) is not None  # used: its idle clock restarts
    now[0] = 15.0
    assert sessions.get(second) is None and sessions.get(third) is not None  # second idled out
    sessions.open("eve", "t3")  # room again, once the idle ones went
    assert sessions.close_author("eve") == 1 and len(sessions) == 1  # ada's third is the one left
    for minute in range(1, 11):  # used every 9 s, it still ends 100 s after sign-in
        now[0] = 15.0 + 9 * minute
        assert (sessions.get(third) is None) is (now[0] >= 100)
