"""Parquet edge lists: one row per edge, read with pyarrow (``pip install 'distsm[io]'``).

The columns ``source`` and ``target`` (else the first two columns) hold the node names, of any type Parquet
stores (integers, strings, ...), and ``label`` (else a third column, when there is one) the edge label values.
Vertices are numbered in order of first appearance and the names kept as ``node_ids``; the conventions of SNAP
edge lists apply (undirected by default, self loops dropped and repeats merged with a warning).  Detected by the
``.parquet`` name or the ``PAR1`` magic bytes.  The writer stores the node names and edge label values.
"""

from __future__ import annotations

from typing import Any

from distsm.edgelists import Reading, arrow_columns, from_columns, require
from distsm.errors import GraphError, GraphFormatError
from distsm.formats._common import PathLike, fspath
from distsm.formats.registry import Codec, register_format
from distsm.graph import Graph

MAGIC = b"PAR1"


def read_parquet(path: PathLike, *, directed: bool = False, dedupe: bool | None = None) -> Graph:
    """Read a Parquet edge list (see the module's description).

    Raises:
        GraphFormatError: not a Parquet file, too few columns, a missing name or a refused repeat (naming the row).
        ImportError: pyarrow is not installed.
    """
    pq = require("pyarrow.parquet")
    p = fspath(path)
    try:
        table = pq.read_table(p)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise GraphFormatError(p, None, f"not a readable Parquet file: {exc}") from None
    names = table.column_names
    if len(names) < 2:
        raise GraphFormatError(p, None, f"an edge list needs a source and a target column, found {names}")
    source, target = ("source", "target") if {"source", "target"} <= set(names) else (names[0], names[1])
    rest = [c for c in names if c not in (source, target)]
    label = "label" if "label" in rest else (rest[0] if len(rest) == 1 else None)
    try:
        src, dst, elab = arrow_columns(table, source, target, label)
        return from_columns(Graph, src, dst, elab, Reading(directed, dedupe, p))
    except GraphError as exc:
        raise GraphFormatError(p, None, exc.message) from exc


def write_parquet(graph: Graph, path: PathLike) -> None:
    """Write ``graph`` as a Parquet edge list: ``source``, ``target`` (node names) and ``label`` (edge label
    values, when any is not 0).  Vertex labels and isolated vertices are not written."""
    from distsm.labels import label_value

    pa, pq = require("pyarrow"), require("pyarrow.parquet")
    names = graph.names()
    cols: dict[str, Any] = {"source": [names[v] for v in graph.edge_src.tolist()],
                            "target": [names[v] for v in graph.edge_dst.tolist()]}
    if graph.edge_labels.any():
        cols["label"] = [label_value(graph, "edge", x) for x in graph.edge_labels.tolist()]
    pq.write_table(pa.table(cols), fspath(path))


@register_format("parquet", title="Parquet edge list", first_line="'PAR1' magic bytes", directed=False,
                 codec=Codec(read_parquet, write_parquet), magic=MAGIC, suffix=".parquet")
def detect_parquet(fields: list[bytes]) -> bool:
    """Parquet files are binary: detected by their magic bytes, never by a text line."""
    return False
