"""Array primitives the engine calls on arrays of either module (NumPy or CuPy), dispatched on the array's type,
and the row ranges of a table whose counts fit a cap (:func:`chunk_ranges`).

The NumPy versions are here; the CuPy backend registers kernels of its own for device arrays
(:mod:`distsm.kernels.cupy.array_ops`, compiled ahead in ``arrays.cu`` and ``join.cu``), because CuPy's own
operations compile a kernel per dtype combination (and its reductions per array-size class) on first use: a fresh
process paid seconds of NVRTC on its first query, and the first large graph after a warm-up on small ones did too.
Integer arrays are 1-D int32 or int64; other dtypes take CuPy's own operations on the device.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np


@functools.singledispatch
def bincount(x: Any, size: int, weights: Any = None) -> Any:
    """``numpy.bincount(x, weights, minlength=size)`` for values ``0 <= x < size``, which callers guarantee: int64
    counts, or float64 sums of ``weights``."""
    out = np.bincount(x, weights, minlength=size)
    return out[:size] if out.shape[0] > size else out


@functools.singledispatch
def count_true(mask: Any) -> int:
    """How many entries of the bool array ``mask`` are true."""
    return int(np.count_nonzero(mask))


@functools.singledispatch
def cumsum(x: Any, out: Any = None) -> Any:
    """The inclusive prefix sums of ``x`` (into ``out`` where given, of ``x``'s length): int64 for integers, as
    ``x`` for floats."""
    return np.cumsum(x, dtype=_sum_dtype(x), out=out)


def _sum_dtype(x: Any) -> Any:
    return np.int64 if x.dtype.kind in "biu" else None


@functools.singledispatch
def flatnonzero(x: Any) -> Any:
    """The int64 positions of ``x``'s non-zero entries, in order."""
    return np.flatnonzero(x)


@functools.singledispatch
def expand(counts: Any) -> tuple[Any, Any]:
    """``(row, rank)`` for ``counts[r]`` entries of each row ``r`` laid end to end: every entry's row and its rank
    in it (int64)."""
    counts = np.asarray(counts, dtype=np.int64)
    row = np.repeat(np.arange(counts.shape[0]), counts)
    return row, np.arange(row.shape[0], dtype=np.int64) - (np.cumsum(counts) - counts)[row]


@functools.singledispatch
def gather_runs(values: Any, start: Any, counts: Any) -> tuple[Any, Any]:
    """``(row, x)``: the runs ``values[start[r]:start[r] + counts[r]]`` laid end to end, each entry with its row
    ``r`` (as :func:`expand` numbers them)."""
    # Each entry's offset is its run's start less the entries before the run: one repeat of a per-row number
    # instead of two gathers by row (the sampler's extension sets of 1024 walks: 205 -> 116 us at 80 a run).
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    shift = np.repeat(np.asarray(start, dtype=np.int64) - (ends - counts), counts)
    row = np.repeat(np.arange(counts.shape[0]), counts)
    return row, values[shift + np.arange(shift.shape[0], dtype=np.int64)]


@functools.singledispatch
def take(a: Any, idx: Any) -> Any:
    """``a[idx]`` for a 1-D ``a`` and integer ``idx``."""
    return a.take(idx)  # NumPy's take converts int32 indexes faster than fancy indexing does


@functools.singledispatch
def spans(lo: Any, hi: Any, pos: Any) -> tuple[Any, Any]:
    """Start and length of the run ``[lo[p], hi[p])`` of each position ``p`` of ``pos`` (int64 ``lo`` and ``hi``;
    a CSR's ``offsets`` and ``offsets[1:]`` give its rows)."""
    start = lo[pos]
    return start, hi[pos] - start


@functools.singledispatch
def scaled_add(a: Any, scale: int, b: Any) -> Any:
    """``a * scale + b`` in int64: a composite key such as (run, label) or (row, vertex)."""
    return a * np.int64(scale) + b


@functools.singledispatch
def subtract(a: Any, b: Any) -> Any:
    """``a - b`` of two int64 arrays of one length."""
    return a - b


@functools.singledispatch
def cast(x: Any, dtype: Any) -> Any:
    """``x`` as ``dtype`` (``x`` itself where it has it)."""
    return x.astype(dtype, copy=False)


@functools.singledispatch
def search_right(a: Any, value: float) -> int:
    """How many entries of the sorted ``a`` are at most ``value`` (``searchsorted(a, value, side="right")``)."""
    return int(np.searchsorted(a, value, side="right"))


@functools.singledispatch
def weighted_take_sum(a: Any, indexes: list[Any], weights: Any) -> int:
    """``sum(weights[i] * sum(a[indexes[i]]))`` over the index arrays, as a Python int (one wait for the device in
    all; ``weights`` a list or host array): the entries a pass over every query arc scans, say (``a`` the degrees, an
    index array per query vertex's candidates, its degree the weight)."""
    if not indexes:
        return 0
    # One gather of them all: a sum per index array cost a 16-vertex query tens of microseconds of NumPy calls.
    each = np.repeat(np.asarray(weights).astype(np.int64, copy=False), [int(i.shape[0]) for i in indexes])
    return int((a[np.concatenate(indexes)].astype(np.int64) * each).sum())


@functools.singledispatch
def positions_of(x: Any, value: int) -> Any:
    """The int64 positions of ``x``'s entries equal to ``value``, in order."""
    return np.flatnonzero(x == value)


@functools.singledispatch
def arange_like(x: Any, n: int, start: int = 0, step: int = 1, dtype: Any = np.int64) -> Any:
    """``arange(start, start + n * step, step)`` as ``dtype`` (int32 or int64) in ``x``'s module."""
    return np.arange(start, start + n * step, step, dtype=dtype)[:n]


@functools.singledispatch
def inverse_permutation(order: Any) -> Any:
    """``rank`` with ``rank[order[i]] = i`` (int64) for a permutation ``order`` of ``0..n-1``."""
    rank = np.empty(order.shape[0], dtype=np.int64)
    rank[order] = np.arange(order.shape[0], dtype=np.int64)
    return rank


@functools.singledispatch
def scatter(idx: Any, values: Any, size: int, fill: int | None = None) -> Any:
    """An int32 array of ``size`` with ``out[idx[i]] = values[i]``, ``fill`` elsewhere (None: nothing written
    there, for an ``idx`` that is a permutation of ``0..size-1``)."""
    out = np.empty(size, dtype=np.int32) if fill is None else np.full(size, fill, dtype=np.int32)
    out[idx] = values
    return out


@functools.singledispatch
def divmod_keys(keys: Any, d: int) -> tuple[Any, Any]:
    """``(keys // d, keys % d)`` of non-negative int64 ``keys``: int64 quotients, int32 remainders (``d`` below
    2^31)."""
    q, r = np.divmod(keys, d)
    return q, r.astype(np.int32)


@functools.singledispatch
def run_upper(ptr: Any, nbr: Any, runs_per_vertex: int) -> Any:
    """Per run ``r`` of a ranked adjacency (``ptr``; the runs of vertex ``r // runs_per_vertex``, each sorted): the
    position of its first entry above that vertex."""
    runs = np.repeat(np.arange(ptr.shape[0] - 1, dtype=np.int64), np.diff(ptr))
    below = np.bincount(runs[nbr <= runs // runs_per_vertex], minlength=ptr.shape[0] - 1)
    return ptr[:-1] + below


@functools.singledispatch
def max_value(x: Any) -> int:
    """The largest entry of the non-negative int64 ``x`` (0 when empty)."""
    return int(x.max()) if x.shape[0] else 0


@functools.singledispatch
def count_members(s: Any, x: Any) -> int:
    """How many entries of ``x`` lie in the sorted ``s``."""
    if not s.shape[0]:
        return 0
    pos = np.minimum(np.searchsorted(s, x), s.shape[0] - 1)
    return int(np.count_nonzero(s[pos] == x))


@functools.singledispatch
def affine(x: Any, scale: int, offset: int, floor: int | None = None) -> Any:
    """``x * scale + offset`` in int64, at least ``floor`` where given."""
    out = x.astype(np.int64) * np.int64(scale) + np.int64(offset)
    return out if floor is None else np.maximum(out, floor)


@functools.singledispatch
def minimum(a: Any, b: Any) -> Any:
    """The smaller of ``a[i]`` and ``b[i]`` (int64 arrays of one length)."""
    return np.minimum(a, b)


@functools.singledispatch
def search_left(a: Any, values: np.ndarray) -> np.ndarray:
    """``searchsorted(a, values)`` of the sorted float64 ``a`` and host ``values``, on the host (int64)."""
    return np.searchsorted(a, values)


@functools.singledispatch
def poly2(x: Any, c0: float, c1: float, c2: float) -> Any:
    """``c0 + c1 * x + c2 * x * x`` of the float64 ``x``."""
    return c0 + x * (c1 + c2 * x)


@functools.singledispatch
def key_ranges(keys: Any, base: Any, bound: Any, c0: int, c1: int) -> tuple[Any, Any]:
    """Per ``i``, where the entries of the sorted int64 ``keys`` in ``[base[i] + c0, base[i] + min(bound[i], c1))``
    start, and how many there are (0 where the range is empty)."""
    lo = np.searchsorted(keys, base + c0)
    hi = np.searchsorted(keys, base + np.minimum(bound, c1))
    return lo, np.maximum(hi - lo, 0)


@functools.singledispatch
def equal_pairs(keys: Any) -> int:
    """The sum over groups of equal entries of the sorted ``keys`` of ``C(size, 2)``."""
    if not keys.shape[0]:
        return 0
    ends = np.flatnonzero(keys[1:] != keys[:-1])
    w = np.diff(np.concatenate(([-1], ends, [keys.shape[0] - 1])))
    return int((w * (w - 1) // 2).sum())


@functools.singledispatch
def walk_sums(nbr: Any, start: Any, length: Any, weights: Any, vertex_labels: Any, label: int) -> int:
    """The sum over rows ``r`` of ``s1^2 - s2`` modulo 2^64, ``s1`` and ``s2`` the sums of ``w = weights[x]`` and
    ``w^2`` over the run ``nbr[start[r]:start[r] + length[r]]`` (``w = 0`` where ``label >= 0`` and
    ``vertex_labels[x] != label``)."""
    _, x = gather_runs(nbr, start, length)
    value = weights[x].astype(np.uint64)
    if label >= 0:
        value *= (vertex_labels[x] == label).astype(np.uint64)
    firsts = np.concatenate(([0], np.cumsum(length)))
    zero = np.zeros(1, dtype=np.uint64)
    s1, s2 = (np.diff(np.concatenate((zero, np.cumsum(v, dtype=np.uint64)))[firsts]) for v in (value, value * value))
    return int((s1 * s1 - s2).sum(dtype=np.uint64))


@functools.singledispatch
def ones(x: Any, n: int) -> Any:
    """``n`` float64 ones in ``x``'s module."""
    return np.ones(n, dtype=np.float64)


@functools.singledispatch
def copy_into(dst: Any, src: Any) -> None:
    """``dst[...] = src`` for arrays of one shape and dtype."""
    dst[...] = src


@functools.singledispatch
def sort_inplace(keys: Any) -> None:
    """Sort the 1-D ``keys`` in place."""
    keys.sort()


#: Bits of one pass of :func:`stable_order`: NumPy sorts integers of at most 16 bits stably by radix sort in linear
#: time, and larger ones by timsort.
_DIGIT_BITS = 16


@functools.singledispatch
def stable_order(keys: Any, bound: int) -> Any:
    """The stable ``argsort`` of integer ``keys``, ``0 <= keys < bound``: one radix pass per 16 bits of ``bound``,
    least significant first.  Building the reverse arcs of a candidate-edge index by ``numpy.argsort(kind="stable")``
    on int64 was an eighth of 200 small R-MAT queries' time on NumPy (0.95 of 8.1 s); two 16-bit passes sort 500k
    keys below 2^17 in 9.5 ms against timsort's 39 ms."""
    if bound <= 1 or keys.shape[0] < 2:
        return np.arange(keys.shape[0], dtype=np.int64)
    mask = (1 << _DIGIT_BITS) - 1
    order = None
    for shift in range(0, max(int(bound - 1).bit_length(), 1), _DIGIT_BITS):
        digits = ((keys if order is None else keys[order]) >> shift) & mask
        step = np.argsort(digits.astype(np.uint16), kind="stable")
        order = step if order is None else order[step]
    return order


def chunk_ranges(xp: Any, counts: Any, cap: int) -> Iterator[tuple[int, int]]:
    """Ranges ``[a, b)`` of rows, in order, each the most rows from ``a`` on whose ``counts`` sum to at most
    ``cap`` (and at least one row).  The prefix sums stay on ``counts``' side and each range costs one search:
    copying a device table's per-row counts to the host and summing them there took most of a heavy core join."""
    rows = int(counts.shape[0])
    if not rows:
        return
    bounds = cumsum(counts)
    if int(bounds[-1]) <= cap:
        yield 0, rows
        return
    a = 0
    while a < rows:
        base = int(bounds[a - 1]) if a else 0
        b = max(search_right(bounds, base + cap), a + 1)
        yield a, b
        a = b
