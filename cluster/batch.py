"""A submitted batch of queries: a sequence of :class:`~distsm.plan.execute.QueryResult` backed by Dask futures."""

from __future__ import annotations

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
    not finished by then are cancelled on the workers (their joins stop within a chunk) and report ``timeout``.
    """

    def __init__(self, client: Any, batch_id: str, names: list[str], futures: list[Any], pieces: list[list[Any]],
                 timeout: float | None, submitted: float):
        self.client = client
        self.id = batch_id
        self.names = names
        self.futures = futures
        self._pieces = pieces
        self.timeout = timeout
        self.submitted = submitted
        self._index = {f.key: i for i, f in enumerate(futures)}
        self._done: dict[int, QueryResult] = {}

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

        yield from (self._done[i] for i in sorted(self._done))
        pending = self._pending()
        if not pending:
            return
        left = None
        if self.timeout is not None:
            left = self.submitted + self.timeout - time.monotonic()
            if left <= 0:
                yield from self._end(pending, "timeout")
                return
        finished = as_completed([self.futures[i] for i in pending], with_results=True, raise_errors=False,
                                timeout=left)
        try:
            for fut, value in finished:
                i = self._index[fut.key]
                if i not in self._done:
                    yield self._settle(i, fut, value)
        except TimeoutError:
            yield from self._end(self._pending(), "timeout")

    def results(self) -> list[QueryResult]:
        """Every query's result, in submission order (waits for the batch)."""
        return list(self)

    def cancel(self) -> None:
        """Cancel every query not finished yet: their tasks are released, running joins stop within a chunk, and
        their results say ``cancelled``."""
        for _ in self._end(self._pending(), "cancelled"):
            pass

    def progress(self, **kwargs: Any) -> Any:
        """``distributed.progress`` over every task of the batch, one bar per stage (intra, inter, merge)."""
        from distributed import progress

        return progress([*self.futures, *(f for p in self._pieces for f in p)], multi=True, **kwargs)

    # ------------------------------------------------------------------ internals
    def _pending(self) -> list[int]:
        return [i for i in range(len(self)) if i not in self._done]

    def _tasks(self, queries: list[int]) -> list[Any]:
        return [f for i in queries for f in [self.futures[i], *self._pieces[i]]]

    def _end(self, queries: list[int], status: str) -> Iterator[QueryResult]:
        """End ``queries`` with ``status``: release their tasks and tell the scheduler's monitor."""
        if not queries:
            return
        error = f"not finished within {self.timeout}s" if status == "timeout" else "cancelled by the caller"
        self.client.cancel(self._tasks(queries), reason=f"distsm-{status}", msg=error)
        for i in queries:
            self._done[i] = QueryResult.failed(self.names[i], status, error)
        self._log_end({self.names[i]: status for i in queries})
        yield from (self._done[i] for i in queries)

    def _settle(self, i: int, fut: Any, value: Any) -> QueryResult:
        if fut.status == "finished":
            result = value
        elif fut.status == "cancelled":
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
