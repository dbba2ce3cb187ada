"""Compile ahead everything a count launches on the GPU, so no query of a new process pays NVRTC's compile time.

The engine's own modules (``join.cu``, ``trailing.cu``, ``dfs.cu``) come compiled with the package where it was
built with ``nvcc`` (:mod:`distsm.kernels.cuda_modules`); CuPy compiles its own element-wise, reduction and scan
kernels per dtype the first time a process launches each (and the engine's modules where no fatbin matches), and
keeps the result in its on-disk kernel cache (``CUPY_CACHE_DIR``, by
default ``~/.cupy/kernel_cache``); a later process loads it from there in milliseconds.  On a fresh machine,
container or CI job that cache is empty, and the first heavy queries pay the compile time (seconds each).
:func:`warmup` (``distsm warmup`` on the command line) fills it once: it runs a fixed set of small counts that
together take the engine's GPU paths (the filter, the trial joins, candidate-edge refinement and sampling,
the core join with its kernel variants, trailing counts, the general join in one and in several chunks, listings,
every semantics, directed and undirected graphs, and the out-of-core reads of partitioned search) and checks
their answers against the CPU backend. A trailing count on the device runs the fused kernel of ``trailing.cu`` (one
module, no variants), so any of the warm-up's trailing counts on the device compiles it.  CuPy compiles copies
and takes per dtype pair, so the warm-up also runs every copy and take between the engine's array dtypes
(:data:`ARRAY_DTYPES`) once on a few elements, whichever paths the counts took.  The batched light stage's kernels
(``filter_batch``, ``descend_batch``) are part of ``join.cu``, compiled as one module.

Large graphs take paths small ones never do, and CuPy compiles some kernels per array-size class: after a warm-up
the first heavy batch on a large R-MAT still compiled dozens of kernel files.  So the engine's
bincount and counts of true entries are ``join.cu`` kernels on the device (:mod:`distsm.kernels.array_ops`), and
the warm-up counts the small shapes again on a sparse graph past the bool-mask limit, forced onto the planned
device path (:data:`PLANNED_ON_DEVICE`); a search of keys in an array past 2**31 elements, whose 64-bit
indexing variant the warm-up would need gigabytes to reach, is left to the first graph that size (measurements:
benchmarks/README.md, 'Measurements behind the engine's settings').
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from distsm.arguments import entry_point
from distsm.config import options
from distsm.graph import Graph
from distsm.vocabulary import BackendName
from distsm.warm import (CLUSTERED_DEGREE, CLUSTERED_VERTICES, PLANNED_ON_DEVICE, array_kernels, checked_slices,
                         dense_graph, query_shapes)


@dataclass
class WarmupReport:
    """What :func:`warmup` ran: ``counts`` (name: count, equal on both backends), ``seconds`` in all, and the
    kernel cache directory with the number of files it gained (``compiled``; 0 when it was warm already)."""

    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    cache_dir: str = ""
    compiled: int = 0

    def __str__(self) -> str:
        return (f"warmed up {len(self.counts)} counts in {self.seconds:.1f} s; {self.compiled} kernels compiled "
                f"into {self.cache_dir}")


def kernel_cache_dir() -> Path:
    """CuPy's on-disk kernel cache (``CUPY_CACHE_DIR``, default ``~/.cupy/kernel_cache``)."""
    return Path(os.environ.get("CUPY_CACHE_DIR", Path.home() / ".cupy" / "kernel_cache"))


def _cached_files(directory: Path) -> int:
    return sum(1 for p in directory.rglob("*") if p.is_file()) if directory.is_dir() else 0


def _connected_prefix(query: Graph, size: int) -> Graph:
    """The subgraph of ``query`` induced by the first ``size`` vertices of a breadth-first order from vertex 0."""
    order, seen = [0], {0}
    for v in order:
        for w in query.neighbors_of(v):
            if int(w) not in seen and len(order) < size:
                seen.add(int(w))
                order.append(int(w))
    keep = np.zeros(query.n, dtype=bool)
    keep[order] = True
    pos = np.full(query.n, -1, dtype=np.int64)
    pos[order] = np.arange(len(order))
    mask = keep[query.edge_src] & keep[query.edge_dst]
    edges = np.stack([pos[query.edge_src[mask]], pos[query.edge_dst[mask]]], axis=1)
    return Graph.from_edges(edges, n=len(order), edge_labels=query.edge_labels[mask],
                            vertex_labels=np.asarray(query.vertex_labels)[order], directed=query.directed)


def _cases() -> Iterator[tuple[str, Graph, Graph, dict[str, Any]]]:
    """``(name, data, query, count keywords)``: the counts :func:`warmup` runs."""
    from distsm import example
    from distsm.formats import read_graph

    hprd = read_graph(example.data_path())
    for path in example.query_paths()[:2]:
        query = read_graph(path)
        for size in (3, 5, 8, 12, query.n):
            yield f"{path.stem}[:{size}]", hprd, _connected_prefix(query, size), {}
        for sem in ("induced", "homomorphism", "unique"):
            yield f"{path.stem} {sem}", hprd, query, {sem: True}
        yield f"{path.stem} small budget", hprd, query, {"memory_budget": 1 << 16}
        yield f"{path.stem} partitioned host", hprd, query, {"partitions": "auto", "adjacency": "host",
                                                             "memory_budget": 4 << 20}
        yield f"{path.stem} partitioned gather", hprd, query, {"partitions": 2, "adjacency": "gather"}
    for directed in (False, True):
        data = dense_graph(directed)
        kind = "dense directed" if directed else "dense"
        for name, query in query_shapes(directed).items():
            yield f"{kind} {name}", data, query, {}
            if name in ("triangle", "star6"):
                yield f"{kind} {name} unique", data, query, {"unique": True}
    book = Graph.from_edges(np.array([(0, 1)] + [(end, page) for page in range(2, 8) for end in (0, 1)]), n=8)
    yield "clustered book6", dense_graph(False, CLUSTERED_VERTICES, CLUSTERED_DEGREE), book, {}


#: Average degree of the large sparse graph (see :func:`_large_graph`).
LARGE_DEGREE = 4


def _large_graph() -> Graph:
    """A sparse random graph of one vertex more than the array backends keep candidate sets of as bool masks
    (:data:`~distsm.kernels.vertex_sets.MASK_VERTICES`), two vertex labels.

    Graphs of thousands of vertices never reach what a large one does: bitset candidate sets, binary-search lookups
    where position maps would pass their budget, and CuPy's multi-block scans (arrays of more than 512 entries)."""
    from distsm.kernels.vertex_sets import MASK_VERTICES

    n = MASK_VERTICES + 1
    rng = np.random.default_rng(11)
    edges = rng.integers(0, n, size=(n * LARGE_DEGREE // 2, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    return Graph.from_edges(edges, n=n, vertex_labels=(rng.random(n) < 0.3).astype(np.int64), dedupe=True)


@entry_point
def warmup(backend: BackendName = "cupy", *, progress: Callable[[str], None] | None = None) -> WarmupReport:
    """Run the warm-up counts on ``backend`` (each checked equal to the CPU backend's answer) and return what
    ran; on CuPy this leaves the kernels of the paths they take in CuPy's on-disk kernel cache.

    Raises :class:`distsm.BackendUnavailableError` when ``backend`` is ``"cupy"`` and no GPU is present, and
    AssertionError if a count differs between the backends (a defect to report)."""
    from distsm.api import count, match
    from distsm.kernels import get_backend

    t = time.perf_counter()
    cache = kernel_cache_dir()
    before = _cached_files(cache)
    report = WarmupReport(cache_dir=str(cache))
    cases = list(_cases())
    for name, data, query, kw in cases:
        got = count(data, query, backend=backend, **kw)
        want = count(data, query, backend="numpy", **kw)
        assert got == want, f"warm-up count {name!r}: {backend} gave {got}, numpy {want}"
        report.counts[name] = int(got)
        if progress is not None:
            progress(name)
    for name, data, query, kw in cases[:3]:
        rows = match(data, query, backend=backend, limit=1000, **kw)
        assert rows.shape[0] == min(1000, report.counts[name]), name
    if get_backend(backend).on_device:
        large = _large_graph()
        for name, query in query_shapes(False).items():
            # Checked against the device's own default path (the CPU backend would take minutes on this graph).
            with options(PLANNED_ON_DEVICE):
                got = count(large, query, backend=backend)
            want = count(large, query, backend=backend)
            assert got == want, f"warm-up count large {name}: planned {got}, default {want}"
            report.counts[f"large {name}"] = int(got)
            if progress is not None:
                progress(f"large {name}")
        for kind, data in (("dense", dense_graph(False)), ("large", large)):
            for name, parts in checked_slices(backend, data).items():
                report.counts[f"{kind} {name} sliced"] = int(parts)
                if progress is not None:
                    progress(f"{kind} {name} sliced")
    array_kernels(get_backend(backend).xp)
    report.seconds = time.perf_counter() - t
    report.compiled = _cached_files(cache) - before
    return report
