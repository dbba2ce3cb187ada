"""Scheduler-side state for the dashboard: batches in flight, their plans, and Prometheus counters.

:class:`DistsmMonitor` is a ``SchedulerPlugin``.  The client announces each batch (``log_event("distsm-batch",
...)`` with the queries and their plans) and every merge task reports its query when done
(``log_event("distsm", ...)``); the plugin keeps a small status table, served as JSON at ``/distsm/status``
(see :mod:`distsm.cluster.http`), and counts queries, matches and adjacency bytes in Prometheus counters that the
scheduler's ``/metrics`` page exports.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin

PLUGIN_NAME = "distsm-monitor"
_MAX_BATCHES = 50
_counters: dict[str, Any] = {}


def _prometheus_counters() -> dict[str, Any]:
    """Counters registered once per scheduler process (the global registry refuses duplicates)."""
    if not _counters:
        try:
            from prometheus_client import Counter
        except ImportError:
            return {}
        _counters["queries"] = Counter("distsm_queries_done", "distsm queries completed")
        _counters["matches"] = Counter("distsm_matches_counted", "matches counted by distsm queries")
        _counters["bytes"] = Counter("distsm_adjacency_gathered_bytes",
                                     "bytes of adjacency read by inter-partition searches")
    return _counters


class DistsmMonitor(SchedulerPlugin):
    idempotent = True
    name = PLUGIN_NAME

    def __init__(self) -> None:
        self.batches: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.totals = {"queries": 0, "matches": 0, "gathered_bytes": 0}

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        _prometheus_counters()

    def log_event(self, topic: str, msg: Any) -> None:
        if topic == "distsm-batch" and isinstance(msg, dict):
            batch = self._batch(msg["batch"])
            batch.update(queries=msg.get("queries", {}), partitions=msg.get("partitions"),
                         semantics=msg.get("semantics"))
        elif topic == "distsm" and isinstance(msg, dict):
            # Events travel apart from task results: a query may report before its batch is announced.
            self._batch(msg.get("batch"))["done"][msg.get("query")] = msg.get("count")
            self.totals["queries"] += 1
            self.totals["matches"] += int(msg.get("count", 0))
            self.totals["gathered_bytes"] += int(msg.get("gathered_bytes", 0))
            counters = _prometheus_counters()
            if counters:
                counters["queries"].inc()
                counters["matches"].inc(int(msg.get("count", 0)))
                counters["bytes"].inc(int(msg.get("gathered_bytes", 0)))

    def _batch(self, batch_id: Any) -> dict[str, Any]:
        if batch_id not in self.batches:
            self.batches[batch_id] = {"submitted": time.time(), "queries": {}, "done": {}, "partitions": None,
                                      "semantics": None}
            while len(self.batches) > _MAX_BATCHES:
                self.batches.popitem(last=False)
        return self.batches[batch_id]

    def status(self) -> dict[str, Any]:
        """JSON-ready state: totals and, per batch, its queries with plans and which are done."""
        batches = []
        for bid, b in self.batches.items():
            batches.append({"batch": bid, "submitted": b["submitted"], "partitions": b["partitions"],
                            "semantics": b["semantics"], "queries": len(b["queries"]), "done": len(b["done"]),
                            "in_flight": len(b["done"]) < len(b["queries"]), "plans": b["queries"],
                            "counts": b["done"]})
        return {"totals": dict(self.totals), "batches": batches}
