"""The league's ``/metrics``: Prometheus counters of what the ladder played and gauges of what waits, on demand.

Counters move as matches start and end (a match's decisions, their times and its faults are
counted from its record when it ends, so a scrape costs nothing on the decision path); gauges
(bots online and active, uploads being received, the validation backlog, live tables, reruns
waiting) are read from the league when a scrape asks.  Every label has a bounded set of values:
a match status, a fault kind, a cluster node's name.  No label names a bot or an author, so
nobody can grow the page by uploading.

The page is for the operator: by default only loopback clients may read it (others get 404),
as a Prometheus server or agent on the league's machine would; docs/league.md says how.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from fastapi import APIRouter, HTTPException, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from polignac_arena.loopback import is_loopback_host
from polignac_arena.record_lines import ActionLine, RecordLine
from polignac_arena.statuses import MatchStatus

__all__ = ["DECISION_BUCKETS_S", "REFILL_BUCKETS_S", "LeagueGauges", "LeagueMetrics", "TableRefills", "metrics_router"]

DECISION_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""The decision-time histogram's buckets, in seconds: from a built-in bot's microseconds to a slow bank."""

REFILL_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 300.0)
"""The table-refill histogram's buckets, in seconds: from a match seated ahead to a table that waited for free bots."""

WITHDRAWN = "withdrawn"
"""The status label of an offer called off before its match began (a remote bot declined): no match at all."""


@dataclass(frozen=True, slots=True)
class LeagueGauges:
    """What waits or is live now, read by a scrape."""

    bots_online: int
    bots_active: int
    uploads_in_flight: int
    validation_backlog: int
    matches_live: int
    reruns_waiting: int


class _GaugeCollector(Collector):
    def __init__(self, read: Callable[[], LeagueGauges]) -> None:
        self._read = read

    def collect(self) -> Iterable[Metric]:
        gauges = self._read()
        yield GaugeMetricFamily("polignac_bots_online", "Remote bots connected to the lobby now.", value=gauges.bots_online)
        yield GaugeMetricFamily("polignac_bots_active", "Versions in the ladder (uploaded and active).", value=gauges.bots_active)
        yield GaugeMetricFamily("polignac_uploads_in_flight", "Uploads being received now.", value=gauges.uploads_in_flight)
        yield GaugeMetricFamily(
            "polignac_validation_backlog", "Versions waiting for or in their validation.", value=gauges.validation_backlog
        )
        yield GaugeMetricFamily("polignac_matches_live", "Matches being played (or offered) now.", value=gauges.matches_live)
        yield GaugeMetricFamily("polignac_reruns_waiting", "Reruns asked for, not yet started.", value=gauges.reruns_waiting)


class LeagueMetrics:
    """The league's counters, and the gauges :meth:`watch` reads; :meth:`page` is what ``/metrics`` serves."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._started = Counter("polignac_matches_started", "Tables the ladder set (offers included).", registry=self.registry)
        self._ended = Counter(
            "polignac_matches_ended",
            "Matches that ended, by status: finished (rated), aborted, error, or withdrawn (an offer called off before it began).",
            ["status"],
            registry=self.registry,
        )
        self._decisions = Counter("polignac_decisions", "Decisions bots made, counted when their match ends.", registry=self.registry)
        self._decision_time = Histogram(
            "polignac_decision_seconds",
            "How long each decision took on the referee's clock, counted when its match ends.",
            buckets=DECISION_BUCKETS_S,
            registry=self.registry,
        )
        self._faults = Counter("polignac_faults", "Faults charged to seats, by kind.", ["kind"], registry=self.registry)
        self._by_node = Counter("polignac_node_matches", "Matches that ended, by node.", ["node"], registry=self.registry)
        self._refill = Histogram(
            "polignac_table_refill_seconds",
            "From a match's end to the first decision request of the match that took its table (on the league's referee).",
            buckets=REFILL_BUCKETS_S,
            registry=self.registry,
        )
        for status in (*(s.value for s in MatchStatus), WITHDRAWN):
            self._ended.labels(status)  # every status shows from the start, at 0: a rate needs a first sample

    def watch(self, read: Callable[[], LeagueGauges]) -> None:
        """Serve the gauges ``read()`` gives at each scrape (called once)."""
        self.registry.register(_GaugeCollector(read))

    def match_started(self) -> None:
        self._started.inc()

    def table_refilled(self, seconds: float) -> None:
        """A freed table's next match sent its first decision request ``seconds`` after the table freed."""
        self._refill.observe(seconds)

    def match_withdrawn(self) -> None:
        self._ended.labels(WITHDRAWN).inc()

    def match_ended(
        self, status: MatchStatus, node: str | None = None, lines: Sequence[RecordLine] = (), faults: Sequence[dict[str, int]] = ()
    ) -> None:
        """A match ended with ``status``: count it, and its decisions and faults from its record ``lines`` and ``faults``."""
        self._ended.labels(status.value).inc()
        if node:
            self._by_node.labels(node).inc()
        decisions = 0
        for line in lines:
            if isinstance(line, ActionLine) and line.seat is not None and line.ms is not None:
                decisions += 1
                self._decision_time.observe(line.ms / 1000)
        if decisions:
            self._decisions.inc(decisions)
        for seat_faults in faults:
            for kind, count in seat_faults.items():
                if count > 0:
                    self._faults.labels(kind).inc(count)

    def page(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)


class TableRefills:
    """Times each table from its match's end to the first decision request of the match that takes it, for
    :meth:`LeagueMetrics.table_refilled`: the ladder says when a table frees, which match takes one, and when that
    match first asks; freed tables are taken oldest first."""

    def __init__(self, metrics: LeagueMetrics, tables: int) -> None:
        self._metrics = metrics
        self._freed: collections.deque[float] = collections.deque(maxlen=tables)
        self._since: dict[str, float] = {}  # match id -> when the table it took freed

    def freed(self) -> None:
        self._freed.append(time.monotonic())

    def idle(self) -> None:
        """The free tables wait for the league (paused, stopping), not for a match: they are not timed."""
        self._freed.clear()

    def taken(self, match_id: str) -> None:
        if self._freed:
            self._since[match_id] = self._freed.popleft()

    def first_request(self, match_id: str, at: float) -> None:
        """``match_id`` sent its first decision request at ``at`` (``time.monotonic()``)."""
        since = self._since.pop(match_id, None)
        if since is not None:
            self._metrics.table_refilled(at - since)

    def ended(self, match_id: str) -> None:
        self._since.pop(match_id, None)


def metrics_router(metrics: LeagueMetrics) -> APIRouter:
    """``GET /metrics`` for loopback clients; 404 for anyone else (the page is the operator's)."""
    router = APIRouter()

    @router.get("/metrics", include_in_schema=False)
    def page(request: Request) -> Response:
        if request.client is None or not is_loopback_host(request.client.host):
            raise HTTPException(status_code=404, detail="Not Found")
        return Response(metrics.page(), media_type=CONTENT_TYPE_LATEST)

    return router
