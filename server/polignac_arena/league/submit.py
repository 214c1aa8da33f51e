"""The client side of ``polignac league submit``: the author's token, the server's address, the upload, and its validation followed.

The token is never a command-line argument (``ps`` shows those to every user): it comes from
``--token-file``, the ``POLIGNAC_LEAGUE_TOKEN`` environment variable, or ``token`` in
``~/.config/polignac/league.toml`` (``$XDG_CONFIG_HOME/polignac/league.toml`` when that is
set), in that order.  The server is reached over HTTPS with its certificate verified (against
the system's CAs, or one given CA); plain HTTP only to this machine.
"""

from __future__ import annotations

import os
import ssl
import stat
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from polignac_arena.league.author_models import BotOut, MeOut, SubmissionOut, TestRunOut
from polignac_arena.loopback import is_loopback_host
from polignac_arena.plaintext import plain

__all__ = ["TOKEN_ENV", "LeagueClient", "SubmitError", "config_path", "find_token", "server_url"]

TOKEN_ENV: Final = "POLIGNAC_LEAGUE_TOKEN"
API: Final = "/api/league"
UPLOAD_CHUNK: Final = 64 << 10
BUSY_WAIT_MAX_S: Final = 30.0
BUSY_TRIES: Final = 12
"""An upload refused for a while only (the league receiving others: a ``429`` whose ``Retry-After`` is at most
:data:`BUSY_WAIT_MAX_S`) is tried again after it, this many times in all; a longer wait (the hourly limit) is told."""
POLL_S: Final = (0.2, 2.0)
"""Polling the validation: again soon after news, backing off to the longer wait while there is none."""
_TOKEN_CHARS: Final = 512


class SubmitError(Exception):
    """The submission could not be made; the message tells the author why (and what to do)."""

    def __init__(self, message: str, status: int | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The server's HTTP status, when it answered."""
        self.retry_after_s = retry_after_s
        """When the server said to try again (its ``Retry-After``), if it did."""


# -- the token ------------------------------------------------------------------------------------------------------


def config_path(environ: Mapping[str, str]) -> Path:
    """The author's league config file: ``$XDG_CONFIG_HOME/polignac/league.toml``, else ``~/.config/polignac/league.toml``."""
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base) / "polignac" / "league.toml"


def find_token(token_file: Path | None, environ: Mapping[str, str], warn: Callable[[str], None]) -> str:
    """The API token from ``token_file``, else ``$POLIGNAC_LEAGUE_TOKEN``, else the config file; raises :class:`SubmitError`.

    A file that other users may read gets a warning through ``warn``.
    """
    if token_file is not None:
        return _checked(_read_private(token_file, warn), str(token_file))
    if environ.get(TOKEN_ENV):
        return _checked(environ[TOKEN_ENV], f"${TOKEN_ENV}")
    config = config_path(environ)
    if not config.exists():
        raise SubmitError(f'no API token: give --token-file FILE, set {TOKEN_ENV}, or put token = "..." in {config}')
    text = _read_private(config, warn)
    try:
        token = tomllib.loads(text).get("token")
    except tomllib.TOMLDecodeError as exc:
        raise SubmitError(f"{config} is not valid TOML: {exc}") from None
    if not isinstance(token, str) or not token:
        raise SubmitError(f"{config} has no 'token' (a string): put token = \"...\" in it")
    return _checked(token, f"'token' in {config}")


def _read_private(path: Path, warn: Callable[[str], None]) -> str:
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SubmitError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SubmitError(f"{path} is not UTF-8 text") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        warn(f"{path} may be read by other users (mode {stat.S_IMODE(mode):o}): anyone who reads it can upload as you; chmod 600 {path}")
    return text


def _checked(token: str, where: str) -> str:
    token = token.strip()
    if not token or len(token) > _TOKEN_CHARS or not token.isascii() or not token.isprintable() or " " in token:
        raise SubmitError(
            f"the token in {where} is not an API token (one word of printable characters, as `polignac league user add` printed)"
        )
    return token


# -- the server -----------------------------------------------------------------------------------------------------


def server_url(text: str) -> httpx.URL:
    """The server's base URL: ``https://...``, or ``http://`` to a loopback address; raises :class:`SubmitError`."""
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise SubmitError(f"--server {text!r} is not a URL: {exc}") from None
    if url.scheme not in ("https", "http") or not url.host:
        raise SubmitError(f"--server must be an https:// URL such as https://league.example.org, got {text!r}")
    if url.scheme == "http" and not is_loopback_host(url.host):
        raise SubmitError(f"plain http:// is only for this machine (127.0.0.1, ::1, localhost): use https://{url.host}")
    return url


def _tls_problem(exc: BaseException) -> str | None:
    """The TLS failure behind a connection error, if that is what it is."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen.verify_message or str(seen)
        if isinstance(seen, ssl.SSLError):
            return seen.reason or str(seen)
        seen = seen.__cause__ or seen.__context__
    return None


class LeagueClient:
    """One author's connection to a league server's author API."""

    def __init__(self, server: str, token: str, *, ca: Path | None = None, timeout_s: float = 60.0) -> None:
        self.base = server_url(server)
        verify: ssl.SSLContext
        try:
            verify = ssl.create_default_context(cafile=str(ca) if ca is not None else None)
        except (OSError, ssl.SSLError) as exc:
            raise SubmitError(f"cannot use --ca {str(ca)!r} as a CA certificate: {getattr(exc, 'strerror', None) or exc}") from None
        self.ca = ca
        self.timeout_s = timeout_s
        self.http = httpx.Client(
            base_url=self.base,
            headers={"Authorization": f"Bearer {token}", "User-Agent": "polignac-league-submit"},
            verify=verify,
            timeout=timeout_s,
        )

    def __enter__(self) -> LeagueClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def upload(
        self,
        bot: str,
        data: bytes,
        on_sent: Callable[[int], None] | None = None,
        *,
        on_wait: Callable[[float, str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> SubmissionOut:
        """Upload ``data`` (a packed submission) as a version of ``bot``; ``on_sent`` is told of each chunk's bytes as it goes.

        Refused for a few seconds only (the league receiving other uploads), it waits and tries again
        (:data:`BUSY_TRIES` times at most), telling ``on_wait(seconds, why)`` first.
        """

        def chunks() -> Iterator[bytes]:
            for start in range(0, len(data), UPLOAD_CHUNK):
                chunk = data[start : start + UPLOAD_CHUNK]
                yield chunk
                if on_sent is not None:
                    on_sent(len(chunk))

        headers = {"Content-Type": "application/gzip", "Content-Length": str(len(data))}
        for attempt in range(1, BUSY_TRIES + 1):
            try:
                answer = self._request("POST", f"{API}/bots/{quote(bot, safe='')}/versions", content=chunks(), headers=headers)
            except SubmitError as exc:
                wait = exc.retry_after_s
                if exc.status != 429 or wait is None or wait > BUSY_WAIT_MAX_S or attempt == BUSY_TRIES:
                    raise
                if on_wait is not None:
                    on_wait(wait, str(exc))
                sleep(wait)
                continue
            return _parsed(answer)
        raise AssertionError("unreachable: the last try returns or raises")

    def submission(self, submission_id: str, since: int = 0) -> SubmissionOut:
        """The upload's state and its log from line ``since``."""
        return _parsed(self._request("GET", f"{API}/submissions/{quote(submission_id, safe='')}", params={"since": since}))

    def follow(
        self,
        status: SubmissionOut,
        on_line: Callable[[str], None],
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> SubmissionOut:
        """Pass each new line of the validation log to ``on_line`` (plain text) until validation is over; the last status."""
        fast, slow = POLL_S
        delay = fast
        while True:
            for line in status.log:
                on_line(plain(line))
            if status.final:
                return status
            delay = fast if status.log else min(delay * 2, slow)
            sleep(delay)
            status = self.submission(status.id, status.log_next)

    def me(self) -> MeOut:
        """The token's author and their bots, with their versions."""
        return _parsed_as(MeOut, self._request("GET", f"{API}/me"))

    def retire(self, bot: str) -> BotOut:
        """Retire ``bot``: its active version leaves the ladder and stops counting toward the author's ``active_bots``."""
        return _parsed_as(BotOut, self._request("POST", f"{API}/bots/{quote(bot, safe='')}/retire"))

    def ask_rerun(self, match_id: str, version: str, hand: int | None = None) -> TestRunOut:
        """Ask for an unrated test match of ``version`` on the deals of ``match_id`` (from ``hand``)."""
        params: dict[str, str | int] = {"version": version} | ({} if hand is None else {"hand": hand})
        return _parsed_as(TestRunOut, self._request("POST", f"{API}/matches/{quote(match_id, safe='')}/reruns", params=params))

    def test_run(self, run_id: int, *, record: bool = False) -> TestRunOut:
        """One of the author's test matches (with its record, once played, if ``record``)."""
        params = {"record": "true"} if record else {}
        return _parsed_as(TestRunOut, self._request("GET", f"{API}/reruns/{run_id}", params=params))

    def follow_test_run(
        self, run: TestRunOut, on_state: Callable[[TestRunOut], None], *, sleep: Callable[[float], None] = time.sleep
    ) -> TestRunOut:
        """Poll a test match until it is played (or failed), telling ``on_state`` of each new state; the last answer."""
        fast, slow = POLL_S
        delay = fast
        seen = run.state
        while run.state not in ("finished", "failed"):
            sleep(delay)
            delay = min(delay * 2, slow)
            run = self.test_run(run.id)
            if run.state != seen:
                seen = run.state
                on_state(run)
        return run

    def _request(self, method: str, path: str, **options: Any) -> httpx.Response:
        where = str(self.base)
        try:
            answer = self.http.request(method, path, **options)
        except httpx.ConnectError as exc:
            problem = _tls_problem(exc)
            if problem is not None:
                hint = "" if self.ca is not None else " (a league with a private CA: give its certificate with --ca FILE)"
                raise SubmitError(f"TLS: cannot verify the server at {where}: {problem}{hint}") from None
            raise SubmitError(f"cannot reach the league server at {where}: {exc}") from None
        except httpx.TimeoutException:
            raise SubmitError(f"the league server at {where} did not answer within {self.timeout_s:.0f} s") from None
        except httpx.TransportError as exc:
            problem = _tls_problem(exc)
            if problem is not None:
                raise SubmitError(f"TLS: the connection to {where} failed: {problem}") from None
            why = "it may have refused an upload over its size limit" if method == "POST" else "try again"
            raise SubmitError(f"the connection to {where} broke: {exc or type(exc).__name__} ({why})") from None
        if answer.status_code >= 400:
            raise _refusal(answer)
        return answer


def _error_text(answer: httpx.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return plain(body["error"])
    return plain(answer.text[:200]) or answer.reason_phrase


def _refusal(answer: httpx.Response) -> SubmitError:
    status, message = answer.status_code, _error_text(answer)
    if status == 401:
        text = f"the server refused the API token: {message} (check --token-file, ${TOKEN_ENV} or the config file)"
    elif status in (403, 404, 409):
        text = f"refused: {message}"
    elif status == 413:
        text = f"the upload is too big for this server: {message}"
    elif status == 429:
        retry = answer.headers.get("Retry-After", "")
        text = f"{message}: retry after {retry} s" if retry.isdigit() else message
        return SubmitError(text, status, float(retry) if retry.isdigit() else None)
    else:
        text = f"the server answered {status}: {message}"
    return SubmitError(text, status)


def _parsed(answer: httpx.Response) -> SubmissionOut:
    return _parsed_as(SubmissionOut, answer)


Model = TypeVar("Model", bound=BaseModel)


def _parsed_as(model: type[Model], answer: httpx.Response) -> Model:
    try:
        return model.model_validate_json(answer.content)
    except ValidationError as exc:
        raise SubmitError(
            f"the server's answer is not what a league answers: {exc.error_count()} problem(s), first: {exc.errors()[0]['msg']}"
        ) from None
