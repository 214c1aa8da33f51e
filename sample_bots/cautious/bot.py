"""The cautious sample bot.

Its strategy ships with the SDK, so that it can also play in-process
(polignac.bot.play_local); read it in sdk/polignac/bots/cautious.py.
"""

from polignac.bot import run
from polignac.bots import CautiousBot

if __name__ == "__main__":
    run(CautiousBot())
