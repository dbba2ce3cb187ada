"""The depth-first set-intersection search (kernels/dfs*.py, kernels/ranked.py) against independent oracles.

Counts are forced through the search (``path="dfs"``) and compared with networkx's VF2 and brute force, for plain
and unique counts of queries with large automorphism groups (cliques, cycles, stars, diamonds, complete bipartite
graphs), with few labels, edge labels and directions.  The program's own pieces (orders, symmetry-breaking
closure, reuse, the pair tail) are checked on their definitions.  The device kernel is checked against this host
search in ``test_dfs_gpu.py``.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import distsm
from distsm import Graph
from distsm.kernels import NUMPY, counting, dfs, dfs_host
from distsm.kernels.dfs_plan import closure, program, renumbered, search_order, supported
from distsm.kernels.explain import Explanation
from distsm.kernels.placement import Placement
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.ranked import ranked_graph
from distsm.kernels.records import Control, JoinCancelled
from distsm.plan.automorphism import automorphism_count
from distsm.plan.search import breaking, symmetry
from distsm.semantics import Semantics
from hypothesis_settings import scaled
from oracles import brute_force, networkx_matches, random_graph

PATTERNS = {
    "edge": [(0, 1)],
    "triangle": [(0, 1), (1, 2), (0, 2)],
    "4-clique": list(itertools.combinations(range(4), 2)),
    "5-clique": list(itertools.combinations(range(5), 2)),
    "4-cycle": [(0, 1), (1, 2), (2, 3), (3, 0)],
    "5-cycle": [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)],
    "diamond": [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)],
    "tailed triangle": [(0, 1), (1, 2), (0, 2), (0, 3)],
    "3-star": [(0, 1), (0, 2), (0, 3)],
    "5-path": [(0, 1), (1, 2), (2, 3), (3, 4)],
    "K2,3": [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)],
    "house": [(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (1, 4)],
}


def pattern(name: str, labels: list[int] | None = None) -> Graph:
    edges = PATTERNS[name]
    n = max(max(e) for e in edges) + 1
    return Graph.from_edges(edges, n=n, vertex_labels=labels or [0] * n)


def dfs_count(data: Graph, query: Graph, *, unique: bool = False, budget: int = 64 << 20,
              explain: Explanation | None = None) -> int:
    sem = Semantics(unique=unique)
    return counting.count(NUMPY, data, counting.Target(query, sem.match_options, symmetry(query, sem)), budget=budget,
                          explain=explain, path="dfs")


def oracle(data: Graph, query: Graph, unique: bool) -> int:
    found = len(networkx_matches(data, query))
    return found // automorphism_count(query) if unique else found


@pytest.mark.parametrize("name", sorted(PATTERNS))
@pytest.mark.parametrize("unique", [False, True])
def test_patterns_on_an_unlabelled_random_graph(name, unique):
    rng = np.random.default_rng(7)
    data = random_graph(rng, 24, 0.35, 1, 1, False)
    query = pattern(name)
    report = Explanation()
    assert dfs_count(data, query, unique=unique, explain=report) == oracle(data, query, unique)
    assert report.path == "dfs" and "depth-first" in report.reason


@scaled(40)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(2, 6), extra=st.floats(0.0, 1.0), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans(), unique=st.booleans())
def test_random_queries_match_networkx(seed, size, extra, vl, el, directed, unique):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, 14, 0.35, vl, el, directed)
    query = _connected_query(rng, size, extra, vl, el, directed)
    assert dfs_count(data, query, unique=unique) == oracle(data, query, unique)


@scaled(15)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(sorted(PATTERNS)), budget=st.integers(1 << 13, 1 << 15))
def test_small_budgets_give_the_same_count(seed, name, budget):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, 12, 0.5, 2, 1, False)
    query = pattern(name, [int(x) for x in rng.integers(0, 2, max(max(e) for e in PATTERNS[name]) + 1)])
    assert dfs_count(data, query, budget=budget) == len(brute_force(data, query))


def _connected_query(rng, size, extra, vl, el, directed) -> Graph:
    edges: dict[tuple[int, int], int] = {}
    for v in range(1, size):
        u = int(rng.integers(0, v))
        edges[(u, v) if not directed or rng.random() < 0.5 else (v, u)] = int(rng.integers(0, el))
    for u, v in itertools.combinations(range(size), 2):
        if (u, v) not in edges and (v, u) not in edges and rng.random() < extra:
            edges[(u, v) if not directed or rng.random() < 0.5 else (v, u)] = int(rng.integers(0, el))
    return Graph.from_edges(list(edges), n=size, edge_labels=list(edges.values()),
                            vertex_labels=rng.integers(0, vl, size), directed=directed)


def test_networkx_input_and_the_public_count_agree():
    data = nx.gnm_random_graph(40, 200, seed=3)
    query = nx.complete_graph(4)
    expected = sum(1 for c in nx.enumerate_all_cliques(data) if len(c) == 4)
    assert dfs_count(Graph.from_networkx(data, node_label=None, edge_label=None),
                     Graph.from_networkx(query, node_label=None, edge_label=None), unique=True) == expected
    assert distsm.count(data, query, unique=True, backend="numpy") == expected


def test_search_order_is_connected_and_starts_at_the_densest_edge():
    for name in PATTERNS:
        q = pattern(name)
        order = search_order(q)
        assert sorted(order) == list(range(q.n))
        adj = {(a, b) for a, b in PATTERNS[name]} | {(b, a) for a, b in PATTERNS[name]}
        assert (order[0], order[1]) in adj
        assert all(any((order[j], order[i]) in adj for j in range(i)) for i in range(1, q.n))
    assert set(search_order(pattern("diamond"))[:2]) == {1, 2}  # the two vertices of degree 3


def test_closure_is_transitive():
    assert set(closure(((0, 1), (1, 2), (2, 3)), 4)) == {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}
    assert closure(((1, 0),), 3) == ((1, 0),)


def test_clique_levels_reuse_the_level_before_and_a_diamond_ends_in_a_pair_tail():
    k5 = renumbered(pattern("5-clique"), search_order(pattern("5-clique")))
    prog = program(k5, breaking(k5)[0])
    assert [int(prog.level(i)[5]) for i in range(5)] == [-1, -1, -1, 2, 3]
    assert [int(prog.level(i)[6]) for i in range(3, 5)] == [1 << 2, 1 << 3]  # one more run each
    assert not prog.pair_tail
    d = renumbered(pattern("diamond"), search_order(pattern("diamond")))
    dprog = program(d, breaking(d)[0])
    assert dprog.pair_tail and int(dprog.words[2]) in (1, -1)  # the two tips are ordered
    assert int(dprog.level(3)[4]) & (1 << 2) == 0  # the tip's distinctness from the other tip is the tail's
    assert not program(renumbered(pattern("4-cycle"), search_order(pattern("4-cycle"))), ()).pair_tail


def test_the_symmetry_breaking_of_the_renumbered_query_counts_each_subgraph_once():
    rng = np.random.default_rng(11)
    data = random_graph(rng, 16, 0.5, 1, 1, False)
    for name in ("4-clique", "4-cycle", "K2,3", "house"):
        q = pattern(name)
        r = renumbered(q, search_order(q))
        pairs, aut = breaking(r)
        assert aut == automorphism_count(q)
        kept = [f for f in brute_force(data, r) if all(f[a] < f[b] for a, b in pairs)]
        assert len(kept) * aut == len(brute_force(data, q))


def test_ranked_runs_are_sorted_and_hold_each_neighbour_once():
    rng = np.random.default_rng(5)
    data = random_graph(rng, 30, 0.3, 2, 3, True)
    idx = NUMPY.index(data)
    g = ranked_graph(np, idx)
    assert g is not None and dfs_host.order_check(np, g)
    assert ranked_graph(np, idx) is g  # cached for the index's lifetime
    rank = np.argsort(np.argsort(data.degrees * data.n + np.arange(data.n), kind="stable"), kind="stable")
    # Two vertex labels and six effective edge labels: twelve runs a vertex, split by the neighbour's label.
    assert g.slots == (0, 1) and g.labels == 2 * data.num_effective_labels
    for v in range(data.n):
        for e in range(data.num_effective_labels):
            for label in g.slots:
                at = rank[v] * g.labels + g.run_offset(e, label)
                run = g.nbr[g.ptr[at]:g.ptr[at + 1]]
                want = [w for w in data.neighbors_of(v, e).tolist() if data.vertex_labels[w] == label]
                assert sorted(run.tolist()) == sorted(rank[want].tolist())
                assert g.up[at] == g.ptr[at] + int((run <= rank[v]).sum())  # the first entry above its vertex
    assert int(g.max_run) == max(int(np.diff(g.ptr).max()), 0)
    one = ranked_graph(np, NUMPY.index(random_graph(rng, 20, 0.3, 1, 1, False)))
    assert one.slots == () and one.labels == 1 and one.run_offset(0, 0) == 0  # one vertex label: runs not split


def test_auto_keeps_the_joins_on_the_host_and_labelled_graphs_off_the_search():
    rng = np.random.default_rng(2)
    data = random_graph(rng, 30, 0.3, 1, 1, False)
    report = distsm.explain(data, pattern("triangle"), unique=True, backend="numpy")
    assert report.path != "dfs"  # the host's search is the kernel's check, not a faster path on a CPU
    many = random_graph(rng, 60, 0.2, 30, 1, False)
    stages = counting.Count(Placement.of(NUMPY, many), counting.Target(pattern("triangle"), MatchOptions(),
                                                                        symmetry(pattern("triangle"),
                                                                                 Semantics(unique=True))), 1 << 20)
    assert stages.search() is None


@pytest.mark.parametrize("name", ["4-cycle", "5-path"])
def test_auto_takes_a_shortcut_on_the_host_and_counts_what_networkx_finds(name):
    # A shortcut's closed form reads wedges and triangles only: unlike the host's search tables it beats the joins
    # on a CPU, so the host takes it unasked.
    rng = np.random.default_rng(11)
    data = random_graph(rng, 28, 0.3, 1, 1, False)
    query = pattern(name)
    report = distsm.explain(data, query, unique=True, backend="numpy")
    assert report.path == "dfs", report.reason
    assert any(shortcut in report.reason for shortcut in dfs.SHORTCUTS), report.reason
    want = len(networkx_matches(data, query)) // automorphism_count(query)
    assert distsm.count(data, query, unique=True, backend="numpy") == want


def test_stars_stay_with_the_joins_unless_forced():
    rng = np.random.default_rng(6)
    data = random_graph(rng, 30, 0.3, 1, 1, False)
    sem = Semantics(unique=True)
    with distsm.options({"engine.dfs-host": True}):
        for name, searched in (("3-star", False), ("5-path", True), ("tailed triangle", True)):
            stages = counting.Count(Placement.of(NUMPY, data), counting.Target(pattern(name), MatchOptions(),
                                                                               symmetry(pattern(name), sem)), 1 << 24)
            assert (stages.search() is not None) is searched, name
            assert stages.search(force=True) is not None


def test_what_the_search_refuses_and_says_why():
    rng = np.random.default_rng(4)
    data = random_graph(rng, 12, 0.4, 1, 1, False)
    sem = Semantics(induced=True)
    with pytest.raises(ValueError, match="induced"):
        counting.count(NUMPY, data,
                       counting.Target(pattern("triangle"), sem.match_options, symmetry(pattern("triangle"), sem)),
                       budget=1 << 20, path="dfs")
    with pytest.raises(ValueError, match="no symmetry breaking"):
        counting.count(NUMPY, data, counting.Target(pattern("triangle"), MatchOptions()), budget=1 << 20, path="dfs")
    big = Graph.from_edges([(i, i + 1) for i in range(11)])
    assert "12 query vertices" in supported(big)


def test_a_cancelled_search_stops():
    rng = np.random.default_rng(9)
    data = random_graph(rng, 40, 0.3, 1, 1, False)
    sem = Semantics()
    with pytest.raises(JoinCancelled):
        counting.count(NUMPY, data,
                       counting.Target(pattern("4-cycle"), sem.match_options, symmetry(pattern("4-cycle"), sem)),
                       budget=1 << 16, path="dfs", control=Control(cancelled=lambda: True))


def test_the_selectivity_is_sampled_once_per_graph_and_query():
    from distsm.kernels import dfs

    rng = np.random.default_rng(13)
    data = random_graph(rng, 30, 0.3, 1, 1, False)
    idx = NUMPY.index(data)
    asked = []

    def candidates(name):
        def of():
            asked.append(name)
            return NUMPY.candidates(idx, pattern(name), homomorphism=False)
        return of

    first = dfs.measured_selectivity(NUMPY, idx, candidates("triangle"), pattern("triangle"))
    assert first == dfs.arc_selectivity(NUMPY, idx, candidates("triangle")(), pattern("triangle")) > 0.5
    assert dfs.measured_selectivity(NUMPY, idx, candidates("triangle"), pattern("triangle")) == first
    assert asked == ["triangle", "triangle"]  # the sample's and the check's, not the second call's
    assert dfs.measured_selectivity(NUMPY, idx, candidates("4-cycle"), pattern("4-cycle")) > 0.5
    assert asked[-1] == "4-cycle"


@pytest.mark.parametrize("vlabels", [2, 5, 40])
def test_runs_split_by_neighbour_label_or_tested_count_alike(vlabels):
    """Split runs (up to 16 a vertex) and label tests (past that) count the same labelled queries as networkx,
    including a query label no data vertex has."""
    rng = np.random.default_rng(vlabels)
    data = random_graph(rng, 40, 0.3, vlabels, 1, False)
    g = ranked_graph(np, NUMPY.index(data))
    assert bool(g.slots) is (vlabels <= 16)
    for name, labels in (("triangle", [0, 1, 0]), ("4-cycle", [1, 1, 1, 1]), ("diamond", [0, 1, 1, 0]),
                         ("tailed triangle", [1, 0, 0, vlabels])):
        query = pattern(name, labels)
        for unique in (False, True):
            assert dfs_count(data, query, unique=unique) == oracle(data, query, unique), (name, unique)


@pytest.mark.parametrize("directed", [False, True])
def test_label_share_is_the_geometric_mean_over_the_query_arcs(directed):
    """label_share weighs each query vertex's label share by its degree: the same as one share per arc end."""
    import math

    from distsm.kernels.order import query_adjacency

    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(20, 60))
        pairs = rng.integers(0, n, size=(3 * n, 2)).tolist()
        edges = sorted({(a, b) for a, b in pairs if a != b and (directed or a < b)})
        data = Graph.from_edges(edges, n=n, vertex_labels=rng.integers(0, 4, size=n).tolist(), directed=directed,
                                edge_labels=rng.integers(0, 2, size=len(edges)).tolist())
        k = int(rng.integers(3, 7))
        arcs = {(i, i + 1) for i in range(k - 1)} | {(0, k - 1), (2, 0)}
        query = Graph.from_edges(sorted(arcs if directed else {(min(a, b), max(a, b)) for a, b in arcs}), n=k,
                                 vertex_labels=rng.integers(0, 5, size=k).tolist(), directed=directed)
        idx = NUMPY.index(data)
        shares = [int(idx.vertices_by_label[x].shape[0]) / idx.n if x in idx.vertices_by_label else 0.0
                  for row in query_adjacency(query) for x in (int(query.vertex_labels[w]) for w, _ in row)]
        expected = 0.0 if min(shares) == 0.0 else math.exp(sum(map(math.log, shares)) / len(shares))
        assert dfs.label_share(idx, query) == pytest.approx(expected, rel=1e-12)
