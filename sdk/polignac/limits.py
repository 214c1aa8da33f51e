"""The protocol's limits on what a bot says about itself, shared by the SDK and the arena."""

from __future__ import annotations

from typing import Final, TypeGuard

__all__ = ["CUT_MARK", "DEBUG_MAX", "NAME_MAX", "VERSION_MAX", "cut_debug", "is_display_name", "is_version_text"]

NAME_MAX: Final = 64
"""The longest name a bot may give (a Hello's or a Join's ``bot_name``, a bot.toml's ``name``)."""
VERSION_MAX: Final = 64
"""The longest version a bot may give (``bot_version``, a bot.toml's ``version``)."""
DEBUG_MAX: Final = 1000
"""The most characters of a decision's ``debug`` text that are kept (protocol 1.3); the rest is cut."""
CUT_MARK: Final = " [cut]"
"""What ends a debug text that was cut at :data:`DEBUG_MAX`."""


def cut_debug(text: str) -> str:
    """``text`` cut to :data:`DEBUG_MAX` characters, marked with :data:`CUT_MARK` when it was longer."""
    return text if len(text) <= DEBUG_MAX else text[:DEBUG_MAX] + CUT_MARK


def is_display_name(text: object) -> TypeGuard[str]:
    """Whether ``text`` is a name a bot may give itself in its Hello: 1 to :data:`NAME_MAX` printable characters."""
    return isinstance(text, str) and 1 <= len(text) <= NAME_MAX and text.isprintable()


def is_version_text(text: object, *, empty: bool = False) -> TypeGuard[str]:
    """Whether ``text`` is printable and at most :data:`VERSION_MAX` characters (and not empty unless ``empty``)."""
    return isinstance(text, str) and (empty or len(text) >= 1) and len(text) <= VERSION_MAX and text.isprintable()
