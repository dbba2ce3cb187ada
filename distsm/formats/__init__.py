"""Graph file readers and writers.

Formats (``FORMATS``, the names in :mod:`distsm.formats.registry`; each module of this package that decorates a
detector with :func:`~distsm.formats.registry.register_format` adds one):

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

import importlib
import os
import pkgutil
from collections.abc import Hashable, Iterable
from typing import Any

# The built-in formats register in this order, which is the order of FORMATS (the CLI's choices, messages).
from distsm.formats.sm import read_sm, read_sm_graphs, write_sm, write_sm_graphs  # isort: skip
from distsm.formats.gsi import read_gsi, read_gsi_graphs, write_gsi, write_gsi_graphs  # isort: skip
from distsm.formats.snap import read_snap, read_snap_with_ids, write_snap  # isort: skip
from distsm.arguments import entry_point
from distsm.errors import GraphFormatError
from distsm.formats._common import PathLike, fspath
from distsm.formats.binary import MANIFEST, is_saved_graph, load_graph, save_graph
from distsm.formats.detect import detect_format
from distsm.formats.registry import Format, lookup, register_format, registered
from distsm.formats.vertex_labels import read_vertex_labels, with_vertex_labels
from distsm.graph import Graph

# Importing every module of the package registers the formats that are not re-exported by name above.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
del _module

FORMATS: tuple[str, ...] = tuple(f.name for f in registered())
#: Formats without vertex records, whose vertex labels may come from a file beside them (``vertex_labels=``).
EDGE_LISTS: tuple[str, ...] = ("snap", "parquet")

__all__ = [
    "FORMATS",
    "detect_format",
    "load_graph",
    "read_graph",
    "read_graphs",
    "read_gsi",
    "read_gsi_graphs",
    "read_sm",
    "read_sm_graphs",
    "read_snap",
    "read_snap_with_ids",
    "read_vertex_labels",
    "register_format",
    "save_graph",
    "write_graph",
    "write_graphs",
    "write_gsi",
    "write_gsi_graphs",
    "write_sm",
    "write_sm_graphs",
    "write_snap",
]


def _resolve(path: PathLike, format: str) -> Format:
    if os.path.isdir(fspath(path)):
        raise GraphFormatError(fspath(path), None, f"a directory, not a graph file (a directory is read as a graph "
                                                   f"only when save_graph wrote it: it holds {MANIFEST})")
    fmt = lookup(detect_format(path) if format == "auto" else format)
    if fmt is None:
        raise ValueError(f"unknown graph format {format!r}; expected 'auto' or one of {', '.join(FORMATS)}")
    return fmt


@entry_point
def read_graph(path: PathLike, format: str = "auto", *, directed: bool | None = None,
               dedupe: bool | None = None, vertex_labels: PathLike | None = None,
               default_label: Hashable | None = None) -> Graph:
    """Read the one graph stored in ``path``.

    Args:
        path: file name (``str`` or path-like); ``.gz`` files are decompressed.  A directory written by
            :func:`save_graph` is loaded by :func:`load_graph` (``format``, ``directed`` and ``dedupe`` do not
            apply to it).
        format: ``"auto"`` (see :func:`detect_format`) or one of :data:`FORMATS`.
        directed: ``None`` for the format's own default (sm: False, gsi: True, snap: False).
        dedupe: repeated edges carrying equal labels are merged (True) or refused (False); None, the default,
            is the format's own rule: SNAP and Parquet edge lists merge them with one warning saying how many,
            sm and gsi files (which declare their edge counts) refuse them.
        vertex_labels: for an edge list (SNAP, Parquet), a text file of ``vertex label`` lines naming vertices by
            the edge list's ids, labels any token (:mod:`distsm.formats.vertex_labels`); sm and gsi files carry
            their own labels.
        default_label: with ``vertex_labels``, the label of vertices the file leaves out (None: each needs one).

    Raises:
        GraphFormatError: the file is malformed, or holds several graphs (use :func:`read_graphs`).
        ValueError: an unknown ``format``.
        OSError: the file cannot be opened.
    """
    if vertex_labels is not None and not isinstance(vertex_labels, (str, os.PathLike)):
        raise TypeError(f"vertex_labels must be a path to a vertex label file, not {type(vertex_labels).__name__}")
    if not isinstance(default_label, Hashable):
        raise TypeError(f"default_label must be a hashable label value, not {type(default_label).__name__}")
    if is_saved_graph(path):
        if vertex_labels is not None:
            raise ValueError("vertex_labels= applies to edge lists, not to a saved graph (it keeps its labels)")
        return load_graph(path)
    fmt = _resolve(path, format)
    if vertex_labels is not None and fmt.name not in EDGE_LISTS:
        raise ValueError(f"vertex_labels= applies to edge lists ({', '.join(EDGE_LISTS)}); {path} is read as "
                         f"{fmt.title}, which carries its own vertex labels")
    graph = fmt.read(path, directed=fmt.directed if directed is None else bool(directed), dedupe=dedupe)
    return graph if vertex_labels is None else with_vertex_labels(graph, vertex_labels, default_label=default_label)


def read_graphs(path: PathLike, format: str = "auto", **kw: Any) -> list[Graph]:
    """Read every graph stored in ``path`` (a SNAP edge list holds exactly one).

    Keyword arguments ``directed`` and ``dedupe`` are as in :func:`read_graph`.
    """
    unknown = set(kw) - {"directed", "dedupe"}
    if unknown:
        raise TypeError(f"read_graphs() got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
    fmt = _resolve(path, format)
    directed = kw.get("directed")
    return fmt.read_graphs(path, directed=fmt.directed if directed is None else bool(directed),
                           dedupe=kw.get("dedupe"))


def write_graph(graph: Graph, path: PathLike, format: str = "sm") -> None:
    """Write ``graph`` to ``path`` in ``format`` (one of :data:`FORMATS`; ``.gz`` names are compressed).

    Raises:
        ValueError: an unknown format, a directed graph in ``"sm"`` or an undirected graph in ``"gsi"``.
    """
    fmt = lookup(format)
    if fmt is None:
        raise ValueError(f"unknown graph format {format!r}; expected one of {', '.join(FORMATS)}")
    fmt.write(graph, path)


def write_graphs(graphs: Iterable[Graph], path: PathLike, format: str = "sm") -> None:
    """Write several graphs into one file; only formats with a ``write_all`` (``"sm"`` and ``"gsi"``) can hold
    more than one.

    Raises:
        ValueError: an unknown format, ``"snap"``, or a graph the format cannot hold (see :func:`write_graph`).
    """
    several = [f.name for f in registered() if f.write_all is not None]
    fmt = lookup(format)
    if fmt is None:
        raise ValueError(f"unknown graph format {format!r}; expected {' or '.join(map(repr, several))}")
    if fmt.write_all is None:
        raise ValueError(f"a {fmt.title} holds one graph; use write_graph(..., format={fmt.name!r}), or "
                         f"{'/'.join(map(repr, several))} for several graphs in one file")
    fmt.write_all(graphs, path)
