"""Partitioned matching: intra-partition plus spanning matches equals the unpartitioned answer, for every k."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from hprd import DATA, expected_counts, query_path
from oracles import check_split, make_case, random_graph

import distsm
from distsm import Graph, Semantics
from distsm.kernels import get_backend
from distsm.kernels.vertex_sets import restricted
from distsm.partition import Partitioning
from distsm.partitioned import PartitionedMatcher
from distsm.plan.distribution import Directions
from distsm.plan.search import Span, WholeGraph, inter_count
from distsm.plan.work import QueryWork

KS = [1, 2, 3, 4, 8, 16]
NUMPY = get_backend("numpy")
CITESEER = DATA.parent.parent.parent / "citeseer" / "citeseer.graph"


def rows_as_set(rows):
    out = {tuple(int(x) for x in r) for r in rows}
    assert len(out) == len(rows), "a match was listed twice"
    return out


@scaled(220)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 30), p=st.floats(0.08, 0.5), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(2, 5), sampled=st.booleans(),
       k=st.sampled_from(KS), method=st.sampled_from(["metis", "random"]),
       semantics=st.sampled_from(["plain", "induced", "homomorphism", "unique"]),
       strategy=st.sampled_from([None, "pbe", "global"]), budget=st.sampled_from([1 << 24, 3000]),
       distribute=st.sampled_from(["auto", "whole", "sliced"]))
def test_random_cases_equal_unpartitioned(seed, n, p, vl, el, directed, qsize, sampled, k, method, semantics,
                                          strategy, budget, distribute):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    sem = Semantics(induced=semantics == "induced", homomorphism=semantics == "homomorphism",
                    unique=semantics == "unique")
    opts = sem.as_dict()
    expected_rows = rows_as_set(distsm.match(data, query, backend="numpy", **opts))
    matcher = PartitionedMatcher(data, Partitioning(k, method, seed % 1000), backend=NUMPY)
    directions = Directions(strategy, distribute)
    result = matcher.count(query, sem, budget, directions)
    assert result.count == len(expected_rows)
    check_split(result, k)
    listed = [r for chunk in matcher.iter_matches(query, sem, budget, directions=directions) for r in chunk]
    assert rows_as_set(listed) == expected_rows


@pytest.mark.parametrize("method", ["metis", "random"])
@pytest.mark.parametrize("k", KS)
def test_hprd_all_queries(k, method):
    data = distsm.read_graph(DATA)
    matcher = PartitionedMatcher(data, Partitioning(k, method), backend=NUMPY)
    names = sorted(expected_counts())
    # Sliced: the plan's own jobs (PBE's intra-partition joins and spanning searches, or one global join); a
    # count left to decide would go whole, one join over the whole graph (this process is one site).
    results = matcher.count_batch([distsm.read_graph(query_path(n)) for n in names], Semantics(), 1 << 28,
                                  Directions(distribute="sliced"), names=names)
    assert {r.query: r.count for r in results} == expected_counts()
    for r in results:
        check_split(r, k)
    spanning = sum(r.inter for r in results if r.intra is not None)
    assert (spanning == 0) == (k == 1)


@pytest.mark.parametrize("k", [2, 8])
def test_hprd_listing_is_identical(k):
    data = distsm.read_graph(DATA)
    matcher = PartitionedMatcher(data, k, backend=NUMPY)
    for name in ["query_dense_16_2", "query_dense_16_90"]:
        q = distsm.read_graph(query_path(name))
        whole = rows_as_set(distsm.match(data, q, backend="numpy"))
        assert rows_as_set(distsm.match(data, q, partitions=k, backend="numpy")) == whole
        sliced = matcher.iter_matches(q, Semantics(), 1 << 28, directions=Directions(distribute="sliced"))
        assert rows_as_set(np.concatenate(list(sliced))) == whole


@pytest.fixture(scope="module")
def citeseer_unlabelled():
    g = distsm.read_graph(CITESEER)
    return Graph.from_edges(np.stack([g.edge_src, g.edge_dst], axis=1), n=g.n)


@pytest.mark.parametrize("k", KS)
def test_citeseer_published_counts(citeseer_unlabelled, k):
    tri = Graph.from_networkx(nx.complete_graph(3))
    k4 = Graph.from_networkx(nx.complete_graph(4))
    matcher = PartitionedMatcher(citeseer_unlabelled, k, backend=NUMPY)
    for q, unique, published in [(tri, False, 6996), (tri, True, 1166), (k4, False, 6120), (k4, True, 255)]:
        assert distsm.count(citeseer_unlabelled, q, partitions=k, unique=unique, backend="numpy") == published
        sliced = matcher.count(q, Semantics(unique=unique), 1 << 28, Directions(distribute="sliced"))
        assert sliced.count == published
        check_split(sliced, k)


def test_limit_and_bad_partition_counts():
    rng = np.random.default_rng(1)
    data = random_graph(rng, 30, 0.3, 1, 1, False)
    q = Graph.from_networkx(nx.path_graph(3))
    total = distsm.count(data, q, backend="numpy")
    assert total > 20
    assert distsm.match(data, q, partitions=4, limit=20, backend="numpy").shape == (20, 3)
    for bad in [0, -2, 2.5, True]:
        with pytest.raises(ValueError, match="partitions"):
            distsm.count(data, q, partitions=bad, backend="numpy")


def test_store_on_disk_serves_memory_mapped_adjacency(tmp_path):
    data = distsm.read_graph(DATA)
    matcher = PartitionedMatcher(data, Partitioning(4, directory=str(tmp_path / "parts")), backend=NUMPY)
    assert isinstance(matcher.whole_graph()[0].entry_keys, np.memmap)
    for name in ["query_dense_16_1", "query_dense_16_33"]:
        r = matcher.count(distsm.read_graph(query_path(name)), Semantics(), 1 << 26)
        assert r.count == expected_counts()[name]
    # a second matcher reuses the saved store instead of partitioning again
    again = PartitionedMatcher(data, Partitioning(4, directory=str(tmp_path / "parts")), backend=NUMPY)
    assert again.store.reused


def test_shared_execution_does_less_work_for_the_same_answer():
    rng = np.random.default_rng(5)
    data = random_graph(rng, 60, 0.2, 1, 1, False)
    tri = Graph.from_networkx(nx.complete_graph(4))
    matcher = PartitionedMatcher(data, Partitioning(4, "random"), backend=NUMPY)
    shared = matcher.count(tri, Semantics(), 1 << 24, Directions("pbe"))
    alone = matcher.count(tri, Semantics(), 1 << 24, Directions("pbe", share=False))
    assert shared.count == alone.count == distsm.count(data, tri, backend="numpy")
    assert shared.partial_matches * 3 < alone.partial_matches


@scaled(60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(6, 30), p=st.floats(0.1, 0.5), qsize=st.integers(2, 5),
       cuts=st.lists(st.integers(0, 30), max_size=4), strategy=st.sampled_from(["pbe", "global"]),
       semantics=st.sampled_from(["plain", "induced", "unique"]))
def test_start_ranges_split_a_spanning_search_into_disjoint_pieces(seed, n, p, qsize, cuts, strategy, semantics):
    """Spanning searches sliced by ranges of start-vertex ids (what the Dask layer ships) add up to the whole."""
    data, query = make_case(seed, n, p, 2, 1, False, qsize, True)
    sem = Semantics(induced=semantics == "induced", unique=semantics == "unique")
    matcher = PartitionedMatcher(data, Partitioning(3, "random", seed % 100), backend=NUMPY)
    plan = matcher.plan(query, sem, Directions(strategy))
    bounds = sorted({0, data.n, *(min(c, data.n) for c in cuts)})
    ranges = [range(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    for group in (plan.groups if strategy == "pbe" else [None]):
        def run(start, group=group):
            return inter_count(NUMPY, WholeGraph(matcher.whole_graph()[0], matcher.assignment),
                               QueryWork(query, sem, 1 << 24), Span(group, start))

        whole = run(None)
        assert sum(run(r) for r in ranges) == whole
        if group is not None:
            assert sum(run(restricted(np, matcher.cross_vertices(), r)) for r in ranges) == whole


def test_restricted_by_range_equals_restricted_by_array():
    members = np.array([1, 3, 4, 9, 12, 13], dtype=np.int32)
    for lo, hi in [(0, 20), (3, 4), (4, 13), (5, 9), (14, 30), (0, 0)]:
        expected = members[(members >= lo) & (members < hi)]
        assert np.array_equal(restricted(np, members, range(lo, hi)), expected)
        assert np.array_equal(restricted(np, members, np.arange(lo, hi)), expected)
    with pytest.raises(ValueError, match="step"):
        restricted(np, members, range(0, 10, 2))


@scaled(40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(6, 30), p=st.floats(0.1, 0.6), qsize=st.integers(2, 5),
       cuts=st.lists(st.integers(0, 30), max_size=3), second_cuts=st.lists(st.integers(0, 30), max_size=2),
       semantics=st.sampled_from(["plain", "induced", "unique", "homomorphism"]))
def test_global_join_slices_count_by_the_engine_paths_and_add_up(seed, n, p, qsize, cuts, second_cuts, semantics):
    """Slices of a global join (start ranges, each split again by ranges of the second vertex) are counted by the
    engine's own paths restricted to their ids (as a whole query is), without dividing unique counts by |Aut|,
    and add up to the whole query's count."""
    from distsm.kernels.counting import Count
    from distsm.plan.execute import Job, job_count

    data, query = make_case(seed, n, p, 2, 1, False, qsize, True)
    sem = Semantics(induced=semantics == "induced", unique=semantics == "unique",
                    homomorphism=semantics == "homomorphism")
    matcher = PartitionedMatcher(data, Partitioning(2, "random", seed % 100), backend=NUMPY)
    expected = distsm.count(data, query, backend="numpy", **sem.as_dict())

    def ranges(points):
        bounds = sorted({0, data.n, *(min(c, data.n) for c in points)})
        return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:])]

    targets = []
    real = Count.__init__
    slices = [(start, second) for start in ranges(cuts) for second in ranges(second_cuts)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Count, "__init__", lambda self, placement, target, *a, **k:
                   targets.append(target) or real(self, placement, target, *a, **k))
        work = QueryWork(query, sem, 1 << 24)
        total = sum(job_count(matcher, Job("inter", start=s, second=t), work) for s, t in slices)
    assert total == expected
    # One count per slice, plus the unrestricted one its slices share on this site.
    restricted_targets = [t for t in targets if t.restrict]
    assert len(restricted_targets) == len(slices) and len(targets) - len(slices) <= 1
    assert all(t.symmetry.automorphisms is None for t in restricted_targets)
