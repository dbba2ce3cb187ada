"""The fused trailing count and core extension (``kernels/cuda/trailing.cu``) against NumPy and networkx.

Queries are random trees (the core) with up to six pendant trailing vertices, each linked to one to three core
vertices, so label groups of one to five same-label trailing vertices, core columns of the trailing label
(distinct columns) and multi-link trailing vertices all occur; homomorphisms, position maps and their binary
search fallback, and the exact recount of ranges whose int64 sums might overflow (the bound lowered) too.  The core
join's fused extension (``ce_extend_count``, ``ce_extend_pairs``, ``ce_gather_rows``) must give the array path's
rows in its order, sliced or not, and the trailing count over the core's last level as (row, vertex) pairs
(``trailing_count`` given them) what the counter counts over the rows.  Where no GPU is, plain-Python readings of the
kernels' programs check their layout and the algorithms against NumPy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from kernel_signatures import assert_described
from oracles import brute_force, networkx_matches, random_graph

from distsm.config import options
from distsm.graph import Graph
from distsm.kernels import counting, get_backend, refinement
from distsm.kernels.array_backend import NumpyBackend
from distsm.kernels.ce_join import CoreOrder, extension_set, fused_program, walk_core
from distsm.kernels.count_plan import plan_count
from distsm.kernels.cuda_modules import TRAILING_MODULE
from distsm.kernels.cupy import launch
from distsm.kernels.explain import Explanation
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.sampling import Sampler
from distsm.kernels.trailing import SAFE_BOUND, TrailingCounter

NUMPY = get_backend("numpy")
#: The fused count's two passes: walked runs and bit rows.
BITS = st.sampled_from(["never", "always"])


def test_the_kernel_is_described_in_signature_order_and_its_constants_come_from_python():
    assert_described(TRAILING_MODULE, launch.TRAILING_KERNELS)


def tree_with_leaves(rng: np.random.Generator, directed: bool, core: int, leaves: int,
                     labels: int) -> tuple[Graph, list[int]]:
    """A random tree of ``core`` vertices and ``leaves`` pendant vertices, each adjacent to one to three of them
    (at most five leaves share label 0, the rest take label 1); returns the query and its leaves."""
    edges = [(int(rng.integers(0, v)), v) for v in range(1, core)]
    vertex_labels = [int(rng.integers(0, labels)) for _ in range(core)]
    for i in range(leaves):
        leaf = core + i
        for c in rng.choice(core, size=int(rng.integers(1, min(core, 3) + 1)), replace=False):
            edges.append((int(c), leaf) if rng.random() < 0.5 or not directed else (leaf, int(c)))
        vertex_labels.append(0 if i < 5 else 1)
    return Graph.from_edges(edges, n=core + leaves, vertex_labels=vertex_labels, directed=directed), \
        list(range(core, core + leaves))


def planned_tables(seed: int, homomorphism: bool, positions: bool):
    """A random case's candidate-edge index, its plan with the leaves trailing, and its core tables (NumPy), or
    None when refinement leaves a query vertex without candidates."""
    rng = np.random.default_rng(seed)
    directed = bool(rng.random() < 0.3)
    # Sizes keep the NumPy reference quick: at most about 1e5 core rows (40 vertices of degree 14, four core levels).
    data = random_graph(rng, int(rng.integers(20, 41)), float(rng.uniform(0.15, 0.35)), 2, 1, directed)
    query, leaves = tree_with_leaves(rng, directed, int(rng.integers(2, 5)), int(rng.integers(1, 7)), 2)
    idx = NUMPY.index(data)
    cands = NUMPY.candidates(idx, query, homomorphism=homomorphism)
    if min(int(c.shape[0]) for c in cands) == 0:
        return None
    ce = refinement.build(NUMPY, idx, query, cands, lookup_bytes=(1 << 30) if positions else 0)
    sizes = [int(c.shape[0]) for c in ce.candidates]
    if min(sizes) == 0:
        return None
    assert (ce.positions is not None) == positions
    plan = plan_count(query, Sampler(NUMPY, query, ce, homomorphism=homomorphism), sizes, homomorphism,
                      frozenset(leaves))
    tables = list(walk_core(NUMPY, ce, CoreOrder(plan.core[0], plan.steps), 1 << 16, not homomorphism))
    return data, query, ce, plan, tables


def group_value(words: list[int], e: int, h: list[int]) -> int:
    """A label group's inclusion-exclusion sum (its entry at ``e``) from ``h[B]`` = the size of block ``B``'s
    intersection, as ``tr_group_value`` computes it."""
    k = words[e]
    at, acc = e + 3 + k, 0
    for _ in range(words[e + 2 + k]):
        coef, blocks = words[at], words[at + 2:at + 2 + words[at + 1]]
        acc += coef * math.prod(h[b] for b in blocks)
        at += 2 + len(blocks)
    return acc


def interpret(program, table) -> int:
    """``trailing.cu``'s count of ``table`` under ``program`` in plain Python, step for step (its membership masks,
    superset sums and terms), so the program's layout and the algorithm are checked where no GPU is."""
    words = [int(w) for w in program.words]
    trailing, groups = words[1], words[2]

    def in_set(t, x, row, runs):
        e = words[3 + t]
        links, dist = words[e + 1], words[e + 2 + 2 * words[e + 1]:]
        return all(x in runs[words[e] + link] for link in range(links)) and \
            all(row[c] != x for c in dist[1:1 + dist[0]])

    total = 0
    for row in table.tolist():
        runs = {}
        for t in range(trailing):
            e = words[3 + t]
            for link in range(words[e + 1]):
                col, arc = words[e + 2 + 2 * link], words[e + 3 + 2 * link]
                offsets, values, lookup = program.arcs[arc]
                p = int(lookup[row[col]]) if program.positions else int(np.searchsorted(lookup, row[col]))
                runs[words[e] + link] = [int(x) for x in values[int(offsets[p]):int(offsets[p + 1])]]

        value = 1
        for g in range(groups):
            e = words[3 + trailing + g]
            k, members = words[e], words[e + 2:e + 2 + words[e]]
            h = [0] * (1 << k)
            for i, t in enumerate(members):
                for x in runs[words[words[3 + t]]]:
                    if in_set(t, x, row, runs):
                        h[sum(1 << m for m in range(i, k) if in_set(members[m], x, row, runs))] += 1
            for b in range(1, k):
                for f in range(1, 1 << k):
                    if not f >> b & 1 and f & ((1 << b) - 1):
                        h[f] += h[f | 1 << b]
            value *= group_value(words, e, h)
        total += value
    return total


def interpret_bits(program, table) -> int:
    """``trailing_count_bits`` in plain Python: per label group, its members' raw sets as bit rows over the union of
    their candidates, block intersections by AND and popcount, then the images of distinct columns taken out of
    every block whose members all hold them raw and one of which lists the column (the kernel's masks)."""
    words = [int(w) for w in program.words]
    trailing, groups = words[1], words[2]
    entry = [words[3 + t] for t in range(trailing)]
    total = 0
    for row in table.tolist():
        value = 1
        for g in range(groups):
            e = words[3 + trailing + g]
            k, members = words[e], words[e + 2:e + 2 + words[e]]
            space = np.unique(np.concatenate([np.asarray(program.targets[t]) for t in members]))
            raw = []
            for t in members:
                bits = (1 << len(space)) - 1
                for link in range(words[entry[t] + 1]):
                    col, arc = words[entry[t] + 2 + 2 * link], words[entry[t] + 3 + 2 * link]
                    offsets, values, lookup = program.arcs[arc]
                    p = int(lookup[row[col]]) if program.positions else int(np.searchsorted(lookup, row[col]))
                    run = values[int(offsets[p]):int(offsets[p + 1])]
                    bits &= sum(1 << int(i) for i in np.searchsorted(space, run))
                raw.append(bits)
            h = [0] * (1 << k)
            for f in range(1, 1 << k):
                both = (1 << len(space)) - 1
                for i in range(k):
                    if f >> i & 1:
                        both &= raw[i]
                h[f] = bin(both).count("1")
            dist = [set(words[entry[t] + 3 + 2 * words[entry[t] + 1]:][:words[entry[t] + 2 + 2 * words[entry[t] + 1]]])
                    for t in members]
            for col in set().union(*dist):
                listed = sum(1 << i for i in range(k) if col in dist[i])
                at = int(np.searchsorted(space, row[col]))
                if at == len(space) or space[at] != row[col]:
                    continue
                held = sum(1 << i for i in range(k) if raw[i] >> at & 1)
                for f in range(1, 1 << k):
                    if not f & ~held and f & listed:
                        h[f] -= 1
            value *= group_value(words, e, h)
        total += value
    return total


@scaled(10)
@given(seed=st.integers(0, 2**32 - 1), homomorphism=st.booleans(), positions=st.booleans())
def test_the_kernels_program_counts_what_the_numpy_counter_counts(seed, homomorphism, positions):
    """Both passes of ``trailing.cu`` (walked runs and bit rows) as plain Python over the program."""
    case = planned_tables(seed, homomorphism, positions)
    if case is None:
        return
    _, _, ce, plan, tables = case
    counter = TrailingCounter(NUMPY, plan, ce, homomorphism=homomorphism, budget=1 << 24)
    for table in tables:
        expected = counter.count(table)
        assert interpret(counter.program, table) == expected
        assert interpret_bits(counter.program, table) == expected


def interpret_extension(program, table) -> np.ndarray:
    """``ce_extend_count``, ``ce_extend_pairs`` and ``ce_gather_rows`` in plain Python: each row followed by every
    entry of its first link's run that the other links' runs hold and its distinct columns do not."""
    words = [int(w) for w in program.words]
    e = words[3]
    links = words[e + 1]
    dist = words[e + 2 + 2 * links:]
    out = []
    for row in table.tolist():
        runs = []
        for link in range(links):
            col, arc = words[e + 2 + 2 * link], words[e + 3 + 2 * link]
            offsets, values, lookup = program.arcs[arc]
            p = int(lookup[row[col]]) if program.positions else int(np.searchsorted(lookup, row[col]))
            runs.append([int(x) for x in values[int(offsets[p]):int(offsets[p + 1])]])
        out += [row + [x] for x in runs[0]
                if all(x in run for run in runs[1:]) and all(row[c] != x for c in dist[1:1 + dist[0]])]
    return np.asarray(out, dtype=np.int64).reshape(len(out), table.shape[1] + 1)


def core_levels(ce, plan, injective: bool):
    """``(step, table before it, its extension by the array path)`` for every core step of ``plan`` (NumPy)."""
    table = ce.candidates[plan.core[0]][:, None]
    for ext in plan.steps:
        row, x = extension_set(NUMPY, ce, table, ext, injective)
        grown = np.concatenate([table[row], x[:, None].astype(table.dtype)], axis=1)
        yield ext, table, grown
        table = grown


def before_last(ce, plan, homomorphism: bool) -> list:
    """The core tables without the core's last column (what a count that extends the last level reads), NumPy."""
    return list(walk_core(NUMPY, ce, CoreOrder(plan.core[0], plan.steps[:-1]), 1 << 16, not homomorphism))


class UnfusedDevice(NumpyBackend):
    """A device without fused passes, as a CuPy backend is past its kernels' fixed sizes: its extended counts cut
    chunks for (row, vertex) pairs, then write rows, each piece within the budget over the rows' width."""

    on_device = True


@scaled(10)
@given(seed=st.integers(0, 2**32 - 1), homomorphism=st.booleans(), positions=st.booleans(),
       budget=st.sampled_from([1 << 10, 1 << 20, 1 << 24]), device=st.booleans())
def test_a_count_that_extends_the_last_level_counts_the_whole_core(seed, homomorphism, positions, budget, device):
    case = planned_tables(seed, homomorphism, positions)
    if case is None or not case[3].steps:
        return
    _, _, ce, plan, tables = case
    reference = TrailingCounter(NUMPY, plan, ce, homomorphism=homomorphism, budget=1 << 24)
    counter = TrailingCounter(UnfusedDevice() if device else NUMPY, plan, ce, homomorphism=homomorphism,
                              budget=budget)
    assert sum(counter.count(t, extend=True) for t in before_last(ce, plan, homomorphism)) == \
        sum(reference.count(t) for t in tables)
    assert counter.extended_rows == sum(int(t.shape[0]) for t in tables)


@scaled(10)
@given(seed=st.integers(0, 2**32 - 1), homomorphism=st.booleans(), positions=st.booleans())
def test_the_extension_kernels_program_extends_as_the_array_path_does(seed, homomorphism, positions):
    case = planned_tables(seed, homomorphism, positions)
    if case is None:
        return
    _, _, ce, plan, _ = case
    for ext, table, grown in core_levels(ce, plan, not homomorphism):
        assert np.array_equal(interpret_extension(fused_program([ext], ce, not homomorphism), table), grown)


@pytest.mark.gpu
@scaled(20)
@given(seed=st.integers(0, 2**32 - 1), homomorphism=st.booleans(), positions=st.booleans(), sliced=st.booleans())
def test_fused_extensions_give_the_array_paths_rows(seed, homomorphism, positions, sliced):
    case = planned_tables(seed, homomorphism, positions)
    if case is None:
        return
    _, _, ce, plan, tables = case
    cupy_backend = get_backend("cupy")
    xp = cupy_backend.xp
    device_ce = ce.to(xp.asarray)
    for ext, table, grown in core_levels(ce, plan, not homomorphism):
        got = cupy_backend.extend_rows(fused_program([ext], device_ce, not homomorphism), xp.asarray(table))
        assert got is not None and np.array_equal(xp.asnumpy(got), grown)
    allowed = {}
    if sliced and plan.steps:  # a slice restricts the last core vertex's images to a range of ids
        last = np.sort(ce.candidates[plan.core[-1]])
        allowed = {plan.core[-1]: range(int(last[0]), int(last[len(last) // 2]) + 1)}
    expected = list(walk_core(NUMPY, ce, CoreOrder(plan.core[0], plan.steps), 1 << 12, not homomorphism,
                              allowed=allowed))
    got = list(walk_core(cupy_backend, device_ce, CoreOrder(plan.core[0], plan.steps), 1 << 12, not homomorphism,
                         allowed=allowed))
    empty = np.zeros((0, len(plan.core)), dtype=np.int64)
    assert np.array_equal(np.concatenate([empty, *expected]), np.concatenate([empty, *map(xp.asnumpy, got)]))


@pytest.mark.gpu
@scaled(20)
@given(seed=st.integers(0, 2**32 - 1), homomorphism=st.booleans(), positions=st.booleans(),
       safe=st.sampled_from([SAFE_BOUND, 1.0, 5e3]), budget=st.sampled_from([1 << 10, 1 << 24]), bits=BITS)
def test_fused_totals_over_last_level_pairs_equal_the_numpy_counter(seed, homomorphism, positions, safe, budget,
                                                                    bits):
    """The core's last level as (row, vertex) pairs counted in place; recounted ranges become rows."""
    case = planned_tables(seed, homomorphism, positions)
    if case is None or not case[3].steps:
        return
    with options({"gpu.trailing-bits": bits}):
        check_pairs(case, homomorphism, safe, budget)


def check_pairs(case, homomorphism: bool, safe: float, budget: int) -> None:
    _, _, ce, plan, tables = case
    gpu = get_backend("cupy")
    xp = gpu.xp
    device_ce = ce.to(xp.asarray)
    device = TrailingCounter(gpu, plan, device_ce, homomorphism=homomorphism, budget=budget, safe=safe)
    reference = TrailingCounter(NUMPY, plan, ce, homomorphism=homomorphism, budget=1 << 24)
    ext = plan.steps[-1]
    for table in before_last(ce, plan, homomorphism):
        row, x = extension_set(NUMPY, ce, table, ext, not homomorphism)
        parents, xs = gpu.extend_pairs(fused_program([ext], device_ce, not homomorphism), xp.asarray(table))
        assert np.array_equal(xp.asnumpy(parents), row) and np.array_equal(xp.asnumpy(xs), x)
    assert sum(device.count(xp.asarray(t), extend=True) for t in before_last(ce, plan, homomorphism)) == \
        sum(reference.count(t) for t in tables)
    assert device.extended_rows == sum(int(t.shape[0]) for t in tables)
    if safe == SAFE_BOUND:
        assert device.fused_rows == device.extended_rows


@pytest.mark.gpu
@scaled(20)
@given(seed=st.integers(0, 2**32 - 1), homomorphism=st.booleans(), positions=st.booleans(),
       safe=st.sampled_from([SAFE_BOUND, 1.0, 5e3]), bits=BITS)
def test_fused_totals_equal_the_numpy_counter(seed, homomorphism, positions, safe, bits):
    """By walked runs and by bit rows (which report words read instead of run entries)."""
    case = planned_tables(seed, homomorphism, positions)
    if case is None:
        return
    with options({"gpu.trailing-bits": bits}):
        device = check_totals(case, homomorphism, safe)
    # Words are read by bit rows only (the array code's recounts add entries under either).
    assert (device.words > 0 if bits == "always" else device.words == 0 and device.entries > 0) or not case[4]


def check_totals(case, homomorphism: bool, safe: float) -> TrailingCounter:
    _, _, ce, plan, tables = case
    cupy_backend = get_backend("cupy")
    device = TrailingCounter(cupy_backend, plan, ce.to(cupy_backend.xp.asarray), homomorphism=homomorphism,
                             budget=1 << 24, safe=safe)
    for table in tables:
        reference = TrailingCounter(NUMPY, plan, ce, homomorphism=homomorphism, budget=1 << 24)
        expected = reference.count(table)
        before = device.fused_rows
        assert device.count(cupy_backend.xp.asarray(table)) == expected
        # The array code on the device agrees too (the benchmark's baseline).
        assert device.count_arrays(cupy_backend.xp.asarray(table)) == expected
        fused = device.fused_rows - before
        if safe == SAFE_BOUND:
            assert fused == table.shape[0]  # small counts: every range is exact in int64
        elif safe == 1.0 and expected:
            assert fused < table.shape[0]   # a range with a completion has a bound >= 1: recounted exactly
    return device


@pytest.mark.gpu
@scaled(8)
@given(seed=st.integers(0, 2**32 - 1), homomorphism=st.booleans())
def test_whole_counts_on_the_gpu_trailing_path_equal_the_oracles(seed, homomorphism):
    rng = np.random.default_rng(seed)
    directed = bool(rng.random() < 0.3)
    # Brute force enumerates every map of the query's vertices: small homomorphism cases only.
    n, leaves = (int(rng.integers(5, 8)), int(rng.integers(1, 3))) if homomorphism else \
        (int(rng.integers(8, 13)), int(rng.integers(1, 4)))
    data = random_graph(rng, n, float(rng.uniform(0.2, 0.5)), 2, 1, directed)
    query, _ = tree_with_leaves(rng, directed, int(rng.integers(2, 4)), leaves, 2)
    report = Explanation()
    got = counting.count(get_backend("cupy"), data, counting.Target(query, MatchOptions(homomorphism=homomorphism)),
                         budget=1 << 24, path="trailing", explain=report)
    if homomorphism:
        assert got == len(brute_force(data, query, homomorphism=True))
    else:
        assert got == len(networkx_matches(data, query))
    assert report.path in ("trailing", "filter")


def test_bit_rows_are_built_where_a_row_reads_fewer_words_and_the_walk_is_long_enough():
    """The auto policy's arithmetic (kernels/cupy/trailing.py's BitShape), from a program's array sizes alone: one
    trailing vertex of two links whose runs hold 50 entries each, over 100 candidates (two words a row) or 100,000
    (1,563 words: never worth it)."""
    from distsm.kernels.cupy.trailing import BITS_MIN_ENTRIES, BitShape
    from distsm.kernels.records import TrailingProgram

    def program(candidates: int) -> TrailingProgram:
        offsets = np.array([0, 50, 100], dtype=np.int64)  # two sources, runs of 50
        arc = (offsets, np.arange(100, dtype=np.int32), np.arange(2, dtype=np.int32))
        return TrailingProgram(np.zeros(1, dtype=np.int32), (arc, arc), False, 2, 1,
                               (np.arange(candidates, dtype=np.int32),), (0, 0), ((0,),))

    narrow, wide = BitShape.of(program(100)), BitShape.of(program(100_000))
    assert (narrow.words, narrow.reads, narrow.walked, narrow.bytes) == (4.0, 250.0, 50.0, 2 * 2 * 2 * 8)
    enough = int(BITS_MIN_ENTRIES // 50)
    assert narrow.pays(enough) and not narrow.pays(enough - 1)
    assert wide.words == 2 * 1563 and not wide.pays(1 << 40)
