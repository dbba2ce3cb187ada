"""The engine against independent oracles (brute force, networkx VF2) on random labelled graphs.

Hypothesis draws the shape of each case (sizes, densities, label counts, direction, semantics, budget) and a
seed; numpy builds the graphs from the seed.  Together these tests run well over 300 random cases per run.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, make_case, networkx_matches, random_connected_query, random_graph, subgraph_key

import distsm

SETTINGS = scaled(120)


def rows_as_set(rows: np.ndarray) -> set[tuple]:
    out = {tuple(int(x) for x in r) for r in rows}
    assert len(out) == rows.shape[0], "a match was listed twice"
    return out


case_args = dict(
    seed=st.integers(0, 2**32 - 1), n=st.integers(1, 7), p=st.floats(0.2, 0.9), vl=st.integers(1, 3),
    el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(1, 4), sampled=st.booleans(),
)


@SETTINGS
@given(**case_args, induced=st.booleans(), homomorphism=st.booleans(), budget=st.sampled_from([None, 1, 3000]))
def test_brute_force(seed, n, p, vl, el, directed, qsize, sampled, induced, homomorphism, budget):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    expected = brute_force(data, query, induced=induced, homomorphism=homomorphism)
    opts = dict(induced=induced, homomorphism=homomorphism, memory_budget=budget, backend="numpy")
    assert distsm.count(data, query, **opts) == len(expected)
    assert rows_as_set(distsm.match(data, query, **opts)) == expected


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 24), p=st.floats(0.1, 0.5), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(2, 6), sampled=st.booleans(),
       induced=st.booleans(), budget=st.sampled_from([None, 5000]))
def test_networkx(seed, n, p, vl, el, directed, qsize, sampled, induced, budget):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    expected = networkx_matches(data, query, induced=induced)
    opts = dict(induced=induced, memory_budget=budget, backend="numpy")
    assert distsm.count(data, query, **opts) == len(expected)
    assert rows_as_set(distsm.match(data, query, **opts)) == expected


@SETTINGS
@given(**case_args, induced=st.booleans())
def test_unique_counts_and_lists_each_subgraph_once(seed, n, p, vl, el, directed, qsize, sampled, induced):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    everything = brute_force(data, query, induced=induced)
    subgraphs = {subgraph_key(data, query, f) for f in everything}
    aut = brute_force(query, query)
    assert distsm.automorphism_count(query) == len(aut)
    assert distsm.count(data, query, induced=induced, unique=True, backend="numpy") == len(subgraphs)
    listed = rows_as_set(distsm.match(data, query, induced=induced, unique=True, backend="numpy"))
    assert listed <= everything
    assert {subgraph_key(data, query, f) for f in listed} == subgraphs
    assert len(everything) == len(subgraphs) * len(aut)


@scaled(40)
@given(**case_args, limit=st.integers(0, 12))
def test_limit_lists_a_prefix_of_the_matches(seed, n, p, vl, el, directed, qsize, sampled, limit):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    everything = brute_force(data, query)
    rows = distsm.match(data, query, limit=limit, memory_budget=2000, backend="numpy")
    assert rows.shape == (min(limit, len(everything)), query.n)
    assert rows_as_set(rows) <= everything


@pytest.mark.parametrize("budget", [1, 500, 10_000, None])
def test_budget_does_not_change_answers_on_a_dense_graph(budget):
    rng = np.random.default_rng(7)
    data = random_graph(rng, 40, 0.35, 2, 1, False)
    query = random_connected_query(rng, data, 5, 0.4, 2, 1)
    expected = len(networkx_matches(data, query))
    assert expected > 1000
    assert distsm.count(data, query, memory_budget=budget, backend="numpy") == expected
    chunks = list(distsm.iter_matches(data, query, memory_budget=budget, backend="numpy"))
    assert sum(c.shape[0] for c in chunks) == expected
    if budget is not None and budget <= 500:
        assert len(chunks) > 10  # the budget really split the work
