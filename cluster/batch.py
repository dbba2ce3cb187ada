"""A submitted batch of queries: a sequence of :class:`~distsm.plan.execute.QueryResult` backed by Dask futures."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Iterator
from typing import Any

from distsm.cluster.start import ClusterError
from distsm.plan.execute import QueryResult

#: Topic of the event a batch logs on the scheduler for queries that ended without a result (see ``monitor``).
END_TOPIC = "distsm-batch-end"


class Batch:
    """The queries of one ``Matcher.submit`` call, in submission order.

    A batch is a sequence of results: ``len(batch)``, ``batch[i]`` (waits for query ``i``) and ``for r in batch``
    (submission order) give :class:`~distsm.plan.execute.QueryResult` objects; :meth:`as_completed` yields them in
    the order queries finish.  Queries that time out, are cancelled or fail come back as results with that
    ``status`` (an error keeps its exception and traceback), never raised.  ``futures`` holds one
    ``distributed.Future`` per query resolving to its ``QueryResult`` (``client.gather``, ``distributed.wait``
    and ``distributed.progress`` take them); :meth:`progress` shows every stage's tasks.  A lost scheduler raises
    :class:`~distsm.cluster.ClusterError`.

    ``timeout`` (seconds from ``submitted``, a ``time.monotonic()`` value) applies to the whole batch: queries
    not finished by then are cancelled on the workers (their joins stop within a chunk) and report ``timeout``,
    whether or not anyone is waiting for them.
    """

    def __init__(self, client: Any, batch_id: str, names: list[str], futures: list[Any], job_futures: list[list[Any]],
                 timeout: float | None, submitted: float):
        self.client = client
        self.id = batch_id
        self.names = names
        self.futures = futures
        self._job_futures = job_futures
        self.timeout = timeout
        self.submitted = submitted
        self._index = {f.key: i for i, f in enumerate(futures)}
        self._done: dict[int, QueryResult] = {}
        self._lock = threading.RLock()
        if timeout is not None:
            timer = threading.Timer(max(submitted + timeout - time.monotonic(), 0), self._expire)
            timer.daemon = True
            timer.start()

    # ------------------------------------------------------------------ sequence
    def __len__(self) -> int:
        return len(self.futures)

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

    # ------------------------------------------------------------------ waiting
    def as_completed(self) -> Iterator[QueryResult]:
        """Yield each query's result as soon as it is known (those already known first)."""
        from distributed import as_completed

        with self._lock:
            known = sorted(self._done)
            pending = self._pending()
        yield from (self._done[i] for i in known)
        yielded = set(known)
        if not pending:
            return
        finished = as_completed([self.futures[i] for i in pending], with_results=True, raise_errors=False)
        for fut, value in finished:
            i = self._index[fut.key]
            with self._lock:
                if i not in self._done:  # else ended by cancel() or the timeout
                    self._settle(i, value)
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
        """``distributed.progress`` over every task of the batch, one bar per stage (intra, inter, merge)."""
        from distributed import progress

        return progress([*self.futures, *(f for p in self._job_futures for f in p)], multi=True, **kwargs)

    # ------------------------------------------------------------------ internals
    def _pending(self) -> list[int]:
        return [i for i in range(len(self)) if i not in self._done]

    def _tasks(self, queries: list[int]) -> list[Any]:
        return [f for i in queries for f in [self.futures[i], *self._job_futures[i]]]

    def _end(self, status: str) -> None:
        """End every pending query with ``status``: release their tasks and tell the scheduler's monitor."""
        with self._lock:
            queries = self._pending()
            if not queries:
                return
            error = f"not finished within {self.timeout}s" if status == "timeout" else "cancelled by the caller"
            for i in queries:
                self._done[i] = QueryResult.failed(self.names[i], status, error)
        self.client.cancel(self._tasks(queries), reason=f"distsm-{status}", msg=error)
        self._log_end({self.names[i]: status for i in queries})

    def _settle(self, i: int, value: Any) -> QueryResult:
        # Decided by the value as_completed delivered, not by the future's status now: a worker dying after the
        # result arrived moves a finished future back to pending (its result is lost on that worker).
        if isinstance(value, QueryResult):
            result = value
        elif isinstance(value, BaseException):  # as_completed delivers a cancelled future's CancelledError
            if getattr(value, "reason", None) == "scheduler-connection-lost" or self.client.status not in (
                    "running", "connecting"):
                raise ClusterError(f"lost the connection to the Dask scheduler (client status "
                                   f"{self.client.status!r}); batch {self.id} did not finish")
            result = QueryResult.failed(self.names[i], "cancelled", "cancelled outside the batch")
        else:
            typ, exc, tb = value
            exc = exc.with_traceback(tb)
            result = QueryResult.failed(self.names[i], "error", "".join(traceback.format_exception_only(typ, exc))
                                        .strip(), exc)
        self._done[i] = result
        if not result.ok:
            self._log_end({result.query: result.status})
        return result

    def _log_end(self, statuses: dict[str, str]) -> None:
        if self.client.status == "running":
            self.client.log_event(END_TOPIC, {"batch": self.id, "queries": statuses})
