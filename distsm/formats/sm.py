"""The subgraph-matching benchmark format (RapidsAtHKUST/SubgraphMatching, Sun & Luo, SIGMOD 2020).

A file holds one or more graphs; each starts with a header record and lists its vertices, then its edges::

    t N M               # header: N vertices, M edges
    v id label [deg]    # N records, ids 0..N-1 in order; deg (optional) = number of neighbours
    e u v [label]       # M records, one per undirected edge; label optional, default 0

Lines that are blank or start with ``#`` are ignored.  Reading checks everything the header and the ``v``
records declare: the vertex and edge counts, the degrees (when given), ids in order, edges between declared
vertices, no self loops and no repeated edges (``u v`` and ``v u`` are the same edge).  ``dedupe=True`` merges
repeats that carry the same label; then ``M`` and the degrees may count the edges either before or after the
merge.  ``directed=True`` reads each ``e u v`` as an arc ``u -> v`` (the degree of a vertex is then its
in-degree plus its out-degree); the writer refuses directed graphs.

Every problem raises :class:`distsm.errors.GraphFormatError` naming ``path:line``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from distsm.errors import GraphFormatError
from distsm.formats._common import (FieldSpec, Parsed, PathLike, Records, block_rows, build_declared,
                                    check_endpoints, check_fields, diagnose, first_bad, is_int_token, Segmented,
                                    token_repr)
from distsm.formats._writing import open_output, write_rows
from distsm.formats.registry import Codec, register_format
from distsm.graph import Graph

_T, _V, _E = ord("t"), ord("v"), ord("e")
_MAX_LABEL = int(np.iinfo(np.int32).max)
_SPECS = {
    _T: FieldSpec("t N M", ("vertex count", "edge count"), 2),
    _V: FieldSpec("v id label [degree]", ("vertex id", "vertex label", "degree"), 2,
                  max_value=(None, _MAX_LABEL, None)),
    _E: FieldSpec("e u v [label]", ("source vertex", "target vertex", "edge label"), 2),
}


def read_sm(path: PathLike, *, directed: bool = False, dedupe: bool | None = None) -> Graph:
    """Read the single graph of an sm file.

    Args:
        path: file name (``str`` or path-like); ``.gz`` files are decompressed.
        directed: read ``e u v`` as the arc ``u -> v`` instead of an undirected edge.
        dedupe: merge repeated edges with equal labels instead of raising (None, the default, refuses them:
            this format declares its edge count).

    Returns:
        The graph.

    Raises:
        GraphFormatError: the file is malformed, or holds several graphs (use :func:`read_sm_graphs`).
    """
    return _SM.one(path, directed, dedupe)


def read_sm_graphs(path: PathLike, *, directed: bool = False, dedupe: bool | None = None) -> list[Graph]:
    """Read every graph of an sm file, in file order (arguments as :func:`read_sm`)."""
    return _SM.every(path, directed, dedupe)


def write_sm(graph: Graph, path: PathLike) -> None:
    """Write one undirected graph in sm format (``.gz`` names are compressed).

    Writes ``t N M``, then ``v id label deg`` per vertex (deg = number of neighbours), then ``e u v label`` per
    edge with ``u < v``, in order of ``(u, v)``; the label column is left out when every edge label is 0.  Readers
    that lay each vertex's neighbours out in file order (EGSM's) then get them sorted, as their intersections
    assume.

    Raises:
        ValueError: the graph is directed (the format holds undirected graphs; use GSI for directed ones).
    """
    write_sm_graphs([graph], path)


def write_sm_graphs(graphs: Iterable[Graph], path: PathLike) -> None:
    """Write several undirected graphs into one sm file, one ``t`` block each (see :func:`write_sm`)."""
    graphs = list(graphs)
    for g in graphs:
        if g.directed:
            raise ValueError("the sm format holds undirected graphs only, and this graph is directed; "
                             "write it with format='gsi' (directed, labelled) instead")
    with open_output(path) as f:
        for g in graphs:
            f.write(f"t {g.n} {g.m}\n".encode())
            write_rows(f, b"v ", [np.arange(g.n, dtype=np.int64), g.vertex_labels, g.degrees])
            src, dst = np.asarray(g.edge_src), np.asarray(g.edge_dst)
            order = np.lexsort((dst, src))
            cols = [src[order], dst[order]]
            if g.edge_labels.any():
                cols.append(np.asarray(g.edge_labels)[order])
            write_rows(f, b"e ", cols)



@register_format("sm", title="sm", first_line="'t N M'", directed=False,
                 codec=Codec(read_sm, write_sm, read_sm_graphs, write_sm_graphs))
def detect_sm(fields: list[bytes]) -> bool:
    """Whether a first line is an sm header ``t N M`` (two non-negative integers)."""
    return len(fields) == 3 and fields[0] == b"t" and is_int_token(fields[1]) and is_int_token(fields[2])


# ---------------------------------------------------------------------------------------------------- parsing
def _segments(recs: Records) -> list[tuple[int, int, int]]:
    """Check every record's shape; return ``(header, first, stop)`` record indices of each graph."""
    if len(recs) == 0:
        raise GraphFormatError(recs.path, 1, "empty file: no graph found (expected a 't N M' header)")
    head = recs.head
    unknown = np.flatnonzero((head != _T) & (head != _V) & (head != _E))
    rows = {k: np.flatnonzero(head == k) for k in _SPECS}
    bad = first_bad([int(unknown[0]) if unknown.size else None]
                    + [check_fields(recs, rows[k], spec) for k, spec in _SPECS.items()])
    if bad is not None:
        if head[bad] not in _SPECS:
            raise recs.error(bad, f"unknown record type {token_repr(recs.fields_of(bad)[0])} (expected 't', 'v' or "
                                  "'e')")
        raise diagnose(recs, bad, _SPECS[int(head[bad])])
    if head[0] != _T:
        raise recs.error(0, f"'{chr(head[0])}' record before the first 't N M' header")
    t_rows = rows[_T]
    stops = np.append(t_rows[1:], len(recs))
    return [(int(t), int(t) + 1, int(s)) for t, s in zip(t_rows, stops)]


def _build(recs: Records, header: int, lo: int, hi: int, *, directed: bool, dedupe: bool) -> Graph:
    """Validate one ``t`` block (records ``lo..hi-1`` after header ``header``) and build its graph."""
    n_decl = int(recs.values[header, 1])
    m_decl = int(recs.values[header, 2])
    hline = recs.line_of(header)
    v_rows, e_rows = block_rows(recs, lo, hi, header, n_decl, "the 't' header")
    src = recs.values[e_rows, 1]
    dst = recs.values[e_rows, 2]
    check_endpoints(recs, e_rows, src, dst, n_decl, header, "the 't' header")
    g = build_declared(recs, Parsed(src, dst, e_rows, header, recs.values[e_rows, 3], recs.values[v_rows, 2], v_rows),
                       m_decl, directed=directed, dedupe=dedupe, n=n_decl)
    _check_degrees(recs, v_rows, g, src, dst, dedupe, hline)
    return g


def _check_degrees(recs: Records, v_rows: np.ndarray, g: Graph, src: np.ndarray, dst: np.ndarray,
                   dedupe: bool, hline: int) -> None:
    """Declared degrees (4th field of ``v`` records, where present) must match the edges."""
    given = recs.status[v_rows, 3] == 0
    if not given.any():
        return
    declared = recs.values[v_rows, 3]
    actual = g.degrees
    wrong = given & (declared != actual)
    if dedupe and wrong.any():
        raw = np.bincount(src, minlength=g.n) + np.bincount(dst, minlength=g.n)
        wrong &= declared != raw
    bad = np.flatnonzero(wrong)
    if bad.size:
        k = int(bad[0])
        raise recs.error(int(v_rows[k]), f"vertex {k} declares degree {int(declared[k])} but the 'e' records of "
                                         f"this graph (header on line {hline}) give it {int(actual[k])}")


_SM = Segmented(_segments, _build, "'t'")
