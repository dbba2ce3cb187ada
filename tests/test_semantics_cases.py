"""Small cases with answers worked out by hand, one behaviour each."""

import networkx as nx
import numpy as np
import pytest

import distsm
from distsm import Graph


def path(n, **kw):
    return Graph.from_edges([(i, i + 1) for i in range(n - 1)], n=n, **kw)


def triangle(**kw):
    return Graph.from_edges([(0, 1), (1, 2), (0, 2)], **kw)


def test_edge_in_three_vertex_path_gives_four():
    assert distsm.count(path(3), path(2), backend="numpy") == 4


def test_triangle_in_triangle():
    assert distsm.count(triangle(), triangle(), backend="numpy") == 6
    assert distsm.count(triangle(), triangle(), unique=True, backend="numpy") == 1
    assert distsm.match(triangle(), triangle(), unique=True, backend="numpy").shape == (1, 3)


def test_wedge_in_triangle_induced_or_not():
    assert distsm.count(triangle(), path(3), backend="numpy") == 6
    assert distsm.count(triangle(), path(3), induced=True, backend="numpy") == 0


def test_query_bigger_than_data_gives_zero():
    assert distsm.count(path(3), path(5), backend="numpy") == 0
    assert distsm.match(path(3), path(5), backend="numpy").shape == (0, 5)


def test_no_label_overlap_gives_zero():
    data = path(4, vertex_labels=[1, 1, 2, 2])
    query = path(2, vertex_labels=[3, 3])
    assert distsm.count(data, query, backend="numpy") == 0


def test_edge_labels_must_agree():
    data = Graph.from_edges([(0, 1), (1, 2)], edge_labels=[5, 6])
    assert distsm.count(data, Graph.from_edges([(0, 1)], edge_labels=[5]), backend="numpy") == 2
    assert distsm.count(data, Graph.from_edges([(0, 1)], edge_labels=[7]), backend="numpy") == 0


def test_direction_is_respected():
    data = Graph.from_edges([(0, 1), (1, 2)], directed=True)  # 0 -> 1 -> 2
    out_star = Graph.from_edges([(0, 1), (0, 2)], directed=True)
    chain = Graph.from_edges([(0, 1), (1, 2)], directed=True)
    assert distsm.count(data, out_star, backend="numpy") == 0
    assert distsm.count(data, chain, backend="numpy") == 1
    two_cycle = Graph.from_edges([(0, 1), (1, 0)], directed=True)
    arc = Graph.from_edges([(0, 1)], directed=True)
    assert distsm.count(two_cycle, arc, backend="numpy") == 2
    assert distsm.count(two_cycle, arc, induced=True, backend="numpy") == 0


def test_homomorphism_may_fold_vertices():
    # A 3-path folds onto one edge: 0->a, 1->b, 2->a.
    assert distsm.count(path(2), path(3), backend="numpy") == 0
    assert distsm.count(path(2), path(3), homomorphism=True, backend="numpy") == 2


def test_single_vertex_query_counts_label_matches():
    data = path(5, vertex_labels=[1, 2, 1, 2, 1])
    q = Graph.from_edges(np.zeros((0, 2), int), n=1, vertex_labels=[1])
    assert distsm.count(data, q, backend="numpy") == 3
    assert sorted(distsm.match(data, q, backend="numpy")[:, 0].tolist()) == [0, 2, 4]


def test_k4_counts_and_automorphisms():
    k4 = Graph.from_networkx(nx.complete_graph(4))
    k6 = Graph.from_networkx(nx.complete_graph(6))
    assert distsm.automorphism_count(k4) == 24
    assert distsm.count(k6, k4, backend="numpy") == 6 * 5 * 4 * 3
    assert distsm.count(k6, k4, unique=True, backend="numpy") == 15


def test_big_symmetry_group_is_not_enumerated():
    k9 = Graph.from_networkx(nx.complete_graph(9))
    assert distsm.automorphism_count(k9) == 362880
    assert distsm.count(k9, k9, unique=True, backend="numpy") == 1


def test_counts_beyond_int64_are_summed_exactly(monkeypatch):
    # No enumeration reaches 2**64 matches in a test, so feed the driver chunk counts that overflow int64.
    from distsm.kernels import counting

    monkeypatch.setattr(counting, "walk", lambda *a, **k: iter([np.uint64(2**63), np.int64(2**62), 2**62]))
    n = distsm.count(path(3), path(2), backend="numpy")
    assert n == 2**64 and isinstance(n, int)


def test_disconnected_query_is_refused():
    q = Graph.from_edges([(0, 1), (2, 3)])
    with pytest.raises(ValueError, match="not connected"):
        distsm.count(path(5), q, backend="numpy")


def test_direction_mismatch_is_refused():
    with pytest.raises(ValueError, match="directed"):
        distsm.count(path(3), Graph.from_edges([(0, 1)], directed=True), backend="numpy")


def test_unique_homomorphism_is_refused():
    with pytest.raises(ValueError, match="unique"):
        distsm.count(path(3), path(2), unique=True, homomorphism=True, backend="numpy")


def test_bad_budget_and_limit_are_refused():
    with pytest.raises(ValueError, match="memory_budget"):
        distsm.count(path(3), path(2), memory_budget=0, backend="numpy")
    with pytest.raises(ValueError, match="limit"):
        distsm.match(path(3), path(2), limit=-1, backend="numpy")


def test_unknown_backend_and_missing_gpu():
    with pytest.raises(ValueError, match="unknown backend"):
        distsm.count(path(3), path(2), backend="tpu")
    from distsm.kernels import cuda_device_count

    if cuda_device_count() == 0:
        with pytest.raises(distsm.BackendUnavailableError, match="cupy"):
            distsm.count(path(3), path(2), backend="cupy")


def test_networkx_inputs_are_accepted():
    assert distsm.count(nx.cycle_graph(5), nx.path_graph(3), backend="numpy") == 10


def test_graph_validation():
    with pytest.raises(distsm.GraphError, match="self loop") as e:
        Graph.from_edges([(0, 1), (2, 2)])
    assert e.value.edge_index == 1
    with pytest.raises(distsm.GraphError, match="duplicate") as e:
        Graph.from_edges([(0, 1), (1, 2), (1, 0)])
    assert e.value.edge_index == 2
    assert Graph.from_edges([(0, 1), (1, 0)], dedupe=True).m == 1
    assert Graph.from_edges([(0, 1), (1, 0)], directed=True).m == 2
    with pytest.raises(distsm.GraphError, match="different label"):
        Graph.from_edges([(0, 1), (1, 0)], edge_labels=[1, 2], dedupe=True)
    with pytest.raises(distsm.GraphError, match="outside"):
        Graph.from_edges([(0, 5)], n=3)
    with pytest.raises(distsm.GraphError, match="negative"):
        Graph.from_edges([(0, 1)], vertex_labels=[0, -1])


def test_graph_round_trips_through_networkx_and_pickle():
    import pickle

    g = Graph.from_edges([(0, 1), (1, 2), (2, 0)], edge_labels=[1, 2, 3], vertex_labels=[4, 5, 6], directed=True)
    assert Graph.from_networkx(g.to_networkx()) == g
    assert pickle.loads(pickle.dumps(g)) == g
    assert g.vertex_label_counts() == {4: 1, 5: 1, 6: 1}
    assert g.edge_label_counts() == {1: 1, 2: 1, 3: 1}
    assert g.degrees.tolist() == [2, 2, 2]


def test_neighbour_runs():
    g = Graph.from_edges([(0, 1), (0, 2), (0, 3)], edge_labels=[2, 1, 2])
    assert g.neighbors_of(0).tolist() == [1, 2, 3]
    assert g.neighbors_of(0, 2).tolist() == [1, 3]
    assert g.neighbors_of(0, 7).tolist() == []
