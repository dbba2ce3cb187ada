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


@st.composite
def trailing_cases(draw, most_n: int = 10) -> tuple[Graph, int, frozenset[int], int | None]:
    """A random query (connected or not, one to three vertex labels), its size limit, an excluded vertex or none and
    a label-group limit or none."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(2, most_n))
    query = random_query(rng, n, draw(st.floats(0.05, 0.9)), draw(st.integers(1, 3)), draw(st.booleans()))
    excluded = frozenset({int(rng.integers(0, n))}) if draw(st.booleans()) else frozenset()
    return query, draw(st.integers(1, 6)), excluded, draw(st.sampled_from([None, 1, 2]))


@SETTINGS
@given(case=trailing_cases(9))
def test_valid_is_the_definition(case):
    query, most, excluded, group = case
    sets = TrailingSets(query, most, mask(excluded), group)
    expected = brute_trailing_sets(query, most, excluded, group)
    for size in range(0, query.n + 1):
        for s in itertools.combinations(range(query.n), size):
            assert sets.valid(mask(s)) == (frozenset(s) in expected), s


@SETTINGS
@given(case=trailing_cases(10), count=st.integers(1, 15), ties=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_most_promising_are_the_best_maximal_sets(case, count, ties, seed):
    """The first ``count`` maximal trailing sets (no trailing set grows them by one vertex) by size, then weight,
    then sorted vertices; small integer weights make ties, which the vertices must break."""
    query, most, excluded, group = case
    n = query.n
    rng = np.random.default_rng(seed)
    weights = [float(w) for w in (rng.integers(0, 3, size=n) if ties else rng.random(n) * 10)]
    all_sets = brute_trailing_sets(query, most, excluded, group)
    maximal = [s for s in all_sets if not any(s | {v} in all_sets for v in set(range(n)) - s)]
    maximal.sort(key=lambda s: (-len(s), -sum(weights[u] for u in sorted(s)), sorted(s)))
    sets = TrailingSets(query, most, mask(excluded), group)
    got = sets.most_promising(count, weights)
    assert got == [mask(s) for s in maximal[:count]]
    # The branch-and-bound search alone: the best sets of the most vertices (maximal, all of them).
    largest = [mask(s) for s in maximal if len(s) == most]
    assert sets.heaviest(most, count, weights) == largest[:count]


def test_a_tie_found_later_beats_an_equal_set_with_larger_vertices():
    """The search meets vertices by falling weight, so a tied set of smaller vertices may come after the one it
    must displace: a branch that can only tie the worst set kept is not cut."""
    star = Graph.from_edges([(0, 1), (0, 2), (0, 3), (0, 4)])
    got = TrailingSets(star, 2).most_promising(3, [0.0, 1.0, 1.0, 0.0, 2.0])
    assert got == [mask({1, 4}), mask({2, 4}), mask({1, 2})]


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
