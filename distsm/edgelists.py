"""What every edge-list input shares: SNAP files, Parquet files, DataFrames, Arrow tables, sparse matrices, igraph.

* :func:`first_appearance`: vertex names of any kind renumbered ``0..n-1`` in order of first appearance (reading
  the source before the target of each edge, as networkx adds them).
* :func:`label_codes`: label values of any kind as codes, through a vocabulary when they are not all plain
  non-negative integers (the rule of :meth:`Graph.from_networkx`).
* :func:`edge_list_graph`: the graph, read as a :class:`Reading` says (direction, repeats, how warnings name the
  input); self loops dropped with a warning and repeated edges merged with a warning
  (``dedupe=None``), merged silently (``True``) or refused (``False``); in an undirected graph ``u v`` and ``v u``
  are one edge.  Repeats with different labels are always an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from distsm.errors import GraphError, short_repr
from distsm.labels import UNLABELLED, LabelVocabulary, is_plain_label

if TYPE_CHECKING:
    from distsm.graph import Graph

#: How a warning or error names edge ``i`` of the input: ``"on line 7"``, ``"at row 6"``.
Where = Callable[[int], str]


def at_row(i: int) -> str:
    """:data:`Where` for inputs without lines (DataFrames, tables): the row's position."""
    return f"at row {i}"


@dataclass(frozen=True)
class Reading:
    """How an edge list is read, and how its warnings name what they are about: ``directed`` (each edge an arc
    ``source -> target``), ``dedupe`` (repeats merged with a warning: None, silently: True, refused: False),
    ``source`` starting each warning (a file name, ``"DataFrame"``) and ``where(i)`` naming input edge ``i``."""

    directed: bool = False
    dedupe: bool | None = None
    source: str = "edge list"
    where: Where = at_row


def first_appearance(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src codes, dst codes, names)``: vertices numbered in order of first appearance, ``src[0], dst[0],
    src[1], ...``; ``names[code]`` is the name (``int64`` for integer names, else ``object``).

    Raises:
        GraphError: a missing name (None, NaN), naming its edge.
    """
    src, dst = np.asarray(src), np.asarray(dst)
    if src.dtype.kind in "iu" and dst.dtype.kind in "iu" and src.size:
        lo = min(int(src.min()), int(dst.min()))
        top = max(int(src.max()), int(dst.max()))
        if lo >= 0 and top <= max(8 * src.size, 1 << 20):
            return _small_int_first_appearance(src, dst, top)
    import pandas as pd

    pairs = np.empty(2 * src.shape[0], np.result_type(src.dtype, dst.dtype))
    pairs[0::2] = src
    pairs[1::2] = dst
    codes, names = pd.factorize(pairs)
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        i = int(missing[0])
        raise GraphError(f"the {'target' if i % 2 else 'source'} of edge {i // 2} is missing "
                         f"({short_repr(pairs[i])})", edge_index=i // 2)
    names = np.asarray(names)
    return (np.ascontiguousarray(codes[0::2], np.int64), np.ascontiguousarray(codes[1::2], np.int64),
            names.astype(np.int64) if names.dtype.kind in "iu" else names)


def _small_int_first_appearance(src: np.ndarray, dst: np.ndarray,
                                top: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`first_appearance` of non-negative integers up to ``top``, through a table of ``top + 1`` codes.

    The edges are read in blocks (interleaved in reading order, as ``intp``: NumPy gathers fastest by it); the
    table gives the codes of the names seen before and leaves only a block's new names to number, in the order
    :func:`_firsts` finds.  The work is linear in the edges when most names recur, as in any graph with edges
    to spare.  Codes are ``int32`` (a graph has fewer than ``2**31`` vertices): half the bytes to carry."""
    m = src.shape[0]
    dtype = np.int32 if 2 * m <= np.iinfo(np.int32).max else np.int64  # more names than a graph may hold
    # Code + 1, so that 0 (np.zeros: untouched pages cost no memory) means "not seen yet".
    rank = np.zeros(top + 1, dtype)
    out_src, out_dst = np.empty(m, dtype), np.empty(m, dtype)
    step = 1 << 16
    pairs = np.empty(2 * step, np.intp)
    found, n = [], 0
    for lo in range(0, m, step):
        k = min(step, m - lo)
        p = pairs[:2 * k]
        p[0::2], p[1::2] = src[lo:lo + k], dst[lo:lo + k]
        codes = rank[p]
        new = np.flatnonzero(codes == 0)
        if new.size:
            names = p[_firsts(p, new)]
            rank[names] = np.arange(n + 1, n + 1 + names.size, dtype=dtype)
            n += names.size
            found.append(names)
            codes[new] = rank[p[new]]
        np.subtract(codes[0::2], 1, out=out_src[lo:lo + k])
        np.subtract(codes[1::2], 1, out=out_dst[lo:lo + k])
    return out_src, out_dst, np.concatenate(found).astype(np.int64)


def _firsts(p: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The positions in ``new`` (ascending, below ``2**17``) where a name ``p[i]`` occurs first, ascending."""
    # One SIMD sort of (name, position) keys: several times faster than np.unique's stable argsort.
    comb = p[new] << 17
    comb |= new
    comb.sort()
    head = np.empty(comb.size, bool)
    head[0] = True
    np.not_equal(comb[1:] >> 17, comb[:-1] >> 17, out=head[1:])
    return np.sort(comb[head] & ((1 << 17) - 1))


def label_codes(vertex_values: Any, edge_values: Any, vocabulary: LabelVocabulary | None,
                sizes: tuple[int, int] | None = None) -> tuple[np.ndarray | None, np.ndarray | None,
                                                                LabelVocabulary | None]:
    """Codes of vertex and edge label values (each None: unlabelled), and the vocabulary they use.

    Without ``vocabulary``, labels that are all plain non-negative integers are their own codes; any other label
    gives the graph a vocabulary of its own (as :meth:`Graph.from_networkx` does).  An unlabelled kind gets no
    codes (plain zeros), or with ``sizes`` (vertices, edges) and a vocabulary, that many codes of the unlabelled
    value (see :mod:`distsm.labels`).
    """
    parts = {kind: None if v is None else _factorized(v) for kind, v in (("vertex", vertex_values),
                                                                        ("edge", edge_values))}
    plain = all(is_plain_label(x) for p in parts.values() if p is not None for x in p[1])
    vocab = vocabulary if vocabulary is not None or plain else LabelVocabulary()
    out: list[np.ndarray | None] = []
    for i, (kind, p) in enumerate(parts.items()):
        if p is None:
            out.append(None if vocab is None or sizes is None else
                       np.full(sizes[i], vocab.encode(kind, [UNLABELLED])[0], np.int64))
        else:
            codes, uniques = p
            coded = [int(cast(Any, x)) for x in uniques] if vocab is None else vocab.encode(kind, uniques)
            table = np.asarray(coded, np.int64)
            out.append(table[codes] if codes.size else np.zeros(0, np.int64))
    return out[0], out[1], vocab


def _factorized(values: Any) -> tuple[np.ndarray, list[Hashable]]:
    """``(codes, distinct values in order of first appearance)``; None or NaN is a label like any other."""
    if isinstance(values, np.ndarray):
        arr = values
    else:  # a list of mixed values must not become a NumPy string array
        arr = np.empty(len(values), dtype=object)
        arr[:] = list(values)
    if arr.dtype.kind in "iu" and arr.size:
        distinct, codes = np.unique(arr, return_inverse=True)  # codes of integers need no first-appearance order
        return codes.reshape(-1), distinct.tolist()
    if arr.dtype.kind == "O":
        # pandas reads None as NaN; None is the unlabelled value (distsm.labels), NaN a label like any other.
        missing = np.fromiter((x is None for x in arr), bool, arr.size)
        if missing.any():
            codes = np.empty(arr.size, np.int64)
            codes[~missing], uniques = _factorized(arr[~missing])
            codes[missing] = len(uniques)
            return codes, [*uniques, None]
    import pandas as pd

    codes, uniques = pd.factorize(arr.astype(object) if arr.dtype.kind not in "O" else arr, use_na_sentinel=False)
    return np.asarray(codes, np.int64), list(uniques)


def node_label_values(names: list[Hashable], node_labels: Mapping[Hashable, Any] | None,
                      default: Hashable) -> tuple[list[Hashable], Any]:
    """``(names, labels)``: every vertex's label (``default`` where ``node_labels`` has none), with the nodes that
    only ``node_labels`` names appended as isolated vertices."""
    if node_labels is None:
        return names, [default] * len(names)
    known = set(names)
    extra = [v for v in node_labels.keys() if v not in known]
    names = names + extra
    return names, [node_labels.get(v, default) for v in names]


def edge_list_graph(cls: type[Graph], src: np.ndarray, dst: np.ndarray, reading: Reading, *, n: int,
                    edge_labels: np.ndarray | None, vertex_labels: np.ndarray | None, node_ids: Any) -> Graph:
    """The graph (of class ``cls``) of an edge list of vertex positions, read as ``reading`` says, by the
    conventions of the module's description.  GraphErrors name the offending input edge in ``edge_index``.
    """
    directed, dedupe, source, where = reading.directed, reading.dedupe, reading.source, reading.where
    loops = np.flatnonzero(src == dst)
    if loops.size:
        warnings.warn(f"{source}: dropped {loops.size} self loop(s) (the first {where(int(loops[0]))})",
                      stacklevel=3)
        kept = src != dst
        src, dst = src[kept], dst[kept]
        edge_labels = None if edge_labels is None else edge_labels[kept]
        del kept
    try:
        g = cls.from_edge_arrays(src, dst, n=n, edge_labels=edge_labels, vertex_labels=vertex_labels,
                                   directed=directed, dedupe=dedupe is not False, node_ids=node_ids)
    except GraphError as exc:
        if exc.edge_index is not None:
            exc.edge_index = _input_index(exc.edge_index, loops)
        raise
    if dedupe is None and g.m < src.shape[0]:
        at = _input_index(_first_dropped(src, dst, g, directed), loops)
        kind = "repeated edge(s)" if directed else "repeated edge(s) ('u v' and 'v u' are one undirected edge)"
        warnings.warn(f"{source}: merged {src.shape[0] - g.m} {kind}, the first {where(at)}; pass dedupe=True to "
                      "merge silently or dedupe=False to refuse repeats", stacklevel=3)
    return g


def _input_index(i: int, loops: np.ndarray) -> int:
    """The input index of edge ``i`` of the edges left after dropping the (sorted) input indices ``loops``."""
    # Edge i follows exactly the loops j with loops[j] - j <= i (that many loops precede it in the input).
    return int(i) + int(np.searchsorted(loops - np.arange(loops.size), i, side="right"))


def _first_dropped(src: np.ndarray, dst: np.ndarray, g: Graph, directed: bool) -> int:
    """Index of the first input edge the graph dropped as a repeat (the graph keeps the others in input order)."""
    step = 1 << 16  # in blocks: the search ends at the first repeat, often long before the last edge
    for lo in range(0, g.m, step):
        s, d = src[lo:min(lo + step, g.m)], dst[lo:min(lo + step, g.m)]
        if not directed:
            s, d = np.minimum(s, d), np.maximum(s, d)
        differ = np.flatnonzero((s != g.edge_src[lo:lo + step]) | (d != g.edge_dst[lo:lo + step]))
        if differ.size:
            return lo + int(differ[0])
    return g.m


def require(module: str) -> Any:
    """Import an optional dependency, or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"this needs the optional package {module.split('.')[0]!r}: pip install 'distsm[io]'") \
            from exc


def from_columns(cls: type[Graph], src: Any, dst: Any, edge_label_values: Any, reading: Reading, *,
                 node_labels: Mapping[Hashable, Any] | None = None, default_label: Hashable = None,
                 labels: LabelVocabulary | None = None) -> Graph:
    """The graph (of class ``cls``) of an edge list given as columns of node names (any hashables) and optional
    edge label values, read as ``reading`` says, by the conventions of this module; the names become
    :attr:`Graph.node_ids` (None when they are ``0..n-1``), label values are kept as in
    :meth:`Graph.from_networkx`."""
    s, d, names = first_appearance(np.asarray(src), np.asarray(dst))
    # A node that ``node_labels`` leaves out, or a kind with no labels, is unlabelled (a value of its own, plain 0
    # in a graph without a vocabulary: see distsm.labels) unless a default is named.
    all_names, vvals = node_label_values(names.tolist(), node_labels, default_label)
    if node_labels is None:
        vvals = None if default_label is None else repeated_label(len(all_names), default_label)
    if edge_label_values is None and default_label is not None:
        edge_label_values = repeated_label(s.size, default_label)
    vcodes, ecodes, vocab = label_codes(vvals, edge_label_values, labels, (len(all_names), s.size))
    n = len(all_names)
    ids: Any = names if n == names.size else all_names
    if n == names.size and names.dtype == np.int64 and np.array_equal(names, np.arange(n)):
        ids = None
    g = edge_list_graph(cls, s, d, reading, n=n, edge_labels=ecodes, vertex_labels=vcodes, node_ids=ids)
    g.vocabulary = vocab
    return g


def repeated_label(k: int, value: Hashable) -> np.ndarray:
    """``k`` copies of a label value (an integer array for plain labels: no Python list of millions)."""
    if is_plain_label(value):
        return np.full(k, value, np.int64)
    out = np.empty(k, dtype=object)
    out[:] = [value] * k
    return out


def frame_columns(frame: Any, source: str, target: str, edge_label: str | None) -> tuple[Any, Any, Any]:
    """The source, target and edge-label columns of a pandas DataFrame as arrays (KeyError names a missing one)."""
    missing = [c for c in (source, target, edge_label) if c is not None and c not in frame.columns]
    if missing:
        raise KeyError(f"no column {missing[0]!r} in the DataFrame (columns: {list(frame.columns)})")
    return (frame[source].to_numpy(), frame[target].to_numpy(),
            None if edge_label is None else frame[edge_label].to_numpy())


def arrow_columns(table: Any, source: str, target: str, edge_label: str | None) -> tuple[Any, Any, Any]:
    """:func:`frame_columns` of a pyarrow Table; null sources or targets are a GraphError naming the row."""
    out: list[Any] = []
    for name in (source, target, edge_label):
        if name is None:
            out.append(None)
            continue
        if name not in table.column_names:
            raise KeyError(f"no column {name!r} in the table (columns: {table.column_names})")
        col = table.column(name)
        if name != edge_label and col.null_count:
            row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise GraphError(f"the {'source' if name == source else 'target'} of edge {row} is missing",
                             edge_index=row)
        out.append(col.to_numpy(zero_copy_only=False))
    return out[0], out[1], out[2]
