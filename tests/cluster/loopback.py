"""A Ray cluster on this machine for the cluster tests: a head that plays nothing and worker nodes on 127.0.0.1.

Ray is imported when a cluster is made, so that a test module that skips without Ray can import this one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FAST_HEALTH_CHECKS = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_timeout_ms": 500,
    "health_check_failure_threshold": 3,
}
"""A dead node is noticed within about 2 s, not Ray's default of half a minute."""


class LoopbackCluster:
    """The head (``cluster``: Ray's ``cluster_utils.Cluster``) and the worker nodes added by name."""

    def __init__(self, cluster: Any, root: Path) -> None:
        self.cluster = cluster
        self.root = root
        self.address: str = cluster.address
        self.nodes: dict[str, Any] = {}

    def add(self, name: str, cpus: int = 1) -> Any:
        """A worker node of ``cpus`` CPUs named ``name`` (the name its results give), with a cache folder of its own."""
        env = {"POLIGNAC_NODE_NAME": name, "POLIGNAC_NODE_CACHE": str(self.cache(name))}
        node = self.cluster.add_node(num_cpus=cpus, node_ip_address="127.0.0.1", node_name=name, env_vars=env)
        self.cluster.wait_for_nodes()
        self.nodes[name] = node
        return node

    def cache(self, name: str) -> Path:
        return self.root / f"cache-{name}"

    def raylet_pid(self, name: str) -> int:
        return int(self.nodes[name].all_processes["raylet"][0].process.pid)


@contextmanager
def loopback_cluster(root: Path, nodes: Sequence[str]) -> Iterator[LoopbackCluster]:
    """A head of no CPUs (it schedules; only the worker nodes play) and one worker node of one CPU per name; shut down
    with everything it started when the block ends."""
    from ray import cluster_utils

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    head: Any = cluster_utils.Cluster(  # Ray leaves its methods untyped
        initialize_head=True,
        head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False, "_system_config": FAST_HEALTH_CHECKS},
    )
    made = LoopbackCluster(head, root)
    try:
        for name in nodes:
            made.add(name)
        yield made
    finally:
        head.shutdown()
