"""distsm in a child process that can be abandoned: the data graph is read and indexed once and the kernels are
warm, and every query runs under a time cap.

A query that is still running at its cap is given up by killing the child (a join cannot be interrupted
mid-kernel from outside); a fresh child then reads and indexes the data graph again, outside any timing.  The
time reported for a query is ``distsm.count`` (filter, plan and join) as the child measured it: reading the
query file is outside it, as the peers' file parsing is outside theirs.

Paths (``mode``):

* ``"count"``: :func:`distsm.count`, the path users call (timed in the peer benchmark);
* ``"listing"``: the rows of :func:`distsm.iter_matches` counted chunk by chunk (every match enumerated);
* ``"partitioned"``: two METIS parts, each query run by its partitioned plan (``distribute="sliced"``: PBE's
  intra-partition joins plus the spanning searches, or a global join by the general join), a path apart from
  ``"count"``'s (:func:`distsm.count` with ``partitions`` would take the same whole-graph count).
"""

from __future__ import annotations

import cProfile
import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from typing import Any

MODES = ("count", "listing", "partitioned")
#: Seconds a warm-up query may run.
WARM_SECONDS = 5.0


@dataclass
class Run:
    """One query's outcome: ``status`` is ``"ok"``, ``"capped"`` or ``"error"``; ``seconds`` is None when capped
    by the kill (the time is then unknown beyond the cap)."""

    status: str
    count: int | None = None
    seconds: float | None = None
    error: str | None = None


def _warm_query(data: Any) -> Any:
    """A one-edge query on the labels of the data graph's first edge: matches exist, and it is cheap."""
    import numpy as np

    from distsm import Graph

    s, t = int(data.edge_src[0]), int(data.edge_dst[0])
    labels = np.asarray(data.vertex_labels)
    return Graph.from_edges(np.array([[0, 1]]), n=2, vertex_labels=[int(labels[s]), int(labels[t])],
                            edge_labels=[int(data.edge_labels[0])], directed=data.directed)


def _warm_counting_path(data: Any, backend: str) -> None:
    """Run the planner and both counting paths on this backend over a few sampled queries of 4 to 12 vertices
    (array kernels compile on first use of each operation and dtype, seconds each on a fresh machine): each
    through ``distsm.count`` and once forced past the host threshold onto the device."""
    import distsm
    from benchmarks.generators import query_set
    from distsm.config import options
    from distsm.kernels import counting, engine, get_backend
    from distsm.kernels.query_plan import MatchOptions
    from distsm.plan.execute import deadline

    queries = [q for size in (4, 8, 12) for _, q in query_set(data, 2, size, seed=size)]
    for query in queries:
        try:
            distsm.count(data, query, backend=backend, timeout=WARM_SECONDS)
            with options({"engine.host-work": 0.0}):
                for path in ("general", "trailing"):
                    counting.count(get_backend(backend), data, counting.Target(query, MatchOptions()), budget=1 << 28,
                                   path=path, control=deadline(WARM_SECONDS))
        except (TimeoutError, engine.JoinCancelled):
            pass  # a heavy sample: its kernels ran anyway


def _count(data: Any, query: Any, backend: str, mode: str) -> int:
    import distsm

    if mode == "count":
        return distsm.count(data, query, backend=backend)
    if mode == "listing":
        return sum(int(chunk.shape[0]) for chunk in distsm.iter_matches(data, query, backend=backend))
    if mode == "partitioned":
        from distsm.kernels import get_backend
        from distsm.partitioned import PartitionedMatcher
        from distsm.plan.distribution import Directions

        be = get_backend(backend)
        matcher = PartitionedMatcher(data, 2, backend=be)
        result = matcher.count(query, distsm.Semantics(), be.default_budget(), Directions(distribute="sliced"))
        assert result.count is not None  # a finished count
        return result.count
    raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")


def _serve(conn: Any, data_path: str, backend: str) -> None:
    """Child: read and index the data graph, warm up, then answer ``(mode, query_path)`` requests until None."""
    import distsm

    t = time.perf_counter()
    data = distsm.read_graph(data_path)
    warm = _warm_query(data)
    for _ in range(2):  # index built, kernels compiled, memory pools grown
        distsm.count(data, warm, backend=backend)
    _warm_counting_path(data, backend)
    conn.send(("ready", time.perf_counter() - t))
    # DISTSM_WORKER_PROFILE=PREFIX: cProfile of the timed counts, written to PREFIX.<pid> when the worker stops.
    profile = os.environ.get("DISTSM_WORKER_PROFILE")
    prof = cProfile.Profile() if profile else None
    while True:
        request = conn.recv()
        if request is None:
            if prof is not None:
                prof.dump_stats(f"{profile}.{os.getpid()}")
            return
        mode, query_path = request
        try:
            query = distsm.read_graph(query_path)
            t = time.perf_counter()
            if prof is not None:
                prof.enable()
            c = _count(data, query, backend, mode)
            if prof is not None:
                prof.disable()
            conn.send(("ok", c, time.perf_counter() - t))
        except Exception as e:  # the parent records the failure and goes on with the next query
            conn.send(("error", f"{type(e).__name__}: {e}", None))


class DistsmWorker:
    """A child process running distsm on one data graph (see module docstring).

    Args:
        data_path: the data graph file.
        backend: ``"numpy"`` or ``"cupy"``.
        grace: seconds allowed beyond a query's cap for reading the query file and sending the answer, before
            the child is killed.
        startup_timeout: seconds allowed for reading, indexing and warming up.
    """

    def __init__(self, data_path: str, backend: str, grace: float = 5.0, startup_timeout: float = 1800.0):
        self.data_path, self.backend = str(data_path), backend
        self.grace, self.startup_timeout = grace, startup_timeout
        self.starts: list[float] = []  # seconds each (re)start took: read, index, warm-up
        self._ctx = mp.get_context("spawn")  # a fresh interpreter: no CUDA context inherited through fork
        self._proc: Any = None
        self._conn: Any = None
        self._start()

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, self.data_path, self.backend), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        if not parent.poll(self.startup_timeout):
            self._kill()
            raise RuntimeError(f"distsm worker did not load {self.data_path} within {self.startup_timeout} s")
        tag, seconds = parent.recv()
        self.starts.append(round(seconds, 3))

    def _kill(self) -> None:
        self._proc.kill()
        self._proc.join()
        self._conn.close()

    def run(self, query_path: str, cap: float, mode: str = "count") -> Run:
        """Run one query under ``cap`` seconds; a query over its cap kills and restarts the child."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        self._conn.send((mode, str(query_path)))
        if not self._conn.poll(cap + self.grace):
            self._kill()
            self._start()
            return Run("capped")
        try:
            tag, value, seconds = self._conn.recv()
        except EOFError:  # the child died (out of memory, a crash): start over for the next query
            self._proc.join()
            code = self._proc.exitcode
            self._start()
            return Run("error", error=f"distsm worker exited with code {code}")
        if tag == "error":
            return Run("error", error=value)
        if seconds > cap:
            return Run("capped", value, seconds)
        return Run("ok", value, seconds)

    def close(self) -> None:
        """Stop the child."""
        if self._proc is not None and self._proc.is_alive():
            self._conn.send(None)
            self._proc.join(30)
            if self._proc.is_alive():
                self._kill()
        self._proc = None

    def __enter__(self) -> DistsmWorker:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None and self._proc is not None and self._proc.is_alive():
            self._kill()  # interrupted (a signal, an error): the child may be mid-query, do not wait for it
            self._proc = None
        self.close()
