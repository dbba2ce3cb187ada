"""The counting primitives of :mod:`distsm.kernels.array_ops` for CuPy arrays: :func:`bincount` and
:func:`count_true` as ``join.cu`` kernels, :func:`stable_order` by CuPy's own stable argsort.

CuPy's ``bincount`` first checks ``x >= 0`` and takes ``max(x)``, and its ``count_nonzero``, ``any`` and ``all``
are CUB block reductions, which NVRTC compiles once per array-size class (block sizes 32 to 512), so a warm-up on
small graphs left them to the first large one.  Measured on an H200 after ``distsm warmup``: the first heavy batch
on a 50M-edge R-MAT took 39.9 s against 7.9 s for the same batch again, about 30 s of it (py-spy) NVRTC compiling
the reductions of ``bincount`` and ``count_nonzero``.  These kernels are part of ``join.cu``, compiled once with
it; they need no synchronisation with the host, except for :func:`count_true`'s answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distsm.kernels.array_ops import bincount, count_true, stable_order
from distsm.kernels.cupy.launch import COUNT_TRUE, HISTOGRAM, WEIGHTED_HISTOGRAM, Launcher

_LAUNCHER = Launcher()


def register() -> None:
    """Register the CuPy implementations (idempotent; the backend calls it when it starts, CuPy imported)."""
    import cupy

    bincount.register(cupy.ndarray, _bincount)
    count_true.register(cupy.ndarray, _count_true)
    stable_order.register(cupy.ndarray, _stable_order)


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
    """CuPy's own stable argsort, on the device."""
    import cupy

    return cupy.argsort(keys, kind="stable")
