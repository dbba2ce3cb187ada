"""Vertex sets as arrays (NumPy or CuPy): sorted id arrays restricted to allowed ids, bool masks and ``uint32``
bitsets for membership tests, and the label pools the candidate filter reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm import caches
from distsm.kernels.index import DataIndex
from distsm.kernels.query_plan import Allowed
from distsm.kernels.signature import packed

#: Up to this many data vertices the array backends keep candidate sets as bool masks (one gather per membership
#: test instead of four operations on a bitset word): at most 4 MiB per query vertex.
MASK_VERTICES = 1 << 22


def restricted(xp: Any, members: Any, allowed: Allowed) -> Any:
    """The entries of the sorted vertex array ``members`` that ``allowed`` admits (still sorted)."""
    if isinstance(allowed, range):
        if allowed.step != 1:
            raise ValueError("a range of allowed vertices must have step 1")
        lo, hi = xp.searchsorted(members, xp.asarray([allowed.start, allowed.stop], dtype=members.dtype)).tolist()
        return members[lo:hi]
    return members[admits(xp, members, allowed)]


def admits(xp: Any, x: Any, allowed: Allowed) -> Any:
    """Mask: ``allowed`` (a range of step 1 or a sorted array of vertex ids) admits ``x[i]``."""
    if isinstance(allowed, range):
        return (x >= allowed.start) & (x < allowed.stop)
    return xp.isin(x, xp.asarray(np.asarray(allowed, dtype=x.dtype)))


def member(xp: Any, bits: Any, x: Any) -> Any:
    """Mask: ``x[i]`` belongs to the set ``bits`` (a bool mask over the data vertices or a ``uint32`` bitset)."""
    if bits.dtype == bool:
        return bits[x]
    word = bits[x >> 5]
    return ((word >> (x & 31).astype(xp.uint32)) & xp.uint32(1)).astype(bool)


def bit_words(xp: Any, members: Any, nbits: int) -> Any:
    """A ``uint32`` bitset of ``nbits`` bits with the distinct bit numbers ``members`` set (as :func:`member`
    reads it)."""
    words = xp.zeros((nbits + 31) // 32, dtype=xp.uint32)
    m = members.astype(xp.int64)
    # Members are distinct, so adding disjoint bits per word equals OR-ing them.
    xp.add.at(words, m >> 5, xp.left_shift(xp.uint32(1), (m & 31).astype(xp.uint32)))
    return words


@dataclass(frozen=True)
class LabelPools:
    """The data vertices sorted by label, then by degree (largest first), then by id, with their signatures in the
    same order, so the filter finds the pool of each query vertex (its label, at least its degree) with one binary
    search and tests every pool in one vectorised pass (about 28 bytes per data vertex)."""

    members: Any      # int32[n]
    sig: Any          # uint64[PACKED_WORDS, n]: signature words packed in pairs (one test covers two words)
    keys: Any         # int64[n], ascending: label * (max_degree + 1) + max_degree - degree
    max_degree: int


_POOLS = caches.cache("label pools", "DataIndex -> its vertices sorted by label and degree (LabelPools)")


def label_pools(xp: Any, idx: DataIndex) -> LabelPools:
    """The :class:`LabelPools` of ``idx`` (built once per index, kept while it lives)."""
    cached = _POOLS.get(idx)
    if cached is None:
        top = int(idx.degrees.max()) if idx.n else 0
        keys = idx.vertex_labels.astype(xp.int64) * (top + 1) + (top - idx.degrees.astype(xp.int64))
        order = xp.argsort(keys, kind="stable")  # stable: ids ascending within a (label, degree) group
        cached = _POOLS.put(idx, LabelPools(order.astype(xp.int32), packed(xp, idx.sig)[:, order], keys[order], top))
    return cached
