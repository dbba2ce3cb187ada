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

Self loops are dropped with a warning (their vertex is kept, possibly isolated).  Repeated edges with equal
labels are merged with one warning saying how many (many SNAP files list each undirected edge both ways, and
networkx's ``read_edgelist`` merges them too); ``dedupe=True`` merges them silently and ``dedupe=False`` refuses
them, naming the line.  In an undirected list (the default) ``u v`` and ``v u`` are the same edge.  A repeat
with a different label is always an error.

Files of plain numbers are parsed by pyarrow's multi-threaded CSV reader (pandas' C parser without pyarrow, or
when a file mixes spaces and tabs); anything it might read differently from the format's own lexer (comments
after the first data line, signs, other characters) is read by the lexer instead, which names the line and the
problem of a malformed file.

The format has no vertex records, so **isolated vertices are lost** when writing (a vertex appears only
through its edges), and so are vertex labels (the writer warns when any is not 0).  After a write/read round
trip vertices are also renumbered in order of first appearance in the written edge list.
"""

from __future__ import annotations

import warnings

import numpy as np

from distsm.edgelists import Reading, edge_list_graph, first_appearance
from distsm.errors import GraphError, GraphFormatError
from distsm.formats._common import (
    FieldSpec,
    Lines,
    PathLike,
    Records,
    check_fields,
    diagnose,
    fspath,
    is_int_token,
    lex,
    Parsed,
    located,
    read_bytes,
    )
from distsm.formats._fast import int_table
from distsm.formats._writing import open_output, write_rows
from distsm.formats.registry import Codec, register_format
from distsm.graph import Graph

_SPEC = FieldSpec("u v [label]", ("source vertex", "target vertex", "edge label"), 2, skip=0)


def read_snap_with_ids(path: PathLike, *, directed: bool = False,
                       dedupe: bool | None = None) -> tuple[Graph, np.ndarray]:
    """Read a SNAP edge list and return ``(graph, original_ids)``.

    Args:
        path: file name (``str`` or path-like); ``.gz`` files are decompressed.
        directed: read ``u v`` as the arc ``u -> v`` (default: undirected edges).
        dedupe: repeated edges with equal labels (in an undirected list ``u v`` and ``v u`` are one edge) are
            merged with one warning saying how many (None, the default), merged silently (True) or refused
            (False).

    Returns:
        The graph (vertices numbered in order of first appearance, the file's ids kept as ``graph.node_ids``)
        and ``int64[n]``: the id each vertex had in the file.

    Raises:
        GraphFormatError: a malformed line, a repeated edge with a different label (or any repeat with
            ``dedupe=False``), or no edge line at all.
    """
    p = fspath(path)
    data = read_bytes(p)
    table = int_table(data, p)
    lines: Lines
    if table is None or len(table[0]) not in (2, 3):
        cols, lines = _checked_columns(lex(data, p))  # also names the problem of a file the fast path refused
    else:
        cols, lines = table
    del data, table
    dsrc, ddst, original_ids = first_appearance(cols[0], cols[1])
    labels = cols[2] if len(cols) == 3 else None
    del cols  # the file's ids: only their codes are needed from here on
    try:
        g = edge_list_graph(Graph, dsrc, ddst, Reading(directed, dedupe, p, lambda i: f"on line {lines.line_of(i)}"),
                            n=int(original_ids.size), edge_labels=labels, vertex_labels=None, node_ids=original_ids)
    except GraphError as exc:
        raise located(lines, exc, Parsed(dsrc, ddst, np.arange(dsrc.size), 0), directed) from exc
    return g, original_ids


def _checked_columns(recs: Records) -> tuple[list[np.ndarray], Records]:
    """The integer columns of a lexed edge list, every line checked (the first bad one raises)."""
    if len(recs) == 0:
        raise GraphFormatError(recs.path, 1, "empty file: no edge lines found (expected 'u v' lines)")
    bad = check_fields(recs, np.arange(len(recs)), _SPEC)
    if bad is not None:
        raise diagnose(recs, bad, _SPEC)
    ncols = int(recs.nfields[0])
    other = np.flatnonzero(recs.nfields != ncols)
    if other.size:
        i = int(other[0])
        raise recs.error(i, f"wrong field count: this line has {int(recs.nfields[i])} fields but the first edge "
                            f"line ({recs.line_of(0)}) has {ncols}; all lines must have the same columns")
    return [np.ascontiguousarray(recs.values[:, j]) for j in range(ncols)], recs


def read_snap(path: PathLike, *, directed: bool = False, dedupe: bool | None = None) -> Graph:
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


@register_format("snap", title="SNAP edge list", first_line="'u v [label]'", directed=False,
                 codec=Codec(read_snap, write_snap))
def detect_snap(fields: list[bytes]) -> bool:
    """Whether a first line is an edge ``u v`` or ``u v label`` (non-negative integers)."""
    return len(fields) in (2, 3) and all(is_int_token(x) for x in fields)
