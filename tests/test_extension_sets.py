"""Extension sets over the candidate-edge index (kernels/ce_join.py) against their definition, on random tables.

An extension set of a row is its first link's run less the entries another link's run lacks and those equal to the
row's image in a distinct column.  The join reads it with its lookups found afresh, the sampler with its own kept
per table, with or without position maps and bit matrices, and distinct columns are dropped by comparison or by
binary search depending on the sets' sizes: every way must give the definition's sets, in order.
"""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import make_case

from distsm.kernels import ce_join, get_backend, refinement
from distsm.kernels.array_backend import NUMPY
from distsm.kernels.ce_join import extension_set
from distsm.kernels.order import query_adjacency
from distsm.kernels.sampling import Sampler


def defined_sets(ce, table, ext):
    """``(row, x)`` by the definition, one row and one entry at a time."""

    def run(arc_key, v):
        arc = ce.arc(*arc_key)
        i = int(np.searchsorted(ce.candidates[arc_key[0]], v))
        return arc.values[arc.offsets[i]:arc.offsets[i + 1]].tolist()

    rows, xs = [], []
    for r, images in enumerate(table.tolist()):
        col, first = ext.links[0]
        kept = [x for x in run(first, images[col])
                if all(x in run(other, images[c]) for c, other in ext.links[1:])
                and all(x != images[c] for c in ext.distinct_cols)]
        rows += [r] * len(kept)
        xs += kept
    return rows, xs


def bfs_order(query):
    adj = query_adjacency(query)
    order = [0]
    for u in order:
        order += [w for w, _ in adj[u] if w not in order]
    return order


def cases(seed, n, p, vl, directed, qsize, lookups, rows):
    """``(ce, table, ext, sampler)`` for each level of a BFS order of a random case's query (none where refinement
    leaves a vertex without candidates)."""
    data, query = make_case(seed, n, p, vl, 1, directed, qsize, True)
    idx = NUMPY.index(data)
    ce = refinement.build(NUMPY, idx, query, NUMPY.candidates(idx, query, homomorphism=False),
                          **({} if lookups else {"lookup_bytes": 0}))
    assert (ce.positions is not None) == lookups
    if min(int(c.shape[0]) for c in ce.candidates) == 0:
        return
    rng = np.random.default_rng(seed)
    order = bfs_order(query)
    for k in range(1, query.n):
        # Rows of candidates of the placed vertices (not necessarily matches: a set is defined for any row).
        table = np.stack([rng.choice(ce.candidates[u], rows) for u in order[:k]], axis=1).astype(np.int32)
        sampler = Sampler(NUMPY, query, ce, homomorphism=False)
        ext, _ = sampler.extension(table, {u: i for i, u in enumerate(order[:k])}, order[k])
        yield ce, table, ext, sampler


CASES = dict(seed=st.integers(0, 2**32 - 1), n=st.integers(8, 40), p=st.floats(0.15, 0.6), vl=st.integers(1, 3),
             directed=st.booleans(), qsize=st.integers(3, 7), lookups=st.booleans(), rows=st.integers(1, 60))


@scaled(40)
@given(**CASES)
def test_extension_sets_are_their_definition(seed, n, p, vl, directed, qsize, lookups, rows):
    for ce, table, ext, sampler in cases(seed, n, p, vl, directed, qsize, lookups, rows):
        want = defined_sets(ce, table, ext)
        # The sampler's lookups twice: found on the first call, read back from its kept ones on the second.
        for got in (extension_set(NUMPY, ce, table, ext), extension_set(NUMPY, ce, table, ext, lookups=sampler),
                    extension_set(NUMPY, ce, table, ext, lookups=sampler)):
            assert (got[0].tolist(), got[1].tolist()) == want
        with patch.object(ce_join, "DISTINCT_SEARCH_MEAN", 0):
            got = extension_set(NUMPY, ce, table, ext)
            assert (got[0].tolist(), got[1].tolist()) == want
        # The sampler sizes the sets of one link without reading them, over partial matches (rows that repeat no
        # vertex): their mean size is the definition's.
        matches = table[[len(set(r)) == len(r) for r in table.tolist()]]
        if matches.shape[0]:
            mean, _, _ = sampler._scored_set(matches, ext, sampler.total(matches, *ext.links[0]) / matches.shape[0])
            assert mean == len(defined_sets(ce, matches, ext)[1]) / matches.shape[0]
        raw = extension_set(NUMPY, ce, table, ext, injective=False)
        assert (raw[0].tolist(), raw[1].tolist()) == defined_sets(ce, table, ce_join.Extension(ext.vertex, ext.links,
                                                                                                 ()))


@pytest.mark.gpu
@scaled(15)
@given(**CASES)
def test_extension_sets_on_a_device_are_their_definition(seed, n, p, vl, directed, qsize, lookups, rows):
    gpu = get_backend("cupy")
    for ce, table, ext, _ in cases(seed, n, p, vl, directed, qsize, lookups, rows):
        want = defined_sets(ce, table, ext)
        device_ce, device_table = ce.to(gpu.xp.asarray), gpu.xp.asarray(table)
        for search in (False, True):
            with patch.object(ce_join, "DISTINCT_SEARCH_MEAN", 0 if search else 1 << 62):
                row, x = extension_set(gpu, device_ce, device_table, ext)
            assert (gpu.to_host(row).tolist(), gpu.to_host(x).tolist()) == want
