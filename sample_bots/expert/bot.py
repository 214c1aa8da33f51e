"""The expert sample bot: a search over determinized deals (PIMC).

Its strategy ships with the SDK, so that it can also play in-process
(polignac.bot.play_local); read it in sdk/polignac/bots/expert.py and
docs/writing-a-search-bot.md.  It searches for 60 % of each move's time.  To fix its effort
instead (with POLIGNAC_BOT_SEED, which the arena gives every seat: the same decisions on any
machine), give a budget of playouts a decision: ``ExpertBot(playouts=300)``.  The arena's
sandboxed seats pass no other environment variable, so POLIGNAC_EXPERT_PLAYOUTS works only
where the bot shares the arena's environment (in-process seats, play_local).
"""

from polignac.bot import run
from polignac.bots import ExpertBot

if __name__ == "__main__":
    run(ExpertBot())
