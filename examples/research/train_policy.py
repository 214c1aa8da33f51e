"""Train a small policy against the arena's bots with PettingZoo and PyTorch, then write it as a submission folder.

    python examples/research/train_policy.py --minutes 3 --out trained-policy
    polignac match -b trained-policy -b heuristic -b heuristic -b heuristic --seat-kind process

docs/research.md walks through it.  One seat of the PettingZoo environment (a hand an episode)
is the learner, a different seat every hand; the arena's built-in bots (``--opponents``) play
the others through their views.  The policy is a two-layer network over the observation
vector, its choices masked to the legal actions, trained by REINFORCE: after a batch of
hands each of the learner's decisions is pushed toward more likely in proportion to how much
better than the batch's average its hand's reward was (the reward is the hand's score, signed
so that higher is better).  Every ``--report`` seconds it prints the greedy policy's mean
reward over fixed deals beside the uniform random policy's.  CPU only and small: one thread.

The submission folder is ``policy_bot/`` beside this script plus the trained ``weights.npz``:
its ``bot.py`` runs the network with numpy alone, so the sandboxed bot needs no PyTorch.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from polignac.bots import builtin_bot
from polignac.envs.encoding import ACTIONS, PASS_ACTION, action_of, observation_size
from polignac.envs.pettingzoo import raw_env

TEMPLATE = Path(__file__).with_name("policy_bot")


class Network(nn.Module):
    """Observation vector to one logit per action."""

    def __init__(self, size: int, hidden: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(size, hidden)
        self.out = nn.Linear(hidden, ACTIONS)

    def forward(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.out(torch.relu(self.hidden(observation)))
        return logits.masked_fill(mask == 0, -1e9)


def play_hand(table: Any, learner: str, choose: Any, opponents: dict[str, Any], seed: int) -> tuple[list[Any], float]:
    """One hand: the learner's (observation, mask, action) triples and its reward."""
    table.reset(seed=seed)
    steps = []
    reward = 0.0
    for agent in table.agent_iter():
        observation, cumulative, terminated, truncated, _ = table.last()
        if terminated or truncated:
            if agent == learner:
                reward = cumulative
            table.step(None)
            continue
        if agent == learner:
            action = choose(observation["observation"], observation["action_mask"])
            steps.append((observation["observation"], observation["action_mask"], action))
        else:
            action = action_of(opponents[agent].decide(table.view(agent)))
        table.step(action)
    return steps, reward


def evaluate(table: Any, choose: Any, opponents: dict[str, Any], hands: int) -> float:
    """The mean reward over ``hands`` fixed deals, the learner in every seat in turn."""
    total = 0.0
    for k in range(hands):
        _, reward = play_hand(table, table.possible_agents[k % len(table.possible_agents)], choose, opponents, seed=10_000 + k)
        total += reward
    return total / hands


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="training time (default 3)")
    parser.add_argument("--out", type=Path, default=Path("trained-policy"), help="the submission folder to write (default trained-policy)")
    parser.add_argument("--rules", default="classic", help="the ruleset (default classic)")
    parser.add_argument("--players", type=int, default=None, help="the table size (default: the ruleset's own)")
    parser.add_argument("--opponents", default="heuristic", help="the built-in bot in the other seats (default heuristic)")
    parser.add_argument("--hidden", type=int, default=64, help="the hidden layer's width (default 64)")
    parser.add_argument("--batch", type=int, default=32, help="hands per update (default 32)")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate (default 3e-3)")
    parser.add_argument("--report", type=float, default=30.0, help="seconds between progress lines (default 30)")
    parser.add_argument("--eval-hands", type=int, default=200, help="hands of each progress measurement (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="the seed of the deals and of the network (default 1)")
    args = parser.parse_args(argv)
    if args.out.exists():
        parser.error(f"{args.out} exists: give a new folder (--out)")
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    table = raw_env(rules=args.rules, players=args.players)
    opponents = {agent: builtin_bot(args.opponents, seed) for seed, agent in enumerate(table.possible_agents)}
    network = Network(observation_size(table.rules.players), args.hidden)
    optimizer = torch.optim.Adam(network.parameters(), lr=args.lr)

    def sample(observation: np.ndarray, mask: np.ndarray) -> int:
        with torch.no_grad():
            logits = network(torch.from_numpy(observation), torch.from_numpy(mask))
        return int(torch.distributions.Categorical(logits=logits).sample())

    def greedy(observation: np.ndarray, mask: np.ndarray) -> int:
        with torch.no_grad():
            return int(network(torch.from_numpy(observation), torch.from_numpy(mask)).argmax())

    def uniform(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    def passing(observation: np.ndarray, mask: np.ndarray) -> int:  # the built-in random bot: pass, then any card
        return PASS_ACTION if mask[PASS_ACTION] else uniform(observation, mask)

    baseline = evaluate(table, uniform, opponents, args.eval_hands)
    random_bot = evaluate(table, passing, opponents, args.eval_hands)
    print(
        f"{args.rules} for {table.rules.players} against {args.opponents}: uniform random policy {baseline:+.3f} a hand,"
        f" the random bot (passes, then random cards) {random_bot:+.3f}",
        flush=True,
    )
    start = time.monotonic()
    next_report = start + args.report
    hands = updates = 0
    while time.monotonic() - start < args.minutes * 60:
        batch = []
        for _ in range(args.batch):
            learner = table.possible_agents[hands % len(table.possible_agents)]
            batch.append(play_hand(table, learner, sample, opponents, seed=int(rng.integers(2**62))))
            hands += 1
        rewards = torch.tensor([reward for _, reward in batch])
        advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
        observations = torch.from_numpy(np.stack([o for steps, _ in batch for o, _, _ in steps]))
        masks = torch.from_numpy(np.stack([m for steps, _ in batch for _, m, _ in steps]))
        actions = torch.tensor([a for steps, _ in batch for _, _, a in steps])
        weights = torch.cat([advantages[i].repeat(len(steps)) for i, (steps, _) in enumerate(batch)])
        log_probs = torch.log_softmax(network(observations, masks), dim=-1).gather(1, actions[:, None]).squeeze(1)
        loss = -(log_probs * weights).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        updates += 1
        if time.monotonic() >= next_report:
            score = evaluate(table, greedy, opponents, args.eval_hands)
            print(f"{time.monotonic() - start:6.0f} s  {hands:7d} hands  greedy policy {score:+.3f} a hand", flush=True)
            next_report = time.monotonic() + args.report
    final = evaluate(table, greedy, opponents, args.eval_hands)
    print(
        f"trained {hands} hands in {time.monotonic() - start:.0f} s ({updates} updates): greedy policy {final:+.3f} a hand"
        f" (uniform {baseline:+.3f}, random bot {random_bot:+.3f})"
    )
    write_submission(args.out, network, table.rules.name)
    print(f"submission written to {args.out}: polignac match -b {args.out} -b {args.opponents} ...")
    return 0


def write_submission(folder: Path, network: Network, game: str) -> None:
    """The template folder, the weights for numpy, and a bot.toml with a version of its own and the game it learned."""
    shutil.copytree(TEMPLATE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    version = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    state = {name: value.detach().numpy() for name, value in network.state_dict().items()}
    np.savez(
        folder / "weights.npz",
        w1=state["hidden.weight"].T,
        b1=state["hidden.bias"],
        w2=state["out.weight"].T,
        b2=state["out.bias"],
        version=np.array(version),
    )
    manifest = (folder / "bot.toml").read_text(encoding="utf-8")
    manifest = manifest.replace('version = "1"', f'version = "{version}"').replace('games = ["classic"]', f'games = ["{game}"]')
    (folder / "bot.toml").write_text(manifest, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
