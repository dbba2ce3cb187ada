"""The CuPy backend's batched light stage against the NumPy backend: ``count_prepared`` (the counts of many
prepared queries in one launch) and ``candidates_of`` (the filters of many queries in one launch), on fresh random
labelled graphs and queries drawn by Hypothesis (embeddings, unique counts through symmetry-breaking pairs or random
``less_than`` pairs, homomorphisms, induced matches, directed graphs) and on HPRD's 200 queries against their
published counts.

A query the batch does not count (None) must be exactly one that would not fit: its first level has more candidates
than ``distsm.gpu.small-limit``, a level other than the last keeps more rows than that, or its levels read more
adjacency entries than its allowance.  The oracle of that rule is the NumPy backend's descent of the same plan
(each level's output space and survivors); the oracle of the counts is the NumPy backend's own join.

The tests that need a device carry the ``gpu`` marker (tests/conftest.py skips them without one); the packing of
the batch's header is checked here without one.
"""

from __future__ import annotations

import copy
import os
import types

import dask.config
import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import random_connected_query, random_graph, sampled_query

from benchmarks import common
from distsm import Graph
from distsm.kernels import engine, get_backend
from distsm.config import gpu_options
from distsm.kernels.array_backend import NumpyBackend
from distsm.kernels.vertex_sets import member
from distsm.kernels.cupy.batch import _pack
from distsm.kernels.cupy.descent import descent_words
from distsm.kernels.cupy.filter import query_info
from distsm.kernels.cuda_modules import BATCH_HEAD, PROG_MAX
from distsm.kernels.query_plan import Constraints, MatchOptions
from distsm.plan.automorphism import stabilizer_chain

SCALE = float(os.environ.get("DISTSM_GPU_EXAMPLES", "1"))
CHECKS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
REF = NumpyBackend()
#: An allowance no query of these tests reaches.
UNLIMITED = 1 << 62
BUDGET = 4 << 30  # device bytes the batch launches may size their scratch tables from
SEMANTICS = ("plain", "induced", "homomorphism", "unique", "less-than")


@pytest.fixture(scope="module")
def gpu():
    return get_backend("cupy")


@pytest.fixture
def small_limit():
    """Sets ``distsm.gpu.small-limit`` until the test ends."""
    gpu_options()  # the defaults are loaded
    saved = copy.deepcopy(dask.config.get("distsm.gpu"))
    yield lambda rows: dask.config.set({"distsm.gpu.small-limit": rows})
    dask.config.set({"distsm.gpu": saved})


def _options(query: Graph, semantics: str, rng: np.random.Generator) -> tuple[MatchOptions, tuple]:
    """The match options and ``less_than`` pairs of a semantics: unique counts break the query's symmetry;
    ``less-than`` draws arbitrary pairs (the engine takes any)."""
    opts = MatchOptions(induced=semantics == "induced", homomorphism=semantics == "homomorphism")
    if semantics == "unique":
        return opts, stabilizer_chain(query).symmetry_breaking()
    if semantics == "less-than" and query.n > 1:
        pairs = {tuple(int(x) for x in rng.choice(query.n, 2, replace=False)) for _ in range(int(rng.integers(1, 3)))}
        return opts, tuple(sorted(pairs))
    return opts, ()


def _numpy_count(data: Graph, query: Graph, opts: MatchOptions, less_than: tuple) -> int:
    p = engine.prepare(REF, data, query, opts, constraints=Constraints(less_than))
    return 0 if p is None else sum(int(c) for c in engine.walk(REF, p, 1 << 30, count_only=True))


def _numpy_levels(gpu, data: Graph, prepared: engine.PreparedQuery) -> list[tuple[int, int]]:
    """``(output space, survivors)`` of every level of ``prepared``'s plan (prepared on ``gpu``) run on NumPy, from
    the whole first level, up to the first level without survivors."""
    plan = prepared.plan
    host = REF.index(data)
    cands = [gpu.to_host(c) for c in prepared.candidates]
    bits = [None if u == plan.order[0] else REF.bitset(host, c) for u, c in enumerate(cands)]
    return REF.descend(host, cands[plan.order[0]][:, None], 1, plan, bits, True, UNLIMITED).levels


def _fits(gpu, data: Graph, prepared: engine.PreparedQuery, allow: int, rows: int) -> bool:
    """Whether the batch counts ``prepared`` under ``allow`` entries and ``rows`` rows (see the module docstring)."""
    nq = len(prepared.plan.order)
    if nq == 1:
        return True
    if prepared.candidates[prepared.plan.order[0]].shape[0] > rows:
        return False
    read = 0
    for level, (space, survivors) in enumerate(_numpy_levels(gpu, data, prepared), start=1):
        read += space
        if read > allow or (level < nq - 1 and survivors > rows):
            return False
    return True


def _prepare_all(backend, data: Graph, cases: list[tuple[Graph, MatchOptions, tuple]]) -> list:
    """Each case prepared on ``backend`` (None where a query vertex has no candidate)."""
    idx = backend.index(data)
    return [engine.prepare(backend, idx, query, opts, constraints=Constraints(less_than))
            for query, opts, less_than in cases]


def _random_cases(rng: np.random.Generator, data: Graph, k: int, vl: int, el: int, qmax: int):
    cases = []
    for _ in range(k):
        size = int(rng.integers(1, qmax + 1))
        query = sampled_query(rng, data, size) if rng.random() < 0.7 and size > 1 else None
        if query is None:
            query = random_connected_query(rng, data, size, 0.3, vl, el)
        semantics = SEMANTICS[int(rng.integers(0, len(SEMANTICS)))]
        opts, less_than = _options(query, semantics, rng)
        cases.append((query, opts, less_than))
    return cases


# ---------------------------------------------------------------------------------------------------- count_prepared
@pytest.mark.gpu
@scaled(60 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 45), p=st.floats(0.05, 0.6), vl=st.integers(1, 4),
       el=st.integers(1, 3), directed=st.booleans(), k=st.integers(1, 24), qmax=st.integers(2, 7),
       rows=st.sampled_from([1, 4, 16, 64, 8192]), allowances=st.sampled_from(["unlimited", "mixed"]))
def test_count_prepared_matches_numpy_and_refuses_exactly_what_does_not_fit(gpu, small_limit, seed, n, p, vl, el,
                                                                           directed, k, qmax, rows, allowances):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, el, directed)
    cases = _random_cases(rng, data, k, vl, el, qmax)
    small_limit(rows)
    prepared = _prepare_all(gpu, data, cases)
    live = [(c, q) for c, q in zip(cases, prepared) if q is not None]
    allow = [UNLIMITED if allowances == "unlimited" else int(rng.choice([0, 1, 10, 100, 1000, UNLIMITED]))
             for _ in live]
    got = gpu.count_prepared([q for _, q in live], allow, BUDGET)
    assert len(got) == len(live)
    for ((query, opts, less_than), q), a, g in zip(live, allow, got):
        if _fits(gpu, data, q, a, rows):
            assert g == _numpy_count(data, query, opts, less_than), (query, opts, less_than)
        else:
            assert g is None
    for (query, opts, less_than), q in zip(cases, prepared):
        if q is None:
            assert _numpy_count(data, query, opts, less_than) == 0


@pytest.mark.gpu
@scaled(20 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), directed=st.booleans(), vl=st.integers(1, 3), k=st.integers(5, 60))
def test_batches_on_larger_graphs_hold_many_rows(gpu, seed, directed, vl, k):
    """Hundreds of rows a level (several rounds of a block a level) under the configured limit: every count equals
    NumPy's, and a query left out is one that does not fit."""
    rng = np.random.default_rng(seed)
    n, m = 300, 1500
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    pairs = np.unique(np.stack([src, dst], 1)[src != dst], axis=0).reshape(-1, 2)
    data = Graph.from_edges(pairs, n=n, edge_labels=rng.integers(0, 2, pairs.shape[0]),
                            vertex_labels=rng.integers(0, vl, n), directed=directed)
    cases = _random_cases(rng, data, k, vl, 2, 5)
    prepared = _prepare_all(gpu, data, cases)
    live = [(c, q) for c, q in zip(cases, prepared) if q is not None]
    got = gpu.count_prepared([q for _, q in live], [UNLIMITED] * len(live), BUDGET)
    rows = gpu.options.small_limit
    for ((query, opts, less_than), q), g in zip(live, got):
        if g is None:
            assert not _fits(gpu, data, q, UNLIMITED, rows)
        else:
            assert g == _numpy_count(data, query, opts, less_than)


@pytest.mark.gpu
def test_count_prepared_refuses_mixed_indexes_and_spanning_plans(gpu):
    rng = np.random.default_rng(5)
    a = random_graph(rng, 12, 0.4, 2, 1, False)
    b = random_graph(rng, 12, 0.4, 2, 1, False)
    query = Graph.from_edges(np.array([[0, 1]]), n=2, vertex_labels=[0, 1])
    pa = engine.prepare(gpu, a, query, MatchOptions())
    pb = engine.prepare(gpu, b, query, MatchOptions())
    assert pa is not None and pb is not None
    with pytest.raises(ValueError, match="one data index"):
        gpu.count_prepared([pa, pb], [UNLIMITED, UNLIMITED], BUDGET)
    with pytest.raises(ValueError, match="allowances"):
        gpu.count_prepared([pa], [], BUDGET)
    spanning = engine.prepare(gpu, a, query, MatchOptions(), constraints=Constraints(spanning_only=True))
    assert spanning is not None and spanning.plan.needs_partition
    with pytest.raises(ValueError, match="partition"):
        gpu.count_prepared([spanning], [UNLIMITED], BUDGET)
    assert gpu.count_prepared([], [], BUDGET) == []


# ---------------------------------------------------------------------------------------------------- candidates_of
@pytest.mark.gpu
@scaled(30 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), p=st.floats(0.05, 0.6), vl=st.integers(1, 5),
       el=st.integers(1, 3), directed=st.booleans(), k=st.integers(1, 30), homomorphism=st.booleans(),
       small=st.sampled_from([4, 8192]))
def test_candidates_of_equals_one_query_at_a_time(gpu, small_limit, seed, n, p, vl, el, directed, k, homomorphism,
                                                    small):
    """The same candidates as the NumPy filter, and the same bitsets (a small ``small-limit`` sends the queries
    with larger label pools through the one-query path)."""
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, el, directed)
    queries = [c[0] for c in _random_cases(rng, data, k, vl + 1, el, 6)]  # vl + 1: some labels have no vertex
    small_limit(small)
    gidx, ridx = gpu.index(data), REF.index(data)
    many = gpu.candidates_of(gidx, queries, homomorphism=homomorphism)
    assert len(many) == len(queries) and gpu.candidates_of(gidx, [], homomorphism=homomorphism) == []
    everyone = np.arange(data.n)
    for query, cands in zip(queries, many):
        want = REF.candidates(ridx, query, homomorphism=homomorphism)
        assert [gpu.to_host(c).tolist() for c in cands] == [c.tolist() for c in want]
        for c, w in zip(cands, want):
            assert np.array_equal(member(np, gpu.to_host(gpu.bitset(gidx, c)), everyone),
                                  member(np, REF.bitset(ridx, w), everyone))


def test_query_info_of_many_queries_is_each_querys_own():
    """The signatures of a batch are computed together: each query's filter input equals its own."""
    rng = np.random.default_rng(3)
    data = random_graph(rng, 30, 0.2, 3, 2, True)
    queries = [random_connected_query(rng, data, int(rng.integers(1, 8)), 0.3, 3, 2) for _ in range(40)]
    idx = types.SimpleNamespace(label_bounds={0: (0, 11), 2: (11, 30)})  # label 1: no vertex
    for homomorphism in (False, True):
        many = query_info(idx, queries, homomorphism)
        for query, (info, items) in zip(queries, many):
            own, own_items = query_info(idx, [query], homomorphism)[0]
            assert np.array_equal(info, own) and items == own_items
            sizes = [dict(idx.label_bounds).get(int(lab), (0, 0)) for lab in query.vertex_labels]
            assert items == sum(b - a for a, b in sizes)


# ---------------------------------------------------------------------------------------------------- packing
class _Table:
    """Stands for a device start table: its address and rows."""

    def __init__(self, ptr: int, rows: int):
        self.data = types.SimpleNamespace(ptr=ptr)
        self.shape = (rows,)


def test_pack_lays_out_what_descend_batch_reads():
    """Every query's header, level table, programs and bitset addresses where ``descend_batch`` reads them (step
    programs here are arbitrary words behind their length: packing does not read them)."""
    rng = np.random.default_rng(9)
    data = random_graph(rng, 25, 0.3, 2, 2, False)
    idx = REF.index(data)
    runs, tables, addrs, desc, desc_at, res_at, progs_of = [], [], [], [], [], [0], []
    for i in range(12):
        query = random_connected_query(rng, data, int(rng.integers(2, 8)), 0.4, 2, 2)
        p = engine.prepare(REF, idx, query, MatchOptions())
        if p is None:
            continue
        progs = [[int(k), *rng.integers(-5, 50, k - 1).tolist()] for k in rng.integers(2, 30, len(p.plan.steps))]
        words = descent_words(p.plan, progs)
        assert words is not None
        nq = len(p.plan.order)
        runs.append((i, nq, int(rng.integers(0, 1 << 40))))
        tables.append(_Table(int(rng.integers(1 << 20, 1 << 47)), int(rng.integers(1, 100))))
        addrs.append([int(x) for x in rng.integers(1 << 20, 1 << 47, nq - 1)])
        desc_at.append(len(desc))
        desc += words
        res_at.append(res_at[-1] + 4 + 2 * nq)
        progs_of.append((p.plan, progs))
    assert len(runs) > 3
    head, progs_at = _pack(runs, tables, addrs, desc, desc_at, res_at)
    assert head.dtype == np.int64 and head[0] == 0
    program_words = head[progs_at:].view(np.int32)
    for q, ((_, nq, allow), table, a, (plan, progs)) in enumerate(zip(runs, tables, addrs, progs_of)):
        h = head[1 + BATCH_HEAD * q:1 + BATCH_HEAD * (q + 1)]
        assert (h[0], h[1], h[2], h[5], h[6]) == (table.data.ptr, table.shape[0], nq, res_at[q], allow)
        assert head[h[4]:h[4] + nq - 1].view(np.uint64).tolist() == a
        words = program_words[h[3]:]
        for j, (step, prog) in enumerate(zip(plan.steps, progs)):
            first_col, first_label, at, bit = words[4 * j:4 * j + 4]
            assert (first_col, first_label, bit) == (step.first_col, step.first_label, j)
            assert words[at:at + len(prog)].tolist() == prog


def test_descent_words_refuse_a_program_longer_than_shared_memory():
    rng = np.random.default_rng(2)
    data = random_graph(rng, 10, 0.5, 1, 1, False)
    p = engine.prepare(REF, data, Graph.from_edges(np.array([[0, 1], [1, 2]]), n=3), MatchOptions())
    assert p is not None
    short = [3, 0, 0]
    s0, s1 = p.plan.steps
    assert descent_words(p.plan, [short, short]) == [s0.first_col, s0.first_label, 8, 0, s1.first_col, s1.first_label,
                                                     11, 1, *short, *short]
    assert descent_words(p.plan, [short, [PROG_MAX + 1] + [0] * PROG_MAX]) is None


# ---------------------------------------------------------------------------------------------------- HPRD
@pytest.mark.gpu
def test_hprd_200_as_one_batch_match_published_counts(gpu):
    d = common.hprd_dir()
    if d is None:
        pytest.skip("HPRD data not found (neither tests/data/hprd nor a shared copy)")
    data, queries, expected = common.hprd_suite(d)
    assert len(expected) == 200
    idx = gpu.index(data)
    names = list(expected)
    many = gpu.candidates_of(idx, [queries[k] for k in names], homomorphism=False)
    prepared = [engine.prepare(gpu, idx, queries[k], MatchOptions(), candidates=c) for k, c in zip(names, many)]
    assert all(p is not None for p in prepared)
    got = gpu.count_prepared(prepared, [UNLIMITED] * len(prepared), BUDGET)
    rows = gpu.options.small_limit
    for name, p, g in zip(names, prepared, got):
        if g is None:
            assert not _fits(gpu, data, p, UNLIMITED, rows), name
            g = sum(int(c) for c in engine.walk(gpu, p, gpu.default_budget(), count_only=True))
        assert g == expected[name], name
    # each query within its allowance: as many refused as would read more than it
    allow = [int(rng) for rng in np.random.default_rng(0).integers(0, 20000, len(prepared))]
    limited = gpu.count_prepared(prepared, allow, BUDGET)
    for name, p, a, g in zip(names, prepared, allow, limited):
        assert (g is not None) == _fits(gpu, data, p, a, rows), name
        assert g is None or g == expected[name], name
