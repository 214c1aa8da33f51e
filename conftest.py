"""pytest settings for the whole repository: the doctests of the research bridges need their extra.

``python -m pytest`` collects the doctests of ``sdk/polignac`` too; the modules that import
PettingZoo or OpenSpiel are left out when the ``research`` extra is not installed (their tests in
tests/research skip with the reason; .ci/run installs the extra).
"""

from __future__ import annotations

import importlib.util

collect_ignore: list[str] = []
if importlib.util.find_spec("pettingzoo") is None:
    collect_ignore.append("sdk/polignac/envs/pettingzoo.py")
if importlib.util.find_spec("pyspiel") is None:
    collect_ignore += ["sdk/polignac/envs/openspiel.py", "sdk/polignac/envs/openspiel_bots.py"]
