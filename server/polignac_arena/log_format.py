"""How a long-running command (``polignac league serve``) writes its log: plain text lines, or JSON objects, one a line.

Text is for a terminal; JSON is for a log collector (journald, Loki, an ELK stack): each line
is one object with ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` and, for an
error with a traceback, ``exception``.  Both go through :func:`~polignac_arena.plaintext.plain`
first (a message may quote a bot's text), and JSON escapes every other non-ASCII character, so
no line can break a terminal or a collector's parser.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from enum import StrEnum

from polignac_arena.plaintext import PlainFormatter, plain

__all__ = ["JsonFormatter", "LogFormat", "configure_logging"]


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": plain(record.getMessage()),
        }
        if record.exc_info:
            entry["exception"] = plain(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=True)


def configure_logging(log_format: LogFormat, prefix: str, level: int = logging.WARNING) -> None:
    """Send the root logger's records of ``level`` and above to stderr in ``log_format`` (text lines start with ``prefix``)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format is LogFormat.JSON else PlainFormatter(f"{prefix}%(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
