"""Compile ahead everything a count launches on the GPU, so no query of a new process pays NVRTC's compile time.

CuPy compiles each kernel the first time a process launches it (``join.cu`` by NVRTC, and every element-wise,
reduction and scan kernel per dtype) and keeps the result in its on-disk kernel cache (``CUPY_CACHE_DIR``, by
default ``~/.cupy/kernel_cache``); a later process loads it from there in milliseconds.  On a fresh machine,
container or CI job that cache is empty, and the first heavy queries pay the compile time (seconds each).
:func:`warmup` (``distsm warmup`` on the command line) fills it once: it runs a fixed set of small counts that
together take the engine's GPU paths (the filter, the trial joins, candidate-edge refinement and sampling,
the core join with its kernel variants, trailing counts, the general join in one and in several chunks, listings,
every semantics, directed and undirected graphs, and the out-of-core reads of partitioned search) and checks
their answers against the CPU backend. A trailing count on the device runs the fused kernel of ``trailing.cu`` (one
module, no variants), so any of the warm-up's trailing counts on the device compiles it. Not yet everything:
measured on an H100 (benchmarks/device_trailing.sh with WARMUP_CHECK=1), a fresh process counting gMatch's suite and
three dense 16-vertex queries after a warm-up compiled no ``trailing.cu`` and none of the array-level trailing
count's boolean and reduction kernels, but still CuPy's ``cupy_copy__int64_int32``, ``cupy_copy__int64_int64`` and
``cupy_take`` (likely core tables of int64 ids: an index refined on the host and joined on the device).  CuPy
compiles those per dtype pair, so the warm-up also runs every copy and take between the engine's array dtypes
(:data:`ARRAY_DTYPES`) once on a few elements, whichever paths the counts took; measured the same way, that did
not cover those three (their variant is not known yet: the check now keeps their CUDA sources).  The batched
light stage's kernels (``filter_batch``, ``descend_batch``) are part of ``join.cu``, which NVRTC compiles as one
module: measured on an H100, HPRD's 200 queries as one batch in a fresh process after a warm-up compiled nothing.

Large graphs take paths small ones never do, and CuPy compiles some kernels per array-size class.  Measured on an
H200 (benchmarks/results/cluster_cold_first_batch_h200_*.json): after a warm-up, the first heavy batch on a
50M-edge R-MAT compiled 38 kernel files and took 39.9 s against 7.9 s for the same batch again.  So the engine's
bincount and counts of true entries are ``join.cu`` kernels on the device (:mod:`distsm.kernels.array_ops`), and
the warm-up counts the small shapes again on a sparse graph past the bool-mask limit, forced onto the planned
device path (:data:`PLANNED_ON_DEVICE`): the same batch then took 8.47 s first and 7.83 s again, compiling 2 files
(an int32 concatenation, since added here, and a search of keys in an array past 2**31 elements, whose 64-bit
indexing variant the warm-up would need gigabytes to reach).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from distsm.config import options
from distsm.graph import Graph
from distsm.vocabulary import BackendName

#: Vertices and average degree of the synthetic graphs: a sparse one for many query shapes, and a dense one on
#: which a book of six triangles (an edge and six vertices adjacent to both) is heavy enough for even a GPU's trial
#: join to stop (about 1e11 matches), so its trailing vertices are counted from intersections of two candidate
#: sets, less the core's images of the same label.
DENSE_VERTICES, DENSE_DEGREE = 1500, 24
CLUSTERED_VERTICES, CLUSTERED_DEGREE = 400, 100


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


def _dense_graph(directed: bool, n: int = DENSE_VERTICES, degree: int = DENSE_DEGREE) -> Graph:
    """A random graph dense enough that cliques and stars of a few vertices have millions of matches, with two
    vertex labels (so both the labelled and the label-free kernels run)."""
    rng = np.random.default_rng(7)
    edges = rng.integers(0, n, size=(n * degree // 2, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    if not directed:
        edges = np.sort(edges, axis=1)
    edges = np.unique(edges, axis=0)
    labels = (rng.random(n) < 0.3).astype(np.int64)
    return Graph.from_edges(edges, n=n, vertex_labels=labels, directed=directed)


def _shapes(directed: bool) -> dict[str, Graph]:
    """Query shapes of 2 to 7 vertices: paths, stars, cycles and cliques (every label 0, or mixed)."""
    def graph(n: int, edges: list[tuple[int, int]], labels: list[int] | None = None) -> Graph:
        return Graph.from_edges(np.array(edges, dtype=np.int64).reshape(-1, 2), n=n, directed=directed,
                                vertex_labels=None if labels is None else np.array(labels))

    clique4 = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    return {"edge": graph(2, [(0, 1)]), "path4": graph(4, [(0, 1), (1, 2), (2, 3)]),
            "star6": graph(6, [(0, i) for i in range(1, 6)]), "triangle": graph(3, [(0, 1), (1, 2), (0, 2)]),
            "cycle5": graph(5, [(i, (i + 1) % 5) for i in range(5)]), "clique4": graph(4, clique4),
            "labelled_star7": graph(7, [(0, i) for i in range(1, 7)], [1, 0, 0, 0, 1, 1, 0])}


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
        data = _dense_graph(directed)
        kind = "dense directed" if directed else "dense"
        for name, query in _shapes(directed).items():
            yield f"{kind} {name}", data, query, {}
            if name in ("triangle", "star6"):
                yield f"{kind} {name} unique", data, query, {"unique": True}
    book = Graph.from_edges(np.array([(0, 1)] + [(end, page) for page in range(2, 8) for end in (0, 1)]), n=8)
    yield "clustered book6", _dense_graph(False, CLUSTERED_VERTICES, CLUSTERED_DEGREE), book, {}


#: Average degree of the large sparse graph (see :func:`_large_graph`).
LARGE_DEGREE = 4
#: Engine options under which a count plans over candidate edges, refines and counts on the device whatever its
#: size: the large graph's small counts then take the paths of heavy ones.
PLANNED_ON_DEVICE = {"engine.trial-entries": 0, "engine.trial-ratio-host": 0.0, "engine.trial-ratio-device": 0.0,
                     "engine.device-refine": 0, "engine.host-work": 0.0}


def _large_graph() -> Graph:
    """A sparse random graph of one vertex more than the array backends keep candidate sets of as bool masks
    (:data:`~distsm.kernels.array_backend.MASK_VERTICES`), two vertex labels.

    Graphs of thousands of vertices never reach what a large one does: bitset candidate sets, binary-search lookups
    where position maps would pass their budget, and CuPy's multi-block scans (arrays of more than 512 entries).
    Measured on an H200: after a warm-up without it, counts on an R-MAT of 4M vertices and 16M edges still compiled
    62 kernel files (13.5 s for the first query)."""
    from distsm.kernels.array_backend import MASK_VERTICES

    n = MASK_VERTICES + 1
    rng = np.random.default_rng(11)
    edges = rng.integers(0, n, size=(n * LARGE_DEGREE // 2, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    return Graph.from_edges(edges, n=n, vertex_labels=(rng.random(n) < 0.3).astype(np.int64), dedupe=True)


#: The dtypes of the engine's arrays: masks, vertex ids, offsets and keys, bitset words, weights and bounds.
ARRAY_DTYPES = ("bool", "int32", "int64", "uint32", "float64")
#: The dtypes of the engine's gather indices.
INDEX_DTYPES = ("int32", "int64")


def _array_kernels(xp: Any) -> None:
    """Run each copy (contiguous and strided, between any two of :data:`ARRAY_DTYPES`), each take (1-D and row
    gathers, by either index dtype), each concatenation of many 1-D arrays and each binary search (contiguous and
    strided keys, between index dtypes) once on a few elements of ``xp``.  Measured on an H200, counts on an R-MAT of
    4M vertices after the warm-up's counts still compiled an int32 concatenation (of arrays of different lengths)
    and a search of strided int32 keys."""
    for src in ARRAY_DTYPES:
        a = xp.arange(8).astype(src)
        for dst in ARRAY_DTYPES:
            a.astype(dst)
            a[::2].astype(dst)  # strided: an element-wise copy kernel even between equal dtypes
        for index in INDEX_DTYPES:
            at = xp.arange(2, dtype=index)
            a.take(at)
            a.reshape(4, 2).take(at, axis=0)
        xp.concatenate([a[:k] for k in range(1, 9)] * 2)  # past a few arrays CuPy concatenates in one kernel
    for bins in INDEX_DTYPES:
        sorted_bins = xp.arange(8, dtype=bins)
        for keys in INDEX_DTYPES:
            x = xp.arange(8, dtype=keys)
            for side in ("left", "right"):
                xp.searchsorted(sorted_bins, x, side=side)
                xp.searchsorted(sorted_bins, x[::2], side=side)


def _sliced(backend: BackendName, data: Graph, query: Graph) -> tuple[int, int]:
    """``query``'s count over ``data`` on ``backend`` under :data:`PLANNED_ON_DEVICE` whole, and as the sum of the
    slices of its plan that a cluster's :func:`~distsm.plan.split.count_slice` runs when it restricts the core's
    first two vertices to halves of the ids (a heavy start vertex split by its second; four slices, two for a core
    of one vertex): the paths of a cluster's sliced heavy queries, which no count in one process takes."""
    from distsm.kernels import get_backend
    from distsm.kernels.budget import default_budget
    from distsm.kernels.counting import Count, Symmetry, Target
    from distsm.kernels.placement import Placement
    from distsm.plan.split import SharedPlan, count_slice
    from distsm.semantics import Semantics

    be, sem = get_backend(backend), Semantics()
    placement, budget = Placement.of(be, data), default_budget(be, None)
    with options(PLANNED_ON_DEVICE):
        stages = Count(placement, Target(query, sem.match_options, Symmetry()), budget)
        planned = stages.plan()
        assert planned.plan is not None, "a warm-up shape plans a core join"
        whole = stages.run(planned)
        shared = SharedPlan.of(planned, placement, None)
        halves = (range(0, data.n // 2), range(data.n // 2, data.n))
        vertices = planned.plan.core[:2]
        parts = sum(count_slice(placement, shared, planned.ce, query, sem, dict(zip(vertices, ranges)), budget)
                    for ranges in itertools.product(halves, repeat=len(vertices)))
    return whole, parts


def warm_process(backend: BackendName = "cupy") -> float:
    """Load into this process what a first heavy count on ``backend`` would otherwise load mid-query; returns the
    seconds it took.

    A new process finds the kernels :func:`warmup` compiled in the on-disk cache, but still loads each module it
    launches, runs Python code it has not run before and grows its memory pools on first use.  Measured on an H200
    (50M-edge R-MAT, warm kernel cache, after one light count): a first heavy count took 3.36 s against 2.96 s for
    the same count again, of which its profile shows 0.14 s compiling Python code and 0.02 s compiling one kernel
    variant beside the device work.  On a cluster every GPU worker pays that in its first batch (two workers:
    5.42 s against 4.31-4.84 s for later batches), so workers run this when they load
    (``distsm.cluster.warm-workers``).  It counts the cluster's heavy paths (:func:`_sliced`: a plan over candidate
    edges refined, joined and counted on the device, whole and as slices, each whole count checked against its
    slices' sum) on the small dense graph, and runs the array kernels once; on a cold kernel cache it compiles what
    those take.  Measured on an H200 (``benchmarks run first-use``, ``first_use_h200.json``): it took 0.84 s, and
    then the first count of that query ran 0.15 s slower than its second (0.69 s without it), another heavy query's
    0.00 s (0.20 s).  Its engine options are set process-wide while it runs (``dask.config``), so it belongs before
    a process's first count."""
    from distsm.kernels import get_backend

    t = time.perf_counter()
    data = _dense_graph(False)
    for name in ("path4", "cycle5"):
        whole, parts = _sliced(backend, data, _shapes(False)[name])
        if whole != parts:
            raise AssertionError(f"warm-up slices {name}: whole {whole}, slices {parts}")
    _array_kernels(get_backend(backend).xp)
    return time.perf_counter() - t


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
        for name, query in _shapes(False).items():
            # Checked against the device's own default path (the CPU backend would take minutes on this graph).
            with options(PLANNED_ON_DEVICE):
                got = count(large, query, backend=backend)
            want = count(large, query, backend=backend)
            assert got == want, f"warm-up count large {name}: planned {got}, default {want}"
            report.counts[f"large {name}"] = int(got)
            if progress is not None:
                progress(f"large {name}")
        for kind, data in (("dense", _dense_graph(False)), ("large", large)):
            for name in ("path4", "cycle5"):
                whole, parts = _sliced(backend, data, _shapes(False)[name])
                assert whole == parts, f"warm-up slices {kind} {name}: whole {whole}, slices {parts}"
                report.counts[f"{kind} {name} sliced"] = int(parts)
                if progress is not None:
                    progress(f"{kind} {name} sliced")
    _array_kernels(get_backend(backend).xp)
    report.seconds = time.perf_counter() - t
    report.compiled = _cached_files(cache) - before
    return report
