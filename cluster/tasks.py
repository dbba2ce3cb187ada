"""Functions that run on Dask workers.  They read the partition store from a directory every worker can see.

Each worker process keeps what it loaded (a part's graph and its index on the worker's device, the whole graph's
memory-mapped adjacency) in a process-wide cache, so a partition is loaded once per worker and reused by every
later query.  Tasks are pure functions of their arguments and the store: when a worker dies, the scheduler runs
its tasks elsewhere and the answers do not change.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from distsm.api import Semantics
from distsm.graph import Graph
from distsm.kernels import get_backend
from distsm.kernels.index import index_to
from distsm.plan.inter import EdgeGroup

_cache: dict[tuple, Any] = {}
_lock = threading.RLock()  # builders nest (a part needs the store)


def _cached(key: tuple, build: Any) -> Any:
    with _lock:
        if key not in _cache:
            _cache[key] = build()
        return _cache[key]


def _store(store_dir: str) -> Any:
    from distsm.partition import PartitionStore

    return _cached(("store", store_dir), lambda: PartitionStore.open(store_dir))


def _part(store_dir: str, part: int, backend_name: str) -> tuple[Any, Any]:
    """``(local part, backend)`` with the part's index resident on the backend's device."""
    backend = get_backend(backend_name)

    def load() -> Any:
        local = _store(store_dir).part(part)
        backend.index(local.graph)  # builds and caches the device index on the local graph
        return local

    return _cached(("part", store_dir, part, backend.name), load), backend


def _adjacency(store_dir: str, backend_name: str) -> tuple[Any, Any, Any]:
    """``(whole-graph index, backend, part of every vertex)``, both on the backend's device; NumPy reads the
    shared memory map."""
    backend = get_backend(backend_name)

    def load() -> Any:
        store = _store(store_dir)
        host = store.adjacency_index(mmap=True)
        if backend.name == "numpy":
            return host, np.asarray(store.assignment)
        return index_to(host, backend.xp), backend.xp.asarray(np.asarray(store.assignment))

    index, assignment = _cached(("adjacency", store_dir, backend.name), load)
    return index, backend, assignment


_recent_candidates: OrderedDict[tuple, Any] = OrderedDict()
RECENT_QUERIES = 8


def _candidates(store_dir: str, backend: Any, index: Any, query: Graph, homomorphism: bool) -> list[Any]:
    """The candidate filter of ``query`` on the whole graph, kept for the last few queries: the slices of one
    query's spanning search that land on the same worker filter once, not once per slice."""
    from distsm.partition.store import graph_fingerprint

    key = (store_dir, backend.name, graph_fingerprint(query), homomorphism)
    with _lock:
        cands = _recent_candidates.get(key)
        if cands is not None:
            _recent_candidates.move_to_end(key)
            return cands
    cands = backend.candidates(index, query, homomorphism=homomorphism)
    with _lock:
        _recent_candidates[key] = cands
        while len(_recent_candidates) > RECENT_QUERIES:
            _recent_candidates.popitem(last=False)
    return cands


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except ValueError:
        return "local"


def load_part(store_dir: str, part: int, backend_name: str) -> dict[str, Any]:
    """Load one part onto this worker (task ``distsm-load-*``)."""
    t = time.perf_counter()
    local, backend = _part(store_dir, part, backend_name)
    idx = backend.index(local.graph)
    # What every spanning search on this worker reads, loaded now rather than by the first query.
    adjacency, _, _ = _adjacency(store_dir, backend_name)
    _store(store_dir).cross_vertices()
    return {"part": part, "worker": _worker_name(), "vertices": local.graph.n, "edges": local.graph.m,
            "bytes": int(idx.nbytes), "adjacency_bytes": int(adjacency.nbytes), "seconds": time.perf_counter() - t}


def intra(store_dir: str, part: int, query: Graph, sem: Semantics, budget: int | None, backend_name: str,
          listing: bool = False, limit: int | None = None) -> dict[str, Any]:
    """Matches wholly inside one part (task ``distsm-intra-*``)."""
    from distsm.partitioned import intra_task

    t = time.perf_counter()
    local, backend = _part(store_dir, part, backend_name)
    budget = budget or backend.default_budget()
    out: dict[str, Any] = {"part": part, "worker": _worker_name()}
    if listing:
        rows = list(intra_task(backend, local, query, sem, budget, count_only=False, limit=limit))
        out["rows"] = np.concatenate(rows) if rows else np.zeros((0, query.n), np.int64)
        out["count"] = int(out["rows"].shape[0])
    else:
        out["count"] = intra_task(backend, local, query, sem, budget, count_only=True)
    out["seconds"] = time.perf_counter() - t
    return out


def inter(store_dir: str, query: Graph, sem: Semantics, budget: int | None, backend_name: str,
          groups: list[EdgeGroup] | None, start_vertices: range | None, listing: bool = False,
          limit: int | None = None, every_match: bool = False) -> dict[str, Any]:
    """One slice of the spanning searches of a query (task ``distsm-inter-*``): every edge group's
    representative (or, with ``groups=None``, the global join restricted to spanning matches, or keeping every
    match when ``every_match``) with the vertex it starts from limited to the ids in ``start_vertices`` (cross
    vertices only, for edge groups).  A range ships in a few bytes where a vertex array could take megabytes
    per task."""
    from distsm.kernels.array_backend import restricted
    from distsm.partitioned import inter_task

    t = time.perf_counter()
    index, backend, assignment = _adjacency(store_dir, backend_name)
    if groups is not None:
        start_vertices = restricted(np, _store(store_dir).cross_vertices(),
                                    range(0, index.n) if start_vertices is None else start_vertices)
    budget = budget or backend.default_budget()
    stats: dict[str, int] = {}
    out: dict[str, Any] = {"worker": _worker_name(), "count": 0}
    found = []
    cands = _candidates(store_dir, backend, index, query, sem.homomorphism)
    for group in (groups if groups is not None else [None]):
        if listing:
            found.extend(inter_task(backend, index, assignment, query, sem, budget, group=group,
                                    start_vertices=start_vertices, count_only=False, limit=limit,
                                    candidates=cands, spanning_only=not every_match))
        else:
            out["count"] += inter_task(backend, index, assignment, query, sem, budget, group=group,
                                       start_vertices=start_vertices, count_only=True, stats=stats,
                                       candidates=cands, spanning_only=not every_match)
    if listing:
        rows = np.concatenate(found) if found else np.zeros((0, query.n), np.int64)
        out["rows"] = rows if limit is None else rows[:limit]
        out["count"] = int(out["rows"].shape[0])
    out["gathered_bytes"] = 4 * stats.get("gathered", 0)
    out["partial_matches"] = stats.get("partial", 0)
    out["seconds"] = time.perf_counter() - t
    return out


def merge(meta: dict[str, Any], intra_results: list[dict[str, Any]], inter_results: list[dict[str, Any]],
          limit: int | None = None) -> dict[str, Any]:
    """Combine one query's pieces into its result (task ``distsm-merge-*``) and report it to the scheduler."""
    t = time.perf_counter()
    result = dict(meta)
    if meta.get("split", True):
        result["intra"] = [r["count"] for r in sorted(intra_results, key=lambda r: r["part"])]
        result["inter"] = sum(r["count"] for r in inter_results)
        result["count"] = sum(result["intra"]) + result["inter"]
    else:  # one global join counted every match: no intra/inter split
        result["intra"], result["inter"] = None, None
        result["count"] = sum(r["count"] for r in inter_results)
    result["seconds"] = {
        "intra": sum(r["seconds"] for r in intra_results),
        "inter": sum(r["seconds"] for r in inter_results),
        # the longest slice bounds how well the spanning search spreads over workers
        "inter_slice_max": max((r["seconds"] for r in inter_results), default=0.0),
    }
    result["gathered_bytes"] = sum(r.get("gathered_bytes", 0) for r in inter_results)
    result["partial_matches"] = sum(r.get("partial_matches", 0) for r in inter_results)
    result["workers"] = sorted({r["worker"] for r in intra_results + inter_results})
    if meta.get("listing"):
        rows = [r["rows"] for r in intra_results + inter_results if r["rows"].shape[0]]
        merged = np.concatenate(rows) if rows else np.zeros((0, meta["query_vertices"]), np.int64)
        result["rows"] = merged if limit is None else merged[:limit]
        result["count"] = int(result["rows"].shape[0])
    result["seconds"]["merge"] = time.perf_counter() - t
    try:
        from distributed import get_worker

        get_worker().log_event("distsm", {"batch": meta.get("batch"), "query": meta.get("query"),
                                          "count": result["count"], "gathered_bytes": result["gathered_bytes"]})
    except ValueError:
        pass  # not on a worker (called directly in tests)
    return result
