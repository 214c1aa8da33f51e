"""The heuristic sample bot.

Its strategy ships with the SDK, so that it can also play in-process
(polignac.bot.play_local); read it in sdk/polignac/bots/heuristic.py.
"""

from polignac.bot import run
from polignac.bots import HeuristicBot

if __name__ == "__main__":
    run(HeuristicBot())
