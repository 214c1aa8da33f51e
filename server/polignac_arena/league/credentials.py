"""An author's API token on their own machine: never a command-line argument, which ``ps`` shows to everyone.

Looked for in order: a token file (``--token-file``), the ``POLIGNAC_TOKEN`` environment
variable, then the key ``token`` of the user's ``league.toml`` in their configuration folder
(``$XDG_CONFIG_HOME/polignac/league.toml``, by default ``~/.config/polignac/league.toml``).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Final

__all__ = ["TOKEN_ENV", "TokenMissing", "author_token", "user_config_file"]

TOKEN_ENV: Final = "POLIGNAC_TOKEN"
_MAX_TOKEN: Final = 1024


class TokenMissing(ValueError):
    """No API token was found, or the one found cannot be a token."""


def user_config_file() -> Path:
    """The user's league settings file: ``$XDG_CONFIG_HOME/polignac/league.toml`` (``~/.config`` by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "polignac" / "league.toml"


def _checked(token: str, where: str) -> str:
    token = token.strip()
    if not token:
        raise TokenMissing(f"the API token in {where} is empty")
    if len(token) > _MAX_TOKEN or not token.isprintable() or any(c.isspace() for c in token):
        raise TokenMissing(f"the text in {where} is not an API token (one line of printable characters without spaces)")
    return token


def author_token(token_file: Path | None = None) -> str:
    """The author's API token from ``token_file``, else ``POLIGNAC_TOKEN``, else the user's league.toml."""
    if token_file is not None:
        try:
            return _checked(token_file.read_text(encoding="utf-8", errors="replace")[: _MAX_TOKEN + 1], repr(str(token_file)))
        except OSError as exc:
            raise TokenMissing(f"cannot read the token file {str(token_file)!r}: {exc.strerror}") from None
    if os.environ.get(TOKEN_ENV):
        return _checked(os.environ[TOKEN_ENV], TOKEN_ENV)
    config = user_config_file()
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TokenMissing(f"cannot read {str(config)!r}: {exc}") from None
    token = data.get("token")
    if isinstance(token, str):
        return _checked(token, f"{config}, key 'token'")
    if token is not None:
        raise TokenMissing(f"{config}: 'token' must be a string, got {type(token).__name__}")
    raise TokenMissing(f'no API token: use --token-file FILE, set {TOKEN_ENV}, or put token = "..." in {config}')
