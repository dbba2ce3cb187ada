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

import hashlib
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from distsm import caches
from distsm.arguments import is_integer
from distsm.csr import LABEL_DTYPE, VERTEX_DTYPE, csr_of, without_repeats
from distsm.errors import GraphError, short_repr
from distsm.graph_arrays import int_array, node_id_array, readonly
from distsm.edgelists import (Reading, arrow_columns, edge_list_graph, frame_columns, from_columns, label_codes,
                              repeated_label)
from distsm.labels import LabelVocabulary, is_plain_label, label_value, unlabelled_as_zero

_MAX_ID = np.iinfo(VERTEX_DTYPE).max
_MAX_EDGE_LABEL = (np.iinfo(LABEL_DTYPE).max - 1) // 2


_FACTS = caches.cache("graph facts", "Graph, fact -> its node positions by name, degrees, effective edge labels, "
                                   "connectedness or fingerprint")

class Graph:
    """An immutable vertex- and edge-labelled graph, undirected or directed.

    Build one with :meth:`from_edges`, :meth:`from_networkx` or :func:`distsm.read_graph`.

    Vertices are numbered ``0..n-1`` (the *positions* every array below uses).  A graph may also keep
    ``node_ids``, the name each vertex had where it came from (a networkx node, a SNAP id), and a
    ``vocabulary`` (:class:`~distsm.labels.LabelVocabulary`) when its labels are not plain non-negative integers;
    results can be given in those names (:func:`distsm.iter_mappings`, ``match(..., as_frame=True)``).

    Attributes (all read-only NumPy arrays unless noted):
        node_ids: None (the names are the positions) or an array of ``n`` distinct names (``int64``, or
            ``object`` for other hashables).
        vocabulary: None (the labels are the integers stored) or the graph's label vocabulary.
        vertex_labels: ``int32[n]``.
        edge_src, edge_dst, edge_labels: ``int32[m]``; undirected edges have ``src < dst``.
        indptr: ``int64[n+1]``; ``neighbors[indptr[v]:indptr[v+1]]`` is the row of ``v``.
        neighbors, neighbor_labels: ``int32[nnz]``, the neighbour and effective label of each adjacency entry,
            each row sorted by (effective label, neighbour).  ``nnz = 2*m``.
    """

    __slots__ = ("n", "m", "directed", "vertex_labels", "edge_src", "edge_dst", "edge_labels", "indptr",
                 "neighbors", "neighbor_labels", "node_ids", "vocabulary", "__weakref__")

    def __init__(self, n: int, edge_src: np.ndarray, edge_dst: np.ndarray, edge_labels: np.ndarray,
                 vertex_labels: np.ndarray, directed: bool, *, node_ids: np.ndarray | None = None,
                 vocabulary: LabelVocabulary | None = None,
                 csr: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None):
        # Private: callers go through from_edges, which validates; ``csr`` is the adjacency when built already.
        self.n = int(n)
        self.node_ids = node_ids
        self.vocabulary = vocabulary
        self.m = int(edge_src.shape[0])
        self.directed = bool(directed)
        # copy=False: a reloaded graph keeps its memory-mapped arrays (distsm.formats.binary).
        self.vertex_labels = readonly(vertex_labels.astype(LABEL_DTYPE, copy=False))
        self.edge_src = readonly(edge_src.astype(VERTEX_DTYPE, copy=False))
        self.edge_dst = readonly(edge_dst.astype(VERTEX_DTYPE, copy=False))
        self.edge_labels = readonly(edge_labels.astype(LABEL_DTYPE, copy=False))
        indptr, neighbors, neighbor_labels = csr or csr_of(self.n, edge_src, edge_dst, edge_labels, self.directed)
        self.neighbors = readonly(neighbors)
        self.neighbor_labels = readonly(neighbor_labels)
        self.indptr = readonly(indptr)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(cls, edges: Any, *, n: int | None = None, edge_labels: Any = None, vertex_labels: Any = None,
                   directed: bool = False, dedupe: bool = False, node_ids: Any = None) -> Graph:
        """Build a graph from an edge list.

        Args:
            edges: ``(m, 2)`` array-like of vertex ids (or an iterable of pairs).
            n: number of vertices; default ``len(vertex_labels)`` if given, else ``max id + 1``.
            edge_labels: ``m`` non-negative integers; default all 0.
            vertex_labels: ``n`` non-negative integers; default all 0.
            directed: treat each pair as an arc ``src -> dst``.
            dedupe: merge repeated edges (same endpoints, same label) instead of raising.
            node_ids: ``n`` distinct hashable names of the vertices (kept as :attr:`node_ids`); default: none.

        Raises:
            GraphError: ids out of range, negative labels, a self loop, or a duplicate edge (when ``dedupe`` is
                false, or when the copies carry different labels).  ``edge_index`` names the offending edge.
        """
        arr = np.asarray(list(edges) if not hasattr(edges, "__len__") else edges)
        if arr.size == 0:
            arr = np.zeros((0, 2), dtype=np.int64)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise GraphError(f"edges must have shape (m, 2), got {arr.shape}")
        return cls.from_edge_arrays(arr[:, 0], arr[:, 1], n=n, edge_labels=edge_labels, vertex_labels=vertex_labels,
                                    directed=directed, dedupe=dedupe, node_ids=node_ids)

    @classmethod
    def from_edge_arrays(cls, src: Any, dst: Any, *, n: int | None = None, edge_labels: Any = None,
                         vertex_labels: Any = None, directed: bool = False, dedupe: bool = False,
                         node_ids: Any = None) -> Graph:
        """:meth:`from_edges` with the edges given as two arrays of ``m`` vertex ids, sources and targets (no
        ``(m, 2)`` array is made); the other arguments and the errors are those of :meth:`from_edges`."""
        src = int_array(src, "edge source")
        dst = int_array(dst, "edge target", src.shape[0])
        m = src.shape[0]
        # np.zeros: pages never written take no memory (an unlabelled graph's labels are only read).
        labels = np.zeros(m, LABEL_DTYPE) if edge_labels is None else int_array(edge_labels, "edge_labels", m)
        if labels.size and labels.max() > _MAX_EDGE_LABEL:
            i = int(np.argmax(labels))
            raise GraphError(f"edge label {int(labels[i])} is too large (max {_MAX_EDGE_LABEL})", edge_index=i)
        if vertex_labels is not None:
            vlab = int_array(vertex_labels, "vertex_labels")
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
        if m and max(int(src.max()), int(dst.max())) >= n:
            i = int(np.flatnonzero((src >= n) | (dst >= n))[0])
            raise GraphError(f"edge {int(src[i])}-{int(dst[i])} names a vertex outside 0..{n - 1}", edge_index=i)
        loops = np.flatnonzero(src == dst)
        if loops.size:
            i = int(loops[0])
            raise GraphError(f"self loop on vertex {int(src[i])}", edge_index=i)
        if not directed:
            src, dst = np.minimum(src, dst), np.maximum(src, dst)
        src, dst, labels, csr = without_repeats(n, src, dst, labels, directed, dedupe)
        return cls(n, src, dst, labels, vlab, directed, node_ids=node_id_array(node_ids, n), csr=csr)

    @classmethod
    def from_networkx(cls, g: Any, *, node_label: str | None = "label", edge_label: str | None = "label",
                      default_label: Hashable = None, labels: LabelVocabulary | None = None) -> Graph:
        """Build from a networkx ``Graph`` or ``DiGraph``, keeping its node names and label values.

        Args:
            g: the networkx graph (multigraphs are refused).  Nodes may be any hashable; they become
                :attr:`node_ids`, in ``g``'s node order.
            node_label, edge_label: the node and edge attribute holding the label (None: unlabelled).  Labels may
                be any hashable (``"C"``, ``("x", 1)``, ``3``).
            default_label: the label of a node or edge without the attribute.  None: such a node or edge is
                unlabelled, a value of its own (``None``, as networkx's ``categorical_node_match(attr, None)`` takes
                a missing attribute), matched by unlabelled ones only; a graph none of whose nodes (or edges) has
                the attribute is stored unlabelled in that kind, all ``0`` (see :func:`distsm.labels.reconcile`).
            labels: a :class:`~distsm.labels.LabelVocabulary` to encode labels through, e.g. one shared by a
                data graph and its queries.  Without one, non-negative integer labels are kept as they are and
                any other labels get a vocabulary of their own.  Queries and data graphs with different
                vocabularies still match by label value (see :func:`distsm.labels.reconcile`).
        """
        if g.is_multigraph():
            raise GraphError("multigraphs are not supported")
        nodes = list(g.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        vvals = [default_label if node_label is None else g.nodes[v].get(node_label, default_label) for v in nodes]
        edges = list(g.edges(data=True))
        evals = [default_label if edge_label is None else d.get(edge_label, default_label) for _, _, d in edges]
        # A kind with no label at all is stored plain (all 0) unless the graph needs a vocabulary anyway, which then
        # holds the unlabelled value itself.
        plain_v, plain_e = unlabelled_as_zero(vvals, default_label), unlabelled_as_zero(evals, default_label)
        vocab = labels
        if vocab is None and not all(is_plain_label(x) for x in (*plain_v, *plain_e)):
            vocab = LabelVocabulary()
        vlab = plain_v if vocab is None else vocab.encode("vertex", vvals)
        elab = plain_e if vocab is None else vocab.encode("edge", evals)
        pairs = np.asarray([(index[u], index[v]) for u, v, _ in edges], dtype=np.int64).reshape(-1, 2)
        names = None if nodes == list(range(len(nodes))) else nodes
        graph = cls.from_edges(pairs, n=len(nodes), edge_labels=elab, vertex_labels=vlab, directed=g.is_directed(),
                               node_ids=names)
        graph.vocabulary = vocab
        return graph

    @classmethod
    def from_pandas_edgelist(cls, df: Any, source: str = "source", target: str = "target",
                             edge_label: str | None = None, node_labels: Mapping[Hashable, Any] | None = None, *,
                             directed: bool = False, dedupe: bool | None = None, default_label: Hashable = None,
                             labels: LabelVocabulary | None = None) -> Graph:
        """Build from a pandas DataFrame of edges, one row each, as ``networkx.from_pandas_edgelist`` reads it.

        Args:
            df: the DataFrame.  ``source`` and ``target`` name its columns of node names (any hashables);
                vertices are numbered in order of first appearance (source before target, row by row) and the
                names kept as :attr:`node_ids`.
            edge_label: the column of edge label values (any hashables; None: unlabelled).
            node_labels: ``{node name: label value}`` (a dict or a Series); nodes it lacks get ``default_label``,
                and nodes only it names become isolated vertices, after the others.
            directed: read each row as an arc ``source -> target``.
            dedupe: repeated rows (in an undirected graph ``u v`` repeats ``v u``) are merged with one warning
                (None), merged silently (True) or refused (False); repeats with different labels are refused.
            default_label, labels: as in :meth:`from_networkx`.

        Self loops are dropped with a warning.  Raises :class:`GraphError` (``edge_index`` is the row position)
        for a missing name or a refused repeat, KeyError for a missing column.
        """
        src, dst, elab = frame_columns(df, source, target, edge_label)
        return from_columns(cls, src, dst, elab, Reading(directed, dedupe, "DataFrame"), node_labels=node_labels,
                            default_label=default_label, labels=labels)

    @classmethod
    def from_cudf_edgelist(cls, df: Any, source: str = "source", target: str = "target",
                           edge_label: str | None = None, node_labels: Mapping[Hashable, Any] | None = None,
                           **kwargs: Any) -> Graph:
        """:meth:`from_pandas_edgelist` of a cuDF DataFrame (copied to the host with ``df.to_pandas()``)."""
        return cls.from_pandas_edgelist(df.to_pandas(), source, target, edge_label, node_labels, **kwargs)

    @classmethod
    def from_arrow(cls, table: Any, source: str = "source", target: str = "target", edge_label: str | None = None,
                   node_labels: Mapping[Hashable, Any] | None = None, **kwargs: Any) -> Graph:
        """:meth:`from_pandas_edgelist` of a ``pyarrow.Table`` (integer columns are read without a copy; a null
        source or target is a :class:`GraphError` naming its row).  Needs pyarrow (``pip install 'distsm[io]'``)."""
        src, dst, elab = arrow_columns(table, source, target, edge_label)
        reading = Reading(kwargs.pop("directed", False), kwargs.pop("dedupe", None), "Arrow table")
        return from_columns(cls, src, dst, elab, reading, node_labels=node_labels, **kwargs)

    @classmethod
    def from_scipy_sparse_array(cls, a: Any, *, directed: bool = False, edge_labels: bool = False,
                                vertex_labels: Any = None) -> Graph:
        """Build from a square SciPy sparse array or matrix: every stored entry ``a[i, j]`` is an edge ``i - j``
        (an arc ``i -> j`` when ``directed``), as ``networkx.from_scipy_sparse_array`` reads it.

        Vertices are ``0..n-1`` (``n = a.shape[0]``, isolated ones included).  Undirected, ``a[i, j]`` and
        ``a[j, i]`` are one edge (a symmetric matrix holds each edge twice).  ``edge_labels=True``: the stored
        values are the edges' label values (two entries of one edge must agree).  Diagonal entries are dropped
        with a warning.  Needs scipy (``pip install 'distsm[io]'``).
        """
        if len(a.shape) != 2 or a.shape[0] != a.shape[1]:
            raise GraphError(f"the adjacency must be square, got shape {a.shape}")
        coo = a.tocoo()
        row, col = np.asarray(coo.row, np.int64), np.asarray(coo.col, np.int64)
        vcodes, ecodes, vocab = label_codes(repeated_label(a.shape[0], 0) if vertex_labels is None else vertex_labels,
                                            coo.data if edge_labels else repeated_label(row.size, 0), None)
        g = edge_list_graph(cls, row, col, Reading(directed, True, "sparse array",
                                              lambda i: f"at entry ({int(row[i])}, {int(col[i])})"),
                            n=int(a.shape[0]), edge_labels=ecodes, vertex_labels=vcodes, node_ids=None)
        g.vocabulary = vocab
        return g

    @classmethod
    def from_igraph(cls, g: Any, *, node_label: str | None = "label", edge_label: str | None = "label",
                    name: str = "name", default_label: Hashable = None, labels: LabelVocabulary | None = None,
                    dedupe: bool | None = None) -> Graph:
        """Build from a ``igraph.Graph``: its vertices in order, their ``name`` attribute (when present) as
        :attr:`node_ids`, and label values from the ``node_label`` / ``edge_label`` attributes (missing or None:
        ``default_label``), as :meth:`from_networkx`.  Multi-edges are merged as ``dedupe`` says (see
        :meth:`from_pandas_edgelist`) and self loops dropped with a warning."""
        default = 0 if default_label is None else default_label

        def values(seq: Any, attr: str | None) -> Any:
            if attr is None or attr not in seq.attributes():
                return repeated_label(len(seq), default)
            return [default if x is None else x for x in seq[attr]]

        edges = np.asarray(g.get_edgelist(), np.int64).reshape(-1, 2)
        vcodes, ecodes, vocab = label_codes(values(g.vs, node_label), values(g.es, edge_label), labels)
        names = g.vs[name] if name in g.vs.attributes() else None
        out = edge_list_graph(cls, edges[:, 0], edges[:, 1], Reading(g.is_directed(), dedupe, "igraph graph",
                                                                lambda i: f"at edge {i}"),
                              n=g.vcount(), edge_labels=ecodes, vertex_labels=vcodes, node_ids=names)
        out.vocabulary = vocab
        return out

    def to_networkx(self) -> Any:
        """A networkx ``Graph``/``DiGraph`` with this graph's node names and ``label`` values on nodes and edges."""
        import networkx as nx

        names = self.names()
        g = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from((names[i], {"label": label_value(self, "vertex", lab)})
                         for i, lab in enumerate(self.vertex_labels.tolist()))
        g.add_edges_from((names[u], names[v], {"label": label_value(self, "edge", lab)})
                         for u, v, lab in zip(self.edge_src.tolist(), self.edge_dst.tolist(),
                                              self.edge_labels.tolist()))
        return g

    # ------------------------------------------------------------------ names
    def names(self) -> list[Hashable]:
        """The name of every vertex, in position order (the positions themselves when there are no
        :attr:`node_ids`)."""
        return list(range(self.n)) if self.node_ids is None else self.node_ids.tolist()

    def positions(self, names: Iterable[Hashable], *, what: str = "node") -> np.ndarray:
        """Positions (``int64``) of the vertices with these names.

        Raises:
            GraphError: a name that is no vertex of this graph (the message names it).
        """
        if self.node_ids is None:
            names = list(names)
            good = [is_integer(x) and 0 <= x < self.n for x in names]
            if not all(good):
                bad = names[good.index(False)]
                raise GraphError(f"{what} {short_repr(bad)} is not a vertex of this graph (vertices are "
                                 f"0..{self.n - 1})")
            return np.asarray(names, dtype=np.int64).reshape(-1)
        lookup = _FACTS.get(self, "positions")
        if lookup is None:
            lookup = _FACTS.put(self, {name: i for i, name in enumerate(self.names())}, "positions")
        out = []
        for name in names:
            try:
                out.append(lookup[name])
            except (KeyError, TypeError):
                raise GraphError(f"{what} {short_repr(name)} is not a vertex of this graph") from None
        return np.asarray(out, dtype=np.int64)

    # ------------------------------------------------------------------ queries
    @property
    def nnz(self) -> int:
        """Number of adjacency entries (``2*m``)."""
        return int(self.neighbors.shape[0])

    @property
    def degrees(self) -> np.ndarray:
        """Adjacency entries per vertex (in-degree + out-degree for directed graphs; read-only, computed once)."""
        deg = _FACTS.get(self, "degrees")
        if deg is None:
            deg = _FACTS.put(self, readonly(np.diff(self.indptr)), "degrees")
        return deg

    @property
    def num_effective_labels(self) -> int:
        """One more than the largest effective label in use (at least 1)."""
        labels = _FACTS.get(self, "effective_labels")
        if labels is None:
            labels = _FACTS.put(self, int(self.neighbor_labels.max(initial=0)) + 1, "effective_labels")
        return labels

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
        cached = _FACTS.get(self, "connected")
        if cached is not None:
            return cached
        # Used on query graphs, which are small: a plain breadth-first search is clearest.
        ptr, nbr = self.indptr.tolist(), self.neighbors.tolist()
        seen = {0}
        frontier = [0]
        while frontier:
            nxt = []
            for v in frontier:
                for w in nbr[ptr[v]:ptr[v + 1]]:
                    if w not in seen:
                        seen.add(w)
                        nxt.append(w)
            frontier = nxt
        connected: bool = _FACTS.put(self, len(seen) == self.n, "connected")
        return connected

    def summary(self) -> dict[str, Any]:
        """Sizes, label counts and degree statistics (what ``distsm info`` prints)."""
        deg = self.degrees
        return {
            "vertices": self.n,
            "edges": self.m,
            "directed": self.directed,
            "vertex_labels": len(self.vertex_label_counts()),
            "edge_labels": len(self.edge_label_counts()),
            "degree_min": int(deg.min()) if self.n else 0,
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
                "vlab": self.vertex_labels, "directed": self.directed, "node_ids": self.node_ids,
                "vocabulary": self.vocabulary}

    def __setstate__(self, state: dict[str, Any]) -> None:
        Graph.__init__(self, state["n"], np.asarray(state["src"], np.int64), np.asarray(state["dst"], np.int64),
                       np.asarray(state["elab"], np.int64), np.asarray(state["vlab"], np.int64), state["directed"],
                       node_ids=state.get("node_ids"), vocabulary=state.get("vocabulary"))


def graph_fingerprint(graph: Graph) -> str:
    """``"sha256:<hex>"`` over ``n``, directedness, vertex labels and the labelled adjacency; cached on the graph.

    The adjacency is taken from the CSR, whose rows are sorted, so the fingerprint does not depend on the order in
    which the edges were given: two graphs have the same fingerprint exactly when they are equal (``==``).
    """
    cached = _FACTS.get(graph, "fingerprint")
    if cached is not None:
        return cached
    h = hashlib.sha256()
    h.update(f"distsm-graph-v1 n={graph.n} directed={int(graph.directed)};".encode())
    for name, arr, dtype in (("vertex_labels", graph.vertex_labels, "<i4"), ("indptr", graph.indptr, "<i8"),
                             ("neighbors", graph.neighbors, "<i4"), ("neighbor_labels", graph.neighbor_labels, "<i4")):
        h.update(f"{name}:{arr.shape[0]};".encode())
        h.update(np.ascontiguousarray(arr, dtype=dtype).data)
    fp = "sha256:" + h.hexdigest()
    return _FACTS.put(graph, fp, "fingerprint")
