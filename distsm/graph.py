"""The immutable labelled graph every part of distsm works on.

A :class:`Graph` holds ``n`` vertices ``0..n-1`` with one integer label each and ``m`` edges with one integer
label each.  Undirected graphs store every edge once in ``edge_src/edge_dst`` with ``src < dst``; directed graphs
store each arc as given.

The adjacency is a CSR whose rows are sorted by ``(effective label, neighbour id)``, so the neighbours of ``v``
through effective label ``e`` form one contiguous sorted run.  The *effective label* folds direction into the
edge label: in an undirected graph it is the edge label; in a directed graph an out-arc ``u -> v`` with label
``l`` is stored in ``u``'s row with effective label ``2*l`` and in ``v``'s row with ``2*l + 1``.  Matching then
works the same for both kinds of graph: a query adjacency ``w in N(u, e)`` must map to a data adjacency
``f(w) in N(f(u), e)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distsm.errors import GraphError

VERTEX_DTYPE = np.int32
LABEL_DTYPE = np.int32
OFFSET_DTYPE = np.int64
_MAX_ID = np.iinfo(VERTEX_DTYPE).max
_MAX_EDGE_LABEL = (np.iinfo(LABEL_DTYPE).max - 1) // 2


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _as_int_array(values: Any, name: str, length: int | None = None) -> np.ndarray:
    arr = np.asarray(values)
    if arr.size == 0:
        arr = arr.reshape(0).astype(np.int64)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise GraphError(f"{name} must be integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise GraphError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise GraphError(f"{name} has {arr.shape[0]} entries, expected {length}")
    neg = np.flatnonzero(arr < 0)
    if neg.size:
        i = int(neg[0])
        raise GraphError(f"{name}[{i}] = {int(arr[i])} is negative", edge_index=i if name.startswith("edge") else None,
                         vertex_index=i if name == "vertex_labels" else None)
    return arr.astype(np.int64, copy=False)


class Graph:
    """An immutable vertex- and edge-labelled graph, undirected or directed.

    Build one with :meth:`from_edges`, :meth:`from_networkx` or :func:`distsm.read_graph`.

    Attributes (all read-only NumPy arrays):
        vertex_labels: ``int32[n]``.
        edge_src, edge_dst, edge_labels: ``int32[m]``; undirected edges have ``src < dst``.
        indptr: ``int64[n+1]``; ``neighbors[indptr[v]:indptr[v+1]]`` is the row of ``v``.
        neighbors, neighbor_labels: ``int32[nnz]``, the neighbour and effective label of each adjacency entry,
            each row sorted by (effective label, neighbour).  ``nnz = 2*m``.
    """

    __slots__ = ("n", "m", "directed", "vertex_labels", "edge_src", "edge_dst", "edge_labels", "indptr",
                 "neighbors", "neighbor_labels", "_derived", "__weakref__")

    def __init__(self, n: int, edge_src: np.ndarray, edge_dst: np.ndarray, edge_labels: np.ndarray,
                 vertex_labels: np.ndarray, directed: bool):
        # Private: callers go through from_edges, which validates.
        self.n = int(n)
        self.m = int(edge_src.shape[0])
        self.directed = bool(directed)
        self.vertex_labels = _readonly(vertex_labels.astype(LABEL_DTYPE))
        self.edge_src = _readonly(edge_src.astype(VERTEX_DTYPE))
        self.edge_dst = _readonly(edge_dst.astype(VERTEX_DTYPE))
        self.edge_labels = _readonly(edge_labels.astype(LABEL_DTYPE))
        src = np.concatenate([edge_src, edge_dst])
        dst = np.concatenate([edge_dst, edge_src])
        if directed:
            eff = np.concatenate([2 * edge_labels, 2 * edge_labels + 1])
        else:
            eff = np.concatenate([edge_labels, edge_labels])
        L = int(eff.max(initial=0)) + 1
        if n * n * L < 2**62:
            # One sort of a composite key is several times faster than a three-key lexsort.
            order = np.argsort((src * L + eff) * n + dst)
        else:
            order = np.lexsort((dst, eff, src))
        self.neighbors = _readonly(dst[order].astype(VERTEX_DTYPE))
        self.neighbor_labels = _readonly(eff[order].astype(LABEL_DTYPE))
        indptr = np.zeros(self.n + 1, dtype=OFFSET_DTYPE)
        np.cumsum(np.bincount(src, minlength=self.n), out=indptr[1:])
        self.indptr = _readonly(indptr)
        self._derived: dict[str, Any] = {}

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(cls, edges: Any, *, n: int | None = None, edge_labels: Any = None, vertex_labels: Any = None,
                   directed: bool = False, dedupe: bool = False) -> Graph:
        """Build a graph from an edge list.

        Args:
            edges: ``(m, 2)`` array-like of vertex ids (or an iterable of pairs).
            n: number of vertices; default ``len(vertex_labels)`` if given, else ``max id + 1``.
            edge_labels: ``m`` non-negative integers; default all 0.
            vertex_labels: ``n`` non-negative integers; default all 0.
            directed: treat each pair as an arc ``src -> dst``.
            dedupe: merge repeated edges (same endpoints, same label) instead of raising.

        Raises:
            GraphError: ids out of range, negative labels, a self loop, or a duplicate edge (when ``dedupe`` is
                false, or when the copies carry different labels).  ``edge_index`` names the offending edge.
        """
        arr = np.asarray(list(edges) if not hasattr(edges, "__len__") else edges)
        if arr.size == 0:
            arr = np.zeros((0, 2), dtype=np.int64)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise GraphError(f"edges must have shape (m, 2), got {arr.shape}")
        src = _as_int_array(arr[:, 0], "edge source")
        dst = _as_int_array(arr[:, 1], "edge target")
        m = src.shape[0]
        labels = np.zeros(m, np.int64) if edge_labels is None else _as_int_array(edge_labels, "edge_labels", m)
        if labels.size and labels.max() > _MAX_EDGE_LABEL:
            i = int(np.argmax(labels))
            raise GraphError(f"edge label {int(labels[i])} is too large (max {_MAX_EDGE_LABEL})", edge_index=i)
        if vertex_labels is not None:
            vlab = _as_int_array(vertex_labels, "vertex_labels")
            if n is None:
                n = vlab.shape[0]
            elif vlab.shape[0] != n:
                raise GraphError(f"vertex_labels has {vlab.shape[0]} entries, expected n = {n}")
        if n is None:
            n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        if n < 0 or n > _MAX_ID:
            raise GraphError(f"number of vertices {n} is out of range")
        vlab = np.zeros(n, np.int64) if vertex_labels is None else vlab
        if vlab.size and vlab.max() > np.iinfo(LABEL_DTYPE).max:
            i = int(np.argmax(vlab))
            raise GraphError(f"vertex label {int(vlab[i])} is too large (max {np.iinfo(LABEL_DTYPE).max})",
                             vertex_index=i)
        bad = np.flatnonzero((src >= n) | (dst >= n))
        if bad.size:
            i = int(bad[0])
            raise GraphError(f"edge {int(src[i])}-{int(dst[i])} names a vertex outside 0..{n - 1}", edge_index=i)
        loops = np.flatnonzero(src == dst)
        if loops.size:
            i = int(loops[0])
            raise GraphError(f"self loop on vertex {int(src[i])}", edge_index=i)
        if not directed:
            src, dst = np.minimum(src, dst), np.maximum(src, dst)
        keep = _duplicate_filter(src, dst, labels, n, dedupe)
        if keep is not None:
            src, dst, labels = src[keep], dst[keep], labels[keep]
        return cls(n, src, dst, labels, vlab, directed)

    @classmethod
    def from_networkx(cls, g: Any, *, label: str = "label") -> Graph:
        """Build from a networkx ``Graph`` or ``DiGraph``; node and edge attribute ``label`` (missing = 0).

        Nodes are numbered in ``g``'s node order; ``Graph.node_ids`` is not kept, use
        ``list(g.nodes)`` to map back.  Multigraphs are refused.
        """
        if g.is_multigraph():
            raise GraphError("multigraphs are not supported")
        nodes = list(g.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        vlab = [g.nodes[v].get(label, 0) for v in nodes]
        pairs = [(index[u], index[v]) for u, v in g.edges]
        elab = [d.get(label, 0) for _, _, d in g.edges(data=True)]
        return cls.from_edges(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), n=len(nodes), edge_labels=elab,
                              vertex_labels=vlab, directed=g.is_directed())

    def to_networkx(self) -> Any:
        """Return a networkx ``Graph``/``DiGraph`` with ``label`` attributes on nodes and edges."""
        import networkx as nx

        g = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from((i, {"label": int(lab)}) for i, lab in enumerate(self.vertex_labels))
        g.add_edges_from((int(u), int(v), {"label": int(lab)})
                         for u, v, lab in zip(self.edge_src, self.edge_dst, self.edge_labels))
        return g

    # ------------------------------------------------------------------ queries
    @property
    def nnz(self) -> int:
        """Number of adjacency entries (``2*m``)."""
        return int(self.neighbors.shape[0])

    @property
    def degrees(self) -> np.ndarray:
        """Adjacency entries per vertex (in-degree + out-degree for directed graphs)."""
        return np.diff(self.indptr)

    @property
    def num_effective_labels(self) -> int:
        """One more than the largest effective label in use (at least 1)."""
        return int(self.neighbor_labels.max(initial=0)) + 1

    def vertex_label_counts(self) -> dict[int, int]:
        """``{label: number of vertices}``."""
        vals, counts = np.unique(self.vertex_labels, return_counts=True)
        return {int(v): int(c) for v, c in zip(vals, counts)}

    def edge_label_counts(self) -> dict[int, int]:
        """``{label: number of edges}``."""
        vals, counts = np.unique(self.edge_labels, return_counts=True)
        return {int(v): int(c) for v, c in zip(vals, counts)}

    def neighbors_of(self, v: int, effective_label: int | None = None) -> np.ndarray:
        """Neighbours of ``v`` (all, or through one effective label), sorted."""
        lo, hi = self.indptr[v], self.indptr[v + 1]
        if effective_label is None:
            return np.unique(self.neighbors[lo:hi])
        row_labels = self.neighbor_labels[lo:hi]
        a = np.searchsorted(row_labels, effective_label, "left")
        b = np.searchsorted(row_labels, effective_label, "right")
        return self.neighbors[lo + a: lo + b]

    def is_connected(self) -> bool:
        """Whether the graph is (weakly) connected; the empty graph is not."""
        if self.n == 0:
            return False
        # Used on query graphs, which are small: a plain breadth-first search is clearest.
        seen = {0}
        frontier = [0]
        while frontier:
            nxt = []
            for v in frontier:
                for w in self.neighbors[self.indptr[v]:self.indptr[v + 1]].tolist():
                    if w not in seen:
                        seen.add(w)
                        nxt.append(w)
            frontier = nxt
        return len(seen) == self.n

    def summary(self) -> dict[str, Any]:
        """Sizes, label counts and degree statistics (what ``distsm info`` prints)."""
        deg = self.degrees
        return {
            "vertices": self.n,
            "edges": self.m,
            "directed": self.directed,
            "vertex_labels": len(self.vertex_label_counts()),
            "edge_labels": len(self.edge_label_counts()),
            "degree_min": int(deg.min(initial=0)),
            "degree_max": int(deg.max(initial=0)),
            "degree_mean": float(deg.mean()) if self.n else 0.0,
        }

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"Graph(n={self.n}, m={self.m}, {kind}, vertex_labels={len(self.vertex_label_counts())})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        return (self.n == other.n and self.directed == other.directed
                and np.array_equal(self.vertex_labels, other.vertex_labels)
                and np.array_equal(self.indptr, other.indptr)
                and np.array_equal(self.neighbors, other.neighbors)
                and np.array_equal(self.neighbor_labels, other.neighbor_labels))

    __hash__ = object.__hash__

    def __getstate__(self) -> dict[str, Any]:
        return {"n": self.n, "src": self.edge_src, "dst": self.edge_dst, "elab": self.edge_labels,
                "vlab": self.vertex_labels, "directed": self.directed}

    def __setstate__(self, state: dict[str, Any]) -> None:
        Graph.__init__(self, state["n"], np.asarray(state["src"], np.int64), np.asarray(state["dst"], np.int64),
                       np.asarray(state["elab"], np.int64), np.asarray(state["vlab"], np.int64), state["directed"])


def _duplicate_filter(src: np.ndarray, dst: np.ndarray, labels: np.ndarray, n: int,
                      dedupe: bool) -> np.ndarray | None:
    """Indices of edges to keep after removing repeats, or None when there are none; raises per policy."""
    if src.size == 0:
        return None
    key = src * n + dst
    order = np.argsort(key, kind="stable")
    sk = key[order]
    rep = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    if rep.size == 0:
        return None
    later = order[rep]
    earlier = order[rep - 1]
    if not dedupe:
        i = int(later.min())
        raise GraphError(f"duplicate edge {int(src[i])}-{int(dst[i])} (pass dedupe=True to merge repeats)",
                         edge_index=i)
    conflict = labels[later] != labels[earlier]
    if conflict.any():
        i = int(later[conflict].min())
        raise GraphError(f"edge {int(src[i])}-{int(dst[i])} is repeated with a different label", edge_index=i)
    keep = np.ones(src.size, bool)
    keep[later] = False
    return np.flatnonzero(keep)
