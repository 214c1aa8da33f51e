"""Authors' API tokens: made once, kept as keyed hashes, and a brake on guessing.

A token reads ``plg_<id>_<secret>``: ``id`` (8 hex digits) finds its row, ``secret`` (32 random
bytes, URL-safe base64) is checked against the row's hash with a salt of its own.  The store
never holds a secret: a token lost is rotated, never recovered.

The hash is HMAC-SHA-256 keyed by the salt, and not a slow password hash: a slow hash makes
guessing a *human's* password costly, but a secret of 256 random bits cannot be guessed from
its hash however fast the hash is, so slowness would only cost the league, at every first
check of a token (a bot farm joining, a restart) and at every guess an attacker makes at a
real token's id.  Tokens made before kept a scrypt hash (no tag): it is still checked, and
rewritten as the keyed hash the first time its token passes (:func:`is_slow_hash`).  A process
remembers the tokens it found good, by their SHA-256: it asks the store only whether they were
revoked since, and the bad-token throttle never holds them back.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "FAST_TAG",
    "BadTokenThrottle",
    "Throttled",
    "TokenParts",
    "hash_secret",
    "is_slow_hash",
    "make_token",
    "parse_token",
    "scrypt_secret",
    "verify_secret",
]

PREFIX: Final = "plg"
_TOKEN = re.compile(r"^plg_([0-9a-f]{8})_([A-Za-z0-9_-]{43})$")
FAST_TAG: Final = b"hmac-sha256:"
"""What a stored hash made by :func:`hash_secret` begins with (a scrypt hash of old has no tag: 32 bytes exactly)."""
# The old scrypt hashes' cost: about 16 MB and tens of milliseconds per check.
_SCRYPT_N: Final = 1 << 14
_SCRYPT_R: Final = 8
_SCRYPT_P: Final = 1


@dataclass(frozen=True, slots=True)
class TokenParts:
    """A token's public id and its secret."""

    id: str
    secret: str


def make_token() -> tuple[str, TokenParts]:
    """A new token: its text (shown once) and its parts."""
    parts = TokenParts(secrets.token_hex(4), secrets.token_urlsafe(32))
    return f"{PREFIX}_{parts.id}_{parts.secret}", parts


def parse_token(text: str) -> TokenParts | None:
    """The parts of a well-formed token; None for anything else."""
    found = _TOKEN.match(text.strip()) if isinstance(text, str) and len(text) < 200 else None
    return None if found is None else TokenParts(found.group(1), found.group(2))


def hash_secret(secret: str, salt: bytes) -> bytes:
    """The stored hash of a token's secret: :data:`FAST_TAG` and HMAC-SHA-256 keyed by ``salt``."""
    return FAST_TAG + hmac.new(salt, secret.encode(), hashlib.sha256).digest()


def scrypt_secret(secret: str, salt: bytes) -> bytes:
    """The slow hash that tokens made before :data:`FAST_TAG` were stored with (checked, never made any more)."""
    return hashlib.scrypt(secret.encode(), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32)


def is_slow_hash(stored: bytes) -> bool:
    """Whether ``stored`` is an old scrypt hash (costly to check: rewrite it once its token passes)."""
    return not stored.startswith(FAST_TAG)


def verify_secret(secret: str, salt: bytes, expected: bytes) -> bool:
    """Whether ``secret`` hashes to ``expected``, a hash of either kind (compared in constant time)."""
    digest = scrypt_secret(secret, salt) if is_slow_hash(expected) else hash_secret(secret, salt)
    return hmac.compare_digest(digest, expected)


class Throttled(Exception):
    """Too many bad tokens from one address (for one token): come back after ``retry_after_s`` seconds."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"too many bad tokens from this address: retry in {retry_after_s:.0f} s")
        self.retry_after_s = retry_after_s


@dataclass
class _Record:
    failures: int = 0
    blocked_until: float = 0.0
    last: float = field(default_factory=time.monotonic)


@dataclass(eq=False)
class BadTokenThrottle:
    """Slows down whoever keeps sending bad tokens, by a key: the league's is an address and a token's id together.

    The first ``free`` bad tokens of a key cost nothing; each one after blocks the key for
    twice as long as the one before (from ``first_block_s`` up to ``max_block_s``).  A good
    token clears its key; a key quiet for ``forget_s`` is forgotten.  At most ``max_addresses``
    keys are remembered (the oldest are dropped), so a flood of addresses cannot grow memory.
    """

    free: int = 5
    first_block_s: float = 1.0
    max_block_s: float = 60.0
    forget_s: float = 900.0
    max_addresses: int = 10_000
    clock: Callable[[], float] = time.monotonic
    _records: dict[Hashable, _Record] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def check(self, address: Hashable) -> None:
        """Raise :class:`Throttled` if ``address`` (a key) is blocked now."""
        now = self.clock()
        with self._lock:
            record = self._records.get(address)
            if record is not None and record.blocked_until > now:
                raise Throttled(record.blocked_until - now)

    def failed(self, address: Hashable) -> None:
        """Count a bad token from ``address`` (a key)."""
        now = self.clock()
        with self._lock:
            record = self._records.pop(address, None)
            if record is None or now - record.last > self.forget_s:
                record = _Record(last=now)
            record.failures += 1
            record.last = now
            over = record.failures - self.free
            if over > 0:
                record.blocked_until = now + min(self.max_block_s, self.first_block_s * 2 ** min(over - 1, 30))
            self._records[address] = record  # re-inserted: the dict's order is the order of last use
            while len(self._records) > self.max_addresses:
                del self._records[next(iter(self._records))]

    def failures(self, address: Hashable) -> int:
        """The bad tokens counted for ``address`` (a key) and not forgotten (the operator's figures, the tests)."""
        with self._lock:
            record = self._records.get(address)
            return 0 if record is None else record.failures

    def succeeded(self, address: Hashable) -> None:
        """A good token from ``address`` (a key): its count starts again."""
        with self._lock:
            self._records.pop(address, None)
