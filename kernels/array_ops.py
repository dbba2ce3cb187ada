"""Counting primitives the engine calls on arrays of either module (NumPy or CuPy), dispatched on the array's type.

The NumPy versions are here; the CuPy backend registers kernels of its own for device arrays
(:mod:`distsm.kernels.cupy.array_ops`), because CuPy's ``bincount`` and ``count_nonzero`` compile a reduction per
array-size class on first use (the first large graph paid seconds of NVRTC after a warm-up on small ones).
"""

from __future__ import annotations

import functools
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
