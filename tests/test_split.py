"""Splitting a heavy count into slices that share its plan (distsm.plan.split): the slices cover the count once,
their counts add up to the oracles' answers under every semantics, and a start vertex heavier than a slice's
share is split again by its second vertex."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, networkx_matches, random_graph, sampled_query, subgraph_key

from distsm.graph import Graph
from distsm.kernels import get_backend
from distsm.kernels.counting import Count, Target
from distsm.kernels.placement import Placement
from distsm.plan.search import symmetry
from distsm.plan.split import SharedPlan, count_slice, slices
from distsm.semantics import Semantics
from distsm.plan.work import QueryWork

NUMPY = get_backend("numpy")
SEMANTICS = {"plain": Semantics(), "unique": Semantics(unique=True), "homomorphism": Semantics(homomorphism=True)}


def shared_plan(backend, data, query, sem):
    """The :class:`SharedPlan` a worker would ship for ``query`` on ``data``, and its placement."""
    placement = Placement.of(backend, data)
    sym = symmetry(query, sem)
    planned = Count(placement, Target(query, sem.match_options, sym), 1 << 26).plan(force=True)
    return placement, SharedPlan.of(planned, placement, sym.automorphisms)


def sliced_count(backend, data, query, sem, pieces):
    """The count as a cluster's merge makes it from ``pieces`` slices, and the slices' restrictions."""
    placement, shared = shared_plan(backend, data, query, sem)
    cuts = slices(shared, NUMPY, query, sem, pieces)
    assert all(c.share > 0 for c in cuts) and abs(sum(c.share for c in cuts) - 1) < 1e-9, cuts
    restricts = [c.restrict for c in cuts]
    ce = shared.index(shared.runner(placement).backend)
    total = sum(count_slice(placement, shared, ce, QueryWork(query, sem, 1 << 26), r) for r in restricts)
    if shared.automorphisms is not None:
        assert total % shared.automorphisms == 0
        total //= shared.automorphisms
    return total, restricts, shared


def covered_once(restricts, shared, n):
    """Whether the restrictions (of a prefix of the core's vertices each) cover every tuple of images of the core
    vertices they restrict exactly once."""
    depth = max(len(r) for r in restricts)
    prefix = shared.plan.core[:depth]
    cover = np.zeros((n,) * depth, np.int64)
    for r in restricts:
        assert set(r) == set(prefix[:len(r)]), (r, prefix)
        cover[tuple(slice(r[u].start, r[u].stop) if u in r else slice(None) for u in prefix)] += 1
    return bool((cover == 1).all())


def expected(data, query, name):
    if name == "homomorphism":
        return len(brute_force(data, query, homomorphism=True))
    matches = networkx_matches(data, query)
    return len({subgraph_key(data, query, f) for f in matches}) if name == "unique" else len(matches)


@scaled(25)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(6, 16), p=st.floats(0.2, 0.7), vl=st.integers(1, 3),
       size=st.integers(2, 5), pieces=st.integers(1, 9), name=st.sampled_from(sorted(SEMANTICS)))
def test_slices_of_a_shared_plan_add_up_to_the_count(seed, n, p, vl, size, pieces, name):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, 1, False)
    query = sampled_query(rng, data, size)
    if query is None or query.n < 2 or (name == "homomorphism" and query.n > 4):
        return
    total, restricts, shared = sliced_count(NUMPY, data, query, SEMANTICS[name], pieces)
    assert total == expected(data, query, name)
    assert covered_once(restricts, shared, data.n)
    assert 1 <= len(restricts)


def test_a_hub_start_vertex_is_split_by_its_second_vertex():
    """A star's hub carries most of a path's work: its slices split it by the images of the second vertex."""
    g = nx.star_graph(40)
    g.add_edges_from((i, i + 1) for i in range(1, 40, 2))
    data = Graph.from_networkx(g)
    query = Graph.from_networkx(nx.path_graph(4))
    total, restricts, shared = sliced_count(NUMPY, data, query, Semantics(), 8)
    assert total == len(networkx_matches(data, query))
    assert covered_once(restricts, shared, data.n)
    second = shared.plan.core[1] if len(shared.plan.core) > 1 else None
    assert second is not None and sum(second in r for r in restricts) >= 2, restricts


def test_a_unique_count_is_divided_once_over_its_slices():
    """A slice's embeddings do not come in whole orbits (a triangle's 6 embeddings fall in several slices); the
    sum over slices divides exactly.  The data graph is two triangles sharing an edge."""
    data = Graph.from_networkx(nx.Graph([(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]))
    query = Graph.from_networkx(nx.cycle_graph(3))
    placement, shared = shared_plan(NUMPY, data, query, Semantics(unique=True))
    assert shared.automorphisms == 6
    restricts = [c.restrict for c in slices(shared, NUMPY, query, Semantics(unique=True), 4)]
    work = QueryWork(query, Semantics(unique=True), 1 << 26)
    per_slice = [count_slice(placement, shared, shared.index(NUMPY), work, r)
                 for r in restricts]
    assert len(per_slice) > 1 and any(c % 6 for c in per_slice), per_slice
    assert sum(per_slice) // 6 == 2


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(4))
def test_cupy_slices_equal_numpy(seed):
    """The same shared plan's slices counted on the device (the index copied there) add up to the NumPy count."""
    cupy = get_backend("cupy")
    rng = np.random.default_rng(seed)
    data = random_graph(rng, 60, 0.3, 2, 1, False)
    query = sampled_query(rng, data, 5)
    assert query is not None
    for name in ("plain", "unique"):
        sem = SEMANTICS[name]
        assert sliced_count(cupy, data, query, sem, 6)[0] == sliced_count(NUMPY, data, query, sem, 6)[0] == \
            expected(data, query, name)


@pytest.mark.parametrize("seed", range(4))
def test_a_shipped_index_rebuilds_its_lookups(seed):
    """A shared plan ships its index without position maps and bit matrices; the receiver's rebuild equals them."""
    rng = np.random.default_rng(seed)
    data = random_graph(rng, 40, 0.3, 2, 1, False)
    query = sampled_query(rng, data, 5)
    placement = Placement.of(NUMPY, data)
    planned = Count(placement, Target(query, Semantics().match_options), 1 << 26).plan(force=True)
    shared = SharedPlan.of(planned, placement, None)
    assert shared.ce.positions is None and all(a.matrix is None for a in shared.ce.arcs.values())
    rebuilt, original = shared.index(NUMPY), planned.ce
    assert original.positions is not None and shared.matrix_arcs
    assert all((a == b).all() for a, b in zip(rebuilt.positions, original.positions))
    for key, arc in original.arcs.items():
        assert (arc.matrix is None) == (rebuilt.arcs[key].matrix is None)
        if arc.matrix is not None:
            assert (arc.matrix == rebuilt.arcs[key].matrix).all()


def test_a_merge_names_the_slices_setup_apart_from_their_counting():
    """A sliced query's seconds: its jobs' in all (``inter``), the longest (``inter_slice_max``) and what slicing
    cost before counting (``inter_setup``: the cuts on the worker that found it heavy, indexes built where slices
    ran); its count is the slices' sum."""
    from distsm.plan.distribution import whole_plan
    from distsm.plan.results import JobResult, merge

    found = [JobResult("inter", None, 0, None, 0.4, "a", setup_seconds=0.1),
             JobResult("inter", None, 5, None, 1.0, "a", setup_seconds=0.05),
             JobResult("inter", None, 7, None, 2.0, "b")]
    result = merge("q", Semantics(), whole_plan(), 1, found)
    assert result.count == 12 and result.workers == ["a", "b"]
    assert (result.seconds["inter"], result.seconds["inter_slice_max"], result.seconds["inter_setup"]) == \
        pytest.approx((3.4, 2.0, 0.15))
