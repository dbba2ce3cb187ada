"""A heavy dense suite: dense random-walk queries of 16, 24 and 32 vertices chosen for 1e9-1e11 embeddings.

    python -m benchmarks run dense-heavy --data gmatch-test/data.graph --dir heavy/ [--sizes 16 24 32]
        [--per-size 4] [--candidates 30] [--min-count 1e9] [--max-count 1e11] [--cap 10] [--backend cupy]
        [--relabel K]

Draws dense (average degree >= 3) random-walk queries of each size from the data graph
(:func:`benchmarks.generators.query_set`), counts each with distsm under ``--cap`` seconds, and keeps the first
``--per-size`` whose count lies in ``[--min-count, --max-count]`` (or, with ``--per-decade K``, the first ``K`` of
each decade of counts in that range), and the first ``--keep-capped`` whose count did
not finish within the cap (heavier still for distsm: the peers' counts and the reference path settle them).  The
kept queries are written to ``DIR/<size>/heavy_<size>_<i>.graph`` with ``DIR/manifest.json`` (data graph, and per
query its file, size, edges, the selecting count and seconds; files inside ``DIR`` are named relative to it, so the
folder can be moved); ``python -m benchmarks run peers --suites
dense-heavy --dense-heavy DIR`` then times distsm against gMatch and EGSM on them, the counts cross-checked by a
second path of distsm's.  The JSON result records every candidate drawn (count or capped) so the selection can be
audited.

``--relabel K`` first collapses the data graph's vertex labels into ``K`` classes (labels ranked by frequency,
rank modulo ``K``: classes of similar size) and writes that graph to ``DIR/data.graph``, which the queries are
drawn from and matched against.  HPRD's 307 labels leave its dense 24- and 32-vertex queries with at most about 1e6
embeddings; ``--data HPRD.graph --relabel 8`` gives the same structure with counts of 1e9-1e11 for 24 and 32
vertices, ``--relabel 6`` for 16 (benchmarks/results/dense_heavy_hprd6.json and dense_heavy_hprd8.json).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks import common, meta
from distsm.vocabulary import BACKENDS

MANIFEST = "manifest.json"


def _count(data: Any, query: Any, backend: str, cap: float) -> tuple[int | None, float]:
    """distsm's count of ``query`` and its seconds, or ``(None, cap)`` past ``cap`` seconds."""
    import distsm

    t = time.perf_counter()
    try:
        return distsm.count(data, query, backend=backend, timeout=cap), time.perf_counter() - t
    except TimeoutError:
        return None, cap


def relabelled(data: Any, classes: int) -> Any:
    """``data`` with its vertex labels collapsed into ``classes`` classes: labels ranked by frequency (most frequent
    first, ties by label), rank modulo ``classes``."""
    import numpy as np

    import distsm

    labels = np.asarray(data.vertex_labels)
    ranked = np.argsort(-np.bincount(labels), kind="stable")
    rank = np.empty_like(ranked)
    rank[ranked] = np.arange(ranked.shape[0])
    return distsm.Graph.from_edges(np.stack([data.edge_src, data.edge_dst], axis=1), n=data.n,
                                   vertex_labels=rank[labels] % classes, directed=data.directed)


def _decade(count: int | None) -> int:
    return -1 if not count else int(math.floor(math.log10(count)))


def select(args: argparse.Namespace) -> dict[str, Any]:
    """Draw, count and keep the queries (see the module docstring); returns the manifest and every candidate."""
    import distsm
    from benchmarks.generators import query_set

    data = distsm.read_graph(args.data)
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    if args.relabel:
        data = relabelled(data, args.relabel)
        args.data = str(out / "data.graph")
        distsm.write_graph(data, args.data)
    kept: list[dict[str, Any]] = []
    drawn: list[dict[str, Any]] = []
    for size in args.sizes:
        (out / str(size)).mkdir(parents=True, exist_ok=True)
        found = capped = 0
        candidates = [q for kind, q in query_set(data, args.candidates, size, args.seed + size, kinds=("dense",))
                      if kind == "dense"]
        decades: Counter[int] = Counter()
        for i, q in enumerate(candidates):
            if not args.per_decade and found == args.per_size and capped == args.keep_capped:
                break
            count, seconds = _count(data, q, args.backend, args.cap)
            in_range = count is not None and args.min_count <= count <= args.max_count and (
                decades[_decade(count)] < args.per_decade if args.per_decade else found < args.per_size)
            beyond = count is None and capped < args.keep_capped
            chosen = in_range or beyond
            drawn.append({"size": size, "candidate": i, "edges": q.m, "count": count, "seconds": round(seconds, 4),
                          "kept": chosen})
            print(f"size {size} candidate {i}: count {count} in {seconds:.3f} s{' kept' if chosen else ''}",
                  file=sys.stderr, flush=True)
            if chosen:
                path = out / str(size) / f"heavy_{size}_{found + capped}.graph"
                distsm.write_graph(q, path)
                kept.append({"name": path.stem, "path": str(path.relative_to(out)), "size": size, "edges": q.m,
                             "count": count, "seconds": round(seconds, 4)})
                found, capped = found + in_range, capped + beyond
                decades[_decade(count)] += in_range
                _write_manifest(args, kept)  # a run cut short keeps what it chose
    return {"manifest": _write_manifest(args, kept), "drawn": drawn}


def _write_manifest(args: argparse.Namespace, kept: list[dict[str, Any]]) -> dict[str, Any]:
    out = Path(args.dir)
    data = Path(args.data)
    manifest = {"data": str(data.relative_to(out)) if data.is_relative_to(out) else str(data.resolve()),
                "queries": kept,
                "selection": {k: getattr(args, k) for k in ("sizes", "per_size", "per_decade", "keep_capped",
                                                              "candidates", "min_count", "max_count", "cap", "seed",
                                                              "backend", "relabel")}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return manifest


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__, "dense_heavy")
    p.add_argument("--data", required=True, help="data graph file (e.g. gMatch's test/data.graph)")
    p.add_argument("--dir", required=True, help="where the kept queries and manifest.json are written")
    p.add_argument("--sizes", type=int, nargs="+", default=[16, 24, 32])
    p.add_argument("--per-size", type=int, default=4)
    p.add_argument("--per-decade", type=int, default=0,
                   help="keep this many per size and decade of the count instead of --per-size (0: --per-size)")
    p.add_argument("--keep-capped", type=int, default=0, help="candidates past the cap kept per size")
    p.add_argument("--candidates", type=int, default=30, help="queries drawn per size at most")
    p.add_argument("--min-count", type=float, default=1e9)
    p.add_argument("--max-count", type=float, default=1e11)
    p.add_argument("--cap", type=float, default=10.0, help="seconds a candidate's count may take")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", default="auto", choices=BACKENDS)
    p.add_argument("--relabel", type=int, default=0, metavar="K",
                   help="collapse the data graph's vertex labels into K classes first (0: keep them)")
    args = p.parse_args(argv)
    result = select(args)
    kept = result["manifest"]["queries"]
    print(f"kept {len(kept)} queries: " + ", ".join(f"{q['name']} ({q['count']})" for q in kept))
    print(f"wrote {meta.write('dense_heavy', result, args.out)}")
