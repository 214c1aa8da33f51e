"""Built-in bots: ``random``, ``cautious``, ``heuristic`` and ``expert`` (a search).

They play in-process (``polignac.bot.play_local``), as referee seats
(``python -m polignac.bots NAME``), and are the strategies of ``sample_bots/``.
"""

from __future__ import annotations

from polignac.bot.base import Bot
from polignac.bots.cautious import CautiousBot
from polignac.bots.expert import ExpertBot
from polignac.bots.heuristic import HeuristicBot
from polignac.bots.random_bot import RandomBot

__all__ = ["BUILTIN_BOTS", "CautiousBot", "ExpertBot", "HeuristicBot", "RandomBot", "builtin_bot"]

BUILTIN_BOTS: dict[str, type[Bot]] = {"random": RandomBot, "cautious": CautiousBot, "heuristic": HeuristicBot, "expert": ExpertBot}


def builtin_bot(name: str, seed: int | None = None) -> Bot:
    """A fresh built-in bot by name; ``seed`` makes the random and expert bots reproducible."""
    try:
        cls = BUILTIN_BOTS[name]
    except KeyError:
        raise ValueError(f"unknown built-in bot {name!r}; choose one of {', '.join(BUILTIN_BOTS)}") from None
    if cls is RandomBot:
        return RandomBot(seed)
    if cls is ExpertBot:
        return ExpertBot(seed)
    return cls()
