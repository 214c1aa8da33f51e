"""A policy trained by examples/research/train_policy.py, played with numpy alone: two layers and a masked argmax.

The training writes ``weights.npz`` beside this file; the folder is then a submission like any other.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from polignac.bot import run
from polignac.envs.adapters import PolicyBot

WEIGHTS = np.load(Path(__file__).with_name("weights.npz"))


def policy(observation: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
    """The legal action the network rates highest."""
    hidden = np.maximum(0.0, observation @ WEIGHTS["w1"] + WEIGHTS["b1"])
    logits = hidden @ WEIGHTS["w2"] + WEIGHTS["b2"]
    return int(np.argmax(np.where(mask == 1, logits, -np.inf)))


if __name__ == "__main__":
    run(PolicyBot(policy, name="trained-policy", version=str(WEIGHTS["version"])))
