"""A submitted batch of queries: a sequence of :class:`~distsm.plan.results.QueryResult` backed by Dask futures."""

from __future__ import annotations

import operator
import threading
import time
import traceback
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from distsm.cluster.monitor import END_TOPIC, batch_status
from distsm.cluster.start import ClusterError
from distsm.plan.results import QueryResult


class Batch:
    """The queries of one ``Matcher.submit`` call, in submission order.

    A batch is a sequence of results: ``len(batch)``, ``batch[i]`` (waits for query ``i``) and ``for r in batch``
    (submission order) give :class:`~distsm.plan.results.QueryResult` objects; :meth:`as_completed` yields them in
    the order queries finish.  Queries that time out, are cancelled or fail come back as results with that
    ``status`` (an error keeps its exception and traceback), never raised.  ``futures`` holds one
    ``distributed.Future`` per query resolving to its ``QueryResult`` (``client.gather``, ``distributed.wait``
    and ``distributed.progress`` take them); :meth:`progress` shows every stage's tasks and :meth:`status` the
    queries done and the slowest running one.  A lost scheduler raises :class:`~distsm.cluster.ClusterError`.

    The tasks behind the queries are *units*: a unit is one future and the queries it answers, in order (a
    query's merge or whole task answers it alone, a ``distsm-wholes-*`` task a group of whole queries as a
    list), with the job futures it depends on.  A unit that fails or is cancelled ends each of its queries so.

    ``timeout`` (seconds from ``submitted``, a ``time.monotonic()`` value) applies to the whole batch: queries
    not finished by then are cancelled on the workers (their joins stop within a chunk) and report ``timeout``,
    whether or not anyone is waiting for them.
    """

    def __init__(self, client: Any, batch_id: str, names: list[str], units: list[Unit], timeout: float | None,
                 submitted: float):
        self.client, self.id, self.names, self._units = client, batch_id, names, units
        self.timeout, self.submitted = timeout, submitted
        self._unit_of = {i: u for u, unit in enumerate(units) for i in unit.queries}
        if sorted(self._unit_of) != list(range(len(names))):
            raise ValueError("every query must be answered by exactly one unit")
        self._index = {unit.future.key: u for u, unit in enumerate(units)}
        self._futures: list[Any] | None = None
        self._done: dict[int, QueryResult] = {}
        self._lock = threading.RLock()
        if timeout is not None:
            timer = threading.Timer(max(submitted + timeout - time.monotonic(), 0), self._expire)
            timer.daemon = True
            timer.start()

    # ------------------------------------------------------------------ sequence
    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        i = range(len(self))[i]
        if i not in self._done:
            for _ in self.as_completed():
                if i in self._done:
                    break
        return self._done[i]

    def __iter__(self) -> Iterator[QueryResult]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"<distsm.Batch {self.id}: {len(self._done)}/{len(self)} queries ended>"

    @property
    def futures(self) -> list[Any]:
        """One future per query, resolving to its ``QueryResult``: a unit's own future where it answers one query,
        else a small ``distsm-pick-*`` task taking the query's result out of its group's list (made on first use,
        on the group's worker)."""
        with self._lock:
            if self._futures is None:
                self._futures = [self._future(i) for i in range(len(self))]
            return self._futures

    def _future(self, i: int) -> Any:
        unit = self._units[self._unit_of[i]]
        if not unit.grouped:
            return unit.future
        return self.client.submit(operator.getitem, unit.future, unit.queries.index(i),
                                  key=f"distsm-pick-{uuid.uuid4().hex}", pure=False)

    # ------------------------------------------------------------------ waiting
    def as_completed(self) -> Iterator[QueryResult]:
        """Yield each query's result as soon as it is known (those already known first)."""
        from distributed import as_completed

        with self._lock:
            known = sorted(self._done)
            pending = sorted({self._unit_of[i] for i in self._pending()})
        yield from (self._done[i] for i in known)
        yielded = set(known)
        if not pending:
            return
        finished = as_completed([self._units[u].future for u in pending], with_results=True, raise_errors=False)
        for fut, value in finished:
            unit = self._units[self._index[fut.key]]
            with self._lock:
                self._settle(unit, value)
            for i in unit.queries:
                if i not in yielded:
                    yielded.add(i)
                    yield self._done[i]

    def results(self) -> list[QueryResult]:
        """Every query's result, in submission order (waits for the batch)."""
        return list(self)

    def cancel(self) -> None:
        """Cancel every query not finished yet: their tasks are released, running joins stop within a chunk, and
        their results say ``cancelled``."""
        self._end("cancelled")

    def _expire(self) -> None:
        if self.client.status == "running":
            self._end("timeout")

    def progress(self, **kwargs: Any) -> Any:
        """``distributed.progress`` over every task of the batch, one bar per stage (intra, inter, merge, whole)."""
        from distributed import progress

        return progress([f for unit in self._units for f in (unit.future, *unit.jobs)], multi=True, **kwargs)

    def status(self) -> dict[str, Any]:
        """The batch as the scheduler's monitor sees it now (see :meth:`~distsm.cluster.monitor.DistsmMonitor.
        batch_status`): ``queries`` and ``done`` counts, ``ended`` (queries that timed out, were cancelled or
        failed) and ``running``: the queries whose tasks run on a worker, slowest first, each ``{"query",
        "seconds", "worker"}`` (seconds so far, as of the workers' last heartbeats)."""
        return cast(dict[str, Any], self.client.run_on_scheduler(batch_status, batch=self.id))

    # ------------------------------------------------------------------ internals
    def _pending(self) -> list[int]:
        return [i for i in range(len(self)) if i not in self._done]

    def _tasks(self, queries: list[int]) -> list[Any]:
        units = [self._units[u] for u in sorted({self._unit_of[i] for i in queries})]
        picks = [] if self._futures is None else [self._futures[i] for i in queries]
        return [f for unit in units for f in (unit.future, *unit.jobs)] + picks

    def _end(self, status: str) -> None:
        """End every pending query with ``status``: release their tasks and tell the scheduler's monitor."""
        with self._lock:
            # A query whose task has finished keeps its result (as_completed delivers it), read or not.
            queries = [i for i in self._pending() if self._units[self._unit_of[i]].future.status != "finished"]
            if not queries:
                return
            error = f"not finished within {self.timeout}s" if status == "timeout" else "cancelled by the caller"
            for i in queries:
                self._done[i] = QueryResult.failed(self.names[i], status, error)
        self.client.cancel(self._tasks(queries), reason=f"distsm-{status}", msg=error)
        self._log_end({self.names[i]: status for i in queries})

    def _settle(self, unit: Unit, value: Any) -> None:
        """Each of ``unit``'s queries not ended yet (by cancel() or the timeout) ends with ``value``: its result,
        a list of its group's results, or the unit's failure."""
        # Decided by the value as_completed delivered, not by the future's status now: a worker dying after the
        # result arrived moves a finished future back to pending (its result is lost on that worker).
        if isinstance(value, list):
            results = value
        elif isinstance(value, QueryResult):
            results = [value]
        elif isinstance(value, BaseException):  # as_completed delivers a cancelled future's CancelledError
            if getattr(value, "reason", None) == "scheduler-connection-lost" or self.client.status not in (
                    "running", "connecting"):
                raise ClusterError(f"lost the connection to the Dask scheduler (client status "
                                   f"{self.client.status!r}); batch {self.id} did not finish")
            results = [QueryResult.failed(self.names[i], "cancelled", "cancelled outside the batch")
                       for i in unit.queries]
        else:
            typ, exc, tb = value
            exc = exc.with_traceback(tb)
            error = "".join(traceback.format_exception_only(typ, exc)).strip()
            results = [QueryResult.failed(self.names[i], "error", error, exc) for i in unit.queries]
        ended = {}
        for i, result in zip(unit.queries, results, strict=True):
            if i not in self._done:
                self._done[i] = result
                if not result.ok:
                    ended[result.query] = result.status
        if ended:
            self._log_end(ended)

    def _log_end(self, statuses: dict[str, str]) -> None:
        if self.client.status == "running":
            self.client.log_event(END_TOPIC, {"batch": self.id, "queries": statuses})


@dataclass(frozen=True)
class Unit:
    """One task answering ``queries`` (indices into its batch, in the order of its result list when ``grouped``)
    and the job futures it depends on (cancelled with it)."""

    future: Any
    queries: list[int]
    jobs: list[Any] = field(default_factory=list)
    grouped: bool = False
