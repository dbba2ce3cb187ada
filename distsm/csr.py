"""The labelled adjacency (CSR) of an edge list, as :class:`~distsm.graph.Graph` stores it, and the edge list without
its repeats: each edge an entry in both endpoints' rows, each row sorted by (effective label, neighbour), built from
packed int64 keys where they fit and by a lexicographic sort where they do not."""

from __future__ import annotations

import numpy as np

from distsm.errors import GraphError

VERTEX_DTYPE = np.int32
LABEL_DTYPE = np.int32
OFFSET_DTYPE = np.int64
_PARALLEL_EDGES = 1 << 20  # from here on the adjacency's keys are sorted in two parts at once

def csr_of(n: int, src: np.ndarray, dst: np.ndarray, labels: np.ndarray,
         directed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, neighbors, neighbor_labels)`` of the adjacency (see :class:`Graph`): each edge gives an entry in
    both endpoints' rows, each row sorted by (effective label, neighbour)."""
    packed = _sorted_entries(n, src, dst, labels, directed)
    return _csr_lexsort(n, src, dst, labels, directed) if packed is None else _unpacked(n, *packed)


def _sorted_entries(n: int, src: np.ndarray, dst: np.ndarray, labels: np.ndarray,
                    directed: bool) -> tuple[np.ndarray, int, int, int] | None:
    """Every adjacency entry packed into one int64, the row above bit ``shift`` and (effective label,
    neighbour) below it with a neighbour's ``vbits`` lowest and then the label's ``lbits``, sorted; ``(keys,
    shift, vbits, lbits)``, or None when an entry does not fit 63 bits.

    Sorting the keys themselves with NumPy's SIMD sort is several times faster than an argsort followed by
    gathers, or than a counting sort built from NumPy's stable (radix) argsorts.  ``shift`` is at least 32 so
    that the low 32 bits alone are an entry (see :func:`_unpacked`)."""
    m = int(src.shape[0])
    top = 2 * int(labels.max(initial=0)) + 1 if directed else int(labels.max(initial=0))
    vbits = max(n - 1, 1).bit_length()
    lbits = top.bit_length()
    shift = max(32, vbits + lbits)
    if vbits + shift > 63:
        return None
    key = np.empty(2 * m, np.int64)
    lo, hi = key[:m], key[m:]
    np.left_shift(src, shift, out=lo, dtype=np.int64)
    np.left_shift(dst, shift, out=hi, dtype=np.int64)
    if lbits:
        eff = np.left_shift(labels.astype(np.int64), vbits + int(directed))
        lo |= eff
        if directed:
            eff |= 1 << vbits  # the arc seen from its head: effective label 2*l + 1
        hi |= eff
        del eff
    lo |= dst
    hi |= src
    if m < _PARALLEL_EDGES:
        key.sort()
    else:
        # A selection (linear, in place) puts the m smallest keys first; the two halves then sort at once on two
        # cores (NumPy's sort releases the GIL), and together they are sorted.
        key.partition(m)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(np.ndarray.sort, (lo, hi)))
    return key, shift, vbits, lbits


def _unpacked(n: int, key: np.ndarray, shift: int, vbits: int, lbits: int,
              again: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjacency of :func:`_sorted_entries`' keys, without the keys at the sorted positions ``again``."""
    low = _entries(key, shift, again)
    if not lbits:  # the entry is the neighbour (below 2**31, so the view reads it as int32)
        neighbors = low.view(VERTEX_DTYPE) if low.dtype == np.uint32 else low.astype(VERTEX_DTYPE)
        neighbor_labels = np.zeros(neighbors.shape[0], LABEL_DTYPE)
    else:
        neighbors = (low & ((1 << vbits) - 1)).astype(VERTEX_DTYPE)
        neighbor_labels = (low >> vbits).astype(LABEL_DTYPE)
    del low
    # Rows are runs of the sorted keys: their starts come from binary searches, without a 2m-entry temporary.
    indptr = np.searchsorted(key, np.arange(n + 1, dtype=np.int64) << shift).astype(OFFSET_DTYPE)
    if again is not None:
        indptr -= np.searchsorted(again, indptr)  # the repeats removed before each row's start
    return indptr, neighbors, neighbor_labels


def _entries(key: np.ndarray, shift: int, again: np.ndarray | None) -> np.ndarray:
    """The low ``shift`` bits of the keys but those at the positions ``again``: ``uint32`` when ``shift == 32``
    (a wrapping cast: one pass, no int64 temporary), else ``int64``."""
    dtype = np.uint32 if shift == 32 else np.int64
    if again is None or again.size > 4096:  # many repeats: a mask is cheaper than a copy per run between them
        low = key.astype(np.uint32) if shift == 32 else key & ((1 << shift) - 1)
        return low if again is None else np.delete(low, again)
    out = np.empty(key.shape[0] - again.size, dtype)
    starts, ends = np.concatenate([[0], again + 1]), np.concatenate([again, [key.shape[0]]])
    for j, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):  # the runs between repeats, cast once
        part = out[a - j:b - j]
        if shift == 32:
            np.copyto(part, key[a:b], casting="unsafe")
        else:
            np.bitwise_and(key[a:b], (1 << shift) - 1, out=part)
    return out


def _csr_lexsort(n: int, src: np.ndarray, dst: np.ndarray, labels: np.ndarray,
                 directed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`csr_of` for graphs whose entries do not fit one int64 key (billions of vertices, many labels)."""
    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    eff = np.concatenate([2 * labels, 2 * labels + 1]) if directed else np.concatenate([labels, labels])
    order = np.lexsort((cols, eff, rows))
    indptr = np.zeros(n + 1, dtype=OFFSET_DTYPE)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, cols[order].astype(VERTEX_DTYPE), eff[order].astype(LABEL_DTYPE)


def without_repeats(n: int, src: np.ndarray, dst: np.ndarray, labels: np.ndarray, directed: bool,
                     dedupe: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                        tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """The edges without repeats (first copies kept, in input order; raises per policy) and their adjacency when
    it was built on the way (None: not yet)."""
    uniform = src.size == 0 or int(labels.min()) == int(labels.max())
    packed = _sorted_entries(n, src, dst, labels, directed) if uniform else None
    if packed is None:
        keep = _duplicate_filter(src, dst, labels, n, dedupe)
        csr = None
    else:
        # All labels equal: a repeated edge repeats both its entries, so the sorted entries show every repeat.
        key, shift, vbits, lbits = packed
        again = np.flatnonzero(key[1:] == key[:-1]) + 1
        keep = None
        if again.size:
            ent = key[again]
            row, nbr = ent >> shift, ent & ((1 << vbits) - 1)
            mine = ((ent >> vbits) & 1) == 0 if directed else row < nbr  # the entry in the source's row
            keep = _first_copies(src, dst, labels, n, row[mine] * n + nbr[mine], dedupe)
        csr = _unpacked(n, key, shift, vbits, lbits, again if again.size else None)
        del key, packed  # before the edges are copied: the keys are the largest array
    if keep is not None:
        src, dst = src[keep], dst[keep]  # boolean masks: a compress, faster than a gather
        # Labels all equal (the usual unlabelled zeros) need no copy, only fewer of them.
        labels = labels[:src.shape[0]] if uniform else labels[keep]
    return src, dst, labels, csr


def _duplicate_filter(src: np.ndarray, dst: np.ndarray, labels: np.ndarray, n: int,
                      dedupe: bool) -> np.ndarray | None:
    """Which edges to keep (a mask) after removing repeats, or None when there are none; raises per policy."""
    if src.size == 0:
        return None
    ordered = np.sort(src.astype(np.int64) * n + dst)
    again = ordered[1:] == ordered[:-1]
    return _first_copies(src, dst, labels, n, ordered[1:][again], dedupe) if again.any() else None


def _first_copies(src: np.ndarray, dst: np.ndarray, labels: np.ndarray, n: int, repeated: np.ndarray,
                  dedupe: bool) -> np.ndarray:
    """Which edges to keep (a boolean mask), given the sorted keys ``src * n + dst`` that occur more than once; raises a
    :class:`GraphError` naming the first repeat (without ``dedupe``) or the first repeat with another label."""
    import pandas as pd  # only graphs with repeated edges need it (``import distsm`` stays light)

    # Only the edges whose key repeats need the stable (input-order) treatment below; usually few of all.  A
    # table of the repeated keys' sources finds them in one gather, then a hash lookup (linear) keeps the exact.
    sources = np.zeros(n, bool)
    sources[repeated // n] = True
    cand = np.flatnonzero(sources[src])
    del sources
    ck = src[cand].astype(np.int64) * n + dst[cand]
    exact = pd.Series(ck, copy=False).isin(repeated).to_numpy()
    cand, ck = cand[exact], ck[exact]
    order = np.argsort(ck, kind="stable")
    sk = ck[order]
    rep = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    later = cand[order[rep]]
    earlier = cand[order[rep - 1]]
    if not dedupe:
        i = int(later.min())
        raise GraphError(f"duplicate edge {int(src[i])}-{int(dst[i])} (pass dedupe=True, or --dedupe to the "
                         "distsm command, to merge repeats)", edge_index=i)
    conflict = labels[later] != labels[earlier]
    if conflict.any():
        i = int(later[conflict].min())
        raise GraphError(f"edge {int(src[i])}-{int(dst[i])} is repeated with a different label", edge_index=i)
    keep = np.ones(src.size, bool)
    keep[later] = False
    return keep
