"""Vertex signatures (kernels/signature.py) against their definition, counted entry by entry: the sorted cells of
a labelled graph and the per-pair counts of a graph with few label pairs give the same table."""

from __future__ import annotations

import numpy as np
import pytest

from distsm.kernels import signature
from distsm.kernels.signature import BUCKETS_PER_WORD, SIG_WORDS, bucket_of, signatures


def by_definition(n, rows, eff, nbr_labels, presence_only):
    """Each vertex's bucket counts, clamped and thermometer-coded, entry by entry."""
    counts = {}
    for r, b in zip(rows.tolist(), bucket_of(np, eff, nbr_labels).tolist()):
        counts[r, b] = counts.get((r, b), 0) + 1
    sig = np.zeros((SIG_WORDS, n), dtype=np.uint32)
    for (r, b), c in counts.items():
        code = 1 if presence_only or c == 1 else 3
        sig[b // BUCKETS_PER_WORD, r] |= np.uint32(code << (2 * (b % BUCKETS_PER_WORD)))
    return sig


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pairs", [(1, 1), (2, 1), (2, 2), (3, 4)])
@pytest.mark.parametrize("presence_only", [False, True])
def test_signatures_are_their_definition_with_few_or_many_label_pairs(seed, pairs, presence_only):
    rng = np.random.default_rng(seed)
    n = 1500 + seed * 200  # past DENSE_CELLS, where cells were sorted
    entries = int(rng.integers(0, 6 * n))
    rows = np.sort(rng.integers(0, n, entries))
    eff = rng.integers(0, pairs[0], entries)
    nbr_labels = rng.integers(0, pairs[1], entries)
    want = by_definition(n, rows, eff, nbr_labels, presence_only)
    assert np.array_equal(signatures(np, n, rows, eff, nbr_labels, presence_only), want)
    took = signature._few_pairs(np, n, rows, eff, nbr_labels, presence_only)
    assert (took is not None) == (0 < entries and len(set(zip(eff.tolist(), nbr_labels.tolist()))) <=
                                  signature.FEW_PAIRS)
