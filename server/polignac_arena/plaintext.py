"""Bot-written text made safe to show: terminal control sequences and control characters taken out.

A bot's stderr, build output, fault details or names reach the operator's terminal, the logs
and the web pages.  Shown raw, escape sequences could set the terminal's title, write to its
clipboard (OSC 52), clear the screen, hide lines or fake the arena's own output.  :func:`plain`
removes, whole:

* CSI sequences (``ESC [`` or 0x9B, parameters, intermediates, a final byte),
* command strings: OSC (titles, clipboard, hyperlinks), DCS, SOS, PM and APC, up to BEL or ST
  (or the end of the line when cut short),
* every other ``ESC`` sequence,

and then every remaining C0 control but newline and tab (carriage return and backspace can
overwrite what is shown), DEL, every C1 control, and the Unicode bidirectional overrides and
isolates (which reorder what a line seems to say).
"""

from __future__ import annotations

import logging
import re
from typing import Final

__all__ = ["PlainFormatter", "plain"]

_SEQUENCES: Final = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?                    # CSI
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) [^\x07\x9c\x1b\n]* (?:\x07|\x9c|\x1b\\)?  # command strings
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                                           # any other escape
    """,
    re.VERBOSE,
)
_CONTROLS: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: str) -> str:
    """``text`` without terminal control sequences or control characters (newlines and tabs stay).

    >>> plain("\\x1b]52;c;ZXZpbA==\\x07ok \\x1b[2J\\x1b[31mred\\x1b[0m\\r\\n")
    'ok red\\n'
    """
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


class PlainFormatter(logging.Formatter):
    """A log formatter whose lines go through :func:`plain`: log messages may quote bot text."""

    def format(self, record: logging.LogRecord) -> str:
        return plain(super().format(record))
