"""The benchmark generators: R-MAT graphs with Zipf labels and random-walk queries (dense, sparse, core)."""

import networkx as nx
import numpy as np
import pytest

import distsm
from benchmarks.generators import _dense_growth, query_set, random_walk_query, rmat_graph


@pytest.fixture(scope="module")
def rmat():
    return rmat_graph(scale=12, edges=40_000, vertex_labels=8, edge_labels=2, seed=3, a=0.45, b=0.22, c=0.22)


def test_rmat_is_reproducible_power_law_and_zipf_labelled(rmat):
    again = rmat_graph(scale=12, edges=40_000, vertex_labels=8, edge_labels=2, seed=3, a=0.45, b=0.22, c=0.22)
    other = rmat_graph(scale=12, edges=40_000, vertex_labels=8, edge_labels=2, seed=4, a=0.45, b=0.22, c=0.22)
    assert rmat == again and rmat != other
    assert rmat.m == 40_000 and rmat.n == 4096
    deg = rmat.degrees
    assert deg.max() > 20 * deg.mean()  # heavy tail
    counts = np.bincount(rmat.vertex_labels, minlength=8)
    assert counts[0] > 3 * counts[-1] > 0  # Zipf: label 0 is the most frequent
    assert set(np.unique(rmat.edge_labels).tolist()) == {0, 1}


@pytest.mark.parametrize("size", [4, 8, 12])
def test_queries_are_connected_subgraphs_of_their_kind(rmat, size):
    queries = query_set(rmat, 6, size, seed=size, kinds=("dense", "sparse", "core"))
    assert queries and queries == query_set(rmat, 6, size, seed=size, kinds=("dense", "sparse", "core"))
    for kind, q in queries:
        assert q.n == size and q.is_connected()
        avg = 2 * q.m / q.n
        assert (avg >= 3) == (kind == "dense") or kind == "core"
        if kind == "core":
            assert q.degrees.min() >= 2
        # grown inside the data graph, so the vertices it came from are one embedding: never zero matches
        assert distsm.match(rmat, q, backend="numpy", limit=1).shape[0] == 1


def test_dense_growth_finds_the_dense_spot_a_walk_misses():
    """A 6-clique hanging off a long labelled path: walks rarely see it, greedy growth does."""
    g = nx.path_graph(400)
    g.add_edges_from((400 + i, 400 + j) for i in range(6) for j in range(i + 1, 6))
    g.add_edge(0, 400)
    for v in g:
        g.nodes[v]["label"] = v % 3
    data = distsm.Graph.from_networkx(g)
    rng = np.random.default_rng(0)
    q = _dense_growth(data, 5, rng, attempts=400)
    assert q is not None and 2 * q.m / q.n >= 3
    assert distsm.count(data, q, backend="numpy") >= 1
    assert random_walk_query(data, 5, np.random.default_rng(0), "dense", attempts=400) is not None
    assert _dense_growth(distsm.Graph.from_networkx(nx.path_graph(50)), 5, rng, attempts=20) is None
