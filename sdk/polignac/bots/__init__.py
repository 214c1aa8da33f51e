"""Built-in bots: ``random``, ``cautious``, ``heuristic`` and ``expert`` (a search), and OpenSpiel's own.

They play in-process (``polignac.bot.play_local``), as referee seats
(``python -m polignac.bots NAME``), and are the strategies of ``sample_bots/``.
``openspiel:ismcts`` and ``openspiel:random`` (:mod:`polignac.envs.openspiel_bots`) are OpenSpiel's
information-set MCTS and uniform random bot; they need the ``research`` extra, and are loaded
only when named.
"""

from __future__ import annotations

import importlib.util
from typing import Final

from polignac.bot.base import Bot
from polignac.bots.cautious import CautiousBot
from polignac.bots.expert import ExpertBot
from polignac.bots.heuristic import HeuristicBot
from polignac.bots.random_bot import RandomBot

__all__ = [
    "BUILTIN_BOTS",
    "BUILTIN_NAMES",
    "OPENSPIEL_BOTS",
    "CautiousBot",
    "ExpertBot",
    "HeuristicBot",
    "RandomBot",
    "builtin_bot",
    "builtin_unavailable",
]

BUILTIN_BOTS: dict[str, type[Bot]] = {"random": RandomBot, "cautious": CautiousBot, "heuristic": HeuristicBot, "expert": ExpertBot}
OPENSPIEL_BOTS: Final = ("openspiel:ismcts", "openspiel:random")
"""OpenSpiel's bots, built in when OpenSpiel is installed (``pip install 'polignac-arena[research]'``)."""
BUILTIN_NAMES: Final = (*BUILTIN_BOTS, *OPENSPIEL_BOTS)
"""Every name :func:`builtin_bot` knows."""


def builtin_unavailable(name: str) -> str | None:
    """Why the built-in bot ``name`` cannot run here, or ``None`` when it can (an unknown name is not asked about)."""
    if name in OPENSPIEL_BOTS and importlib.util.find_spec("pyspiel") is None:
        return f"built-in bot {name!r} needs OpenSpiel, which is not installed: pip install 'polignac-arena[research]'"
    return None


def builtin_bot(name: str, seed: int | None = None) -> Bot:
    """A fresh built-in bot by name; ``seed`` makes the random, expert and OpenSpiel bots reproducible."""
    if name in OPENSPIEL_BOTS:
        problem = builtin_unavailable(name)
        if problem is not None:
            raise ValueError(problem)
        try:
            from polignac.envs import openspiel_bots  # OpenSpiel is loaded only for its bots
        except ImportError as exc:  # installed but broken (a missing shared library, say)
            raise ValueError(f"built-in bot {name!r} needs OpenSpiel, which does not load: {exc}") from None
        return openspiel_bots.IsmctsBot(seed) if name == "openspiel:ismcts" else openspiel_bots.UniformRandomBot(seed)
    try:
        cls = BUILTIN_BOTS[name]
    except KeyError:
        raise ValueError(f"unknown built-in bot {name!r}; choose one of {', '.join(BUILTIN_NAMES)}") from None
    if cls is RandomBot:
        return RandomBot(seed)
    if cls is ExpertBot:
        return ExpertBot(seed)
    return cls()
