"""The graph's adjacency and duplicate policy against plain-Python oracles, on random edge lists."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled

from distsm import Graph, GraphError
from distsm import csr


@st.composite
def edge_lists(draw, max_n: int = 12, max_m: int = 40):
    n = draw(st.integers(1, max_n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] != e[1]),
                          max_size=max_m))
    labels = draw(st.lists(st.integers(0, draw(st.sampled_from([0, 1, 3, 1000]))), min_size=len(pairs),
                           max_size=len(pairs)))
    return n, pairs, labels, draw(st.booleans())


def _entries(pairs, labels, directed: bool) -> list[tuple[int, int, int]]:
    """Every adjacency entry (row, effective label, neighbour), in the order the CSR must hold them."""
    out = []
    for (u, v), lab in zip(pairs, labels):
        out.append((u, 2 * lab if directed else lab, v))
        out.append((v, 2 * lab + 1 if directed else lab, u))
    return sorted(out)


def _csr_entries(g: Graph) -> list[tuple[int, int, int]]:
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    assert int(g.indptr[0]) == 0 and int(g.indptr[-1]) == g.nnz
    return list(zip(rows.tolist(), g.neighbor_labels.tolist(), g.neighbors.tolist()))


def _kept(pairs, labels, directed: bool) -> tuple[list[int], int | None, str | None]:
    """The edges a dedupe keeps (first copies, in order), and the first offending edge with its problem."""
    first: dict[tuple[int, int], int] = {}
    kept, bad, problem = [], None, None
    for i, ((u, v), lab) in enumerate(zip(pairs, labels)):
        k = (u, v) if directed else (min(u, v), max(u, v))
        if k not in first:
            first[k] = lab
            kept.append(i)
        elif first[k] != lab and problem is None:
            bad, problem = i, "different label"
    return kept, bad, problem


@given(edge_lists())
@scaled(150)
def test_adjacency_and_dedupe_match_python(case):
    _check_against_python(case)


@given(edge_lists())
@scaled(100)
def test_adjacency_sorted_in_two_parts_matches_python(case):
    # Large graphs sort their entries as two halves at once (after a selection splits them): force that path.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(csr, "_PARALLEL_EDGES", 1)
        _check_against_python(case)


def _check_against_python(case):
    n, pairs, labels, directed = case
    kept, bad, problem = _kept(pairs, labels, directed)
    if len(kept) < len(pairs):
        with pytest.raises(GraphError, match="duplicate edge") as e:
            Graph.from_edges(pairs, n=n, edge_labels=labels, directed=directed)
        first_repeat = next(i for i in range(len(pairs)) if i not in set(kept))
        assert e.value.edge_index == first_repeat
    if problem is not None:
        with pytest.raises(GraphError, match=problem) as e:
            Graph.from_edges(pairs, n=n, edge_labels=labels, directed=directed, dedupe=True)
        assert e.value.edge_index == bad
        return
    g = Graph.from_edges(pairs, n=n, edge_labels=labels, directed=directed, dedupe=True)
    kp = [pairs[i] if directed else (min(pairs[i]), max(pairs[i])) for i in kept]
    kl = [labels[i] for i in kept]
    assert list(zip(g.edge_src.tolist(), g.edge_dst.tolist())) == kp
    assert g.edge_labels.tolist() == kl
    assert _csr_entries(g) == _entries(kp, kl, directed)


@pytest.mark.parametrize("directed", [False, True])
def test_wide_keys_take_the_lexsort_path(directed):
    # 2**17 vertices and labels near 2**30 do not fit one int64 key: the same adjacency comes from a lexsort.
    n = 2**17
    pairs = [(n - 1, 0), (5, n - 2), (0, 5)]
    labels = [7, 2**29, 3]
    g = Graph.from_edges(pairs, n=n, edge_labels=labels, directed=directed)
    assert _csr_entries(g) == _entries(pairs, labels, directed)
