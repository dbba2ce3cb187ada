"""SNAP edge lists (snap.stanford.edu): one edge per line.

::

    # Directed graph (each unordered pair of nodes is saved once): Wiki-Vote.txt
    # FromNodeId	ToNodeId
    30	1412
    30	3352

Lines that are blank or start with ``#`` are ignored.  Every other line holds exactly two non-negative
integers ``u v`` separated by spaces or tabs, or three where the third is an integer edge label; all lines of
a file must have the same number of columns.  Vertex ids may be any non-negative integers (not necessarily
contiguous or starting at 0): they are renumbered ``0..n-1`` in order of first appearance (reading ``u`` before
``v`` on each line), and the graph keeps each vertex's id from the file as ``node_ids`` (so
:func:`distsm.iter_mappings` and ``match(..., as_frame=True)`` answer in the file's ids).  All vertex
labels are 0.

Self loops are dropped with a warning (their vertex is kept, possibly isolated).  A repeated edge is an error
naming its line unless ``dedupe=True``, which merges repeats with equal labels; in an undirected list (the
default) ``u v`` and ``v u`` are the same edge.

The format has no vertex records, so **isolated vertices are lost** when writing (a vertex appears only
through its edges), and so are vertex labels (the writer warns when any is not 0).  After a write/read round
trip vertices are also renumbered in order of first appearance in the written edge list.
"""

from __future__ import annotations

import warnings

import numpy as np

from distsm.errors import GraphFormatError
from distsm.formats._common import (
    FieldSpec,
    PathLike,
    build_graph,
    check_fields,
    diagnose,
    is_int_token,
    open_output,
    read_records,
    write_rows,
)
from distsm.formats.registry import register_format
from distsm.graph import Graph

_SPEC = FieldSpec("u v [label]", ("source vertex", "target vertex", "edge label"), 2, skip=0)


def read_snap_with_ids(path: PathLike, *, directed: bool = False,
                       dedupe: bool = False) -> tuple[Graph, np.ndarray]:
    """Read a SNAP edge list and return ``(graph, original_ids)``.

    Args:
        path: file name (``str`` or path-like); ``.gz`` files are decompressed.
        directed: read ``u v`` as the arc ``u -> v`` (default: undirected edges).
        dedupe: merge repeated edges with equal labels instead of raising.

    Returns:
        The graph (vertices numbered in order of first appearance, the file's ids kept as ``graph.node_ids``)
        and ``int64[n]``: the id each vertex had in the file.

    Raises:
        GraphFormatError: a malformed line, a repeated edge (without ``dedupe``), or no edge line at all.
    """
    recs = read_records(path)
    if len(recs) == 0:
        raise GraphFormatError(recs.path, 1, "empty file: no edge lines found (expected 'u v' lines)")
    rows = np.arange(len(recs))
    bad = check_fields(recs, rows, _SPEC)
    if bad is not None:
        raise diagnose(recs, bad, _SPEC)
    ncols = int(recs.nfields[0])
    other = np.flatnonzero(recs.nfields != ncols)
    if other.size:
        i = int(other[0])
        raise recs.error(i, f"wrong field count: this line has {int(recs.nfields[i])} fields but the first edge "
                            f"line ({recs.line_of(0)}) has {ncols}; all lines must have the same columns")
    src = recs.values[:, 0]
    dst = recs.values[:, 1]
    elab = recs.values[:, 2] if ncols == 3 else None
    pairs = np.empty(2 * src.size, np.int64)
    pairs[0::2] = src
    pairs[1::2] = dst
    dense, original_ids = _first_appearance_ids(pairs)
    dsrc = dense[0::2]
    ddst = dense[1::2]
    loops = np.flatnonzero(dsrc == ddst)
    if loops.size:
        warnings.warn(f"{recs.path}: dropped {loops.size} self loop(s) (the first on line "
                      f"{recs.line_of(int(loops[0]))})", stacklevel=2)
        keep = dsrc != ddst
        rows, dsrc, ddst = rows[keep], dsrc[keep], ddst[keep]
        if elab is not None:
            elab = elab[keep]
    g = build_graph(recs, n=int(original_ids.size), src=dsrc, dst=ddst, elab=elab, vlab=None, directed=directed,
                    dedupe=dedupe, e_rows=rows, v_rows=None, header=0, node_ids=original_ids)
    return g, original_ids


def _first_appearance_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber ``ids`` to ``0..k-1`` in order of first appearance; returns ``(dense, original_ids)``."""
    if ids.size == 0:
        return ids.copy(), ids.copy()
    top = int(ids.max())
    if top <= max(4 * ids.size, 1 << 20):
        keys, universe = ids, None  # small enough for direct lookup tables
    else:
        universe, keys = np.unique(ids, return_inverse=True)
        keys = keys.reshape(-1)
    size = int(keys.max()) + 1
    pos = np.arange(ids.size, dtype=np.int64)
    first = np.full(size, ids.size, np.int64)
    np.minimum.at(first, keys, pos)
    in_order = keys[first[keys] == pos]  # each key once, at its first position
    rank = np.empty(size, np.int64)
    rank[in_order] = np.arange(in_order.size, dtype=np.int64)
    original = in_order if universe is None else universe[in_order]
    return rank[keys], original


def read_snap(path: PathLike, *, directed: bool = False, dedupe: bool = False) -> Graph:
    """Read a SNAP edge list (see :func:`read_snap_with_ids`, which also returns the original ids)."""
    return read_snap_with_ids(path, directed=directed, dedupe=dedupe)[0]


def write_snap(graph: Graph, path: PathLike) -> None:
    """Write ``graph`` as an edge list (``.gz`` names are compressed).

    Writes ``# distsm edge list: n=<n> m=<m> directed=<True|False>``, then ``u v`` per edge (``u < v`` for
    undirected graphs), with a third ``label`` column when any edge label is not 0.  Vertices are written by
    their ``node_ids`` when those are non-negative integers (a SNAP list read back keeps its ids), else by
    position.  Isolated vertices and
    vertex labels cannot be represented and are lost (a warning is issued when a vertex label is not 0).
    """
    if graph.vertex_labels.any():
        warnings.warn("the SNAP edge-list format has no vertex labels: the graph's vertex labels are not written",
                      stacklevel=2)
    cols = [graph.edge_src, graph.edge_dst]
    names = graph.node_ids
    if names is not None and names.dtype == np.int64 and (names.size == 0 or names.min() >= 0):
        cols = [names[graph.edge_src], names[graph.edge_dst]]  # the ids the graph was read with
    if graph.edge_labels.any():
        cols.append(graph.edge_labels)
    with open_output(path) as f:
        f.write(f"# distsm edge list: n={graph.n} m={graph.m} directed={graph.directed}\n".encode())
        write_rows(f, b"", cols)


@register_format("snap", title="SNAP edge list", first_line="'u v [label]'", directed=False, read=read_snap,
                 write=write_snap)
def detect_snap(fields: list[bytes]) -> bool:
    """Whether a first line is an edge ``u v`` or ``u v label`` (non-negative integers)."""
    return len(fields) in (2, 3) and all(is_int_token(x) for x in fields)
