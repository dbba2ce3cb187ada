"""Scheduler-side state for the dashboard: batches, their plans and outcomes, and Prometheus metrics.

:class:`DistsmMonitor` is a ``SchedulerPlugin``.  The client announces each batch (``log_event("distsm-batch",
...)`` with the queries, their plans and which task answers which queries); every task that answers queries
reports them when done (``log_event("distsm", ...)``, one event per task) and the client reports queries that ended
otherwise (timeout, cancel, error: ``log_event("distsm-batch-end", ...)``).  Which queries run now, and for how
long, the plugin reads at request time from the tasks the workers' heartbeats say are executing: nothing is logged
per query start.  The plugin keeps a small status table, served as JSON at ``/distsm/status`` (see
:mod:`distsm.cluster.http`), with the current batch's progress (queries done of total, the slowest running
query).  The scheduler's ``/metrics`` page exports its totals through
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

#: Topic of the event a client announces a batch with (its queries' plans and which task answers which query).
BATCH_TOPIC = "distsm-batch"
#: Topic of the events workers log for the queries they finished (``{"batch", "queries": {query: {"count",
#: "gathered_bytes"}}}``, one event per task however many queries it answered).
DONE_TOPIC = "distsm"
#: Topic of the event a batch logs for queries that ended without a result (``{"batch", "queries": {query:
#: "timeout" | "cancelled" | "error"}}``).
END_TOPIC = "distsm-batch-end"

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
        current = [s for s in (m.batch_status(b) for m in live for b in [m.current()] if b is not None) if s]
        yield GaugeMetricFamily("distsm_current_batch_queries", "queries of the current distsm batch",
                                value=sum(s["queries"] for s in current))
        yield GaugeMetricFamily("distsm_current_batch_done", "queries of the current distsm batch done",
                                value=sum(s["done"] for s in current))
        yield GaugeMetricFamily("distsm_slowest_running_query_seconds",
                                "seconds so far of the longest running query of the current distsm batch",
                                value=max((s["slowest"]["seconds"] for s in current if s["slowest"]), default=0.0))


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
        if topic == BATCH_TOPIC:
            batch = self._batch(msg["batch"])
            batch.update(queries=msg.get("queries", {}), partitions=msg.get("partitions"),
                         semantics=msg.get("semantics"), tasks=msg.get("tasks", {}))
        elif topic == DONE_TOPIC:
            # Events travel apart from task results: a query may report before its batch is announced.
            batch = self._batch(msg.get("batch"))
            for query, result in msg.get("queries", {}).items():
                if query in batch["ended"] or query in batch["done"]:
                    continue  # ended (timed out, cancelled) before its task reported, or reported by a retry
                batch["done"][query] = result.get("count")
                self.totals["queries"] += 1
                self.totals["matches"] += int(result.get("count") or 0)
                self.totals["gathered_bytes"] += int(result.get("gathered_bytes", 0))
        elif topic == END_TOPIC:
            batch = self._batch(msg.get("batch"))
            for query, status in msg.get("queries", {}).items():
                if query not in batch["done"] and query not in batch["ended"]:
                    batch["ended"][query] = status
                    self.totals["ended"] += 1

    def _batch(self, batch_id: Any) -> dict[str, Any]:
        if batch_id not in self.batches:
            self.batches[batch_id] = {"submitted": time.time(), "queries": {}, "done": {}, "ended": {},
                                      "partitions": None, "semantics": None, "tasks": {}}
            while len(self.batches) > _MAX_BATCHES:
                self.batches.popitem(last=False)
        return self.batches[batch_id]

    @staticmethod
    def _open(b: dict[str, Any]) -> int:
        return max(len(b["queries"]) - len(b["done"]) - len(b["ended"]), 0)

    def in_flight(self) -> int:
        """Queries announced and not ended yet (done, timed out, cancelled or failed)."""
        return sum(self._open(b) for b in self.batches.values())

    def running(self, b: dict[str, Any]) -> list[dict[str, Any]]:
        """The queries of batch record ``b`` whose tasks execute on a worker now, slowest first: ``{"query",
        "seconds", "worker"}``, seconds so far as of each worker's last heartbeat (plus the time since).  A query
        of a group runs as long as its group's task (the group's queries are counted together)."""
        now = time.time()
        found: dict[str, tuple[float, str]] = {}
        for ws in self.scheduler.workers.values():
            for ts, seconds in ws.executing.items():
                for query in b["tasks"].get(ts.key, ()):
                    if query in b["done"] or query in b["ended"]:
                        continue
                    took = seconds + max(now - ws.last_seen, 0.0)
                    if took > found.get(query, (-1.0, ""))[0]:
                        found[query] = (took, str(ws.name))
        order = sorted(found, key=lambda q: -found[q][0])
        return [{"query": q, "seconds": round(found[q][0], 3), "worker": found[q][1]} for q in order]

    def batch_status(self, batch_id: str) -> dict[str, Any] | None:
        """One batch's progress (None when unknown): ``batch``, ``queries``, ``done``, ``ended`` (``{query:
        "timeout" | "cancelled" | "error"}``), ``in_flight``, ``running`` (how many queries run now) and
        ``slowest``: the longest running query (see :meth:`running`) or None."""
        b = self.batches.get(batch_id)
        return None if b is None else self._progress(batch_id, b)

    def _progress(self, batch_id: str, b: dict[str, Any]) -> dict[str, Any]:
        running = self.running(b)
        return {"batch": batch_id, "queries": len(b["queries"]), "done": len(b["done"]), "ended": dict(b["ended"]),
                "in_flight": self._open(b) > 0, "running": len(running), "slowest": running[0] if running else None}

    def current(self) -> str | None:
        """The batch the dashboard shows: the latest one still in flight, else the latest one."""
        live = [bid for bid, b in self.batches.items() if self._open(b) > 0]
        return live[-1] if live else next(reversed(self.batches), None)

    def status(self) -> dict[str, Any]:
        """JSON-ready state: totals; ``current``: the progress of the current batch (:meth:`current`,
        :meth:`batch_status`); per batch its progress, its queries with plans and the counts of those done."""
        batches = []
        for bid, b in self.batches.items():
            batches.append({**self._progress(bid, b), "submitted": b["submitted"], "partitions": b["partitions"],
                            "semantics": b["semantics"], "plans": b["queries"], "counts": b["done"]})
        current = self.current()
        return {"totals": dict(self.totals), "current": None if current is None else self.batch_status(current),
                "batches": batches}


def batch_status(dask_scheduler: Any, batch: str) -> dict[str, Any] | None:
    """:meth:`DistsmMonitor.batch_status` of ``batch`` (run on the scheduler through ``client.run_on_scheduler``;
    None when the monitor or the batch is unknown)."""
    monitor = dask_scheduler.plugins.get(PLUGIN_NAME)
    return None if monitor is None else monitor.batch_status(batch)
