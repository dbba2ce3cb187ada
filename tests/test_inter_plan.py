"""The inter-partition planner on queries of known symmetry (PBE's edge groups and strict-equivalent sequences)."""

import networkx as nx
import numpy as np
import pytest

from distsm import Graph
from distsm.plan.automorphism import stabilizer_chain
from distsm.plan import inter_partition_plan


def plan_of(g, **kw):
    return inter_partition_plan(Graph.from_networkx(g), **kw)


def group_sizes(plan):
    return sorted(len(g.sequences) for g in plan.groups)


@pytest.mark.parametrize("name, graph, sizes", [
    ("triangle", nx.complete_graph(3), [3]),
    ("4-cycle", nx.cycle_graph(4), [4]),
    ("3-edge path", nx.path_graph(4), [1, 2]),
    ("diamond", nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]), [1, 4]),
    ("4-clique", nx.complete_graph(4), [6]),
    ("house", nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)]), [1, 1, 2, 2]),
])
def test_groups_of_symmetric_queries(name, graph, sizes):
    assert group_sizes(plan_of(graph)) == sizes


def test_labelled_query_without_symmetry_has_one_group_per_edge():
    g = nx.cycle_graph(5)
    nx.set_node_attributes(g, {i: i for i in range(5)}, "label")
    plan = plan_of(g)
    assert stabilizer_chain(Graph.from_networkx(g)).order == 1
    assert group_sizes(plan) == [1] * 5


def test_directed_triangle_cycle_versus_transitive():
    cyc = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    trans = nx.DiGraph([(0, 1), (1, 2), (0, 2)])
    assert group_sizes(plan_of(cyc)) == [3]
    assert group_sizes(plan_of(trans)) == [1, 1, 1]


@pytest.mark.parametrize("graph", [nx.complete_graph(5), nx.cycle_graph(6), nx.petersen_graph(),
                                   nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)])])
def test_sequences_are_images_of_the_representative(graph):
    q = Graph.from_networkx(graph)
    plan = inter_partition_plan(q)
    edges = {frozenset((int(a), int(b))) for a, b in zip(q.edge_src, q.edge_dst)}
    covered = []
    for group in plan.groups:
        rep = group.representative
        assert rep.remap == tuple(range(q.n))
        for seq in group.sequences:
            t = seq.remap
            # t is an automorphism ...
            assert {frozenset((t[a], t[b])) for a, b in map(tuple, edges)} == edges
            # ... mapping the representative's edge onto this sequence's prime edge, and its order onto this order
            assert frozenset((t[rep.edge[0]], t[rep.edge[1]])) == frozenset(seq.edge)
            assert seq.order == tuple(t[u] for u in rep.order)
            covered.append(seq.prime_edge)
    assert sorted(covered) == list(range(q.m))


def test_sharing_is_off_for_homomorphisms_and_unique():
    tri = Graph.from_networkx(nx.complete_graph(3))
    assert not inter_partition_plan(tri, homomorphism=True).shared
    assert group_sizes(inter_partition_plan(tri, unique=True)) == [1, 1, 1]


def test_strategy_is_chosen_and_explained():
    # Eight edge groups (no symmetry): many spanning searches lose to one global join when most edges cross.
    g = nx.cycle_graph(8)
    nx.set_node_attributes(g, {i: i for i in range(8)}, "label")
    q = Graph.from_networkx(g)
    stats = dict(candidate_sizes=[100] * 8, label_entries={0: 1000}, n_data=800)
    low = inter_partition_plan(q, cross_fraction=0.01, **stats)
    high = inter_partition_plan(q, cross_fraction=0.9, **stats)
    assert low.strategy == "pbe" and high.strategy == "global"
    assert low.reason and high.reason
    assert 0 < low.spanning_fraction < high.spanning_fraction <= 1
    assert np.isfinite(low.costs["pbe"]) and np.isfinite(high.costs["global"])
