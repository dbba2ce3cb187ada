"""The primitives of :mod:`distsm.kernels.array_ops` for CuPy arrays: :func:`bincount` and :func:`count_true` as
``join.cu`` kernels, the prefix sums, gathers, expansions, run bounds and casts as ``arrays.cu`` kernels (each
falls back to CuPy's own operation for a dtype or layout it does not take), :func:`stable_order` by CuPy's own
stable argsort (thrust, compiled into CuPy).

CuPy's ``bincount`` first checks ``x >= 0`` and takes ``max(x)``, and its ``count_nonzero``, ``any`` and ``all``
are CUB block reductions, which NVRTC compiles once per array-size class (block sizes 32 to 512), so a warm-up on
small graphs left them to the first large one (measurements: benchmarks/README.md, 'Measurements behind the engine's
settings').  These kernels are part of ``join.cu``, compiled once with
it; they need no synchronisation with the host, except for :func:`count_true`'s answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distsm.kernels import array_ops as ops
from distsm.kernels.cuda_modules import ARRAY_ITEMS, BLOCK
from distsm.kernels.cupy.launch import (AFFINE, CAST, COUNT_MEMBERS, COUNT_TRUE, DIVMOD, EQUAL_PAIRS, EXPAND,
                                        FILL_I32, FILL_U64, GATHER_RUNS, HISTOGRAM, IOTA, KEY_RANGES, Launcher,
                                        MAX_I64, MINIMUM, POLY2, RUN_UPPER, SCALED_ADD, SCAN_APPLY, SCAN_EQUAL,
                                        SCAN_NONZERO, SCAN_SUM, SCAN_SUMS, SCAN_TYPES, SCATTER_I32, SCATTER_IOTA,
                                        SCATTER_SELECTED, SEARCH_LEFT, SEARCH_RIGHT, SPANS, SUBTRACT, TAKE, TAKE_SUM,
                                        WALK_SUMS, WEIGHTED_HISTOGRAM)

_LAUNCHER = Launcher()


def register() -> None:
    """Register the CuPy implementations (idempotent; the backend calls it when it starts, CuPy imported)."""
    import cupy

    impls = globals()
    for name in _PRIMITIVES:
        getattr(ops, name).register(cupy.ndarray, impls[f"_{name}"])


#: The primitives of :mod:`distsm.kernels.array_ops` implemented here, each by the function of its name with a
#: leading underscore.
_PRIMITIVES = ("bincount", "count_true", "stable_order", "cumsum", "flatnonzero", "expand", "gather_runs", "take",
               "spans", "scaled_add", "subtract", "cast", "search_right", "weighted_take_sum", "positions_of",
               "arange_like", "inverse_permutation", "scatter", "divmod_keys", "run_upper", "max_value",
               "count_members", "sort_inplace", "affine", "poly2", "key_ranges", "equal_pairs", "walk_sums",
               "copy_into", "minimum", "search_left", "ones")


def _keys(x: Any) -> Any:
    import cupy

    if x.dtype not in (np.int32, np.int64):
        x = x.astype(np.int64)
    return cupy.ascontiguousarray(x)


def _bincount(x: Any, size: int, weights: Any = None) -> Any:
    import cupy

    keys = _keys(x)
    n = int(keys.shape[0])
    if weights is None:
        out = cupy.zeros(size, dtype=np.uint64)
        if n and size:
            _LAUNCHER.grid(HISTOGRAM[keys.dtype], n, x=keys, n=n, size=size, out=out)
        return out.view(np.int64)
    out = cupy.zeros(size, dtype=np.float64)
    if n and size:
        w = cupy.ascontiguousarray(weights, dtype=np.float64)
        _LAUNCHER.grid(WEIGHTED_HISTOGRAM[keys.dtype], n, x=keys, w=w, n=n, size=size, out=out)
    return out


def _count_true(mask: Any) -> int:
    import cupy

    flat = cupy.ascontiguousarray(mask).reshape(-1)
    if flat.dtype != np.bool_:
        flat = flat != 0
    n = int(flat.shape[0])
    if not n:
        return 0
    out = cupy.zeros(1, dtype=np.uint64)
    _LAUNCHER.grid(COUNT_TRUE, n, mask=flat.view(np.uint8), n=n, out=out)
    return int(out[0])


def _stable_order(keys: Any, bound: int) -> Any:
    """CuPy's stable argsort by thrust (compiled into CuPy), called directly on a copy of ``keys`` made by memcpy:
    ``cupy.argsort`` copies its input by an elementwise kernel, which NVRTC compiles on first use."""
    import cupy

    try:
        from cupy.cuda import thrust
    except ImportError:  # a CuPy built without thrust sorts however it can
        return cupy.argsort(keys, kind="stable")
    keys = cupy.ascontiguousarray(keys.reshape(-1))
    n = int(keys.shape[0])
    order = cupy.empty(n, dtype=np.intp)
    if n:
        data = cupy.empty_like(keys)
        data.data.copy_from_device_async(keys.data, keys.nbytes)
        thrust.argsort(keys.dtype, order.data.ptr, data.data.ptr, 0, (n,))  # sorts data in place
    return order


_TILE = BLOCK * ARRAY_ITEMS


def _flat(x: Any, dtypes: tuple[Any, ...]) -> bool:
    """Whether the kernels take ``x`` as it is: 1-D, contiguous, of one of ``dtypes``."""
    return x.ndim == 1 and x.dtype in dtypes and x.flags.c_contiguous


_INTS = (np.dtype(np.int32), np.dtype(np.int64))
_I64 = (np.dtype(np.int64),)


def _scan(x: Any, mode: int, value: int = 0, out: Any = None) -> Any:
    """Inclusive int64 prefix sums of ``x`` (``mode`` SCAN_SUM), or of its selection (SCAN_NONZERO: ``x != 0``,
    SCAN_EQUAL: ``x == value``): per tile of ``_TILE`` entries its sum, the tiles' sums scanned (recursively), then
    each tile scanned from its carry."""
    import cupy

    n = int(x.shape[0])
    out = cupy.empty(n, dtype=SCAN_TYPES[x.dtype]) if out is None else out
    if not n:
        return out
    tiles = -(-n // _TILE)
    carry = out  # not read by a single tile
    if tiles > 1:
        sums = cupy.empty(tiles, dtype=out.dtype)
        _LAUNCHER.launch(SCAN_SUMS[x.dtype], tiles, BLOCK, x=x, n=n, mode=mode, value=value, sums=sums)
        carry = _scan(sums, SCAN_SUM)
    _LAUNCHER.launch(SCAN_APPLY[x.dtype], tiles, BLOCK, x=x, n=n, mode=mode, value=value, carry=carry, out=out)
    return out


def _cumsum(x: Any, out: Any = None) -> Any:
    import cupy

    if not _flat(x, tuple(SCAN_TYPES)) or (out is not None and not _flat(out, (SCAN_TYPES[x.dtype],))):
        return cupy.cumsum(x, dtype=ops._sum_dtype(x), out=out)
    return _scan(x, SCAN_SUM, out=out)


def _selected(x: Any, mode: int, value: int) -> Any:
    """The int64 positions of the entries of ``x`` that ``mode`` and ``value`` select (see :func:`_scan`)."""
    import cupy

    n = int(x.shape[0])
    incl = _scan(x, mode, value)
    total = int(incl[-1]) if n else 0
    out = cupy.empty(total, dtype=np.int64)
    if total:
        _LAUNCHER.grid(SCATTER_SELECTED[x.dtype], n, x=x, n=n, mode=mode, value=value, incl=incl, out=out)
    return out


def _flatnonzero(x: Any) -> Any:
    import cupy

    return _selected(x, SCAN_NONZERO, 0) if _flat(x, _INTS) else cupy.flatnonzero(x)


def _positions_of(x: Any, value: int) -> Any:
    import cupy

    return _selected(x, SCAN_EQUAL, int(value)) if _flat(x, _INTS) else cupy.flatnonzero(x == value)


def _expand(counts: Any) -> tuple[Any, Any]:
    import cupy

    incl = _cumsum(counts)
    rows = int(incl.shape[0])
    total = int(incl[-1]) if rows else 0
    row, rank = cupy.empty(total, dtype=np.int64), cupy.empty(total, dtype=np.int64)
    if total:
        _LAUNCHER.grid(EXPAND, total, incl=incl, rows=rows, total=total, row=row, rank=rank)
    return row, rank


def _gather_runs(values: Any, start: Any, counts: Any) -> tuple[Any, Any]:
    import cupy

    row, rank = _expand(counts)
    if not _flat(values, (np.dtype(np.int32),)) or not _flat(start, _I64):
        return row, values[start[row] + rank]
    n = int(row.shape[0])
    out = cupy.empty(n, dtype=np.int32)
    if n:
        _LAUNCHER.grid(GATHER_RUNS, n, values=values, start=start, row=row, rank=rank, n=n, out=out)
    return row, out


def _take(a: Any, idx: Any) -> Any:
    import cupy

    kernel = TAKE.get((a.dtype, idx.dtype))
    step = idx.strides[0] // idx.itemsize if idx.ndim == 1 else 0
    if kernel is None or not _flat(a, (a.dtype,)) or step <= 0 or step * idx.itemsize != idx.strides[0]:
        return a[idx]
    n = int(idx.shape[0])
    out = cupy.empty(n, dtype=a.dtype)
    if n:
        _LAUNCHER.grid(kernel, n, a=a, idx=idx, stride=step, n=n, out=out)
    return out


def _spans(lo: Any, hi: Any, pos: Any) -> tuple[Any, Any]:
    import cupy

    if not _flat(lo, _I64) or not _flat(hi, _I64) or not _flat(pos, _INTS):
        return ops.spans.dispatch(np.ndarray)(lo, hi, pos)
    n = int(pos.shape[0])
    start, length = cupy.empty(n, dtype=np.int64), cupy.empty(n, dtype=np.int64)
    if n:
        _LAUNCHER.grid(SPANS[pos.dtype], n, lo=lo, hi=hi, pos=pos, n=n, start=start, length=length)
    return start, length


def _scaled_add(a: Any, scale: int, b: Any) -> Any:
    import cupy

    if not _flat(a, _I64) or not _flat(b, (np.dtype(np.int32),)) or a.shape != b.shape:
        return ops.scaled_add.dispatch(np.ndarray)(a, scale, b)
    n = int(a.shape[0])
    out = cupy.empty(n, dtype=np.int64)
    if n:
        _LAUNCHER.grid(SCALED_ADD, n, a=a, scale=scale, b=b, n=n, out=out)
    return out


def _subtract(a: Any, b: Any) -> Any:
    import cupy

    if not _flat(a, _I64) or not _flat(b, _I64) or a.shape != b.shape:
        return a - b
    n = int(a.shape[0])
    out = cupy.empty(n, dtype=np.int64)
    if n:
        _LAUNCHER.grid(SUBTRACT, n, a=a, b=b, n=n, out=out)
    return out


def _cast(x: Any, dtype: Any) -> Any:
    import cupy

    kernel = CAST.get((x.dtype, np.dtype(dtype)))
    if x.dtype == dtype or kernel is None or not x.flags.c_contiguous:
        return x.astype(dtype, copy=False)
    n = int(x.size)
    out = cupy.empty(x.shape, dtype=dtype)
    if n:
        _LAUNCHER.grid(kernel, n, x=x.reshape(-1), n=n, out=out.reshape(-1))
    return out


def _search_right(a: Any, value: float) -> int:
    import cupy

    kernel = SEARCH_RIGHT.get(a.dtype)
    if kernel is None or not _flat(a, (a.dtype,)):
        return int(cupy.searchsorted(a, cupy.asarray([value], dtype=a.dtype), side="right")[0])
    out = cupy.empty(1, dtype=np.int64)
    _LAUNCHER.launch(kernel, 1, 1, a=a, n=int(a.shape[0]), value=value, out=out)
    return int(out[0])


def _weighted_take_sum(a: Any, indexes: list[Any], weights: Any) -> int:
    import cupy

    if not _flat(a, _I64) or not all(_flat(i, (np.dtype(np.int32),)) for i in indexes):
        return sum(int(w) * int(a[i].sum()) for w, i in zip(weights, indexes))
    out = cupy.zeros(max(len(indexes), 1), dtype=np.uint64)
    for k, idx in enumerate(indexes):
        if idx.shape[0]:
            _LAUNCHER.grid(TAKE_SUM, int(idx.shape[0]), a=a, idx=idx, n=int(idx.shape[0]), out=out[k:k + 1])
    return sum(int(w) * int(v) for w, v in zip(weights, out.get()[:len(indexes)]))


def _arange_like(x: Any, n: int, start: int = 0, step: int = 1, dtype: Any = np.int64) -> Any:
    import cupy

    out = cupy.empty(n, dtype=dtype)
    if n:
        _LAUNCHER.grid(IOTA[out.dtype], n, n=n, start=start, step=step, out=out)
    return out


def _inverse_permutation(order: Any) -> Any:
    import cupy

    n = int(order.shape[0])
    rank = cupy.empty(n, dtype=np.int64)
    if n:
        _LAUNCHER.grid(SCATTER_IOTA, n, idx=_cast(cupy.ascontiguousarray(order), np.int64), n=n, out=rank)
    return rank


def _scatter(idx: Any, values: Any, size: int, fill: int | None = None) -> Any:
    import cupy

    out = cupy.empty(size, dtype=np.int32)
    if fill is not None and size:
        _LAUNCHER.grid(FILL_I32, size, out=out, n=size, value=fill)
    n = int(idx.shape[0])
    if n:
        _LAUNCHER.grid(SCATTER_I32, n, idx=_cast(cupy.ascontiguousarray(idx), np.int64),
                       values=_cast(cupy.ascontiguousarray(values), np.int32), n=n, out=out)
    return out


def _divmod_keys(keys: Any, d: int) -> tuple[Any, Any]:
    import cupy

    n = int(keys.shape[0])
    q, r = cupy.empty(n, dtype=np.int64), cupy.empty(n, dtype=np.int32)
    if n:
        _LAUNCHER.grid(DIVMOD, n, keys=keys, n=n, d=d, quot=q, rem=r)
    return q, r


def _run_upper(ptr: Any, nbr: Any, runs_per_vertex: int) -> Any:
    import cupy

    runs = int(ptr.shape[0]) - 1
    up = cupy.empty(max(runs, 0), dtype=np.int64)
    if runs > 0:
        _LAUNCHER.grid(RUN_UPPER, runs, ptr=ptr, nbr=_cast(nbr, np.int32), R=runs_per_vertex, nruns=runs, up=up)
    return up


def _max_value(x: Any) -> int:
    import cupy

    if not _flat(x, _I64):
        return int(x.max()) if x.shape[0] else 0
    out = cupy.zeros(1, dtype=np.uint64)
    if x.shape[0]:
        _LAUNCHER.grid(MAX_I64, int(x.shape[0]), x=x, n=int(x.shape[0]), out=out)
    return int(out[0])


def _count_members(s: Any, x: Any) -> int:
    import cupy

    i32 = (np.dtype(np.int32),)
    if not _flat(s, i32) or not _flat(x, i32):
        return ops.count_members.dispatch(np.ndarray)(s, x)
    out = cupy.zeros(1, dtype=np.uint64)
    if x.shape[0] and s.shape[0]:
        _LAUNCHER.grid(COUNT_MEMBERS, int(x.shape[0]), s=s, m=int(s.shape[0]), x=x, n=int(x.shape[0]), out=out)
    return int(out[0])


def _sort_inplace(keys: Any) -> None:
    """thrust's sort (compiled into CuPy) in place; ``ndarray.sort`` may copy by an elementwise kernel first."""
    try:
        from cupy.cuda import thrust
    except ImportError:
        keys.sort()
        return
    if keys.ndim != 1 or not keys.flags.c_contiguous:
        keys.sort()
    elif keys.shape[0] > 1:
        thrust.sort(keys.dtype, keys.data.ptr, 0, (int(keys.shape[0]),))


def _affine(x: Any, scale: int, offset: int, floor: int | None = None) -> Any:
    import cupy

    if not _flat(x, _INTS):
        return ops.affine.dispatch(np.ndarray)(x, scale, offset, floor)
    n = int(x.shape[0])
    out = cupy.empty(n, dtype=np.int64)
    if n:
        _LAUNCHER.grid(AFFINE[x.dtype], n, x=x, scale=scale, offset=offset,
                       floor=np.iinfo(np.int64).min if floor is None else floor, n=n, out=out)
    return out


def _poly2(x: Any, c0: float, c1: float, c2: float) -> Any:
    import cupy

    if not _flat(x, (np.dtype(np.float64),)):
        return ops.poly2.dispatch(np.ndarray)(x, c0, c1, c2)
    n = int(x.shape[0])
    out = cupy.empty(n, dtype=np.float64)
    if n:
        _LAUNCHER.grid(POLY2, n, x=x, c0=c0, c1=c1, c2=c2, n=n, out=out)
    return out


def _key_ranges(keys: Any, base: Any, bound: Any, c0: int, c1: int) -> tuple[Any, Any]:
    import cupy

    if not (_flat(keys, _I64) and _flat(base, _I64) and _flat(bound, _I64)):
        return ops.key_ranges.dispatch(np.ndarray)(keys, base, bound, c0, c1)
    n = int(base.shape[0])
    lo, length = cupy.empty(n, dtype=np.int64), cupy.empty(n, dtype=np.int64)
    if n:
        _LAUNCHER.grid(KEY_RANGES, n, keys=keys, m=int(keys.shape[0]), base=base, bound=bound, c0=c0, c1=c1, n=n,
                       lo=lo, length=length)
    return lo, length


def _equal_pairs(keys: Any) -> int:
    import cupy

    if not _flat(keys, _I64):
        return ops.equal_pairs.dispatch(np.ndarray)(keys)
    out = cupy.zeros(1, dtype=np.uint64)
    if keys.shape[0]:
        _LAUNCHER.grid(EQUAL_PAIRS, int(keys.shape[0]), keys=keys, n=int(keys.shape[0]), out=out)
    return int(out[0])


def _walk_sums(nbr: Any, start: Any, length: Any, weights: Any, vertex_labels: Any, label: int) -> int:
    import cupy

    rows = int(start.shape[0])
    out = cupy.zeros(1, dtype=np.uint64)
    if rows:
        _LAUNCHER.grid(WALK_SUMS, 32 * rows, nbr=nbr, start=start, length=length, weights=weights,
                       vlab=vertex_labels, label=label, rows=rows, out=out)  # a warp per row
    return int(out[0])


def _copy_into(dst: Any, src: Any) -> None:
    """A device-to-device copy (``dst[...] = src`` would compile an elementwise copy)."""
    if dst.flags.c_contiguous and src.flags.c_contiguous and dst.dtype == src.dtype and dst.shape == src.shape:
        if dst.nbytes:
            dst.data.copy_from_device_async(src.data, dst.nbytes)
    else:
        dst[...] = src


def _minimum(a: Any, b: Any) -> Any:
    import cupy

    if not (_flat(a, _I64) and _flat(b, _I64)) or a.shape != b.shape:
        return cupy.minimum(a, b)
    n = int(a.shape[0])
    out = cupy.empty(n, dtype=np.int64)
    if n:
        _LAUNCHER.grid(MINIMUM, n, a=a, b=b, n=n, out=out)
    return out


def _search_left(a: Any, values: np.ndarray) -> np.ndarray:
    import cupy

    v = cupy.asarray(np.asarray(values, dtype=np.float64))
    if not _flat(a, (np.dtype(np.float64),)):
        return cupy.asnumpy(cupy.searchsorted(a, v))
    k = int(v.shape[0])
    out = cupy.zeros(max(k, 1), dtype=np.int64)
    if k:
        _LAUNCHER.grid(SEARCH_LEFT, k, a=a, m=int(a.shape[0]), values=v, k=k, out=out)
    return cupy.asnumpy(out[:k])


def _ones(x: Any, n: int) -> Any:
    """Float64 ones by their bit pattern through the uint64 fill (``cupy.ones`` compiles a fill kernel)."""
    import cupy

    out = cupy.empty(n, dtype=np.float64)
    if n:
        _LAUNCHER.grid(FILL_U64, n, out=out.view(np.uint64), n=n, value=np.float64(1.0).view(np.uint64))
    return out
