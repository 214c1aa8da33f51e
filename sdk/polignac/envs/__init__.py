"""Research bridges: Polignac as a PettingZoo environment and an OpenSpiel game, and their agents as arena bots.

Nothing here is imported by ``import polignac`` or by the arena; each module loads what it
needs when it is imported itself (``pip install 'polignac-arena[research]'`` installs PettingZoo
and OpenSpiel):

- :mod:`polignac.envs.encoding`: the action numbers and the observation arrays both share
  (numpy only);
- :mod:`polignac.envs.pettingzoo`: the AEC environment (``env()``, ``raw_env``);
- :mod:`polignac.envs.openspiel`: the ``python_polignac`` game, registered on import;
- :mod:`polignac.envs.adapters`: a policy or a ``pyspiel.Bot`` seated as an arena bot;
- :mod:`polignac.envs.openspiel_bots`: the built-ins ``openspiel:ismcts`` and ``openspiel:random``.

docs/research.md explains them, with a worked example that trains a small policy and submits it.
"""
