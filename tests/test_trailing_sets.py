"""Trailing sets (kernels/trailing_sets.py) against a brute force over every vertex subset, checked with networkx."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled

from oracles import brute_trailing_sets

from distsm.graph import Graph
from distsm.kernels.trailing_sets import TrailingSets

SETTINGS = scaled(60)


def random_query(rng: np.random.Generator, n: int, p: float, labels: int, connected: bool) -> Graph:
    edges = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < p]
    if connected:  # a random spanning tree under the random edges
        edges += [(int(rng.integers(0, b)), b) for b in range(1, n)]
    return Graph.from_edges(sorted(set(edges)), n=n, vertex_labels=rng.integers(0, labels, size=n))


def mask(s) -> int:
    return sum(1 << u for u in s)


def test_a_path_trails_its_ends_not_its_inner_vertices():
    sets = TrailingSets(Graph.from_edges([(0, 1), (1, 2), (2, 3)]), 4)
    assert sets.valid(mask({0})) and sets.valid(mask({0, 3}))
    assert not sets.valid(mask({1}))  # removing an inner vertex disconnects the path
    assert not sets.valid(mask({0, 2}))  # {1, 3} is not connected
    assert not sets.valid(mask({0, 1}))  # not independent
    assert not sets.valid(0)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9), p=st.floats(0.05, 0.9), most=st.integers(1, 6),
       labels=st.integers(1, 3), group=st.sampled_from([None, 1, 2]), connected=st.booleans(),
       exclude=st.booleans())
def test_valid_is_the_definition(seed, n, p, most, labels, group, connected, exclude):
    rng = np.random.default_rng(seed)
    query = random_query(rng, n, p, labels, connected)
    excluded = frozenset({int(rng.integers(0, n))}) if exclude else frozenset()
    sets = TrailingSets(query, most, mask(excluded), group)
    expected = brute_trailing_sets(query, most, excluded, group)
    for size in range(0, n + 1):
        for s in itertools.combinations(range(n), size):
            assert sets.valid(mask(s)) == (frozenset(s) in expected), s


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10), p=st.floats(0.05, 0.9), most=st.integers(1, 6),
       labels=st.integers(1, 3), group=st.sampled_from([None, 1, 2]), connected=st.booleans(),
       exclude=st.booleans(), count=st.integers(1, 15), ties=st.booleans())
def test_most_promising_are_the_best_maximal_sets(seed, n, p, most, labels, group, connected, exclude, count, ties):
    """The first ``count`` maximal trailing sets (no trailing set grows them by one vertex) by size, then weight,
    then sorted vertices; small integer weights make ties, which the vertices must break."""
    rng = np.random.default_rng(seed)
    query = random_query(rng, n, p, labels, connected)
    excluded = frozenset({int(rng.integers(0, n))}) if exclude else frozenset()
    weights = [float(w) for w in (rng.integers(0, 3, size=n) if ties else rng.random(n) * 10)]
    all_sets = brute_trailing_sets(query, most, excluded, group)
    maximal = [s for s in all_sets if not any(s | {v} in all_sets for v in set(range(n)) - s)]
    maximal.sort(key=lambda s: (-len(s), -sum(weights[u] for u in sorted(s)), sorted(s)))
    got = TrailingSets(query, most, mask(excluded), group).most_promising(count, weights)
    assert got == [mask(s) for s in maximal[:count]]


def test_a_large_dense_query_is_searched_within_its_node_budget():
    """A 40-vertex query has millions of trailing sets: the search returns the best ones without listing them."""
    rng = np.random.default_rng(5)
    query = random_query(rng, 40, 0.08, 4, True)
    sets = TrailingSets(query, 6, 0, 5)
    weights = rng.random(40).tolist()
    got = sets.most_promising(12, weights)
    assert len(got) == 12 and all(sets.valid(m) and m.bit_count() == 6 for m in got)
    sums = [sum(weights[u] for u in range(40) if m >> u & 1) for m in got]
    assert sums == sorted(sums, reverse=True)
