"""The candidate filter at array level (NumPy, or CuPy's arrays): each query vertex's pool of data vertices (its
label's, down to its degree) tested against its signature, for several queries at once.  The CuPy backend runs the
same filter in a kernel (``kernels/cupy/filter.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from distsm.graph import Graph
from distsm.kernels.array_ops import bincount
from distsm.kernels.backend import Backend
from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.index import DataIndex
from distsm.kernels.signature import packed, signatures
from distsm.kernels.vertex_sets import label_pools

#: A batch's filter tests the pools of at most about this many data vertices at once (more queries run in turn):
#: one pass over 200 small R-MAT queries' pools (tens of millions of entries) took twice as long as filtering the
#: queries one at a time, its temporaries out of every cache.
FILTER_CHUNK_ENTRIES = 1 << 22
#: Bytes one tested pool entry may hold while it is filtered: its position and owner (int64 each), the repeated
#: signature word, the masks, and the kept copies.
FILTER_ENTRY_BYTES = 48


def candidates_of(backend: Backend, idx: DataIndex, queries: Sequence[Graph],
                  homomorphism: bool, room: int | None = None) -> list[CandidateSets]:
    """The candidates of every vertex of several queries in one pass (a batch's filter), each query's as one
    :class:`~distsm.kernels.candidate_sets.CandidateSets` in ``backend``'s memory: the vertices of every query are
    filtered as those of one disjoint union, whose signatures are each vertex's own.  ``v`` is a candidate of ``u``
    iff labels agree, ``v``'s signature covers ``u``'s and (unless ``homomorphism``) ``deg(v) >= deg(u)``.
    Several queries are filtered in runs of at most :data:`FILTER_CHUNK_ENTRIES` pool entries, fewer where their
    temporaries (:data:`FILTER_ENTRY_BYTES` each) would pass ``room`` bytes."""
    xp = backend.xp
    if len(queries) == 1:
        [q] = queries
        nq, labels, qdeg, qlab = q.n, q.vertex_labels, q.degrees, np.asarray(q.neighbor_labels)
        qnbr = np.asarray(q.neighbors, np.int64)
    else:
        ends = np.cumsum([q.n for q in queries])
        nq = int(ends[-1])
        labels = np.concatenate([q.vertex_labels for q in queries])
        qdeg = np.concatenate([q.degrees for q in queries])
        qlab = np.concatenate([q.neighbor_labels for q in queries])
        # Each query's neighbour ids shifted by its first vertex's number in the union.
        shift = np.repeat(ends - [q.n for q in queries], [q.nnz for q in queries])
        qnbr = np.concatenate([q.neighbors for q in queries]).astype(np.int64) + shift
    qsig = packed(np, signatures(np, nq, np.arange(nq).repeat(qdeg), qlab, labels[qnbr],
                                 presence_only=homomorphism))
    pools = label_pools(xp, idx)
    # Each query vertex's pool is one key range: its label's vertices down to its own degree.
    top = pools.max_degree
    base = labels.astype(np.int64) * (top + 1)
    least = base + top - (0 if homomorphism else qdeg.astype(np.int64))
    bounds = backend.to_host(xp.searchsorted(pools.keys, xp.asarray(np.concatenate([base, least + 1]))))
    lo = bounds[:nq]
    sizes = np.maximum(bounds[nq:] - lo, 0)
    run = FILTER_CHUNK_ENTRIES if room is None else max(1, min(FILTER_CHUNK_ENTRIES, room // FILTER_ENTRY_BYTES))
    if len(queries) > 1 and int(sizes.sum()) > run:
        return _in_chunks(backend, idx, queries, sizes, homomorphism, run)
    owner = np.arange(nq).repeat(sizes)
    pos = np.arange(owner.shape[0], dtype=np.int64) + (lo - (sizes.cumsum() - sizes)).repeat(sizes)
    dpos, downer = xp.asarray(pos), xp.asarray(owner)
    # Word by word through take (row gathers of a 2-D array are several times slower on NumPy), compacting once;
    # words no query vertex uses pass by construction.
    keep = None
    for w in np.flatnonzero(qsig.any(axis=1)).tolist():
        need = xp.asarray(qsig[w].repeat(sizes))
        ok = (pools.sig[w].take(dpos) & need) == need
        keep = ok if keep is None else keep & ok
    if keep is not None:
        dpos, downer = dpos[keep], downer[keep]
    # Back to id order within each query vertex (owners stay grouped in order, so one sort of (owner, id) keys).
    key = xp.sort(downer * idx.n + pools.members.take(dpos), kind="stable")
    kept = (key % idx.n).astype(backend.vertex_dtype, copy=False)
    counts = backend.to_host(bincount(downer, nq)).tolist()
    out, at, first = [], 0, 0
    for q in queries:
        sizes = counts[at:at + q.n]
        total = sum(sizes)
        out.append(CandidateSets(kept[first:first + total], sizes))
        at += q.n
        first += total
    return out

def _in_chunks(backend: Backend, idx: DataIndex, queries: Sequence[Graph], sizes: np.ndarray,
               homomorphism: bool, run: int) -> list[CandidateSets]:
    """:func:`candidates_of` of ``queries`` (whose vertices' pools hold ``sizes`` data vertices) in runs of
    queries whose pools hold about ``run`` vertices together (a query alone where its own pool is larger)."""
    per_query = np.add.reduceat(sizes, np.cumsum([0] + [q.n for q in queries[:-1]]))
    cuts = np.searchsorted(np.cumsum(per_query), np.arange(1, 1 + int(per_query.sum()) // run) * run, side="right")
    bounds = [0, *np.unique(np.clip(cuts, 1, len(queries) - 1)).tolist(), len(queries)]
    return [c for a, b in zip(bounds[:-1], bounds[1:]) if b > a
            for c in backend.candidates_of(idx, queries[a:b], homomorphism=homomorphism, room=run * FILTER_ENTRY_BYTES)]
