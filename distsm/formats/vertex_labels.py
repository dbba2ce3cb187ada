"""Vertex labels beside an edge list: a text file of ``vertex label`` lines.

::

    # vertex label
    30  protein
    1412  ligand

Blank lines and lines starting with ``#`` are skipped.  Every other line holds a vertex id as the edge list names
it (a non-negative integer) and its label, any token without white space; labels that are all plain
non-negative integers are kept as integers, others as strings (the graph then carries a
:class:`~distsm.LabelVocabulary`, and queries match them by value).  Every vertex of the edge list needs one label
(unless ``default_label`` is given); a vertex the edge list does not have, a vertex labelled twice and a line of
another shape are errors naming the file and line.

pyarrow's CSV reader reads the file where it provably reads what the formats' lexer would; otherwise the lexer
(:func:`~distsm.formats._common.lex`) reads it, the label tokens cut out with array operations, and names the
line and the problem.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from distsm.edgelists import label_codes
from distsm.errors import GraphFormatError
from distsm.formats._common import _WS, OK, PathLike, Records, fspath, lex, read_bytes
from distsm.formats._fast import TableLines, _body, int_table
from distsm.graph import Graph


def read_vertex_labels(path: PathLike) -> tuple[np.ndarray, np.ndarray, Records | TableLines]:
    """``(ids, labels, lines)`` of a vertex-label file: ``int64`` ids, the labels (``int64`` where every one is
    a plain non-negative integer, else ``object`` strings), and where each row came from (for messages).

    pyarrow's CSV reader reads the file where it provably reads what the lexer would (:func:`int_table` for
    integer labels, :func:`_token_table` for others); the lexer reads the rest and names what is wrong."""
    p = fspath(path)
    data = read_bytes(p)
    fast = int_table(data, p)
    if fast is not None and len(fast[0]) == 2:
        (ids, labels), lines = fast
        return ids.astype(np.int64, copy=False), labels.astype(np.int64, copy=False), lines
    tokens = _token_table(data, p)
    if tokens is not None:
        return tokens
    return _lexed(data, p)


def _lexed(data: bytes, p: str) -> tuple[np.ndarray, np.ndarray, Records]:
    """:func:`read_vertex_labels` by the lexer, which names the line and the problem of a malformed file."""
    recs = lex(data, p)
    if len(recs) == 0:
        raise GraphFormatError(p, 1, "empty file: no 'vertex label' lines found")
    bad = np.flatnonzero((recs.nfields != 2) | (recs.status[:, 0] != OK))
    if bad.size:
        i = int(bad[0])
        what = (f"expected 'vertex label' (2 fields), got {int(recs.nfields[i])}" if recs.nfields[i] != 2 else
                f"the vertex id must be a non-negative integer, got {recs.quoted(i)}")
        raise recs.error(i, what)
    ids = np.ascontiguousarray(recs.values[:, 0])
    if (recs.status[:, 1] == OK).all():
        return ids, np.ascontiguousarray(recs.values[:, 1]), recs
    return ids, _second_tokens(recs), recs


def _token_table(data: bytes, path: str) -> tuple[np.ndarray, np.ndarray, TableLines] | None:
    """``vertex label`` lines read by pyarrow (multi-threaded, labels dictionary-encoded), or None where the lexer
    might read the file differently: a line of another shape, a comment past the header, a negative or signed id
    (the file's ``+`` and ``-`` bytes must all lie inside labels), a label with white space or none, text that
    is not UTF-8, labels that are all integers (the lexer keeps those as numbers), or no pyarrow."""
    body, first = _body(data)
    if body >= len(data):
        return None
    end = data.find(b"\n", body)
    sep = "\t" if b"\t" in data[body:len(data) if end < 0 else end] else " "
    try:
        import pyarrow as pa
        import pyarrow.csv as pc
    except ImportError:
        return None
    try:
        table = pc.read_csv(pa.BufferReader(pa.py_buffer(data)[body:]),  # no copy of the file's bytes
                            read_options=pc.ReadOptions(column_names=["v", "label"]),
                            parse_options=pc.ParseOptions(delimiter=sep, quote_char=False, escape_char=False),
                            convert_options=pc.ConvertOptions(column_types={
                                "v": pa.int64(), "label": pa.dictionary(pa.int32(), pa.string())}))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    ids = table.column("v").to_numpy()
    column = table.column("label").unify_dictionaries().combine_chunks()
    if not ids.size or int(ids.min()) < 0 or column.null_count:
        return None
    distinct = column.dictionary.to_pylist()
    which = column.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    if any(not t or len(t.split()) != 1 or t != t.strip() for t in distinct) or all(t.isdigit() for t in distinct):
        return None
    uses = np.bincount(which, minlength=len(distinct))
    for sign in ("+", "-"):
        inside = sum(int(u) * t.count(sign) for t, u in zip(distinct, uses.tolist()) if sign in t)
        if data.count(sign.encode(), body) != inside:
            return None
    labels = np.array(distinct + [""], dtype=object)[:-1][which]
    lines = data.count(b"\n", body) + (not data.endswith(b"\n"))
    consecutive = lines == ids.size
    return ids, labels, TableLines(path, b"" if consecutive else data, first, consecutive)


def _second_tokens(recs: Records) -> np.ndarray:
    """The second field of every record (each has two) as ``object`` strings, cut out with array operations."""
    buf = np.frombuffer(recs.data, np.uint8)
    blank = _WS[buf]
    spaces, marks = np.flatnonzero(blank), np.flatnonzero(~blank)
    first_end = spaces[np.searchsorted(spaces, recs.start)]          # the first field's end: a blank follows it
    start = marks[np.searchsorted(marks, first_end)]                 # the second field's first byte
    after = np.searchsorted(spaces, start)
    end = np.where(after < spaces.size, spaces[np.minimum(after, spaces.size - 1)], buf.size)
    width = int((end - start).max())
    cells = np.zeros((start.size, width), np.uint8)
    rows, cols = np.nonzero(np.arange(width) < (end - start)[:, None])
    cells[rows, cols] = buf[start[rows] + cols]
    tokens = cells.view(f"S{width}").reshape(-1)
    # Labels repeat: the distinct tokens are decoded, not every line's (1M lines of 8 labels: 0.6 s -> 0.2 s).
    distinct, which = np.unique(tokens, return_inverse=True)
    try:
        text = np.array([t.decode("utf-8") for t in distinct.tolist()] + [""], dtype=object)[:-1]
    except UnicodeDecodeError as e:
        i = int(next(k for k, t in enumerate(tokens.tolist()) if not _decodes(t)))
        raise recs.error(i, f"the label is not UTF-8 text ({e.reason})") from None
    return text[which.reshape(-1)]


def _decodes(token: bytes) -> bool:
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def with_vertex_labels(graph: Graph, path: PathLike, *, default_label: Hashable | None = None) -> Graph:
    """``graph`` (an edge list: its ``node_ids`` are the file's ids, else its positions are) with the vertex labels
    of the file at ``path``; ``default_label`` labels the vertices the file leaves out (None: each needs one).

    Raises:
        GraphFormatError: a malformed line, a vertex the edge list does not have, a vertex labelled twice, or
            (without ``default_label``) a vertex of the edge list with no label.
    """
    ids, labels, recs = read_vertex_labels(path)
    known = np.arange(graph.n, dtype=np.int64) if graph.node_ids is None else np.asarray(graph.node_ids)
    if known.dtype.kind not in "iu":
        raise GraphFormatError(recs.path, None, "the edge list's vertices are not integer ids, so a vertex-label "
                                                "file cannot name them")
    vertex = _positions(known, ids)
    unknown = np.flatnonzero(vertex < 0)
    if unknown.size:
        i = int(unknown[0])
        raise recs.error(i, f"vertex {int(ids[i])} is not in the edge list")
    first = np.full(graph.n, -1, np.int64)
    first[vertex[::-1]] = np.arange(ids.size)[::-1]   # each vertex's first record
    again = np.flatnonzero(first[vertex] != np.arange(ids.size))
    if again.size:
        i = int(again[0])
        raise recs.error(i, f"vertex {int(ids[i])} is labelled twice (first on line "
                            f"{recs.line_of(int(first[vertex[i]]))})")
    labelled = np.zeros(graph.n, bool)
    labelled[vertex] = True
    missing = np.flatnonzero(~labelled)
    values = np.empty(graph.n, dtype=object if missing.size else labels.dtype)
    if missing.size and default_label is None:
        raise GraphFormatError(recs.path, None, f"vertex {int(known[missing[0]])} of the edge list has no label "
                                                f"({missing.size} vertices have none; give a default label to "
                                                f"label them)")
    values[vertex] = labels
    if missing.size:
        values[missing] = default_label
    return _relabelled(graph, values)


def _positions(known: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The position of each of ``ids`` in ``known`` (distinct non-negative ids), -1 where it is not there: through
    a table indexed by id where the ids are dense enough (a million random ids: 0.03 s against 0.5 s sorted and
    searched), else by binary search."""
    if not known.size:
        return np.full(ids.shape, -1, np.int64)
    top = int(known.max())
    if top < 8 * known.size + 1024:
        table = np.full(top + 1, -1, np.int64)
        table[known] = np.arange(known.size)
        inside = ids <= top
        return np.where(inside, table[np.where(inside, ids, 0)], -1)
    order = np.argsort(known, kind="stable")
    at = np.minimum(np.searchsorted(known[order], ids), known.size - 1)
    return np.where(known[order][at] == ids, order[at], -1)


def _relabelled(graph: Graph, values: np.ndarray) -> Graph:
    """``graph`` with vertex label values ``values``.  Labels that need a vocabulary give the graph one, in which
    its integer edge labels are encoded too (their distinct values found by a count, not a sort of every edge:
    sorting 10M edge labels took a second); the adjacency is kept wherever the edge codes stay as they were."""
    vcodes, _, vocab = label_codes(values, None, graph.vocabulary)
    assert vcodes is not None  # values were given
    ecodes = np.asarray(graph.edge_labels)
    if vocab is not None and graph.vocabulary is None and ecodes.size:
        present = np.flatnonzero(np.bincount(ecodes))
        coded = np.asarray(vocab.encode("edge", present.tolist()), np.int64)
        if not np.array_equal(coded, present):
            table = np.zeros(int(present[-1]) + 1, np.int64)
            table[present] = coded
            ecodes = table[ecodes]
    kept = ecodes is graph.edge_labels or ecodes.base is graph.edge_labels or \
        np.shares_memory(ecodes, graph.edge_labels)
    return Graph(graph.n, np.asarray(graph.edge_src), np.asarray(graph.edge_dst), ecodes, vcodes, graph.directed,
                 node_ids=graph.node_ids, vocabulary=vocab,
                 csr=(graph.indptr, graph.neighbors, graph.neighbor_labels) if kept else None)
