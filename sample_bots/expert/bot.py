"""The expert sample bot: a search over determinized deals (PIMC).

Its strategy ships with the SDK, so that it can also play in-process
(polignac.bot.play_local); read it in sdk/polignac/bots/expert.py and
docs/writing-a-search-bot.md.  POLIGNAC_EXPERT_PLAYOUTS=N fixes its effort at N
playouts a decision (with POLIGNAC_BOT_SEED, the same decisions on any machine).
"""

from polignac.bot import run
from polignac.bots import ExpertBot

if __name__ == "__main__":
    run(ExpertBot())
