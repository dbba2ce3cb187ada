"""Planning a batch at once (:func:`distsm.kernels.batch_plan.build_plans`) gives exactly the plans of
:func:`~distsm.kernels.query_plan.build_plan` one query at a time (same orders, same steps field by field), on HPRD's
200 queries and on random batches built to tie: few distinct candidate sizes and data entry counts, directed and
undirected queries together, several vertex and edge labels, every matching semantics and symmetry-breaking pairs."""

from unittest.mock import patch

import networkx as nx
import numpy as np
import pytest
from hprd import DATA, expected_counts, query_path
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import queries_for, random_graph

import distsm
from distsm import Graph, Semantics
from distsm.kernels import batch_plan, get_backend
from distsm.kernels.batch_plan import build_plans
from distsm.kernels.query_plan import Constraints, MatchOptions, build_plan
from distsm.plan.search import symmetry

NUMPY = get_backend("numpy")
OPTIONS = [MatchOptions(), MatchOptions(induced=True), MatchOptions(homomorphism=True),
           MatchOptions(induced=True, homomorphism=True)]


def one_at_a_time(queries, sizes, label_entries, n_data, options, less_than):
    return [build_plan(q, s, label_entries, n_data, options, Constraints(lt))
            for q, s, lt in zip(queries, sizes, less_than)]


@pytest.mark.parametrize("options", OPTIONS, ids=MatchOptions.describe)
def test_hprd_batch_plans_equal_one_plan_at_a_time(options):
    data = distsm.read_graph(DATA)
    queries = [distsm.read_graph(query_path(n)) for n in expected_counts()]
    idx = NUMPY.index(data)
    sizes = [c.sizes for c in NUMPY.candidates_of(idx, queries, homomorphism=options.homomorphism)]
    unique = Semantics(unique=True, induced=options.induced)
    for less_than in ([()] * len(queries), [symmetry(q, unique).less_than for q in queries]):
        args = (queries, sizes, idx.label_entries, idx.n, options, less_than)
        assert build_plans(*args) == one_at_a_time(*args)


#: A random batch's graphs: the data graphs' seed, vertices, edge probability, vertex and edge labels, the queries'
#: sizes, and how many distinct candidate sizes and data entry counts are drawn (few: ties everywhere).
RANDOM_BATCH = st.fixed_dictionaries(dict(
    seed=st.integers(0, 2**32 - 1), n=st.integers(3, 9), p=st.floats(0.2, 0.8), vl=st.integers(1, 3),
    el=st.integers(1, 3), sizes=st.lists(st.integers(1, 7), min_size=1, max_size=6), spread=st.integers(1, 4)))


@scaled(100)
@given(batch=RANDOM_BATCH, options=st.sampled_from(OPTIONS), symmetric=st.booleans(),
       chunk_cells=st.sampled_from([1, 64, batch_plan.CHUNK_CELLS]), share=st.booleans())
def test_random_batch_plans_equal_one_plan_at_a_time(batch, options, symmetric, chunk_cells, share):
    """Queries of a directed and an undirected data graph in one batch, candidate sizes and data entry counts drawn
    from ``spread`` values (ties everywhere), symmetry-breaking pairs of unique counts or random pairs, and the
    batch cut into chunks of ``chunk_cells``; equal tuples of checks shared, or (keys past their bound) not."""
    seed, n, p, vl, el, sizes, spread = (batch[k] for k in ("seed", "n", "p", "vl", "el", "sizes", "spread"))
    rng = np.random.default_rng(seed)
    queries = [q for directed in (False, True)
               for q in queries_for(rng, random_graph(rng, n, p, vl, el, directed), sizes, vl, el)]
    cand = [rng.integers(0, spread, q.n).tolist() for q in queries]
    label_entries = {e: int(rng.integers(0, spread)) for e in range(2 * el + 2) if rng.random() < 0.8}
    if symmetric:
        less_than = [symmetry(q, Semantics(unique=True)).less_than for q in queries]
    else:
        less_than = [tuple(tuple(rng.permutation(q.n)[:2].tolist()) for _ in range(rng.integers(0, 3)))
                     if q.n > 1 else () for q in queries]
    args = (queries, cand, label_entries, int(rng.integers(1, 50)), options, less_than)
    with patch.object(batch_plan, "CHUNK_CELLS", chunk_cells), \
            patch.object(batch_plan, "KEY_LIMIT", batch_plan.KEY_LIMIT if share else 0):
        assert build_plans(*args) == one_at_a_time(*args)


def test_arcs_both_ways_add_their_selectivities_in_row_order():
    """Directed queries with arcs both ways between vertices (two entries per pair in each row): each entry's
    log-selectivity is added in turn, as gsi_order adds them, so near-ties break the same way."""
    rng = np.random.default_rng(3)
    queries = [q for q in (random_graph(rng, int(rng.integers(2, 12)), 0.5, 2, 3, True) for _ in range(200))
               if nx.is_connected(q.to_networkx().to_undirected())]
    assert sum(len(set(zip(q.edge_src.tolist(), q.edge_dst.tolist())) & set(zip(q.edge_dst.tolist(),
                                                                                q.edge_src.tolist()))) > 0
               for q in queries) > 20
    label_entries = {e: 7 + 3 * e for e in range(8)}
    sizes = [rng.integers(1, 40, q.n).tolist() for q in queries]
    for options in OPTIONS:
        args = (queries, sizes, label_entries, 97, options, [()] * len(queries))
        assert build_plans(*args) == one_at_a_time(*args)


def test_a_disconnected_or_empty_query_raises_as_build_plan_does():
    path = Graph.from_edges(np.array([[0, 1], [1, 2]]), n=3)
    apart = Graph.from_edges(np.array([[0, 1], [2, 3]]), n=4)
    with pytest.raises(ValueError, match="not connected"):
        build_plan(apart, [1] * 4, {0: 4}, 5, MatchOptions())
    with pytest.raises(ValueError, match="not connected"):
        build_plans([path, apart], [[1] * 3, [1] * 4], {0: 4}, 5, MatchOptions(), [(), ()])
    with pytest.raises(ValueError):
        build_plans([path, Graph.from_edges(np.zeros((0, 2)), n=0)], [[1] * 3, []], {0: 4}, 5, MatchOptions(),
                    [(), ()])
    with pytest.raises(ValueError, match="one entry per query"):
        build_plans([path], [[1] * 3], {0: 4}, 5, MatchOptions(), [])
