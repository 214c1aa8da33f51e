"""Hostile: plays politely (its first legal card) while ``yes`` floods its stderr as fast as the pipe takes it.

``params.json`` with ``{"flood": false}`` makes it the same bot without the flood (a baseline).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from polignac import Card, PlayerView
from polignac.bot import Bot, run


class Polite(Bot):
    name = "stderr-flooder"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


params = json.loads(Path("params.json").read_text()) if os.path.exists("params.json") else {}
if params.get("flood", True):
    # The host's coreutils `yes` (the seat mounts the host runtime) writes far faster than Python could.
    flood = subprocess.Popen(["yes", "stderr flood"], stdout=sys.stderr)
run(Polite())
