"""The device kernel of the depth-first set-intersection search (``kernels/cuda/dfs.cu``) against the host search
(:mod:`distsm.kernels.dfs_host`) and networkx, on fresh random inputs: hub-heavy graphs, few labels, edge labels,
directions, budgets that leave one block, and the reuse and pair-tail savings the host does not take."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from distsm import Graph
from distsm.kernels import NUMPY, counting, get_backend, wedges
from distsm.kernels.dfs_plan import program, renumbered, search_order
from distsm.kernels.explain import Explanation
from distsm.kernels.ranked import ranked_graph
from distsm.kernels.records import Control, JoinCancelled
from distsm.plan.search import breaking, symmetry
from distsm.semantics import Semantics
from hypothesis_settings import scaled
from oracles import networkx_matches, random_graph
from test_dfs import PATTERNS, _connected_query, pattern

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    return get_backend("cupy")


def _hub_graph(rng: np.random.Generator, n: int, m: int, labels: int) -> Graph:
    """A skewed graph: endpoints drawn with weights ~ rank^-0.7, so a few vertices hold long runs (1000 vertices,
    3000 draws: degree up to about 180, and the host search counts every pattern in seconds)."""
    w = 1.0 / np.arange(1, n + 1) ** 0.7
    w /= w.sum()
    src, dst = rng.choice(n, m, p=w), rng.choice(n, m, p=w)
    keep = src != dst
    pairs = np.unique(np.sort(np.stack([src[keep], dst[keep]], 1), axis=1), axis=0)
    return Graph.from_edges(pairs, n=n, vertex_labels=rng.integers(0, labels, n))


def _both(backend, data: Graph, query: Graph, unique: bool, budget: int = 1 << 28) -> int:
    sem = Semantics(unique=unique)
    return counting.count(backend, data, counting.Target(query, sem.match_options, symmetry(query, sem)),
                          budget=budget, path="dfs")


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_every_pattern_on_a_hub_graph_equals_the_host_search(gpu, name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    data = _hub_graph(rng, 1000, 3000, 1)
    for unique in (True, False):
        assert _both(gpu, data, pattern(name), unique) == _both(NUMPY, data, pattern(name), unique)


@scaled(30)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(2, 7), extra=st.floats(0.0, 1.0), vl=st.integers(1, 4),
       el=st.integers(1, 3), directed=st.booleans(), unique=st.booleans())
def test_random_queries_equal_networkx(gpu, seed, size, extra, vl, el, directed, unique):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, 16, 0.4, vl, el, directed)
    query = _connected_query(rng, size, extra, vl, el, directed)
    found = len(networkx_matches(data, query))
    if unique:
        found //= breaking(query)[1]
    assert _both(gpu, data, query, unique) == found


@scaled(10)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(sorted(PATTERNS)), labels=st.integers(1, 4),
       blocks=st.integers(1, 3))
def test_buffers_for_one_block_or_a_few_give_the_same_count(gpu, seed, name, labels, blocks):
    rng = np.random.default_rng(seed)
    data = _hub_graph(rng, 1000, 3000, labels)
    size = max(max(e) for e in PATTERNS[name]) + 1
    query = renumbered(pattern(name), search_order(pattern(name)))
    query = Graph.from_edges(np.stack([query.edge_src, query.edge_dst], 1), n=size,
                             vertex_labels=rng.integers(0, labels, size))
    prog = program(query, breaking(query)[0])
    g_dev, g_host = ranked_graph(gpu.xp, gpu.index(data)), ranked_graph(np, NUMPY.index(data))
    per_block = max(prog.levels - 2, 1) * g_dev.max_run * 4 * 8  # a stored set per level and warp, 8 warps
    assert gpu.dfs_count(g_dev, prog, blocks * per_block) == NUMPY.dfs_count(g_host, prog, 1 << 24)


def test_reuse_and_the_pair_tail_run_where_expected(gpu):
    for name, tail in (("diamond", True), ("tailed triangle", True), ("5-path", True), ("5-clique", False)):
        q = renumbered(pattern(name), search_order(pattern(name)))
        assert program(q, breaking(q)[0]).pair_tail is tail, name
    rng = np.random.default_rng(1)
    data = _hub_graph(rng, 2000, 10000, 1)
    report = Explanation()
    sem = Semantics(unique=True)
    total = counting.count(gpu, data,
                           counting.Target(pattern("diamond"), sem.match_options, symmetry(pattern("diamond"), sem)),
                           budget=1 << 28, explain=report, path="dfs")
    assert report.path == "dfs" and total == _both(NUMPY, data, pattern("diamond"), True)


def test_auto_takes_the_search_on_an_unlabelled_graph_and_not_on_a_richly_labelled_one(gpu):
    rng = np.random.default_rng(3)
    plain = _hub_graph(rng, 5000, 50000, 1)
    report = Explanation()
    sem = Semantics(unique=True)
    counting.count(gpu, plain,
                   counting.Target(pattern("4-clique"), sem.match_options, symmetry(pattern("4-clique"), sem)),
                   budget=1 << 28, explain=report)
    assert report.path == "dfs"
    rich = _hub_graph(rng, 5000, 50000, 64)
    labelled = Graph.from_edges(PATTERNS["triangle"], vertex_labels=[0, 1, 2])
    report = Explanation()
    counting.count(gpu, rich, counting.Target(labelled, sem.match_options, symmetry(labelled, sem)), budget=1 << 28,
                   explain=report)
    assert report.path != "dfs"


def test_a_cancelled_search_stops_between_task_ranges(gpu, monkeypatch):
    from distsm.kernels.cupy import dfs as cupy_dfs

    monkeypatch.setattr(cupy_dfs, "DFS_TASK_RANGE", 64)
    rng = np.random.default_rng(4)
    data = _hub_graph(rng, 1000, 3000, 1)
    sem = Semantics()
    with pytest.raises(JoinCancelled):
        counting.count(gpu, data,
                       counting.Target(pattern("5-path"), sem.match_options, symmetry(pattern("5-path"), sem)),
                       budget=1 << 28, path="dfs", control=Control(cancelled=lambda: True))


@pytest.mark.parametrize("name", ["4-cycle", "5-path"])
def test_shortcuts_on_the_device_equal_networkx_and_the_host(gpu, name):
    from test_paths import SHORTCUTS, labelled_cases

    by_networkx, reason = SHORTCUTS[name]
    rng = np.random.default_rng(6)
    for data, label in labelled_cases(rng, 800, 3500):
        query = pattern(name, [label or 0] * (4 if name == "4-cycle" else 5))
        report = Explanation()
        sem = Semantics(unique=True)
        found = counting.count(gpu, data, counting.Target(query, sem.match_options, symmetry(query, sem)),
                               budget=1 << 28, path="dfs", explain=report)
        assert reason in report.reason
        assert found == by_networkx(data, label) == _both(NUMPY, data, query, True)
        if name == "4-cycle":
            g = ranked_graph(gpu.xp, gpu.index(data))
            assert wedges.count(gpu, g, -1 if label is None else label, 1) == found  # the smallest chunks


def test_counts_past_two_to_the_32(gpu):
    n = 230
    data = Graph.from_edges(list(itertools.combinations(range(n), 2)), n=n)  # K_230: C(230, 5) 5-cliques
    from math import comb

    assert _both(gpu, data, pattern("5-clique"), True) == comb(n, 5) > 2**32


def _dense_graph(rng: np.random.Generator, n: int, p: float, labels: int) -> Graph:
    pairs = np.array([e for e in itertools.combinations(range(n), 2) if rng.random() < p])
    return Graph.from_edges(pairs, n=n, vertex_labels=rng.integers(0, labels, n))


def _clique(k: int, label: int = 0) -> Graph:
    return Graph.from_edges(list(itertools.combinations(range(k), 2)), n=k, vertex_labels=[label] * k)


@pytest.mark.parametrize("bitmap_max", [1024, 64])
def test_cliques_by_bit_rows_equal_the_host_search(gpu, monkeypatch, bitmap_max):
    """Sets C_2 of up to 32 members (shared rows), 33 to bitmap_max (global rows) and more (the general search at
    64), against the host search: a dense graph (C_2 up to about 40, a hundred tasks over 32) and a hub graph,
    4- to 7-cliques."""
    from distsm.kernels.cupy import dfs as cupy_dfs

    monkeypatch.setattr(cupy_dfs, "CLIQUE_BITMAP_MAX", bitmap_max)
    rng = np.random.default_rng(bitmap_max)
    for data, sizes in ((_dense_graph(rng, 64, 0.85, 1), (4, 5)), (_hub_graph(rng, 1000, 6000, 1), (4, 5, 6, 7))):
        g_dev = ranked_graph(gpu.xp, gpu.index(data))
        for k in sizes:
            q = renumbered(_clique(k), search_order(_clique(k)))
            assert program(q, breaking(q)[0], any_label=True, slots=g_dev.slots).clique
            found = _both(gpu, data, _clique(k), True)
            assert found == _both(NUMPY, data, _clique(k), True) > 0
        assert _both(gpu, data, _clique(5), False) == 120 * _both(NUMPY, data, _clique(5), True)


@pytest.mark.parametrize("bitmap_max", [1024, 64])
def test_cliques_by_bit_rows_equal_the_general_search_on_dense_labelled_graphs(gpu, monkeypatch, bitmap_max):
    """Millions of 4- to 7-cliques (too many for the host search in a test), one label and three (runs split by
    neighbour label), against the device's general search (itself checked against the host above and in
    test_every_pattern_on_a_hub_graph_equals_the_host_search)."""
    from distsm.kernels.cupy import dfs as cupy_dfs
    from distsm.kernels.dfs_plan import DfsProgram

    monkeypatch.setattr(cupy_dfs, "CLIQUE_BITMAP_MAX", bitmap_max)
    rng = np.random.default_rng(bitmap_max + 1)
    for data in (_dense_graph(rng, 160, 0.55, 1), _dense_graph(rng, 400, 0.6, 3)):
        labels = sorted(data.vertex_label_counts())
        found = [_both(gpu, data, _clique(k, labels[-1]), True) for k in (4, 5, 6, 7)]
        with monkeypatch.context() as m:
            m.setattr(DfsProgram, "clique", property(lambda self: False))
            assert found == [_both(gpu, data, _clique(k, labels[-1]), True) for k in (4, 5, 6, 7)]
        assert min(found) > 0


def test_triangle_weights_by_the_clique_kernel_equal_the_host(gpu):
    """Each triangle's vertices' weights, summed by lanes (short runs) and by warps (long ones), on one label and
    on runs split by three labels, whole and by task ranges."""
    from distsm.kernels.dfs_host import task_runs
    from distsm.kernels.paths import _triangle

    rng = np.random.default_rng(11)
    for labels in (1, 3):
        data = _hub_graph(rng, 2000, 12000, labels)
        g_dev, g_host = ranked_graph(gpu.xp, gpu.index(data)), ranked_graph(np, NUMPY.index(data))
        for label in ([-1] if labels == 1 else [0, 2]):
            prog = _triangle(g_dev, label)
            assert prog.clique
            weights = rng.integers(0, 1000, g_host.n).astype(np.int64)
            want = NUMPY.dfs_weigh(g_host, prog, weights, 1 << 24)
            assert gpu.dfs_weigh(g_dev, prog, gpu.xp.asarray(weights), 1 << 28) == want > 0
            total = task_runs(g_host, prog).total
            parts = [(0, total // 3), (total // 3, total)]
            assert sum(gpu.dfs_weigh(g_dev, prog, gpu.xp.asarray(weights), 1 << 28, p) for p in parts) == want

