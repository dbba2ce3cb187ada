"""GSI vertex signatures: fixed-width neighbourhood summaries for candidate filtering.

Each vertex gets ``SIG_WORDS`` 32-bit words holding ``16 * SIG_WORDS`` buckets of 2 bits.  An adjacency entry
``(v, e, x)`` (effective edge label ``e`` to a neighbour with vertex label ``label(x)``) is hashed to one bucket
of ``v``; the bucket counts its entries as a thermometer code (``00`` none, ``01`` one, ``11`` two or more).  If
query vertex ``u`` maps to data vertex ``v`` injectively, ``v`` has at least as many entries in every bucket, so
``sig(v) & sig(u) == sig(u)`` is a necessary condition; hash collisions only weaken it.  Under homomorphism two
query neighbours may share one data neighbour, so query codes are clamped to presence (``01``).

Signatures are stored column-major (``sig[word, vertex]``) as in GSI, so a GPU warp reading one word for 32
consecutive vertices makes one coalesced access.  The functions take the array module ``xp`` (NumPy or CuPy).
"""

from __future__ import annotations

from typing import Any

from distsm.kernels.array_ops import bincount
from distsm.kernels.cuda_modules import SIG_WORDS

BUCKETS_PER_WORD = 16
_HASH_MUL = 0x9E3779B1
#: Graphs with at most this many (vertex, bucket) cells (queries) count them in a dense table; larger ones sort
#: their entries' cells.
DENSE_CELLS = 1 << 16


def bucket_of(xp: Any, eff_labels: Any, nbr_vertex_labels: Any) -> Any:
    """Bucket (0 .. 16*SIG_WORDS-1) of each (effective edge label, neighbour label) pair."""
    key = eff_labels.astype(xp.uint64) * xp.uint64(1_000_003) + nbr_vertex_labels.astype(xp.uint64)
    h = (key * xp.uint64(_HASH_MUL)) & xp.uint64(0xFFFFFFFF)
    h ^= h >> xp.uint64(15)
    return (h % xp.uint64(BUCKETS_PER_WORD * SIG_WORDS)).astype(xp.int64)


#: Graphs whose entries have at most this many distinct (effective edge label, neighbour label) pairs count each
#: pair's entries per vertex, a pass each, instead of sorting every entry's cell.
FEW_PAIRS = 4
FEW_PAIRS_TABLE = 1 << 16  # label pairs a graph may have for the pairs to be counted in a table


def _few_pairs(xp: Any, n: int, row_of_entry: Any, eff_labels: Any, nbr_vertex_labels: Any,
               presence_only: bool) -> Any:
    """:func:`signatures` of a graph with at most :data:`FEW_PAIRS` distinct label pairs (graphs with few or no
    labels: one bincount of the rows per pair, no sort), or None for other graphs."""
    if not int(eff_labels.shape[0]):
        return None
    base, pairs = int(nbr_vertex_labels.max()) + 1, int(eff_labels.max()) + 1
    if base * pairs > FEW_PAIRS_TABLE:
        return None
    pair = None
    present = [0]  # an unlabelled graph's one pair, (0, 0), without a pass to find it
    if base * pairs > 1:
        pair = eff_labels.astype(xp.int64) * base + nbr_vertex_labels
        present = xp.flatnonzero(bincount(pair, base * pairs)).tolist()
        if len(present) > FEW_PAIRS:
            return None
    sig = xp.zeros((SIG_WORDS, n), dtype=xp.uint32)
    for p in present:
        bucket = int(bucket_of(xp, xp.asarray([p // base]), xp.asarray([p % base]))[0])
        rows = row_of_entry if len(present) == 1 else row_of_entry[pair == p]
        counts = bincount(rows, n)
        code = xp.minimum(counts, 1 if presence_only else 2).astype(xp.uint32)
        code |= code >> 1  # thermometer code, as in signatures()
        sig[bucket // BUCKETS_PER_WORD] |= code << xp.uint32(2 * (bucket % BUCKETS_PER_WORD))
    return sig


def signatures(xp: Any, n: int, row_of_entry: Any, eff_labels: Any, nbr_vertex_labels: Any,
               presence_only: bool = False) -> Any:
    """Column-major signature table ``uint32[SIG_WORDS, n]`` of a graph given its adjacency entries.

    Args:
        xp: numpy or cupy.
        n: number of vertices.
        row_of_entry, eff_labels, nbr_vertex_labels: one value per adjacency entry.
        presence_only: clamp every bucket to ``01`` (for homomorphic query signatures).
    """
    nb = BUCKETS_PER_WORD * SIG_WORDS
    if n * nb > DENSE_CELLS:
        few = _few_pairs(xp, n, row_of_entry, eff_labels, nbr_vertex_labels, presence_only)
        if few is not None:
            return few
    cell = row_of_entry.astype(xp.int64) * nb + bucket_of(xp, eff_labels, nbr_vertex_labels)
    if n * nb <= DENSE_CELLS:
        # Every cell's count in one table: a third of the array operations of sorting cells, on query graphs.
        code = xp.minimum(bincount(cell, n * nb), 1 if presence_only else 2)
        code |= code >> 1  # thermometer code: 0, 1, 2 -> 00, 01, 11
        shift = xp.arange(0, 2 * BUCKETS_PER_WORD, 2, dtype=xp.uint32)
        words = (code.astype(xp.uint32).reshape(n, SIG_WORDS, BUCKETS_PER_WORD) << shift).sum(axis=2,
                                                                                             dtype=xp.uint32)
        return xp.ascontiguousarray(words.T)
    cells, counts = xp.unique(cell, return_counts=True)
    code = xp.where(counts >= 2, 3, 1) if not presence_only else xp.ones_like(counts)
    vertex = cells // nb
    bucket = cells % nb
    word = bucket // BUCKETS_PER_WORD
    shift = 2 * (bucket % BUCKETS_PER_WORD)
    # Codes of different buckets occupy disjoint bits, so a sum is an OR; float64 holds 32-bit sums exactly.
    value = (code.astype(xp.float64) * xp.exp2(shift.astype(xp.float64)))
    flat = bincount(word * n + vertex, SIG_WORDS * n, value)
    return flat.astype(xp.uint32).reshape(SIG_WORDS, n)


#: Rows of :func:`packed` signatures.
PACKED_WORDS = (SIG_WORDS + 1) // 2


def packed(xp: Any, sig: Any) -> Any:
    """``sig`` (``uint32[SIG_WORDS, n]``) with its words packed in pairs into ``uint64[PACKED_WORDS, n]`` (word
    ``2k`` low, ``2k + 1`` high): the coverage test ``(v & u) == u`` of a packed word is that of both halves."""
    wide = sig.astype(xp.uint64)
    if wide.shape[0] % 2:
        wide = xp.concatenate([wide, xp.zeros((1, wide.shape[1]), dtype=xp.uint64)])
    return wide[0::2] | (wide[1::2] << xp.uint64(32))
