"""Starter bots for ``polignac bot new``: one folder of files per language, shipped as package data.

In the template files ``{{name}}`` stands for the bot's name. Files named ``gitignore`` and
``dockerignore`` become ``.gitignore`` and ``.dockerignore`` (packaging skips dotfiles).
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Final

from polignac_arena.protofiles import copy_proto
from polignac_arena.settings import NAME_RULE, is_name

__all__ = ["KIT_SOURCES", "PREPARE", "TEMPLATE_LANGUAGES", "WITH_PROTO", "ScaffoldError", "scaffold"]

TEMPLATE_LANGUAGES: Final = ("python", "javascript", "typescript", "c", "cpp", "go", "rust", "java")
_RENAMED: Final = {"gitignore": ".gitignore", "dockerignore": ".dockerignore", "cargo": ".cargo"}
_SKIPPED: Final = ("__pycache__", ".mypy_cache", ".ruff_cache")
KIT_SOURCES: Final = {
    "python": ("bot.py",),
    "javascript": ("bot.js",),
    "typescript": ("src/bot.ts",),
    "c": ("bot.c",),
    "cpp": ("bot.cpp", "Makefile"),
    "go": ("bot.go",),
    "rust": ("src/main.rs",),
    "java": ("src/Bot.java", "Makefile"),
}
"""The author's own code in each kit (its build files that hold steps, not settings, included): what a kit's size counts."""
PREPARE: Final = {"javascript": "npm ci --omit=dev", "typescript": "npm ci"}
"""What an author runs once, with the network, before the offline build step: the packages the kit's lock file names."""
WITH_PROTO: Final = frozenset({"javascript", "typescript", "cpp"})
"""The starters that speak gRPC from a ``.proto`` (generated at build time or loaded at run time): they get the
protocol's files in ``proto/`` (:func:`polignac_arena.protofiles.copy_proto`)."""


class ScaffoldError(ValueError):
    """A starter bot that cannot be made: the message says why."""


def scaffold(name: str, language: str, folder: Path) -> list[Path]:
    """Write the starter bot ``name`` in ``language`` into ``folder`` (new, or empty); returns the files written."""
    if not is_name(name):
        raise ScaffoldError(f"bot name {name!r}: use {NAME_RULE}")
    if language not in TEMPLATE_LANGUAGES:
        raise ScaffoldError(f"no starter bot in {language!r}; choose one of {', '.join(TEMPLATE_LANGUAGES)}")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ScaffoldError(f"{folder} already exists and is not an empty folder: not overwriting it")
    source = files(__name__) / language
    written: list[Path] = []
    folder.mkdir(parents=True, exist_ok=True)
    _copy(source, folder, name, written)
    if language in WITH_PROTO:
        written += copy_proto(folder)
    return written


def _copy(source: Traversable, target: Path, name: str, written: list[Path]) -> None:
    for entry in sorted(source.iterdir(), key=lambda e: e.name):
        if entry.name in _SKIPPED or entry.name.endswith(".pyc"):
            continue
        destination = target / _RENAMED.get(entry.name, entry.name)
        if entry.is_dir():
            destination.mkdir()
            _copy(entry, destination, name, written)
        else:
            destination.write_text(entry.read_text(encoding="utf-8").replace("{{name}}", name), encoding="utf-8")
            written.append(destination)
