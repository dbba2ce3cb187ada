"""5-vertex paths counted in closed form (kernels/paths.py) against networkx path enumeration: unique and plain
counts, vertex labels, budgets that cut chunks, task ranges that add up, and what the shortcut applies to.  The
device run of the same code (its triangle weights by the clique kernel) is checked in ``test_dfs_gpu.py``."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from benchmarks.generators import rmat_graph
from distsm import Graph, Semantics, caches
from distsm.kernels import NUMPY, dfs, paths, wedges
from distsm.kernels.explain import Explanation
from distsm.kernels.ranked import ranked_graph
from distsm.plan.search import symmetry
from oracles import random_graph
from test_dfs import dfs_count, oracle, pattern
from test_wedges import _cycles_by_networkx, _hub_graph


def paths_by_networkx(data: Graph, label: int | None) -> int:
    """Paths of five vertices (each once) whose vertices all have ``label`` (None: any), walked from every vertex
    in the subgraph they induce."""
    g = nx.Graph()
    labels = data.vertex_labels.tolist()
    g.add_nodes_from(v for v in range(data.n) if label is None or labels[v] == label)
    g.add_edges_from((u, w) for u, w in zip(data.edge_src.tolist(), data.edge_dst.tolist()) if u in g and w in g)
    found = 0
    for a in g:
        for b in g[a]:
            for c in g[b]:
                if c == a:
                    continue
                for d in g[c]:
                    if d in (a, b):
                        continue
                    found += sum(e not in (a, b, c) for e in g[d])
    return found // 2  # each path is walked from both ends


#: The counting shortcuts, each with its networkx oracle and what ``explain`` says of it.
SHORTCUTS = {"4-cycle": (_cycles_by_networkx, "from its wedges"), "5-path": (paths_by_networkx, "closed form")}


def labelled_cases(rng: np.random.Generator, n: int, m: int):
    """Hub graphs of one label and of two, each with every label a shortcut may take: ``(data, label)``, the label
    None where the graph has one."""
    for labels in (1, 2):
        data = _hub_graph(rng, n, m, labels)
        for label in range(labels):
            yield data, (label if labels > 1 else None)


@pytest.mark.parametrize("name", sorted(SHORTCUTS))
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("labels", [1, 2, 3])
def test_shortcuts_match_networkx(name, seed, labels):
    by_networkx, reason = SHORTCUTS[name]
    rng = np.random.default_rng(seed)
    data = random_graph(rng, 32, 0.22, labels, 1, False)
    size = 4 if name == "4-cycle" else 5
    for label in range(labels):
        query = pattern(name, [label] * size)
        report = Explanation()
        expected = by_networkx(data, label)
        assert dfs_count(data, query, unique=True, explain=report) == expected
        assert reason in report.reason
        assert dfs_count(data, query) == oracle(data, query, False)


def test_budgets_and_task_ranges_give_the_same_count():
    rng = np.random.default_rng(5)
    for data, label in labelled_cases(rng, 250, 1200):
        g = ranked_graph(np, NUMPY.index(data))
        expected = paths_by_networkx(data, label)
        first = -1 if label is None else label
        assert expected > 10_000
        for budget in (1 << 30, 1 << 12):
            assert paths.count(NUMPY, g, first, budget) == expected, budget
        n = int(wedges.tasks(g, first).shape[0])
        cuts = [0, n // 5, n // 2, n]
        parts = [paths.count(NUMPY, g, first, 1 << 30, task_range=(a, b)) for a, b in zip(cuts, cuts[1:])]
        assert sum(parts) == expected
        assert paths.task_work(NUMPY, g, first).shape == (n,)


def test_ranges_take_the_triangles_of_their_share_of_work(monkeypatch):
    """A range of wedge tasks takes the triangles of the ranks holding its share of the work (in blocks of
    ``WORK_BLOCK`` tasks): the bounds rise from none to every triangle task, ranges cut by work share the triangle
    tasks instead of one range taking the low ranks', and the parts, some of them negative, add up."""
    monkeypatch.setattr(paths, "WORK_BLOCK", 4)
    caches.clear("5-path terms")
    data = rmat_graph(8, 800, vertex_labels=1, edge_labels=1, seed=3, a=0.57, b=0.19, c=0.19)
    g = ranked_graph(np, NUMPY.index(data))
    terms = paths._terms(NUMPY, g, -1)
    n = int(terms.verts.shape[0])
    bounds = [terms.triangle_task(at) for at in range(n + 1)]
    assert bounds[0] == 0 and bounds[-1] == int(terms.ends[-1]) and bounds == sorted(bounds)
    work = np.cumsum(paths.task_work(NUMPY, g, -1))
    cuts = [0, *np.searchsorted(work, [work[-1] * i / 8 for i in range(1, 8)]).tolist(), n]
    shares = np.diff([terms.triangle_task(at) for at in cuts]) / bounds[-1]
    by_ranks = np.diff([int(terms.ends[at - 1]) if at else 0 for at in cuts]) / bounds[-1]
    assert shares.max() < 0.5 < 0.8 < by_ranks.max(), (shares, by_ranks)  # by the wedges' ranks, one took most
    parts = [paths.count(NUMPY, g, -1, 1 << 30, task_range=(a, b)) for a, b in zip(cuts, cuts[1:])]
    assert sum(parts) == paths.count(NUMPY, g, -1, 1 << 30) == paths_by_networkx(data, None)
    caches.clear("5-path terms")


def test_what_the_closed_form_applies_to():
    assert paths.applies(pattern("5-path"), 1)
    assert not paths.applies(pattern("5-path"), 2)  # edge labels or directions
    assert not paths.applies(pattern("5-path", [0, 0, 1, 0, 0]), 1)
    for name in ("5-cycle", "tailed triangle", "3-star", "4-cycle"):
        assert not paths.applies(pattern(name), 1), name
    # a triangle and a separate edge have the path's degrees but are not connected
    assert not paths.applies(Graph.from_edges([(0, 1), (1, 2), (0, 2), (3, 4)], n=5), 1)
    directed = Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 4)], n=5, directed=True)
    assert not paths.applies(directed, 1)


@pytest.mark.parametrize("name", sorted(SHORTCUTS))
def test_a_cut_search_joined_into_fewer_ranges_counts_the_same(name):
    """A cluster's heavy search: cut into ranges of about equal work (``dfs.cuts``), then joined into the matcher's
    number of slices (``SearchShare.coarsened``); the ranges still cover every task once and add up."""
    rng = np.random.default_rng(11)
    data = _hub_graph(rng, 250, 1200, 1)
    query = pattern(name)
    sym = symmetry(query, Semantics(unique=True))
    idx = NUMPY.index(data)
    search = dfs.choose(query, idx, sym.breaking, True, None)
    expected = SHORTCUTS[name][0](data, None)
    ranges, work = dfs.cuts(NUMPY, idx, search, 1.0, 32)
    share = dfs.SearchShare(ranges, work, "test")
    assert len(ranges) > 8
    for pieces in (len(ranges), 8, 3, 1):
        joined = share.coarsened(pieces)
        assert len(joined.ranges) == min(pieces, len(ranges)) and joined.work == work
        assert joined.ranges[0][0] == 0 and all(a[1] == b[0] for a, b in zip(joined.ranges, joined.ranges[1:]))
        assert joined.ranges[-1][1] == ranges[-1][1]
        assert sum(dfs.count(NUMPY, idx, search, 1 << 30, tasks=r) for r in joined.ranges) == expected
