"""4-cycles counted from their wedges (kernels/wedges.py) against networkx and brute force (their match with networkx
on random graphs is test_paths.py's, with the other shortcut): plain and unique counts,
vertex labels, budgets that cut chunks and split one task's wedges, task ranges, what the shortcut applies to, and
cancellation.  The device run of the same code is checked in ``test_dfs_gpu.py``."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from distsm import Graph
from distsm.kernels import NUMPY, wedges
from distsm.kernels.ranked import ranked_graph
from distsm.kernels.records import Control, JoinCancelled
from oracles import brute_force, random_graph
from test_dfs import pattern


def _hub_graph(rng: np.random.Generator, n: int, m: int, labels: int) -> Graph:
    w = 1.0 / np.arange(1, n + 1) ** 0.8
    src, dst = rng.choice(n, m, p=w / w.sum()), rng.choice(n, m, p=w / w.sum())
    keep = src != dst
    pairs = np.unique(np.sort(np.stack([src[keep], dst[keep]], 1), axis=1), axis=0)
    return Graph.from_edges(pairs, n=n, vertex_labels=rng.integers(0, labels, n))


def _cycles_by_networkx(data: Graph, label: int | None) -> int:
    """4-cycles of ``data`` (each once) whose vertices all have ``label`` (None: any), by their vertex sets."""
    g = nx.Graph()
    g.add_nodes_from(range(data.n))
    g.add_edges_from(zip(data.edge_src.tolist(), data.edge_dst.tolist()))
    labels = data.vertex_labels.tolist()
    found = 0
    for a in g:
        for b in g[a]:
            for c in g[b]:
                for d in g[c]:
                    if len({a, b, c, d}) == 4 and a in g[d] and \
                            (label is None or all(labels[x] == label for x in (a, b, c, d))):
                        found += 1
    return found // 8  # each cycle is walked from each vertex, both ways


def test_budgets_that_cut_chunks_and_split_a_hub_give_the_same_count():
    rng = np.random.default_rng(3)
    data = _hub_graph(rng, 300, 1500, 1)
    g = ranked_graph(np, NUMPY.index(data))
    expected = _cycles_by_networkx(data, None)
    per_task = wedges.task_work(NUMPY, g, -1) - 1
    assert per_task.max() > wedges.MIN_CHUNK  # a hub whose wedges a smallest chunk cannot hold
    seen: list[tuple[int, int]] = []
    for budget in (1 << 30, 1 << 14, 1):
        got = wedges.count(NUMPY, g, -1, budget, Control(progress=lambda done, total: seen.append((done, total))))
        assert got == expected, budget
    assert seen[-1] == (data.n, data.n)


def test_task_ranges_add_up_and_task_work_counts_the_wedges():
    rng = np.random.default_rng(8)
    data = _hub_graph(rng, 200, 900, 2)
    g = ranked_graph(np, NUMPY.index(data))
    for label in (0, 1):
        a = wedges.tasks(g, label)
        work = wedges.task_work(NUMPY, g, label)
        assert work.shape == a.shape
        whole = wedges.count(NUMPY, g, label, 1 << 30)
        cut = sorted({0, int(a.shape[0]) // 3, int(a.shape[0]) // 2, int(a.shape[0])})
        assert sum(wedges.count(NUMPY, g, label, 1 << 30, task_range=(lo, hi))
                   for lo, hi in zip(cut[:-1], cut[1:])) == whole == _cycles_by_networkx(data, label)
    # The wedges of one task, listed by hand: b below a, c below a, b adjacent to both, label 0 throughout.
    rank_of = {int(v): r for r, v in enumerate(np.argsort(data.degrees * data.n + np.arange(data.n)))}
    zero = {rank_of[v] for v in range(data.n) if data.vertex_labels[v] == 0}
    adj = {v: set() for v in range(data.n)}
    for u, w in zip(data.edge_src.tolist(), data.edge_dst.tolist()):
        if rank_of[u] in zero and rank_of[w] in zero:
            adj[rank_of[u]].add(rank_of[w])
            adj[rank_of[w]].add(rank_of[u])
    work = wedges.task_work(NUMPY, g, 0)
    heaviest = int(np.argmax(work))
    a = int(wedges.tasks(g, 0)[heaviest])
    by_hand = sum(1 for b in adj[a] if b < a for c in adj[b] if c < a)
    assert work[heaviest] == 1 + by_hand > 1
    with pytest.raises(ValueError, match="name one"):
        wedges.task_work(NUMPY, g, -1)  # its runs are split by neighbour label


def test_what_the_shortcut_applies_to():
    c4 = pattern("4-cycle")
    assert wedges.applies(c4, 1)
    assert wedges.applies(Graph.from_edges([(0, 2), (2, 1), (1, 3), (3, 0)], n=4, vertex_labels=[5] * 4), 1)
    assert not wedges.applies(c4, 2)  # edge labels (or directions) in the data
    assert not wedges.applies(pattern("4-cycle", [0, 1, 0, 1]), 1)
    assert not wedges.applies(Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)], n=4, edge_labels=[0, 1, 0, 1]), 1)
    assert not wedges.applies(Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)], n=4, directed=True), 1)
    for name in ("diamond", "tailed triangle", "4-clique", "5-cycle", "3-star"):
        assert not wedges.applies(pattern(name), 1), name


def test_a_cancelled_count_stops_and_a_labelled_one_counts_only_its_label():
    rng = np.random.default_rng(12)
    data = random_graph(rng, 20, 0.4, 2, 1, False)
    g = ranked_graph(np, NUMPY.index(data))
    with pytest.raises(JoinCancelled):
        wedges.count(NUMPY, g, 0, 1 << 20, Control(cancelled=lambda: True))
    for label in (0, 1):
        assert wedges.count(NUMPY, g, label, 1 << 20) * 8 == len(brute_force(data, pattern("4-cycle", [label] * 4)))
