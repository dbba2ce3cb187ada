"""What a partition of a graph is made of: its parts (:class:`LocalPart`, induced subgraphs with local ids), the
partition's quality (:class:`PartitionStats`), and the layout that cuts a graph into part arrays in one pass
(written into a store by :mod:`distsm.partition.store`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph


@dataclass(frozen=True)
class LocalPart:
    """Part ``index`` of a partition: its induced subgraph with local ids ``0..n_i-1``.

    ``global_ids[local]`` is the global id of a local vertex; it is ascending, so comparing local ids gives the
    same answer as comparing their global ids.
    """

    index: int
    graph: Graph
    global_ids: np.ndarray  # int64[n_i], ascending

    def to_global(self, local_ids: Any) -> np.ndarray:
        """Global ids of local ids (any shape, e.g. match rows)."""
        return self.global_ids[np.asarray(local_ids, dtype=np.int64)]

    def to_local(self, global_ids: Any) -> np.ndarray:
        """Local ids of global ids; ``-1`` for vertices outside this part."""
        g = np.asarray(global_ids, dtype=np.int64)
        pos = np.searchsorted(self.global_ids, g)
        inside = np.zeros(g.shape, bool)
        ok = pos < self.global_ids.shape[0]
        inside[ok] = self.global_ids[pos[ok]] == g[ok]
        return np.where(inside, pos, -1)


@dataclass(frozen=True)
class PartitionStats:
    """Quality of a partition.  ``edge_cut == cross_edges`` (the number of edges between parts);
    ``balance`` is the largest part's vertex count over the mean (``n / k``), 1.0 being perfect."""

    edge_cut: int
    cross_edges: int
    balance: float
    part_vertices: tuple[int, ...]
    part_edges: tuple[int, ...]
    seconds: float  # time spent computing the assignment

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["part_vertices"] = list(self.part_vertices)
        d["part_edges"] = list(self.part_edges)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PartitionStats:
        return cls(edge_cut=int(d["edge_cut"]), cross_edges=int(d["cross_edges"]), balance=float(d["balance"]),
                   part_vertices=tuple(int(x) for x in d["part_vertices"]),
                   part_edges=tuple(int(x) for x in d["part_edges"]), seconds=float(d["seconds"]))


class PartLayout:
    """Everything needed to cut a graph into parts in one pass: vertices and internal edges grouped by part."""

    def __init__(self, graph: Graph, assignment: np.ndarray, k: int):
        n = graph.n
        if k == 1:
            # One part, the graph every worker holds whole: nothing is cut or grouped (the argsorts below took
            # a third of a 4M-edge store's saving).
            self.vorder = self.local = np.arange(n, dtype=np.int64)
            self.voff = np.array([0, n], dtype=np.int64)
            self.cross = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int32))
            self.esrc, self.edst, self.elab = graph.edge_src, graph.edge_dst, graph.edge_labels
            self.eoff = np.array([0, graph.m], dtype=np.int64)
            return
        a = assignment.astype(np.int64)
        self.vorder = np.argsort(a, kind="stable")  # ascending ids within each part
        self.voff = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(np.bincount(a, minlength=k), out=self.voff[1:])
        self.local = np.empty(n, dtype=np.int64)
        self.local[self.vorder] = np.arange(n, dtype=np.int64) - self.voff[a[self.vorder]]
        src = graph.edge_src.astype(np.int64)
        dst = graph.edge_dst.astype(np.int64)
        order = np.argsort(src * max(n, 1) + dst)  # canonical edge order: by (src, dst)
        src, dst, lab = src[order], dst[order], graph.edge_labels[order]
        ps, pd = a[src], a[dst]
        cross = ps != pd
        self.cross = (src[cross], dst[cross], lab[cross].astype(np.int32))
        inside = np.flatnonzero(~cross)
        eorder = inside[np.argsort(ps[inside], kind="stable")]
        self.esrc, self.edst, self.elab = src[eorder], dst[eorder], lab[eorder]
        self.eoff = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(np.bincount(ps[inside], minlength=k), out=self.eoff[1:])

    def part_arrays(self, graph: Graph, i: int) -> dict[str, np.ndarray]:
        if self.voff.shape[0] == 2:  # one part: the graph's own arrays, ids unchanged
            return {"global_ids": self.vorder, "vertex_labels": graph.vertex_labels, "src": graph.edge_src,
                    "dst": graph.edge_dst, "edge_labels": graph.edge_labels}
        ids = self.vorder[self.voff[i]:self.voff[i + 1]]
        e = slice(self.eoff[i], self.eoff[i + 1])
        return {"global_ids": ids.astype(np.int64), "vertex_labels": graph.vertex_labels[ids].astype(np.int32),
                "src": self.local[self.esrc[e]].astype(np.int32), "dst": self.local[self.edst[e]].astype(np.int32),
                "edge_labels": self.elab[e].astype(np.int32)}


def local_part(i: int, arrays: dict[str, np.ndarray], directed: bool,
               csr: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> LocalPart:
    """Part ``i`` from its arrays; ``csr`` is its adjacency where it is known already (a one-part store's is the
    whole graph's), which saves sorting its edges."""
    gids = arrays["global_ids"]
    gids.flags.writeable = False
    if csr is None:
        g = Graph.from_edges(np.stack([arrays["src"], arrays["dst"]], axis=1), n=int(gids.shape[0]),
                             edge_labels=arrays["edge_labels"], vertex_labels=arrays["vertex_labels"],
                             directed=directed)
    else:
        g = Graph(int(gids.shape[0]), arrays["src"], arrays["dst"], arrays["edge_labels"], arrays["vertex_labels"],
                  directed, csr=csr)
    return LocalPart(index=i, graph=g, global_ids=gids)


def partition_stats(graph: Graph, assignment: np.ndarray, k: int, seconds: float) -> PartitionStats:
    if k == 1:  # nothing is cut (at 64M edges the gathers below took seconds)
        return PartitionStats(edge_cut=0, cross_edges=0, balance=1.0, part_vertices=(graph.n,),
                              part_edges=(graph.m,), seconds=float(seconds))
    a = assignment.astype(np.int64)
    pv = np.bincount(a, minlength=k)
    ps, pd = a[graph.edge_src], a[graph.edge_dst]
    inside = ps == pd
    pe = np.bincount(ps[inside], minlength=k)
    cut = int(graph.m - inside.sum())
    balance = float(pv.max() * k / graph.n) if graph.n else 1.0
    return PartitionStats(edge_cut=cut, cross_edges=cut, balance=balance, part_vertices=tuple(int(x) for x in pv),
                          part_edges=tuple(int(x) for x in pe), seconds=float(seconds))


def incident_vertices(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    return np.unique(np.concatenate([np.asarray(src), np.asarray(dst)])).astype(np.int64)
