"""The counting primitives of ``distsm.kernels.array_ops`` on both array modules, against NumPy's own.

The CuPy versions are ``join.cu`` kernels (see ``kernels/cupy/array_ops.py``); their tests carry the ``gpu`` marker
and compare fresh random inputs of many sizes (every CUB size class CuPy would have compiled for) with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

from distsm.kernels import get_backend
from distsm.kernels import array_ops as ops
from distsm.kernels.array_ops import bincount, count_true, stable_order

SIZES = [0, 1, 31, 100, 257, 1025, 5000, 70_001, 1 << 21]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.int16])
def test_bincount_on_numpy_is_numpys_with_the_given_length(dtype):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 50, size=1000).astype(dtype)
    w = rng.random(1000)
    assert np.array_equal(bincount(x, 64), np.bincount(x, minlength=64))
    assert np.array_equal(bincount(x, 64, w), np.bincount(x, w, minlength=64))
    assert bincount(x, 64).dtype == np.int64 and bincount(x, 64, w).dtype == np.float64
    assert bincount(x[:0], 5).tolist() == [0] * 5


def test_count_true_on_numpy_counts_true_entries():
    mask = np.random.default_rng(2).random(999) < 0.3
    assert count_true(mask) == int(mask.sum()) and type(count_true(mask)) is int
    assert count_true(mask[:0]) == 0
    assert count_true(mask.reshape(27, 37)) == int(mask.sum())


@pytest.mark.parametrize("bound", [1, 2, 3, 1000, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 1 << 20, (1 << 33) + 5])
@pytest.mark.parametrize("n", [0, 1, 2, 5000])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_stable_order_on_numpy_is_numpys_stable_argsort(bound, n, dtype):
    """Keys below ``bound`` take one 16-bit radix pass per 16 bits of it; ties keep their order (many repeat)."""
    if bound > np.iinfo(dtype).max:
        pytest.skip("keys of this bound do not fit the dtype")
    rng = np.random.default_rng(bound + n)
    keys = rng.integers(0, min(bound, 50) if n == 5000 and bound % 2 else bound, size=n).astype(dtype)
    got = stable_order(keys, bound)
    assert np.array_equal(got, np.argsort(keys, kind="stable")) and got.dtype.kind == "i"


@pytest.mark.gpu
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_bincount_on_cupy_matches_numpy(n, dtype):
    xp = get_backend("cupy").xp
    rng = np.random.default_rng(n)
    size = int(rng.integers(1, 3 * n + 2)) if dtype is not np.uint8 else 256
    x = rng.integers(0, size, size=n).astype(dtype)
    w = rng.integers(0, 1 << 20, size=n).astype(np.float64)  # integral weights: sums exact in any order
    got = bincount(xp.asarray(x), size)
    assert got.dtype == np.int64 and isinstance(got, xp.ndarray)
    assert np.array_equal(xp.asnumpy(got), np.bincount(x, minlength=size))
    weighted = bincount(xp.asarray(x), size, xp.asarray(w))
    assert weighted.dtype == np.float64
    assert np.array_equal(xp.asnumpy(weighted), np.bincount(x, w, minlength=size))


@pytest.mark.gpu
def test_bincount_on_cupy_takes_strided_keys_and_integer_weights():
    xp = get_backend("cupy").xp
    x = np.random.default_rng(3).integers(0, 40, size=(500, 3))
    c = np.arange(500, dtype=np.int64)
    assert np.array_equal(xp.asnumpy(bincount(xp.asarray(x)[:, 1], 40, xp.asarray(c))),
                          np.bincount(x[:, 1], c, minlength=40))


@pytest.mark.gpu
@pytest.mark.parametrize("n", SIZES)
def test_count_true_on_cupy_matches_numpy(n):
    xp = get_backend("cupy").xp
    rng = np.random.default_rng(n + 7)
    mask = rng.random(n) < rng.random()
    assert count_true(xp.asarray(mask)) == int(np.count_nonzero(mask))
    assert count_true(xp.asarray(mask)[::3]) == int(np.count_nonzero(mask[::3]))
    ints = rng.integers(0, 3, size=n)
    assert count_true(xp.asarray(ints)) == int(np.count_nonzero(ints))


def _runs(rng: np.random.Generator, rows: int, mean: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values and the ``(start, counts)`` of ``rows`` runs in them, some empty, some overlapping, in any order."""
    counts = rng.poisson(mean, rows).astype(np.int64)
    counts[rng.random(rows) < 0.2] = 0
    values = rng.integers(0, 1 << 30, size=int(counts.sum()) + 50).astype(np.int32)
    start = rng.integers(0, values.shape[0] - counts, size=rows) if rows else np.zeros(0, dtype=np.int64)
    return values, start.astype(np.int64), counts


@pytest.mark.parametrize("rows", [0, 1, 7, 1024])
@pytest.mark.parametrize("mean", [0.5, 13, 80])
def test_gather_runs_on_numpy_lays_the_runs_end_to_end_with_their_rows(rows, mean):
    """NumPy's repeat-based gather_runs against the runs sliced one by one, and against the generic one (expand and
    two gathers) that the CuPy backend runs."""
    from distsm.kernels.array_backend import ArrayBackend

    values, start, counts = _runs(np.random.default_rng(rows + int(mean)), rows, mean)
    row, x = get_backend("numpy").gather_runs(values, start, counts)
    assert row.tolist() == [r for r in range(rows) for _ in range(counts[r])]
    assert x.tolist() == [int(v) for r in range(rows) for v in values[start[r]:start[r] + counts[r]]]
    assert x.dtype == values.dtype
    generic = ArrayBackend(np).gather_runs(values, start, counts)
    assert np.array_equal(generic[0], row) and np.array_equal(generic[1], x)


@pytest.mark.gpu
@pytest.mark.parametrize("rows", [0, 1, 1024, 70_001])
def test_gather_runs_on_cupy_matches_numpy(rows):
    import cupy as cp

    values, start, counts = _runs(np.random.default_rng(rows), rows, 9)
    row, x = get_backend("cupy").gather_runs(cp.asarray(values), cp.asarray(start), cp.asarray(counts))
    want = get_backend("numpy").gather_runs(values, start, counts)
    assert np.array_equal(cp.asnumpy(row), want[0]) and np.array_equal(cp.asnumpy(x), want[1])


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 1000, 70_001])
def test_stable_order_on_cupy_matches_numpy(n):
    xp = get_backend("cupy").xp
    keys = np.random.default_rng(n).integers(0, 300, size=n).astype(np.int64)
    assert np.array_equal(xp.asnumpy(stable_order(xp.asarray(keys), 300)), np.argsort(keys, kind="stable"))


@pytest.mark.gpu
def test_upload_candidates_on_cupy_sets_each_vertex_bitset_row():
    """The sets of several query vertices uploaded in one copy: each is its own view, and each vertex's row of
    bits is the bitset that vertex alone would get."""
    import cupy as cp

    from oracles import random_graph

    rng = np.random.default_rng(5)
    backend = get_backend("cupy")
    idx = backend.index(random_graph(rng, 300, 0.05, 3, 1, False))
    sets = [np.sort(rng.choice(300, size=k, replace=False)) for k in (0, 1, 37, 300, 64)]
    up = backend.upload_candidates(idx, sets)
    for u, members in enumerate(sets):
        assert cp.asnumpy(up[u]).tolist() == members.tolist()
        alone = backend.bitset(idx, cp.asarray(members, dtype=cp.int32))
        assert np.array_equal(cp.asnumpy(up.rows[u]), cp.asnumpy(alone))


@pytest.mark.gpu
def test_upload_on_cupy_copies_every_array_as_it_was():
    """Small arrays go over together as views of one buffer, large ones alone: every one arrives with its dtype,
    shape and values."""
    import cupy as cp

    from distsm.kernels.cupy.base import PACKED_BYTES

    rng = np.random.default_rng(3)
    arrays = [rng.integers(-9, 9, size=7).astype(np.int64), np.zeros(0, dtype=np.int32),
              rng.integers(0, 2, size=13).astype(bool), rng.integers(0, 99, size=(5, 3)).astype(np.int32),
              rng.integers(0, 1 << 31, size=PACKED_BYTES // 4 + 3).astype(np.uint32),
              rng.integers(0, 1 << 31, size=9).astype(np.uint32)]
    for a, up in zip(arrays, get_backend("cupy").upload(arrays)):
        assert up.dtype == a.dtype and up.shape == a.shape and np.array_equal(cp.asnumpy(up), a)


# ------------------------------------------------------------------ the primitives of arrays.cu
SCAN_SIZES = [0, 1, 255, 4096, 4097, 70_001, 4096 * 4096 + 3]  # one tile, two, and a scan of the tiles' scans


def _ints(rng: np.random.Generator, n: int, dtype: type, zeros: float = 0.3) -> np.ndarray:
    x = rng.integers(-5, 1 << 20, size=n).astype(dtype)
    x[rng.random(n) < zeros] = 0
    return x


def test_the_numpy_primitives_against_plain_python():
    rng = np.random.default_rng(11)
    x = _ints(rng, 300, np.int32)
    running = 0
    sums = []
    for v in x.tolist():
        running += v
        sums.append(running)
    assert ops.cumsum(x).tolist() == sums and ops.cumsum(x).dtype == np.int64
    out = np.zeros(301, dtype=np.int64)
    ops.cumsum(x, out=out[1:])
    assert out.tolist() == [0, *sums]
    assert ops.flatnonzero(x).tolist() == [i for i, v in enumerate(x.tolist()) if v]
    counts = rng.integers(0, 4, size=50)
    row, rank = ops.expand(counts)
    assert list(zip(row.tolist(), rank.tolist())) == [(r, k) for r, c in enumerate(counts.tolist()) for k in range(c)]
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    pos = rng.integers(0, 50, size=40).astype(np.int32)
    start, length = ops.spans(offsets, offsets[1:], pos)
    assert start.tolist() == [int(offsets[p]) for p in pos] and length.tolist() == [int(counts[p]) for p in pos]
    assert ops.scaled_add(offsets[:40], 7, pos).tolist() == [int(o) * 7 + int(p) for o, p in zip(offsets, pos)]
    assert ops.search_right(offsets, int(offsets[20])) == int(np.sum(offsets <= offsets[20]))
    assert ops.weighted_take_sum(offsets, [pos, pos[:0], pos[:7]], [3, 5, 2]) == \
        3 * sum(int(offsets[p]) for p in pos) + 2 * sum(int(offsets[p]) for p in pos[:7])
    assert ops.cast(pos, np.int64).dtype == np.int64 and ops.cast(pos, np.int32) is pos


def _cupy():
    import cupy

    get_backend("cupy")  # registers the CuPy primitives
    return cupy


@pytest.mark.gpu
@pytest.mark.parametrize("n", SCAN_SIZES)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_scans_and_nonzero_positions_on_cupy_match_numpy(n, dtype):
    cp = _cupy()
    x = _ints(np.random.default_rng(n), n, dtype)
    d = cp.asarray(x)
    got = ops.cumsum(d)
    assert isinstance(got, cp.ndarray) and got.dtype == np.int64
    assert np.array_equal(cp.asnumpy(got), np.cumsum(x, dtype=np.int64))
    out = cp.zeros(n + 1, dtype=cp.int64)
    ops.cumsum(d, out=out[1:])
    assert np.array_equal(cp.asnumpy(out)[1:], np.cumsum(x, dtype=np.int64)) and int(out[0]) == 0
    wide = cp.asarray(x.astype(np.int64))
    assert np.array_equal(cp.asnumpy(ops.flatnonzero(wide)), np.flatnonzero(x))


@pytest.mark.gpu
@pytest.mark.parametrize("rows", [0, 1, 1000, 70_001])
def test_expand_spans_and_gathers_on_cupy_match_numpy(rows):
    cp = _cupy()
    rng = np.random.default_rng(rows + 3)
    counts = rng.poisson(6, rows).astype(np.int64)
    row, rank = ops.expand(cp.asarray(counts))
    want = ops.expand(counts)
    assert np.array_equal(cp.asnumpy(row), want[0]) and np.array_equal(cp.asnumpy(rank), want[1])
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    for dtype in (np.int32, np.int64):
        pos = rng.integers(0, max(rows, 1), size=rows).astype(dtype) if rows else np.zeros(0, dtype)
        d = cp.asarray(offsets)
        got = ops.spans(d, d[1:], cp.asarray(pos))
        exp = ops.spans(offsets, offsets[1:], pos)
        assert all(np.array_equal(cp.asnumpy(g), e) for g, e in zip(got, exp))
        for values in (offsets, offsets.astype(np.int32)):
            assert np.array_equal(cp.asnumpy(ops.take(cp.asarray(values), cp.asarray(pos))), values[pos])
    table = rng.integers(0, rows + 1, size=(rows, 3)).astype(np.int32)
    col = cp.asarray(table)[:, 1]  # a strided column indexes in place
    assert np.array_equal(cp.asnumpy(ops.take(cp.asarray(offsets), col)), offsets[table[:, 1]])
    b = rng.integers(0, 9, size=rows + 1).astype(np.int32)
    assert np.array_equal(cp.asnumpy(ops.scaled_add(cp.asarray(offsets), 13, cp.asarray(b))), offsets * 13 + b)
    assert np.array_equal(cp.asnumpy(ops.subtract(cp.asarray(offsets[1:]), cp.asarray(offsets[:-1]))), counts)
    assert ops.search_right(cp.asarray(offsets), int(offsets[rows // 2])) == \
        int(np.searchsorted(offsets, offsets[rows // 2], side="right"))
    idx = [rng.integers(0, rows + 1, size=k).astype(np.int32) for k in (0, 5, 3000)]
    assert ops.weighted_take_sum(cp.asarray(offsets), [cp.asarray(i) for i in idx], [4, 1, 3]) == \
        ops.weighted_take_sum(offsets, idx, [4, 1, 3]) == sum(w * int(offsets[i].sum()) for w, i in zip([4, 1, 3], idx))


@pytest.mark.gpu
def test_casts_and_fallbacks_on_cupy_match_numpy():
    """Casts by kernel keep shapes; a dtype or layout the kernels do not take goes to CuPy's own operation."""
    cp = _cupy()
    rng = np.random.default_rng(5)
    x = rng.integers(-(1 << 30), 1 << 30, size=(700, 3)).astype(np.int64)
    got = ops.cast(cp.asarray(x), np.int32)
    assert got.shape == x.shape and np.array_equal(cp.asnumpy(got), x.astype(np.int32))
    assert np.array_equal(cp.asnumpy(ops.cast(got, np.int64)), x)
    f = rng.random(100)
    assert np.allclose(cp.asnumpy(ops.cumsum(cp.asarray(f))), np.cumsum(f))
    u = rng.integers(0, 9, size=100).astype(np.uint32)
    assert np.array_equal(cp.asnumpy(ops.take(cp.asarray(u), cp.asarray(u.astype(np.int64)))), u[u])
    assert np.array_equal(cp.asnumpy(ops.flatnonzero(cp.asarray(u))), np.flatnonzero(u))


def test_the_numpy_ranking_primitives_against_plain_python():
    rng = np.random.default_rng(12)
    x = rng.integers(0, 4, size=200).astype(np.int32)
    assert ops.positions_of(x, 2).tolist() == [i for i, v in enumerate(x.tolist()) if v == 2]
    assert ops.arange_like(x, 5, 3, 4).tolist() == [3, 7, 11, 15, 19]
    order = rng.permutation(50)
    rank = ops.inverse_permutation(order)
    assert all(rank[order[i]] == i for i in range(50))
    values = rng.integers(0, 99, size=50).astype(np.int32)
    out = ops.scatter(order, values, 50)
    assert all(out[order[i]] == values[i] for i in range(50))
    some = ops.scatter(order[:10], values[:10], 50, fill=-1)
    assert sorted(some.tolist()) == sorted([-1] * 40 + values[:10].tolist())
    keys = rng.integers(0, 1 << 40, size=100).astype(np.int64)
    q, r = ops.divmod_keys(keys, 977)
    assert q.tolist() == [k // 977 for k in keys.tolist()] and r.tolist() == [k % 977 for k in keys.tolist()]
    assert r.dtype == np.int32 and ops.max_value(keys) == max(keys.tolist()) and ops.max_value(keys[:0]) == 0
    s = np.unique(rng.integers(0, 300, size=80)).astype(np.int32)
    probe = rng.integers(-5, 305, size=400).astype(np.int32)
    assert ops.count_members(s, probe) == sum(v in set(s.tolist()) for v in probe.tolist())
    ops.sort_inplace(keys)
    assert keys.tolist() == sorted(keys.tolist())


def _ranked_runs(rng: np.random.Generator, n: int, R: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of ``n * R`` runs and their entries, each run sorted (ranks below n)."""
    counts = rng.poisson(5, n * R)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    nbr = np.concatenate([np.sort(rng.integers(0, n, size=c)) for c in counts] or [np.zeros(0)]).astype(np.int32)
    return ptr, nbr


def test_run_upper_on_numpy_finds_each_runs_first_entry_above_its_vertex():
    rng = np.random.default_rng(13)
    ptr, nbr = _ranked_runs(rng, 40, 3)
    up = ops.run_upper(ptr, nbr, 3)
    for r in range(120):
        run = nbr[ptr[r]:ptr[r + 1]].tolist()
        assert up[r] == ptr[r] + sum(v <= r // 3 for v in run)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 1000, 70_001])
def test_ranking_primitives_on_cupy_match_numpy(n):
    cp = _cupy()
    rng = np.random.default_rng(n + 21)
    for dtype in (np.int32, np.int64):
        x = rng.integers(0, 5, size=n).astype(dtype)
        assert np.array_equal(cp.asnumpy(ops.positions_of(cp.asarray(x), 3)), ops.positions_of(x, 3))
        got = ops.arange_like(cp.asarray(x), n, 7, 3, dtype=dtype)
        assert got.dtype == dtype and np.array_equal(cp.asnumpy(got), ops.arange_like(x, n, 7, 3, dtype=dtype))
    order = rng.permutation(n).astype(np.int64)
    assert np.array_equal(cp.asnumpy(ops.inverse_permutation(cp.asarray(order))), ops.inverse_permutation(order))
    values = rng.integers(0, 1 << 30, size=n).astype(np.int32)
    assert np.array_equal(cp.asnumpy(ops.scatter(cp.asarray(order), cp.asarray(values), n)),
                          ops.scatter(order, values, n))
    part = order[: n // 3].astype(np.int32)
    assert np.array_equal(cp.asnumpy(ops.scatter(cp.asarray(part), cp.asarray(values[: n // 3]), n, fill=-1)),
                          ops.scatter(part, values[: n // 3], n, fill=-1))
    keys = rng.integers(0, 1 << 45, size=n).astype(np.int64)
    got_q, got_r = ops.divmod_keys(cp.asarray(keys), 100_003)
    want_q, want_r = ops.divmod_keys(keys, 100_003)
    assert np.array_equal(cp.asnumpy(got_q), want_q) and np.array_equal(cp.asnumpy(got_r), want_r)
    assert ops.max_value(cp.asarray(keys)) == ops.max_value(keys)
    s = np.unique(rng.integers(0, 3 * n + 1, size=n)).astype(np.int32)
    probe = rng.integers(-2, 3 * n + 3, size=2 * n).astype(np.int32)
    assert ops.count_members(cp.asarray(s), cp.asarray(probe)) == ops.count_members(s, probe)
    d = cp.asarray(keys)
    ops.sort_inplace(d)
    assert np.array_equal(cp.asnumpy(d), np.sort(keys))
    ptr, nbr = _ranked_runs(rng, max(n // 10, 1), 2)
    assert np.array_equal(cp.asnumpy(ops.run_upper(cp.asarray(ptr), cp.asarray(nbr), 2)), ops.run_upper(ptr, nbr, 2))


def test_the_numpy_wedge_and_walk_primitives_against_plain_python():
    rng = np.random.default_rng(14)
    x = rng.integers(0, 50, size=60).astype(np.int32)
    assert ops.affine(x, 3, -7, 0).tolist() == [max(3 * v - 7, 0) for v in x.tolist()]
    assert ops.affine(x, 3, -7).tolist() == [3 * v - 7 for v in x.tolist()]
    f = rng.random(20)
    assert np.allclose(ops.poly2(f, 1.0, 2.0, 3.0), 1 + 2 * f + 3 * f * f)
    keys = np.sort(rng.integers(0, 500, size=300)).astype(np.int64)
    base = rng.integers(0, 400, size=50).astype(np.int64)
    bound = rng.integers(0, 120, size=50).astype(np.int64)
    lo, length = ops.key_ranges(keys, base, bound, 10, 90)
    for i in range(50):
        inside = [j for j, k in enumerate(keys.tolist()) if base[i] + 10 <= k < base[i] + min(bound[i], 90)]
        assert length[i] == len(inside) and (not inside or lo[i] == inside[0])
    groups = np.unique(keys, return_counts=True)[1]
    assert ops.equal_pairs(keys) == sum(c * (c - 1) // 2 for c in groups.tolist()) and ops.equal_pairs(keys[:0]) == 0
    nbr = rng.integers(0, 40, size=400).astype(np.int32)
    weights = rng.integers(0, 1 << 40, size=40).astype(np.int64)
    labels = rng.integers(0, 2, size=40).astype(np.int32)
    start = rng.integers(0, 300, size=30).astype(np.int64)
    length = rng.integers(0, 100, size=30).astype(np.int64)
    for label in (-1, 1):
        want = 0
        for s, n in zip(start.tolist(), length.tolist()):
            w = [int(weights[v]) if label < 0 or labels[v] == label else 0 for v in nbr[s:s + n].tolist()]
            want += sum(w) ** 2 - sum(v * v for v in w)
        assert ops.walk_sums(nbr, start, length, weights, labels, label) == want % (1 << 64)
    out = np.zeros(5)
    ops.copy_into(out[1:4], np.ones(3))
    assert out.tolist() == [0, 1, 1, 1, 0]


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 1000, 70_001])
def test_wedge_and_walk_primitives_on_cupy_match_numpy(n):
    cp = _cupy()
    rng = np.random.default_rng(n + 31)
    f = rng.random(n)
    assert np.allclose(cp.asnumpy(ops.cumsum(cp.asarray(f))), np.cumsum(f))
    assert np.array_equal(cp.asnumpy(ops.take(cp.asarray(f), cp.asarray(np.arange(n)[::-1].copy()))), f[::-1])
    if n:
        ends = np.cumsum(f)
        value = float(ends[n // 2]) + 0.5
        assert ops.search_right(cp.asarray(ends), value) == ops.search_right(ends, value)
    for dtype in (np.int32, np.int64):
        x = rng.integers(0, 1 << 20, size=n).astype(dtype)
        assert np.array_equal(cp.asnumpy(ops.affine(cp.asarray(x), 5, -9, 3)), ops.affine(x, 5, -9, 3))
    assert np.allclose(cp.asnumpy(ops.poly2(cp.asarray(f), 1.0, 0.5, 2.0)), ops.poly2(f, 1.0, 0.5, 2.0))
    ints = rng.integers(0, 1 << 40, size=n).astype(np.int64)
    assert np.array_equal(cp.asnumpy(ops.cast(cp.asarray(ints), np.float64)), ints.astype(np.float64))
    keys = np.sort(rng.integers(0, 4 * n + 10, size=n)).astype(np.int64)
    base = rng.integers(0, 4 * n + 10, size=n).astype(np.int64)
    bound = rng.integers(0, 50, size=n).astype(np.int64)
    got = ops.key_ranges(cp.asarray(keys), cp.asarray(base), cp.asarray(bound), 3, 40)
    want = ops.key_ranges(keys, base, bound, 3, 40)
    assert all(np.array_equal(cp.asnumpy(g), w) for g, w in zip(got, want))
    assert ops.equal_pairs(cp.asarray(keys)) == ops.equal_pairs(keys)
    nbr = rng.integers(0, 1000, size=3 * n + 1).astype(np.int32)
    weights = rng.integers(0, 1 << 40, size=1000).astype(np.int64)
    labels = rng.integers(0, 3, size=1000).astype(np.int32)
    start = rng.integers(0, 2 * n + 1, size=n).astype(np.int64)
    length = rng.integers(0, min(n, 60) + 1, size=n).astype(np.int64)
    for label in (-1, 2):
        assert ops.walk_sums(cp.asarray(nbr), cp.asarray(start), cp.asarray(length), cp.asarray(weights),
                             cp.asarray(labels), label) == ops.walk_sums(nbr, start, length, weights, labels, label)
    out = cp.zeros(n + 2)
    ops.copy_into(out[1:n + 1], cp.asarray(f))
    assert np.array_equal(cp.asnumpy(out)[1:n + 1], f)


def test_the_numpy_task_primitives_against_plain_python():
    a = np.array([5, 1, 9], dtype=np.int64)
    b = np.array([3, 4, 9], dtype=np.int64)
    assert ops.minimum(a, b).tolist() == [3, 1, 9]
    work = np.cumsum([1.0, 2.0, 3.0, 4.0])
    assert ops.search_left(work, np.array([0.5, 3.0, 3.5, 11.0])).tolist() == [0, 1, 2, 4]
    assert ops.ones(a, 4).tolist() == [1.0] * 4


@pytest.mark.gpu
def test_task_primitives_on_cupy_match_numpy():
    cp = _cupy()
    rng = np.random.default_rng(41)
    a, b = (rng.integers(0, 1 << 40, size=5000).astype(np.int64) for _ in range(2))
    assert np.array_equal(cp.asnumpy(ops.minimum(cp.asarray(a), cp.asarray(b))), np.minimum(a, b))
    work = np.cumsum(rng.random(5000))
    values = rng.random(300) * work[-1]
    assert np.array_equal(ops.search_left(cp.asarray(work), values), np.searchsorted(work, values))
    assert np.array_equal(cp.asnumpy(ops.ones(cp.asarray(a), 777)), np.ones(777))
