"""The host-side steps every count runs before its join (filter, gate), checked against their definitions, and the
light-query gate checked against the other counting paths and the published HPRD answers.

The filter and the gate read structures cached per index (label pools, label-pair statistics) and gather in
bulk; these tests pin what they must compute whatever the layout.
"""

from unittest import mock

import hprd
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import brute_force, make_case

import distsm
from distsm.kernels import array_backend, engine, get_backend
from distsm.kernels.count_plan import degree_sums
from distsm.kernels.explain import Explanation
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.signature import signatures

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NUMPY = get_backend("numpy")

case_args = dict(
    seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), p=st.floats(0.1, 0.8), vl=st.integers(1, 4),
    el=st.integers(1, 3), directed=st.booleans(), qsize=st.integers(1, 6), sampled=st.booleans(),
)


def filter_by_definition(idx, query, homomorphism, restrict):
    """Each query vertex's candidates, vertex by vertex: same label, signature covering the query vertex's,
    degree at least as large (unless homomorphism), inside ``restrict`` where given."""
    rows = np.repeat(np.arange(query.n), query.degrees)
    qsig = signatures(np, query.n, rows, np.asarray(query.neighbor_labels),
                      query.vertex_labels[np.asarray(query.neighbors, np.int64)], presence_only=homomorphism)
    out = []
    for u in range(query.n):
        allowed = restrict.get(u)
        keep = []
        for v in range(idx.n):
            if idx.vertex_labels[v] != query.vertex_labels[u] or (allowed is not None and v not in allowed):
                continue
            if any(int(idx.sig[w, v]) & int(qsig[w, u]) != int(qsig[w, u]) for w in range(qsig.shape[0])):
                continue
            if not homomorphism and idx.degrees[v] < query.degrees[u]:
                continue
            keep.append(v)
        out.append(keep)
    return out


@SETTINGS
@given(**case_args, homomorphism=st.booleans(), restrict_seed=st.integers(0, 2**32 - 1),
       as_range=st.booleans())
def test_filter_matches_its_definition(seed, n, p, vl, el, directed, qsize, sampled, homomorphism, restrict_seed,
                                       as_range):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    idx = NUMPY.index(data)
    rng = np.random.default_rng(restrict_seed)
    restrict = {}
    for u in rng.choice(query.n, size=int(rng.integers(0, query.n + 1)), replace=False).tolist():
        lo = int(rng.integers(0, data.n + 1))
        hi = int(rng.integers(lo, data.n + 1))
        restrict[u] = range(lo, hi) if as_range else np.sort(rng.choice(data.n, size=hi - lo, replace=False))
    got = NUMPY.candidates(idx, query, homomorphism=homomorphism, restrict=restrict)
    sets = {u: set(np.asarray(a).tolist()) for u, a in restrict.items()}
    want = filter_by_definition(idx, query, homomorphism, sets)
    assert [np.asarray(c).tolist() for c in got] == want
    assert all(c.dtype == NUMPY.vertex_dtype for c in got)


@SETTINGS
@given(sizes=st.lists(st.integers(0, 6), min_size=1, max_size=8), seed=st.integers(0, 2**32 - 1))
def test_degree_sums_add_each_candidate_array(sizes, seed):
    rng = np.random.default_rng(seed)
    data, _ = make_case(seed, 10, 0.4, 1, 1, False, 2, False)
    idx = NUMPY.index(data)
    arrays = [np.sort(rng.choice(data.n, size=s, replace=False)).astype(np.int32) for s in sizes]
    want = [int(np.asarray(data.degrees)[a].sum()) for a in arrays]
    assert degree_sums(NUMPY, idx, arrays, sizes) == want


@pytest.fixture(scope="module")
def hprd_data():
    return distsm.read_graph(hprd.DATA)


@pytest.mark.parametrize("name", sorted(hprd.expected_counts())[3::20])
def test_light_hprd_queries_take_the_gate_and_agree_with_the_trailing_path(name, hprd_data):
    query = distsm.read_graph(hprd.query_path(name))
    report = Explanation()
    auto = engine.count(NUMPY, hprd_data, query, MatchOptions(), budget=1 << 28, explain=report)
    trailing = engine.count(NUMPY, hprd_data, query, MatchOptions(), budget=1 << 28, path="trailing")
    assert auto == trailing == hprd.expected_counts()[name]
    assert report.path == "general" and report.reason.startswith("light query"), report.reason


@SETTINGS
@given(**case_args)
def test_auto_path_counts_what_both_forced_paths_count(seed, n, p, vl, el, directed, qsize, sampled):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    opts = MatchOptions()
    counts = {path: engine.count(NUMPY, data, query, opts, budget=1 << 26, path=path)
              for path in engine.COUNT_PATHS}
    assert len(set(counts.values())) == 1, counts


@SETTINGS
@given(**case_args, words=st.booleans())
def test_membership_sets_as_masks_or_bitsets_give_the_same_counts(seed, n, p, vl, el, directed, qsize, sampled,
                                                                     words):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    idx = NUMPY.index(data)
    limit = -1 if words else array_backend.MASK_VERTICES
    with mock.patch.object(array_backend, "MASK_VERTICES", limit):
        rng = np.random.default_rng(seed)
        members = np.sort(rng.choice(data.n, size=int(rng.integers(0, data.n + 1)), replace=False))
        bits = NUMPY.bitset(idx, members.astype(np.int32))
        assert (bits.dtype == np.uint32) == words
        everyone = np.arange(data.n, dtype=np.int32)
        assert np.array_equal(array_backend.member(np, bits, everyone), np.isin(everyone, members))
        counts = {path: engine.count(NUMPY, data, query, MatchOptions(), budget=1 << 26, path=path)
                  for path in ("general", "trailing")}
    assert counts["general"] == counts["trailing"] == len(brute_force(data, query))
