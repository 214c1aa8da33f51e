"""Write a Polignac bot: subclass :class:`Bot`, then ``run(MyBot())``.

>>> from polignac.bot import Bot
>>> class Lowest(Bot):
...     name = "lowest"
...     def play(self, view):
...         return min(view.legal_cards, key=lambda c: view.rules.strength[c.index])

Try it without a server with :func:`play_local`, and check it with :func:`check_bot`.
"""

from polignac.bot.base import Bot, FaultInfo, MatchInfo
from polignac.bot.client import BotConnectionError, MatchOutcome, run, run_async
from polignac.bot.local import ConformanceReport, LocalResult, check_bot, play_local

__all__ = [
    "Bot",
    "BotConnectionError",
    "ConformanceReport",
    "FaultInfo",
    "LocalResult",
    "MatchInfo",
    "MatchOutcome",
    "check_bot",
    "play_local",
    "run",
    "run_async",
]
