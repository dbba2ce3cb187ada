"""The ``distsm`` command's inputs: the data graph and query files, read as its options say and checked together."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any


from distsm.cli.parser import reading_options
from distsm.errors import GraphFormatError
from distsm.formats import detect_format, read_graph, read_graphs
from distsm.graph import Graph
from distsm.kernels import engine


def query_files(paths: list[str]) -> list[tuple[Path, bool]]:
    """Every query file named, directories expanded: ``(file, whether it was found in a directory)``."""
    files: list[tuple[Path, bool]] = []
    for p in map(Path, paths):
        if p.is_dir():
            inner = sorted((f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")),
                           key=lambda f: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", f.name)])
            if not inner:
                raise GraphFormatError(p, None, "directory holds no query files")
            files.extend((f, True) for f in inner)
        else:
            files.append((p, False))
    return files


def load_queries(paths: list[str], reading: dict[str, Any]) -> list[tuple[str, Path, Graph]]:
    """``(name, file, graph)`` of every query.  A file in a directory that is not a graph file (a README, say)
    is skipped with a note; a query that cannot be matched (empty, disconnected) is an error naming its file."""
    out = []
    for f, listed in query_files(paths):
        if listed:
            # A file whose first line fits no format is no graph in any format (whatever --format says).
            try:
                detect_format(f)
            except GraphFormatError as e:
                print(f"distsm: note: skipping {f}: not a graph file ({e.problem})", file=sys.stderr)
                continue
        graphs = read_graphs(f, **reading)
        names = [f.stem] if len(graphs) == 1 else [f"{f.stem}#{i}" for i in range(len(graphs))]
        for name, g in zip(names, graphs):
            check_query(f, name, g, g)  # against itself: the query's own problems, before any cluster starts
            out.append((name, f, g))
    return out


def check_query(path: Path, name: str, query: Graph, data: Graph) -> None:
    """Raise a GraphFormatError naming ``path`` when ``query`` cannot be matched against ``data``."""
    try:
        engine.check_pair(data, query)
    except ValueError as e:
        raise GraphFormatError(path, None, f"query {name}: {e}") from None


def read_data(path: str, args: argparse.Namespace) -> Graph:
    """The data graph at ``path`` as the reading options say, with ``--vertex-labels`` beside an edge list."""
    return read_graph(path, **reading_options(args), vertex_labels=args.vertex_labels, default_label=args.default_label)
