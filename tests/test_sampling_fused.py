"""The sampler's fused levels (kernels/sampling.py's FusedLevels) against its array code.

A device samples a level's candidates by one pass (``score_sets``) and lays out the drawn walks by another
(``extend_rows`` with ``pick``); the estimates, walks and plans must be those of the array code.  Here the passes
are written out plainly over NumPy (a backend posing as a device), so the fused levels' own logic is checked on any
machine; the ``gpu`` test runs the same comparison with the CUDA passes of ``kernels/cuda/trailing.cu``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_trailing_sets, make_case

from distsm.kernels import get_backend, refinement
from distsm.kernels.array_backend import NumpyBackend
from distsm.kernels.count_plan import plan_count
from distsm.kernels.sampling import Sampler

SETTINGS = scaled(20)
NUMPY = get_backend("numpy")


def program_extensions(program):
    """Each extension of a fused program as ``(links, distinct)``: links ``(column, offsets, values, lookup)``."""
    words = [int(w) for w in program.words]
    out = []
    for t in range(words[1]):
        e = words[words[3 + t]:]
        links = [(e[2 + 2 * i], *program.arcs[e[3 + 2 * i]]) for i in range(e[1])]
        dist = e[2 + 2 * e[1]:][:1 + e[2 + 2 * e[1]]]
        out.append((links, dist[1:]))
    return out


def row_set(program, links, distinct, row):
    """One row's run length per link and its extension set (sorted)."""
    runs, members = [], None
    for col, offsets, values, lookup in links:
        v = int(row[col])
        p = int(lookup[v]) if program.positions else int(np.searchsorted(lookup, v))
        run = values[int(offsets[p]):int(offsets[p + 1])]
        runs.append(len(run))
        members = set(run.tolist()) if members is None else members & set(run.tolist())
    return runs, sorted(members - {int(row[c]) for c in distinct})


class PlainFused(NumpyBackend):
    """NumPy posing as a device whose fused passes are written out row by row."""

    name = "plain-fused"
    on_device = True

    def score_sets(self, program, table):
        exts = program_extensions(program)
        runs = np.zeros((program.links, table.shape[0]), dtype=np.int64)
        sizes = np.zeros((len(exts), table.shape[0]), dtype=np.int64)
        link = 0
        for t, (links, distinct) in enumerate(exts):
            for r, row in enumerate(table):
                lengths, members = row_set(program, links, distinct, row)
                runs[link:link + len(links), r] = lengths
                sizes[t, r] = len(members)
            link += len(links)
        return runs, sizes

    def extend_rows(self, program, table, pick=None):
        [(links, distinct)] = program_extensions(program)
        rows = [(r, x) for r, row in enumerate(table) for x in row_set(program, links, distinct, row)[1]]
        if pick is not None:
            rows = [rows[int(k)] for k in pick]
        out = np.empty((len(rows), table.shape[1] + 1), dtype=table.dtype)
        for i, (r, x) in enumerate(rows):
            out[i, :-1], out[i, -1] = table[r], x
        return out


def compare_samplers(backend, to_backend, seed, walks, homomorphism, scored_entries=None):
    """Sample every core order (the whole query and the cores its trailing sets leave, from two starts each) and
    a plan with the array code and on ``backend`` (the index moved there by ``to_backend``): the same orders,
    estimates, steps, work, walks, evaluations and plan."""
    from unittest.mock import patch

    from distsm.kernels import sampling

    data, query = make_case(seed, 24, 0.3, 2, 1, False, 5, True)
    idx = NUMPY.index(data)
    ce = refinement.build(NUMPY, idx, query, NUMPY.candidates(idx, query, homomorphism=homomorphism))
    if min(int(c.shape[0]) for c in ce.candidates) == 0:
        return
    everything = frozenset(range(query.n))
    cores = [everything] + [everything - t for t in brute_trailing_sets(query, 3)]
    host = Sampler(NUMPY, query, ce, homomorphism=homomorphism, walks=walks)
    fused = Sampler(backend, query, to_backend(ce), homomorphism=homomorphism, walks=walks)
    assert fused.fused is not None
    with patch.object(sampling, "SCORED_ENTRIES", scored_entries or sampling.SCORED_ENTRIES):
        for core in cores:
            for start in sorted(core)[:2]:
                a, b = host.core_order(core, start), fused.core_order(core, start)
                assert (a.order, a.estimates, a.steps, a.step_work) == (b.order, b.estimates, b.steps, b.step_work)
                assert [None if w is None else np.asarray(w).tolist() for w in a.walks] == \
                    [None if w is None else backend_list(backend, w) for w in b.walks]
        sizes = [int(c.shape[0]) for c in ce.candidates]
        assert plan_count(query, host, sizes, homomorphism) == plan_count(query, fused, sizes, homomorphism)
    assert host.evaluations == fused.evaluations


def backend_list(backend, a):
    return np.asarray(backend.to_host(a)).tolist()


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), walks=st.sampled_from([4, 16, 64]), homomorphism=st.booleans(),
       scored_entries=st.sampled_from([None, 8]))
def test_fused_levels_sample_as_the_array_code(seed, walks, homomorphism, scored_entries):
    """``scored_entries`` 8 makes the scored rows a stride of the walks (as large tables are scored)."""
    from distsm.kernels import sampling

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sampling, "SCORED_ROWS", 2)
        compare_samplers(PlainFused(), lambda ce: ce, seed, walks, homomorphism, scored_entries)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(12))
def test_fused_levels_on_the_device_sample_as_the_array_code(seed):
    from distsm.kernels import sampling

    cupy = get_backend("cupy")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sampling, "SCORED_ROWS", 2)
        for walks, homomorphism, scored in ((4, False, None), (64, False, 8), (16, True, None), (64, True, 8)):
            compare_samplers(cupy, lambda ce: ce.to_all(cupy.upload), seed, walks, homomorphism, scored)
