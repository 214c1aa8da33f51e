"""Run a built-in bot as a referee seat: ``python -m polignac.bots NAME``."""

from __future__ import annotations

import sys

from polignac.bot import run
from polignac.bots import BUILTIN_NAMES, builtin_bot


def main() -> None:
    """Start the bot named on the command line, connecting with POLIGNAC_ADDRESS/POLIGNAC_TOKEN."""
    if len(sys.argv) != 2 or sys.argv[1] not in BUILTIN_NAMES:
        sys.exit(f"usage: python -m polignac.bots {{{','.join(BUILTIN_NAMES)}}}")
    try:
        bot = builtin_bot(sys.argv[1])
    except ValueError as exc:
        sys.exit(f"polignac.bots: {exc}")
    run(bot)


if __name__ == "__main__":
    main()
