"""A submitted batch of queries: one future per query, results as they complete, cancel and timeouts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from distsm.cluster.start import ClusterError

#: How often waiting loops look at the connection, so a lost scheduler is an error, never a hang.
_POLL_SECONDS = 0.5


@dataclass
class QueryResult:
    """The outcome of one query of a batch."""

    query: str
    status: str                          # "ok", "timeout", "cancelled" or "error"
    count: int | None = None
    rows: np.ndarray | None = None
    semantics: dict[str, bool] = field(default_factory=dict)
    plan: dict[str, Any] = field(default_factory=dict)
    intra: list[int] | None = None       # per part; None when one global join counted everything
    inter: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    gathered_bytes: int = 0              # adjacency the spanning searches read (4 bytes per entry scanned)
    partial_matches: int = 0             # partial matches the spanning searches produced (their work)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Batch:
    """Futures of one ``Matcher.submit`` call, in query order.

    ``as_completed()`` yields :class:`QueryResult` objects as queries finish (timeouts and errors included, never
    raised); ``results()`` waits for all and returns them in submission order; ``cancel()`` stops what is left.
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
        self._done: dict[int, QueryResult] = {}

    def __len__(self) -> int:
        return len(self.futures)

    def cancel(self) -> None:
        """Cancel every query not finished yet; their results say ``cancelled``."""
        pending = [i for i in range(len(self.futures)) if i not in self._done]
        self.client.cancel([f for i in pending for f in [self.futures[i], *self._pieces[i]]])
        for i in pending:
            self._done[i] = QueryResult(self.names[i], "cancelled")

    def _finish(self, i: int) -> QueryResult:
        fut = self.futures[i]
        if fut.status == "finished":
            r = fut.result()
            res = QueryResult(self.names[i], "ok", r["count"], r.get("rows"), r["semantics"], r["plan"],
                              r["intra"], r["inter"], {**r["plan_seconds"], **r["seconds"]},
                              gathered_bytes=r["gathered_bytes"], partial_matches=r["partial_matches"])
        elif fut.status == "cancelled":
            res = QueryResult(self.names[i], "cancelled")
        else:
            res = QueryResult(self.names[i], "error", error=repr(fut.exception()))
        self._done[i] = res
        return res

    def _check_connection(self) -> None:
        if self.client.status not in ("running", "connecting"):
            raise ClusterError(f"lost the connection to the Dask scheduler (client status {self.client.status!r}); "
                               f"batch {self.id} did not finish")

    def as_completed(self) -> Iterator[QueryResult]:
        """Yield each query's result as soon as it is known."""
        from distributed import wait

        yielded: set[int] = set()
        while True:
            for i in sorted(set(self._done) - yielded):
                yielded.add(i)
                yield self._done[i]
            pending = [i for i in range(len(self.futures)) if i not in self._done]
            if not pending:
                return
            wait_for = _POLL_SECONDS
            if self.timeout is not None:
                left = self.submitted + self.timeout - time.monotonic()
                if left <= 0:
                    self.client.cancel([f for i in pending for f in [self.futures[i], *self._pieces[i]]])
                    for i in pending:
                        self._done[i] = QueryResult(self.names[i], "timeout",
                                                    error=f"not finished within {self.timeout}s")
                    continue
                wait_for = min(wait_for, left)
            self._check_connection()
            try:
                wait([self.futures[i] for i in pending], timeout=wait_for, return_when="FIRST_COMPLETED")
            except TimeoutError:
                pass
            for i in pending:
                if self.futures[i].done():
                    self._finish(i)

    def results(self) -> list[QueryResult]:
        """Every query's result, in submission order (waits for the batch)."""
        for _ in self.as_completed():
            pass
        return [self._done[i] for i in range(len(self.futures))]
