"""Graph file readers and writers.

Formats (``FORMATS``):

* ``"sm"``: the subgraph-matching benchmark format (``t N M`` / ``v id label deg`` / ``e u v [label]``),
  undirected by default; see :mod:`distsm.formats.sm`.
* ``"gsi"``: GSI's format (``t # 0`` / header / ``v id label`` / ``e from to label`` / ``t # -1``), directed by
  default; see :mod:`distsm.formats.gsi`.
* ``"snap"``: SNAP edge lists (``u v [label]`` per line, any non-negative ids, renumbered), undirected by
  default; see :mod:`distsm.formats.snap`.

Paths may be ``str`` or path-like; names ending in ``.gz`` are read and written gzip-compressed.  A malformed
file raises :class:`distsm.errors.GraphFormatError`, whose message starts with ``path:line:``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from distsm.formats._common import PathLike
from distsm.formats.detect import detect_format
from distsm.formats.gsi import read_gsi, read_gsi_graphs, write_gsi, write_gsi_graphs
from distsm.formats.sm import read_sm, read_sm_graphs, write_sm, write_sm_graphs
from distsm.formats.snap import read_snap, read_snap_with_ids, write_snap
from distsm.graph import Graph

FORMATS = ("sm", "gsi", "snap")
_DEFAULT_DIRECTED = {"sm": False, "gsi": True, "snap": False}

__all__ = [
    "FORMATS",
    "detect_format",
    "read_graph",
    "read_graphs",
    "read_gsi",
    "read_gsi_graphs",
    "read_sm",
    "read_sm_graphs",
    "read_snap",
    "read_snap_with_ids",
    "write_graph",
    "write_graphs",
    "write_gsi",
    "write_gsi_graphs",
    "write_sm",
    "write_sm_graphs",
    "write_snap",
]


def _resolve(path: PathLike, format: str) -> str:
    if format == "auto":
        return detect_format(path)
    if format not in FORMATS:
        raise ValueError(f"unknown graph format {format!r}; expected 'auto' or one of {', '.join(FORMATS)}")
    return format


def read_graph(path: PathLike, format: str = "auto", *, directed: bool | None = None,
               dedupe: bool = False) -> Graph:
    """Read the one graph stored in ``path``.

    Args:
        path: file name (``str`` or path-like); ``.gz`` files are decompressed.
        format: ``"auto"`` (see :func:`detect_format`) or one of :data:`FORMATS`.
        directed: ``None`` for the format's own default (sm: False, gsi: True, snap: False).
        dedupe: merge repeated edges carrying equal labels instead of raising.

    Raises:
        GraphFormatError: the file is malformed, or holds several graphs (use :func:`read_graphs`).
        ValueError: an unknown ``format``.
        OSError: the file cannot be opened.
    """
    fmt = _resolve(path, format)
    d = _DEFAULT_DIRECTED[fmt] if directed is None else bool(directed)
    if fmt == "sm":
        return read_sm(path, directed=d, dedupe=dedupe)
    if fmt == "gsi":
        return read_gsi(path, directed=d, dedupe=dedupe)
    return read_snap(path, directed=d, dedupe=dedupe)


def read_graphs(path: PathLike, format: str = "auto", **kw: Any) -> list[Graph]:
    """Read every graph stored in ``path`` (a SNAP edge list holds exactly one).

    Keyword arguments ``directed`` and ``dedupe`` are as in :func:`read_graph`.
    """
    unknown = set(kw) - {"directed", "dedupe"}
    if unknown:
        raise TypeError(f"read_graphs() got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
    fmt = _resolve(path, format)
    directed = kw.get("directed")
    d = _DEFAULT_DIRECTED[fmt] if directed is None else bool(directed)
    dedupe = bool(kw.get("dedupe", False))
    if fmt == "sm":
        return read_sm_graphs(path, directed=d, dedupe=dedupe)
    if fmt == "gsi":
        return read_gsi_graphs(path, directed=d, dedupe=dedupe)
    return [read_snap(path, directed=d, dedupe=dedupe)]


def write_graph(graph: Graph, path: PathLike, format: str = "sm") -> None:
    """Write ``graph`` to ``path`` in ``format`` (one of :data:`FORMATS`; ``.gz`` names are compressed).

    Raises:
        ValueError: an unknown format, a directed graph in ``"sm"`` or an undirected graph in ``"gsi"``.
    """
    if format == "sm":
        write_sm(graph, path)
    elif format == "gsi":
        write_gsi(graph, path)
    elif format == "snap":
        write_snap(graph, path)
    else:
        raise ValueError(f"unknown graph format {format!r}; expected one of {', '.join(FORMATS)}")


def write_graphs(graphs: Iterable[Graph], path: PathLike, format: str = "sm") -> None:
    """Write several graphs into one file; only ``"sm"`` and ``"gsi"`` can hold more than one.

    Raises:
        ValueError: an unknown format, ``"snap"``, or a graph the format cannot hold (see :func:`write_graph`).
    """
    if format == "sm":
        write_sm_graphs(graphs, path)
    elif format == "gsi":
        write_gsi_graphs(graphs, path)
    elif format == "snap":
        raise ValueError("a SNAP edge list holds one graph; use write_graph(..., format='snap'), or 'sm'/'gsi' "
                         "for several graphs in one file")
    else:
        raise ValueError(f"unknown graph format {format!r}; expected 'sm' or 'gsi'")
