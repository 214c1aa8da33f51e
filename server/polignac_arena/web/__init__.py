"""The arena's web face: leaderboards, bot pages, crosstables, match lists and a replay viewer, plus a JSON API.

:func:`create_app` builds the FastAPI app over a store (read-only); :func:`write_report` writes the
same pages as a static site.  ``polignac web`` and ``polignac report`` run them.
"""

from __future__ import annotations

from polignac_arena.web.app import create_app
from polignac_arena.web.report import write_report

__all__ = ["create_app", "write_report"]
