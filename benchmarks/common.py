"""What the benchmark suites share: the HPRD known-answer suite, the R-MAT graph options, the option parser (with
``--out``, the same in every suite) and a timer.

``--out FILE``: every suite writes its result (JSON, with the machine and command; :func:`benchmarks.meta.write`) to
``FILE``, by default ``benchmarks/results/<result name>.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks import meta
from benchmarks.generators import rmat_graph
from distsm import Graph, read_graph

_ROOT = Path(__file__).resolve().parent.parent
#: The HPRD suite in this checkout: one data graph, 200 queries and their published counts (copied from the
#: SubgraphMatching project).
HPRD = _ROOT / "tests" / "data" / "hprd"
#: Where else a copy of the suite may be (a checkout next to the project's shared data).
_HPRD_ELSEWHERE = (_ROOT.parent / "shared" / "data" / "hprd", _ROOT / "shared" / "data" / "hprd")


def hprd_dir(given: str | Path | None = None) -> Path | None:
    """The HPRD folder: ``given`` when set, else this checkout's copy, else a shared one; None when none holds the
    data graph (``data_graph/HPRD.graph``)."""
    for d in ([Path(given)] if given else [HPRD, *_HPRD_ELSEWHERE]):
        if (d / "data_graph" / "HPRD.graph").exists():
            return d
    return None


def hprd_data_path(directory: Path = HPRD) -> Path:
    """The HPRD data graph's file."""
    return directory / "data_graph" / "HPRD.graph"


def hprd_query_path(name: str, directory: Path = HPRD) -> Path:
    """The file of the HPRD query ``name`` (``query_dense_16_1``, ...)."""
    return directory / "query_graph" / f"{name}.graph"


def hprd_expected(directory: Path = HPRD) -> dict[str, int]:
    """The published count of every HPRD query (``expected_output.res``, ``name:count`` per line), in query-number
    order (``query_dense_16_1``, ``_2``, ...)."""
    expected = {}
    for line in (directory / "expected_output.res").read_text().split():
        name, count = line.split(":")
        expected[name] = int(count)
    return {n: expected[n] for n in sorted(expected, key=lambda s: int(s.rsplit("_", 1)[1]))}


def hprd_suite(directory: Path = HPRD) -> tuple[Graph, dict[str, Graph], dict[str, int]]:
    """``(data graph, {name: query}, {name: published count})``, queries in query-number order."""
    expected = hprd_expected(directory)
    queries = {n: read_graph(hprd_query_path(n, directory)) for n in expected}
    return read_graph(hprd_data_path(directory)), queries, expected


def parser(doc: str | None, result: str) -> argparse.ArgumentParser:
    """A suite's option parser, its help the module docstring ``doc``, with ``--out`` (default
    ``benchmarks/results/<result>.json``)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=meta.RESULTS / f"{result}.json", metavar="FILE",
                   help=f"result JSON (default: benchmarks/results/{result}.json)")
    return p


def add_rmat_options(p: argparse.ArgumentParser, *, scale: int, edges: int, labels: int, seed: int,
                     rmat_a: float = 0.45) -> None:
    """The R-MAT data graph's options (``--scale --edges --labels --rmat-a --seed``) with this suite's defaults."""
    g = p.add_argument_group("R-MAT data graph")
    g.add_argument("--scale", type=int, default=scale, help=f"2**SCALE vertices (default {scale})")
    g.add_argument("--edges", type=int, default=edges, help=f"edges drawn (default {edges})")
    g.add_argument("--labels", type=int, default=labels, help=f"Zipf vertex labels (default {labels})")
    g.add_argument("--rmat-a", type=float, default=rmat_a,
                   help=f"R-MAT skew a (default {rmat_a}); b = c = (1 - a) / 2.5")
    g.add_argument("--seed", type=int, default=seed, help=f"generator seed (default {seed})")


def rmat_from(args: argparse.Namespace) -> tuple[Graph, dict[str, Any]]:
    """The R-MAT graph :func:`add_rmat_options` describes (one edge label) and its description for the JSON
    (``generator, scale, vertices, edges, labels, rmat_abc, seed, generate_s``)."""
    rest = (1 - args.rmat_a) / 2.5
    with Timer() as t:
        data = rmat_graph(scale=args.scale, edges=args.edges, vertex_labels=args.labels, edge_labels=1,
                          seed=args.seed, a=args.rmat_a, b=rest, c=rest)
    return data, {"generator": "rmat", "scale": args.scale, "vertices": data.n, "edges": data.m,
                  "labels": args.labels, "rmat_abc": [args.rmat_a, rest, rest], "seed": args.seed,
                  "generate_s": round(t.seconds, 2)}


class Timer:
    """Wall-clock seconds of a ``with`` block (``time.perf_counter``), in :attr:`seconds` once it ends."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
