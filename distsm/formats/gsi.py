"""GSI's graph format (bookug/GSI, pkumod/GSI; ``data/readme``, ``io/IO.cpp``).

A file holds one or more directed, vertex- and edge-labelled graphs::

    t # 0                                             # starts graph 0 (any number k >= 0 after '#')
    numVertex numEdge maxVertexLabel maxEdgeLabel     # header
    v id label                                        # numVertex records, ids 0..numVertex-1 in order
    e from to label                                   # numEdge records, one per arc from -> to
    t # 1                                             # starts the next graph ...
    t # -1                                            # ends the file (optional at the very end)

Lines that are blank or start with ``#`` are ignored.  Labels are kept exactly as written (GSI's tools add 1
to labels when converting; distsm does not shift them), so a write/read round trip is exact.  Reading checks
the header: the vertex and edge counts must match the records (with ``dedupe=True`` the edge count may count
the arcs before or after merging repeats) and no label may exceed the declared maximum.  Self loops and
repeated arcs are errors (``dedupe=True`` merges repeats with equal labels).  ``directed=False`` reads each
``e`` record as an undirected edge instead (then ``u v`` and ``v u`` are the same edge); the writer refuses
undirected graphs.

Every problem raises :class:`distsm.errors.GraphFormatError` naming ``path:line``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from distsm.errors import GraphFormatError
from distsm.formats._common import (BIG, NEG, OK, FieldSpec, Parsed, PathLike, Records, block_rows, build_declared,
                                    check_endpoints, check_fields, diagnose, first_bad, is_int_token, Segmented,
                                    token_repr)
from distsm.formats._writing import open_output, write_rows
from distsm.formats.registry import Codec, register_format
from distsm.graph import Graph

_T, _V, _E = ord("t"), ord("v"), ord("e")
_MAX_LABEL = int(np.iinfo(np.int32).max)
_HEADER = FieldSpec("numVertex numEdge maxVertexLabel maxEdgeLabel",
                    ("vertex count", "edge count", "maximum vertex label", "maximum edge label"), 4, skip=0,
                    max_value=(None, None, _MAX_LABEL, None))
_VSPEC = FieldSpec("v id label", ("vertex id", "vertex label"), 2)
_ESPEC = FieldSpec("e from to label", ("source vertex", "target vertex", "edge label"), 3)
# record kinds
_KT, _KH, _KV, _KE, _KX = 0, 1, 2, 3, 4


def read_gsi(path: PathLike, *, directed: bool = True, dedupe: bool | None = None) -> Graph:
    """Read the single graph of a GSI file.

    Args:
        path: file name (``str`` or path-like); ``.gz`` files are decompressed.
        directed: read ``e`` records as arcs (the default, as GSI does) or as undirected edges.
        dedupe: merge repeated edges with equal labels instead of raising (None, the default, refuses them:
            this format declares its edge count).

    Raises:
        GraphFormatError: the file is malformed, or holds several graphs (use :func:`read_gsi_graphs`).
    """
    return _GSI.one(path, directed, dedupe)


def read_gsi_graphs(path: PathLike, *, directed: bool = True, dedupe: bool | None = None) -> list[Graph]:
    """Read every graph of a GSI file, in file order (arguments as :func:`read_gsi`)."""
    return _GSI.every(path, directed, dedupe)


def write_gsi(graph: Graph, path: PathLike) -> None:
    """Write one directed graph in GSI format (``.gz`` names are compressed).

    Writes ``t # 0``, the header ``n m maxVertexLabel maxEdgeLabel`` (the largest labels in use, 0 when
    there are none), ``v id label`` per vertex, ``e from to label`` per arc, and ``t # -1``.

    Raises:
        ValueError: the graph is undirected (GSI holds directed graphs; use the sm format).
    """
    write_gsi_graphs([graph], path)


def write_gsi_graphs(graphs: Iterable[Graph], path: PathLike) -> None:
    """Write several directed graphs into one GSI file as ``t # 0``, ``t # 1``, ... then ``t # -1``."""
    graphs = list(graphs)
    for g in graphs:
        if not g.directed:
            raise ValueError("the GSI format holds directed graphs only, and this graph is undirected; write it "
                             "with format='sm' instead")
    with open_output(path) as f:
        for k, g in enumerate(graphs):
            maxv = int(g.vertex_labels.max(initial=0))
            maxe = int(g.edge_labels.max(initial=0))
            f.write(f"t # {k}\n{g.n} {g.m} {maxv} {maxe}\n".encode())
            write_rows(f, b"v ", [np.arange(g.n, dtype=np.int64), g.vertex_labels])
            write_rows(f, b"e ", [g.edge_src, g.edge_dst, g.edge_labels])
        f.write(b"t # -1\n")



@register_format("gsi", title="GSI", first_line="'t # k'", directed=True,
                 codec=Codec(read_gsi, write_gsi, read_gsi_graphs, write_gsi_graphs))
def detect_gsi(fields: list[bytes]) -> bool:
    """Whether a first line is a GSI graph marker ``t # k`` (an integer ``k``)."""
    return (len(fields) == 3 and fields[0] == b"t" and fields[1] == b"#"
            and is_int_token(fields[2], allow_negative=True))


# ---------------------------------------------------------------------------------------------------- parsing
def _t_number(recs: Records, i: int) -> int:
    """The ``k`` of a ``t # k`` record (raises on any other shape)."""
    fields = recs.fields_of(i)
    if len(fields) != 3 or fields[1] != b"#":
        raise recs.error(i, f"malformed graph marker {recs.quoted(i)}: expected 't # k' (k >= 0 starts a graph, "
                            "k = -1 ends the file)")
    st = int(recs.status[i, 2])
    k = int(recs.values[i, 2])
    if st not in (OK, NEG) or (st == NEG and k != -1):
        raise recs.error(i, f"graph number {token_repr(fields[2])} in 't # k' must be an "
                            "integer k >= 0 (or -1 to end the file)")
    return k


def _segments(recs: Records) -> list[tuple[int, int, int]]:
    """Check every record's shape and the file's structure; return ``(t record, header record, stop)``."""
    if len(recs) == 0:
        raise GraphFormatError(recs.path, 1, "empty file: no graph found (expected 't # 0')")
    head = recs.head
    numeric = np.isin(recs.status[:, 0], (OK, NEG, BIG))
    kind = np.full(len(recs), _KX, np.int8)
    kind[head == _T] = _KT
    kind[head == _V] = _KV
    kind[head == _E] = _KE
    kind[numeric] = _KH
    unknown = np.flatnonzero(kind == _KX)
    h_rows = np.flatnonzero(kind == _KH)
    v_rows = np.flatnonzero(kind == _KV)
    e_rows = np.flatnonzero(kind == _KE)
    bad = first_bad([int(unknown[0]) if unknown.size else None, check_fields(recs, h_rows, _HEADER),
                     check_fields(recs, v_rows, _VSPEC), check_fields(recs, e_rows, _ESPEC)])
    t_rows = np.flatnonzero(kind == _KT)
    numbers = []
    for t in t_rows.tolist():
        if bad is not None and t > bad:
            break
        numbers.append(_t_number(recs, t))
    if bad is not None:
        if kind[bad] == _KX:
            raise recs.error(bad, f"unknown record type {token_repr(recs.fields_of(bad)[0])} (expected 't', 'v', "
                                  "'e' or the header line 'numVertex numEdge maxVertexLabel maxEdgeLabel')")
        raise diagnose(recs, bad, {_KH: _HEADER, _KV: _VSPEC, _KE: _ESPEC}[int(kind[bad])])
    if kind[0] != _KT or numbers[0] < 0:
        raise recs.error(0, f"expected 't # 0' to start the first graph, found {recs.quoted(0)}")
    stop = len(recs)
    ends = [t for t, k in zip(t_rows.tolist(), numbers) if k < 0]
    if ends:
        stop = ends[0]
        if stop + 1 < len(recs):
            raise recs.error(stop + 1, f"record after the end marker 't # -1' on line {recs.line_of(stop)}")
    starts = [t for t, k in zip(t_rows.tolist(), numbers) if k >= 0 and t < stop]
    # A header line must follow each 't # k', and only there.
    expected_h = np.asarray(starts, np.int64) + 1
    missing = [t for t, h in zip(starts, expected_h.tolist()) if h >= stop or kind[h] != _KH]
    if missing:
        t = missing[0]
        at = t + 1 if t + 1 < stop else t
        raise recs.error(at, f"expected the header 'numVertex numEdge maxVertexLabel maxEdgeLabel' after the "
                             f"graph marker on line {recs.line_of(t)}")
    stray = h_rows[~np.isin(h_rows, expected_h)]
    if stray.size:
        raise recs.error(int(stray[0]), f"unexpected line {recs.quoted(int(stray[0]))}: a header line "
                                        "'numVertex numEdge maxVertexLabel maxEdgeLabel' may only follow 't # k'")
    stops = starts[1:] + [stop]
    return [(t, t + 1, s) for t, s in zip(starts, stops)]


def _build(recs: Records, marker: int, header: int, hi: int, *, directed: bool, dedupe: bool) -> Graph:
    """Validate one graph (records ``header+1..hi-1``) against its header and build it."""
    n_decl, m_decl, max_vl, max_el = (int(x) for x in recs.values[header])
    hline = recs.line_of(header)
    v_rows, e_rows = block_rows(recs, header + 1, hi, header, n_decl, "the header")
    vlab = recs.values[v_rows, 2]
    over = np.flatnonzero(vlab > max_vl)
    if over.size:
        k = int(over[0])
        raise recs.error(int(v_rows[k]), f"vertex label {int(vlab[k])} exceeds the maximum vertex label "
                                         f"{max_vl} declared by the header on line {hline}")
    src = recs.values[e_rows, 1]
    dst = recs.values[e_rows, 2]
    elab = recs.values[e_rows, 3]
    check_endpoints(recs, e_rows, src, dst, n_decl, header, "the header")
    over = np.flatnonzero(elab > max_el)
    if over.size:
        k = int(over[0])
        raise recs.error(int(e_rows[k]), f"edge label {int(elab[k])} exceeds the maximum edge label "
                                         f"{max_el} declared by the header on line {hline}")
    return build_declared(recs, Parsed(src, dst, e_rows, header, elab, vlab, v_rows), m_decl, directed=directed,
                          dedupe=dedupe, n=n_decl)


_GSI = Segmented(_segments, _build, "'t # k'")
