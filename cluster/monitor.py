"""Scheduler-side state for the dashboard: batches, their plans and outcomes, and Prometheus metrics.

:class:`DistsmMonitor` is a ``SchedulerPlugin``.  The client announces each batch (``log_event("distsm-batch",
...)`` with the queries and their plans); every merge task reports its query when done (``log_event("distsm",
...)``) and the client reports queries that ended otherwise (timeout, cancel, error:
``log_event("distsm-batch-end", ...)``).  The plugin keeps a small status table, served as JSON at
``/distsm/status`` (see :mod:`distsm.cluster.http`).  The scheduler's ``/metrics`` page exports its totals through
a Prometheus collector that reads them at scrape time (:class:`MetricsCollector`), so the metrics never drift from
the status table.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin

from distsm.cluster.batch import END_TOPIC

PLUGIN_NAME = "distsm-monitor"
_MAX_BATCHES = 50
_TOTALS = ("queries", "matches", "gathered_bytes", "ended")


class MetricsCollector:
    """A Prometheus collector (registered once per process) over every live monitor's totals.

    Totals of monitors whose scheduler closed are kept, so the counters never go down while the process lives
    (several schedulers may share one process, as in tests)."""

    def __init__(self) -> None:
        self.monitors: weakref.WeakSet[DistsmMonitor] = weakref.WeakSet()
        self.retired = dict.fromkeys(_TOTALS, 0)
        self.lock = threading.Lock()

    def retire(self, monitor: DistsmMonitor) -> None:
        with self.lock:
            if monitor in self.monitors:
                self.monitors.discard(monitor)
                for k in _TOTALS:
                    self.retired[k] += monitor.totals[k]

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        with self.lock:
            live = list(self.monitors)
            totals = {k: self.retired[k] + sum(m.totals[k] for m in live) for k in _TOTALS}
        yield CounterMetricFamily("distsm_queries_done", "distsm queries completed", value=totals["queries"])
        yield CounterMetricFamily("distsm_matches_counted", "matches counted by distsm queries",
                                  value=totals["matches"])
        yield CounterMetricFamily("distsm_adjacency_gathered_bytes",
                                  "bytes of adjacency read by inter-partition searches", value=totals["gathered_bytes"])
        yield CounterMetricFamily("distsm_queries_ended_unfinished",
                                  "distsm queries that timed out, were cancelled or failed", value=totals["ended"])
        yield GaugeMetricFamily("distsm_queries_in_flight", "distsm queries submitted and not ended",
                                value=sum(m.in_flight() for m in live))


_collector: MetricsCollector | None = None


def metrics_collector() -> MetricsCollector | None:
    """The process's collector, registered with ``prometheus_client`` on first use (None without it)."""
    global _collector
    if _collector is None:
        try:
            from prometheus_client import REGISTRY
        except ImportError:
            return None
        _collector = MetricsCollector()
        REGISTRY.register(_collector)
    return _collector


class DistsmMonitor(SchedulerPlugin):
    idempotent = True
    name = PLUGIN_NAME

    def __init__(self) -> None:
        self.batches: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.totals = dict.fromkeys(_TOTALS, 0)

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        collector = metrics_collector()
        if collector is not None:
            collector.monitors.add(self)

    async def close(self) -> None:
        if _collector is not None:
            _collector.retire(self)

    def log_event(self, topic: str, msg: Any) -> None:
        if not isinstance(msg, dict):
            return
        if topic == "distsm-batch":
            batch = self._batch(msg["batch"])
            batch.update(queries=msg.get("queries", {}), partitions=msg.get("partitions"),
                         semantics=msg.get("semantics"))
        elif topic == "distsm":
            # Events travel apart from task results: a query may report before its batch is announced.
            batch = self._batch(msg.get("batch"))
            if msg.get("query") in batch["ended"]:
                return  # ended (timed out, cancelled) before its merge reported
            batch["done"][msg.get("query")] = msg.get("count")
            self.totals["queries"] += 1
            self.totals["matches"] += int(msg.get("count", 0))
            self.totals["gathered_bytes"] += int(msg.get("gathered_bytes", 0))
        elif topic == END_TOPIC:
            batch = self._batch(msg.get("batch"))
            for query, status in msg.get("queries", {}).items():
                if query not in batch["done"] and query not in batch["ended"]:
                    batch["ended"][query] = status
                    self.totals["ended"] += 1

    def _batch(self, batch_id: Any) -> dict[str, Any]:
        if batch_id not in self.batches:
            self.batches[batch_id] = {"submitted": time.time(), "queries": {}, "done": {}, "ended": {},
                                      "partitions": None, "semantics": None}
            while len(self.batches) > _MAX_BATCHES:
                self.batches.popitem(last=False)
        return self.batches[batch_id]

    @staticmethod
    def _open(b: dict[str, Any]) -> int:
        return max(len(b["queries"]) - len(b["done"]) - len(b["ended"]), 0)

    def in_flight(self) -> int:
        """Queries announced and not ended yet (done, timed out, cancelled or failed)."""
        return sum(self._open(b) for b in self.batches.values())

    def status(self) -> dict[str, Any]:
        """JSON-ready state: totals and, per batch, its queries with plans, which are done and which ended
        otherwise (``ended``: ``{query: "timeout" | "cancelled" | "error"}``)."""
        batches = []
        for bid, b in self.batches.items():
            batches.append({"batch": bid, "submitted": b["submitted"], "partitions": b["partitions"],
                            "semantics": b["semantics"], "queries": len(b["queries"]), "done": len(b["done"]),
                            "ended": dict(b["ended"]), "in_flight": self._open(b) > 0, "plans": b["queries"],
                            "counts": b["done"]})
        return {"totals": dict(self.totals), "batches": batches}
