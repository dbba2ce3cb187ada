"""The CuPy backend against the NumPy reference (and brute force / known answers).

All tests carry the ``gpu`` marker; tests/conftest.py skips them when no CUDA device is present.  Random cases are
drawn fresh by Hypothesis on every run (well over 300 per run: see the ``scaled`` counts below; they scale with the
Hypothesis profile, ten times under ``--hypothesis-profile explore``, and further with ``DISTSM_GPU_EXAMPLES``).
Each random case also draws whether it runs the fused descent (all levels in one launch, or stopped early and
resumed), the single-block kernels level by level, or the multi-block path (``distsm.gpu.small-limit: 0``),
entry-parallel or tiered by row workload, so every path is checked against NumPy.
"""

from __future__ import annotations

import copy
import gc
import os
from pathlib import Path

import dask.config
import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, make_case, random_connected_query, random_graph, sampled_query

import distsm
from benchmarks import common
from distsm import caches
from distsm import Graph
from distsm.kernels import counting, engine, get_backend
from distsm.kernels.budget import join_entry_bytes
from distsm.kernels.counting import Count, Target
from distsm.kernels.explain import Explanation
from distsm.kernels.placement import Placement
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.array_backend import NumpyBackend
from distsm.kernels.vertex_sets import member
from distsm.config import gpu_options

pytestmark = pytest.mark.gpu

# Example counts scale with the Hypothesis profile (see hypothesis_settings.py) and, further, with this.
SCALE = float(os.environ.get("DISTSM_GPU_EXAMPLES", "1"))
CHECKS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def gpu():
    return get_backend("cupy")


#: The configured options when the tests start (defaults, or DASK_DISTSM__GPU__* from the environment).
CONFIGURED = gpu_options()


@pytest.fixture(autouse=True)
def _restore_knobs():
    saved = copy.deepcopy(dask.config.get("distsm.gpu"))
    yield
    dask.config.set({"distsm.gpu": saved})


def _knobs(**values) -> None:
    """Set ``distsm.gpu`` options until the test ends (``_restore_knobs`` puts them back)."""
    dask.config.set({f"distsm.gpu.{k.replace('_', '-')}": v for k, v in values.items()})


#: Which kernels a random case runs: the fused descent (every level in one launch; "fused-tiny" stops it after a
#: few entries so the level-by-level path resumes it), the single-block kernels level by level, or the
#: multi-block path entry-parallel or tiered (thresholds from the histogram, or tiny ones that send rows through
#: the block and split-row tiers too).
PATHS = st.sampled_from(["fused", "fused-tiny", "single", "entry", "tiered", "tiered-tiny"])


def _use_path(be, path: str) -> None:
    small = CONFIGURED.small_limit
    _knobs(small_limit={"fused": small, "single": small, "fused-tiny": 7}.get(path, 0),
           descend_limit={"fused": CONFIGURED.descend_limit, "fused-tiny": 7}.get(path, 0),
           fuse_levels=path.startswith("fused"), load_balance="tiered" if path.startswith("tiered") else "entry",
           tier_limits=[2, 5] if path == "tiered-tiny" else None)


def _read(path: Path) -> Graph:
    try:
        return distsm.read_graph(path)
    except (AttributeError, ImportError, NotImplementedError):  # pragma: no cover - formats not available
        vl, edges = {}, []
        for line in path.read_text().split("\n"):
            f = line.split()
            if not f:
                continue
            if f[0] == "v":
                vl[int(f[1])] = int(f[2])
            elif f[0] == "e":
                edges.append((int(f[1]), int(f[2])))
        return Graph.from_edges(np.array(edges, dtype=np.int64).reshape(-1, 2), n=len(vl),
                                vertex_labels=[vl[i] for i in range(len(vl))])


def same_set(a: np.ndarray, b: np.ndarray, n: int) -> bool:
    """Whether two host membership sets over ``n`` data vertices (bitsets or masks) hold the same vertices."""
    everyone = np.arange(n, dtype=np.int64)
    return np.array_equal(member(np, a, everyone), member(np, b, everyone))


def _hprd_dir() -> Path:
    d = common.hprd_dir()
    if d is None:
        pytest.skip("HPRD data not found (neither tests/data/hprd nor a shared copy)")
    return d


def _both(data, query, **opts):
    """(gpu count, gpu rows, numpy count, numpy rows) under the same options."""
    g_count = distsm.count(data, query, backend="cupy", **opts)
    g_rows = distsm.match(data, query, backend="cupy", **opts)
    n_count = distsm.count(data, query, backend="numpy", **opts)
    n_rows = distsm.match(data, query, backend="numpy", **opts)
    return g_count, g_rows, n_count, n_rows


def _edge_list_graph(rng, n, m, vl, el, directed) -> Graph:
    """About ``m`` random edges (no loops, no repeats) with ``el`` edge labels and ``vl`` vertex labels."""
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    pairs = np.unique(np.stack([src, dst], 1)[src != dst], axis=0).reshape(-1, 2)
    return Graph.from_edges(pairs, n=n, edge_labels=rng.integers(0, el, pairs.shape[0]),
                            vertex_labels=rng.integers(0, vl, n), directed=directed)


# ---------------------------------------------------------------------------------------------------- HPRD
def _hprd_expected(d: Path) -> dict[str, int]:
    expected = common.hprd_expected(d)
    assert len(expected) == 200
    return expected


def test_hprd_200_queries_match_numpy_and_known_answers(gpu):
    d = _hprd_dir()
    data = _read(d / "data_graph" / "HPRD.graph")
    expected = _hprd_expected(d)
    bad = []
    for i, (name, want) in enumerate(sorted(expected.items())):
        q = _read(d / "query_graph" / f"{name}.graph")
        got = distsm.count(data, q, backend="cupy")
        ref = distsm.count(data, q, backend="numpy")
        if not got == ref == want:
            bad.append((name, got, ref, want))
        if i % 20 == 0:  # listings too, on a tenth of them
            g_rows = distsm.match(data, q, backend="cupy")
            n_rows = distsm.match(data, q, backend="numpy")
            assert np.array_equal(g_rows, n_rows), name
    assert not bad, bad[:10]


# ---------------------------------------------------------------------------------------------------- random
@scaled(150 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), p=st.floats(0.1, 0.7), vl=st.integers(1, 4),
       el=st.integers(1, 3), directed=st.booleans(), qsize=st.integers(2, 6), sampled=st.booleans(),
       semantics=st.sampled_from(["plain", "induced", "homomorphism", "unique", "induced-unique"]),
       budget=st.sampled_from([None, 1, 3000, 100_000]), path=PATHS, staging=st.booleans())
def test_random_cases_match_numpy(gpu, seed, n, p, vl, el, directed, qsize, sampled, semantics, budget, path,
                                  staging):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    opts = dict(induced="induced" in semantics, homomorphism=semantics == "homomorphism",
                unique="unique" in semantics, memory_budget=budget)
    _use_path(gpu, path)
    # zero-copy staging of programs/counts (on by default) or device copies; DASK_DISTSM__GPU__PINNED=False
    # forbids staging
    _knobs(pinned=staging and CONFIGURED.pinned)
    g_count, g_rows, n_count, n_rows = _both(data, query, **opts)
    assert isinstance(g_count, int)
    assert g_count == n_count
    assert g_rows.shape[0] == g_count  # count == listing
    assert np.array_equal(g_rows, n_rows)  # same rows in the same order


@scaled(100 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 7), p=st.floats(0.2, 0.9), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(1, 4), sampled=st.booleans(),
       induced=st.booleans(), homomorphism=st.booleans(), budget=st.sampled_from([None, 1]),
       path=PATHS)
def test_random_cases_match_brute_force(gpu, seed, n, p, vl, el, directed, qsize, sampled, induced, homomorphism,
                                        budget, path):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    _use_path(gpu, path)
    expected = brute_force(data, query, induced=induced, homomorphism=homomorphism)
    opts = dict(induced=induced, homomorphism=homomorphism, memory_budget=budget, backend="cupy")
    assert distsm.count(data, query, **opts) == len(expected)
    rows = distsm.match(data, query, **opts)
    assert {tuple(int(x) for x in r) for r in rows} == expected
    assert rows.shape[0] == len(expected)


@scaled(50 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 25), p=st.floats(0.2, 0.8), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(2, 5), sampled=st.booleans(),
       limit=st.integers(0, 40), budget=st.sampled_from([None, 1, 5000]), path=PATHS)
def test_limit_lists_the_same_prefix_as_numpy(gpu, seed, n, p, vl, el, directed, qsize, sampled, limit, budget,
                                              path):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    _use_path(gpu, path)
    g = distsm.match(data, query, limit=limit, memory_budget=budget, backend="cupy")
    r = distsm.match(data, query, limit=limit, memory_budget=budget, backend="numpy")
    assert np.array_equal(g, r)
    assert g.shape[0] <= limit


@scaled(30 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(60, 400), deg=st.floats(2.0, 8.0), vl=st.integers(1, 6),
       el=st.integers(1, 40), directed=st.booleans(), qsize=st.integers(3, 8), induced=st.booleans(),
       path=PATHS, use_pcsr=st.booleans())
def test_larger_graphs_with_many_edge_labels(gpu, seed, n, deg, vl, el, directed, qsize, induced, path,
                                             use_pcsr):
    """Bigger tables (both kernel paths) and many effective labels (runs found by the PCSR hash, or by binary
    search when the hash is switched off)."""
    rng = np.random.default_rng(seed)
    _knobs(pcsr=use_pcsr)  # read when the (fresh) graph is indexed
    data = _edge_list_graph(rng, n, int(n * deg / 2), vl, el, directed)
    query = sampled_query(rng, data, qsize)
    if query is None:
        return
    _use_path(gpu, path)
    g_count, g_rows, n_count, n_rows = _both(data, query, induced=induced)
    assert g_count == n_count == g_rows.shape[0]
    assert np.array_equal(g_rows, n_rows)


@pytest.mark.parametrize("limits", [(4096, 1 << 20), (64, 1 << 20), (64, 300), None])
def test_tiered_write_cache_lists_hub_rows_like_numpy(gpu, limits):
    """Rows of thousands of entries with hundreds of survivors each, on warps (the write cache flushes many full
    lines per row), on whole blocks, split over blocks, or by the histogram's thresholds: listings equal NumPy's
    row for row, and the tiers that ran are the ones asked for."""
    rng = np.random.default_rng(11)
    n = 3000
    hubs = np.arange(3)
    src = np.concatenate([np.repeat(hubs, n - 3), rng.integers(3, n, 1000)])
    dst = np.concatenate([np.tile(np.arange(3, n), 3), rng.integers(3, n, 1000)])
    keep = src != dst
    pairs = np.unique(np.sort(np.stack([src[keep], dst[keep]], 1), axis=1), axis=0)
    data = Graph.from_edges(pairs, n=n, vertex_labels=(np.arange(n) % 2 == 0).astype(np.int64))
    query = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]), n=4, vertex_labels=[0, 1, 0, 1])
    _use_path(gpu, "tiered")
    _knobs(tier_limits=None if limits is None else list(limits))
    gpu.tier_stats = {}
    g_count, g_rows, n_count, n_rows = _both(data, query)
    assert g_count == n_count == g_rows.shape[0] > 100_000
    assert np.array_equal(g_rows, n_rows)
    st = gpu.tier_stats
    if limits == (4096, 1 << 20):
        assert st["warp_rows"] > 0 and st["block_rows"] == st["split_rows"] == 0
    elif limits == (64, 300):
        assert st["split_rows"] > 0 and st["split_pieces"] > st["split_rows"]


def test_tier_thresholds_follow_the_workload_histogram(gpu):
    skewed = np.concatenate([np.full(900, 3), np.full(90, 700), np.full(10, 200_000)])
    warp_max, block_max = gpu.tier_thresholds(skewed, int(skewed.sum()))
    assert 64 <= warp_max <= 1024 and block_max >= 4 * warp_max
    assert (skewed <= warp_max).mean() >= 0.9 and (skewed > block_max).sum() == 10
    wide = np.full(1000, 600)
    assert gpu.tier_thresholds(wide, int(wide.sum()))[0] >= 600  # uniform medium rows stay on warps


# ---------------------------------------------------------------------------------------------------- pieces
def _labelled_graph(seed=7, n=500, m=3000, el=50, directed=True) -> Graph:
    return _edge_list_graph(np.random.default_rng(seed), n, m, 5, el, directed)


def test_pcsr_hash_finds_every_run_and_nothing_else(gpu):
    data = _labelled_graph()
    idx = gpu.index(data)
    assert idx.num_labels > 1 and idx.stats["pcsr"]
    assert idx.stats["pcsr_build_ms"] >= 0
    keys = gpu.to_host(idx.run_keys)
    L = idx.num_labels
    v, lab = (keys // L).astype(np.int32), (keys % L).astype(np.int32)
    got = gpu.to_host(gpu.pcsr_lookup(idx, v, lab))
    assert np.array_equal(got, np.arange(keys.shape[0]))
    rng = np.random.default_rng(1)
    qv = rng.integers(0, data.n, 20000).astype(np.int32)
    ql = rng.integers(-2, L + 3, 20000).astype(np.int32)
    qk = qv.astype(np.int64) * L + ql
    pos = np.minimum(np.searchsorted(keys, qk), keys.shape[0] - 1)
    want = np.where((keys[pos] == qk) & (ql >= 0) & (ql < L), pos, -1)
    assert np.array_equal(gpu.to_host(gpu.pcsr_lookup(idx, qv, ql)), want)


def test_inherited_array_methods_work_under_cupy(gpu):
    data = _labelled_graph(seed=3, el=4, directed=False)
    ref = NumpyBackend()
    gi, ri = gpu.index(data), ref.index(data)
    rng = np.random.default_rng(2)
    x = rng.integers(0, data.n, 5000).astype(np.int32)
    y = rng.integers(0, data.n, 5000).astype(np.int32)
    xp = gpu.xp
    for label in range(gi.num_labels + 1):
        s, t = gpu.run_bounds(gi, xp.asarray(x), label)
        s0, t0 = ref.run_bounds(ri, x, label)
        assert np.array_equal(gpu.to_host(s), s0) and np.array_equal(gpu.to_host(t), t0)
        assert np.array_equal(gpu.to_host(gpu.has_edge(gi, xp.asarray(x), label, xp.asarray(y))),
                              ref.has_edge(ri, x, label, y))
    assert np.array_equal(gpu.to_host(gpu.pair_count(gi, xp.asarray(x), xp.asarray(y))), ref.pair_count(ri, x, y))
    members = xp.asarray(np.unique(y))
    assert same_set(gpu.to_host(gpu.bitset(gi, members)), ref.bitset(ri, np.unique(y)), data.n)
    q = sampled_query(rng, data, 5)
    for hom in (False, True):
        gc_ = gpu.candidates(gi, q, homomorphism=hom)
        rc = ref.candidates(ri, q, homomorphism=hom)
        assert [gpu.to_host(c).tolist() for c in gc_] == [c.tolist() for c in rc]
    restrict = {0: np.arange(0, data.n, 3)}
    gc_ = gpu.candidates(gi, q, homomorphism=False, restrict=restrict)
    rc = ref.candidates(ri, q, homomorphism=False, restrict=restrict)
    assert [gpu.to_host(c).tolist() for c in gc_] == [c.tolist() for c in rc]
    # bitsets precomputed by candidates() equal freshly built ones
    for c in gc_:
        assert same_set(gpu.to_host(gpu.bitset(gi, c)), ref.bitset(ri, gpu.to_host(c)), data.n)


def test_index_built_elsewhere_is_moved_to_the_device(gpu):
    """engine.prepare accepts a prebuilt (e.g. host or memory-mapped) DataIndex; the GPU backend adopts it."""
    from distsm.kernels.index import build_index
    from distsm.kernels.query_plan import MatchOptions

    data = _labelled_graph(seed=4, n=300, m=1500, el=3, directed=False)
    host_idx = build_index(data, np)
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = sampled_query(rng, data, 4)
        prepared = engine.prepare(gpu, host_idx, q, MatchOptions())
        got = 0 if prepared is None else sum(int(c) for c in engine.walk(gpu, prepared, 1 << 20, True))
        assert got == distsm.count(data, q, backend="numpy")


@pytest.mark.parametrize("el, directed", [(1, False), (3, False), (2, True)])
def test_the_device_index_is_the_host_twins_moved(gpu, el, directed):
    """The device index copies the host twin's (built once and kept on the graph, where the placement's host side
    finds it): every array equals a fresh host build, and one array held twice is copied once."""
    import dataclasses

    from distsm.kernels.index import build_index

    data = _labelled_graph(seed=5, n=400, m=2500, el=el, directed=directed)
    dev = gpu.index(data)
    assert NumpyBackend().index(data) is caches.site("indexes").get(data, "numpy")
    fresh = build_index(data, np)
    assert dev.nbytes >= fresh.nbytes  # the device's own structures come on top
    for f in dataclasses.fields(fresh):
        if f.name == "nbytes":
            continue
        want, got = getattr(fresh, f.name), getattr(dev, f.name)
        if f.name == "vertices_by_label":
            assert {k: gpu.to_host(v).tolist() for k, v in got.items()} == {k: v.tolist() for k, v in want.items()}
        elif isinstance(want, np.ndarray):
            assert np.array_equal(gpu.to_host(got), want), f.name
        else:
            assert got == want, f.name
    if data.num_effective_labels == 1:
        assert dev.pair_keys is dev.entry_keys


@scaled(40 * SCALE, suppress_health_check=CHECKS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(6, 30), p=st.floats(0.1, 0.5), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(2, 5), k=st.sampled_from([2, 3, 5]),
       strategy=st.sampled_from([None, "pbe", "global"]),
       semantics=st.sampled_from(["plain", "induced", "unique", "homomorphism"]),
       adjacency=st.sampled_from(["device", "host", "gather"]), budget=st.sampled_from([1 << 22, 3000]), path=PATHS,
       distribute=st.sampled_from(["auto", "whole", "sliced"]))
def test_partitioned_search_on_gpu_matches_numpy(gpu, seed, n, p, vl, el, directed, qsize, k, strategy, semantics,
                                                 adjacency, budget, path, distribute):
    """The spanning (inter-partition) filters run inside the GPU probe; GPU == NumPy for the same partitioning,
    with the whole graph resident, read in place from host memory, or gathered from it piece by piece, down to
    the partial matches the spanning searches produced (their work measure)."""
    from distsm import Partitioning, Semantics
    from distsm.partitioned import PartitionedMatcher
    from distsm.plan.distribution import Directions

    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, el, directed)
    query = sampled_query(rng, data, qsize) or random_connected_query(rng, data, qsize, 0.3, vl, el)
    sem = Semantics(induced=semantics == "induced", unique=semantics == "unique",
                    homomorphism=semantics == "homomorphism")
    _use_path(gpu, path)
    res = {}
    for name in ("cupy", "numpy"):
        m = PartitionedMatcher(data, Partitioning(k, "random", seed % 1000, adjacency), backend=get_backend(name))
        directions = Directions(strategy, distribute)
        r = m.count(query, sem, budget, directions)
        rows = [tuple(int(x) for x in row) for chunk in m.iter_matches(query, sem, budget, directions=directions)
                for row in chunk]
        res[name] = (r.count, r.inter, r.partial_matches, sorted(rows))
    assert res["cupy"] == res["numpy"]
    assert res["cupy"][0] == distsm.count(data, query, backend="numpy", **sem.as_dict())


@pytest.mark.parametrize("adjacency", ["host", "gather"])
def test_hprd_out_of_core_on_gpu_matches_known_answers(gpu, adjacency):
    """All 200 HPRD queries with the graph kept in host memory and k chosen from a budget of half its index."""
    from distsm import Partitioning, Semantics
    from distsm.kernels.index import estimate_index_bytes
    from distsm.partitioned import PartitionedMatcher
    from distsm.plan.distribution import Directions

    d = _hprd_dir()
    data = _read(d / "data_graph" / "HPRD.graph")
    budget = estimate_index_bytes(data.n, data.nnz, data.num_effective_labels > 1) // 2
    m = PartitionedMatcher(data, Partitioning("auto", adjacency=adjacency), backend=gpu, budget=budget)
    assert m.k >= 4
    wrong = {}
    for i, (name, want) in enumerate(sorted(_hprd_expected(d).items())):
        # Every query whole (the default), every tenth also by its partitioned plan (parts on the device).
        for directions in [Directions()] + [Directions(distribute="sliced")] * (i % 10 == 0):
            got = m.count(_read(d / "query_graph" / f"{name}.graph"), Semantics(), budget, directions).count
            if got != want:
                wrong[name, directions.distribute] = (got, want)
    assert not wrong
    assert adjacency == "host" or m.host.stats.bytes_h2d > 0
    assert m.residency.part_bytes_h2d > 0


def test_default_budget_is_half_the_free_device_memory(gpu):
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    b = gpu.default_budget()
    pool_free = cupy.get_default_memory_pool().free_bytes()
    assert 0 < b <= (free + pool_free) // 2 + 1


def _max_level_bytes(backend, data, query) -> tuple[int, int]:
    """(largest level output space in bytes, count) of an unbudgeted run, via an instrumented workload (level by
    level: a fused descent computes its levels' workloads inside its kernel)."""
    need = []
    orig = backend.workload
    _knobs(fuse_levels=False)  # restored by _restore_knobs

    def spy(idx, table, step):
        delta, offsets, total = orig(idx, table, step)
        need.append(total * join_entry_bytes(table.shape[1] + 1))
        return delta, offsets, total

    backend.workload = spy
    try:
        c = counting.count(backend, data, counting.Target(query, MatchOptions()), budget=backend.default_budget(),
                           path="general")
    finally:
        del backend.workload
    _knobs(fuse_levels=True)
    return max(need), c


def test_query_needing_ten_times_the_budget_finishes_with_the_right_count(gpu):
    rng = np.random.default_rng(11)
    data = random_graph(rng, 60, 0.25, 1, 1, False)
    path = Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)])
    need, c_free = _max_level_bytes(gpu, data, path)
    budget = need // 10
    assert budget > 0
    c_gpu = distsm.count(data, path, memory_budget=budget, backend="cupy")
    c_np = distsm.count(data, path, memory_budget=budget, backend="numpy")
    c_general = counting.count(gpu, data, counting.Target(path, MatchOptions()), budget=budget, path="general")
    assert c_gpu == c_free == c_np == c_general > 0
    rows = distsm.match(data, path, memory_budget=budget, backend="cupy", limit=5000)
    assert np.array_equal(rows, distsm.match(data, path, memory_budget=budget, backend="numpy", limit=5000))


def test_no_device_memory_growth_over_1000_queries(gpu):
    import cupy

    pool = cupy.get_default_memory_pool()
    rng = np.random.default_rng(5)
    graphs = [random_graph(rng, 40, 0.2, 3, 2, False), random_graph(rng, 30, 0.25, 2, 1, True),
              _labelled_graph(seed=9, n=200, m=900, el=6, directed=False)]
    queries = []
    for g in graphs:
        for _ in range(10):
            q = sampled_query(rng, g, int(rng.integers(2, 6)))
            if q is not None:
                queries.append((g, q))
    for g, q in queries:  # warm up: indexes (the join's split runs among them), compiled kernels
        distsm.count(g, q, backend="cupy")
        distsm.match(g, q, backend="cupy")
    gc.collect()
    baseline = pool.used_bytes()
    for i in range(1000):
        g, q = queries[i % len(queries)]
        kind = i % 5
        if kind == 0:
            distsm.count(g, q, backend="cupy")
        elif kind == 1:
            distsm.match(g, q, backend="cupy")
        elif kind == 2:
            distsm.count(g, q, induced=True, memory_budget=1, backend="cupy")
        elif kind == 3:
            distsm.match(g, q, unique=True, limit=3, backend="cupy")
        else:
            it = distsm.iter_matches(g, q, memory_budget=2000, backend="cupy")
            next(it, None)
            del it
    gc.collect()
    assert pool.used_bytes() == baseline


def test_host_resident_shares_the_memory_mapped_store_in_place(gpu, tmp_path):
    """``host_resident(in_place=True)`` page-locks the store's memory-mapped adjacency in place (no private copy) and
    the join reads it there: the same counts as the NumPy engine on the same index."""
    from distsm.partition import load_or_build

    rng = np.random.default_rng(4)
    data = random_graph(rng, 300, 0.05, 3, 1, False)
    store = load_or_build(data, 2, directory=tmp_path / "p", method="random")
    host = store.adjacency_index(mmap=True)
    shared = gpu.host_resident(host, in_place=True)
    assert gpu.shared_host_bytes >= int(host.nbr.nbytes) > 0
    numpy = get_backend("numpy")
    for size in (3, 4, 5):
        q = random_connected_query(rng, data, size, 0.3, 3, 1)
        want = counting.count(numpy, host, counting.Target(q, MatchOptions()), budget=1 << 26)
        assert counting.count(gpu, shared, counting.Target(q, MatchOptions()), budget=1 << 26) == want
        # With the memory map as its host twin, trials read the adjacency on the host, not over the bus.
        report = Explanation()
        stages = Count(Placement.of(gpu, shared, host), Target(q, MatchOptions()), 1 << 26, explain=report)
        assert stages.total() == want
        assert not any(runner == "cupy" for runner, _, _ in report.trials), report
        assert "on cupy" not in report.reason or report.path == "trailing", report.reason
    assert gpu.adjacency_over_bus(shared) and not gpu.adjacency_over_bus(gpu.index(data))
