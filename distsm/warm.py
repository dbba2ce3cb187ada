"""Warming a process up: the small counts and array operations that take a heavy count's GPU paths.

:mod:`distsm.compile_ahead` runs them (and more) to fill CuPy's kernel cache once per machine; a GPU cluster worker
runs :func:`warm_process` when it loads (:mod:`distsm.cluster.tasks`), so that its first batch does not pay first
use mid-query.  Both check the counts they run.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np

from distsm.config import options
from distsm.graph import Graph
from distsm.vocabulary import BackendName
from distsm.plan.work import QueryWork

#: Vertices and average degree of the synthetic graphs: a sparse one for many query shapes, and a dense one on
#: which a book of six triangles (an edge and six vertices adjacent to both) is heavy enough for even a GPU's trial
#: join to stop (about 1e11 matches), so its trailing vertices are counted from intersections of two candidate
#: sets, less the core's images of the same label.
DENSE_VERTICES, DENSE_DEGREE = 1500, 24
CLUSTERED_VERTICES, CLUSTERED_DEGREE = 400, 100


def dense_graph(directed: bool, n: int = DENSE_VERTICES, degree: int = DENSE_DEGREE) -> Graph:
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


def query_shapes(directed: bool) -> dict[str, Graph]:
    """Query shapes of 2 to 7 vertices: paths, stars, cycles and cliques (every label 0, or mixed)."""
    def graph(n: int, edges: list[tuple[int, int]], labels: list[int] | None = None) -> Graph:
        return Graph.from_edges(np.array(edges, dtype=np.int64).reshape(-1, 2), n=n, directed=directed,
                                vertex_labels=None if labels is None else np.array(labels))

    clique4 = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    return {"edge": graph(2, [(0, 1)]), "path4": graph(4, [(0, 1), (1, 2), (2, 3)]),
            "star6": graph(6, [(0, i) for i in range(1, 6)]), "triangle": graph(3, [(0, 1), (1, 2), (0, 2)]),
            "cycle5": graph(5, [(i, (i + 1) % 5) for i in range(5)]), "clique4": graph(4, clique4),
            "labelled_star7": graph(7, [(0, i) for i in range(1, 7)], [1, 0, 0, 0, 1, 1, 0])}


#: Engine options under which a count plans over candidate edges, refines and counts on the device whatever its
#: size: the large graph's small counts then take the paths of heavy ones.
PLANNED_ON_DEVICE = {"engine.trial-entries": 0, "engine.trial-ratio-host": 0.0, "engine.trial-ratio-device": 0.0,
                     "engine.device-refine": 0, "engine.host-work": 0.0}


#: The dtypes of the engine's arrays: masks, vertex ids, offsets and keys, bitset words, weights and bounds.
ARRAY_DTYPES = ("bool", "int32", "int64", "uint32", "float64")
#: The dtypes of the engine's gather indices.
INDEX_DTYPES = ("int32", "int64")


def array_kernels(xp: Any) -> None:
    """Run each copy (contiguous and strided, between any two of :data:`ARRAY_DTYPES`), each take (1-D and row
    gathers, by either index dtype), each concatenation of many 1-D arrays and each binary search (contiguous and
    strided keys, between index dtypes) once on a few elements of ``xp``: large graphs reached such kernels after
    the warm-up's counts had run (measurements: benchmarks/README.md, 'Measurements behind the engine's settings')."""
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


def sliced_counts(backend: BackendName, data: Graph, query: Graph) -> tuple[int, int]:
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
    budget = default_budget(be, None)
    with options(PLANNED_ON_DEVICE):
        # Built inside the block: a placement reads the engine options when it is made.
        placement = Placement.of(be, data)
        stages = Count(placement, Target(query, sem.match_options, Symmetry()), budget)
        planned = stages.plan()
        assert planned.plan is not None, "a warm-up shape plans a core join"
        whole = stages.run(planned)
        shared = SharedPlan.of(planned, placement, None)
        halves = (range(0, data.n // 2), range(data.n // 2, data.n))
        vertices = planned.plan.core[:2]
        parts = sum(count_slice(placement, shared, planned.ce, QueryWork(query, sem, budget),
                                dict(zip(vertices, ranges)))
                    for ranges in itertools.product(halves, repeat=len(vertices)))
    return whole, parts


def checked_slices(backend: BackendName, data: Graph) -> dict[str, int]:
    """The counts of the path and cycle shapes over ``data`` on ``backend`` by :func:`sliced_counts`, each whole
    count checked equal to its slices' sum (AssertionError otherwise)."""
    out = {}
    for name in ("path4", "cycle5"):
        whole, parts = sliced_counts(backend, data, query_shapes(False)[name])
        if whole != parts:
            raise AssertionError(f"warm-up slices {name} over {data.n} vertices: whole {whole}, slices {parts}")
        out[name] = parts
    return out


def warm_process(backend: BackendName = "cupy") -> float:
    """Load into this process what a first heavy count on ``backend`` would otherwise load mid-query; returns the
    seconds it took.

    A new process finds the kernels :func:`~distsm.compile_ahead.warmup` compiled in the on-disk cache, but still
    loads each module it launches, runs Python code it has not run before and grows its memory pools on first use.
    On a cluster every GPU worker would pay that in its first batch, so workers run this when they load
    (``distsm.cluster.warm-workers``; measurements: benchmarks/README.md, 'Measurements behind the engine's settings').
    It counts the cluster's heavy paths (:func:`sliced_counts`: a plan over
    candidate edges refined, joined and counted on the device, whole and as slices, each whole count checked against
    its slices' sum) on the small dense graph, and runs the array kernels once; on a cold kernel cache it compiles
    what those take (``benchmarks run first-use`` measures what it saves).  Its engine options are set process-wide
    while it runs (``dask.config``), so it belongs
    before a process's first count."""
    from distsm.kernels import get_backend

    t = time.perf_counter()
    checked_slices(backend, dense_graph(False))
    array_kernels(get_backend(backend).xp)
    return time.perf_counter() - t
