"""The conformance report of ``polignac bot check --conformance``: a bot through every scripted situation."""

from __future__ import annotations

from polignac_arena.conformance.checks import Line
from polignac_arena.conformance.report import ConformanceReport, run_conformance

__all__ = ["ConformanceReport", "Line", "run_conformance"]
