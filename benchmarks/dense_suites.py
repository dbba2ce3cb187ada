"""Broad dense suites: dense random-walk queries of 16, 24 and 32 vertices on several generated labelled graphs,
one query per size and decade of answers from 10 to 1e11, chosen by fixed seeds:

    python -m benchmarks run dense-suites --dir suites/ [--graphs c3k-l20 c10k-l50] [--cap 2] [--backend cupy]
    python -m benchmarks run peers --suites dense-heavy --dense-heavy suites/c3k-l20 suites/c10k-l50 ...

Each graph of :data:`GRAPHS` (:func:`benchmarks.generators.clustered_graph`: power-law degrees, triangles from
closed wedges, Zipf labels) is written to ``DIR/<name>/data.graph``, and :mod:`benchmarks.dense_heavy` draws
``--candidates`` dense queries per size from it, counts each under ``--cap`` seconds and keeps the first of each
decade of counts (``DIR/<name>/manifest.json``, which ``peers --dense-heavy`` reads; every candidate drawn, with its
count, in the ``--out`` JSON).  The graphs differ in size, label count and density so that
what is tuned on them is not tuned on one graph; HPRD's own dense suites are ``peers``' ``hprd-dense-*``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks import dense_heavy, meta
from benchmarks.common import parser
from distsm.vocabulary import BACKENDS

#: name: (vertices, average degree, vertex labels, seed)
GRAPHS: dict[str, tuple[int, float, int, int]] = {
    "c3k-l20": (3_000, 10, 20, 1),
    "c5k-l30-dense": (5_000, 24, 30, 2),
    "c10k-l50": (10_000, 12, 50, 3),
    "c50k-l100": (50_000, 16, 100, 4),
}


def main(argv: list[str] | None = None) -> None:
    import distsm
    from benchmarks.generators import clustered_graph

    p = parser(__doc__, "dense_suites")
    p.add_argument("--dir", type=Path, required=True, help="one folder per graph is written here")
    p.add_argument("--graphs", nargs="+", default=list(GRAPHS), choices=list(GRAPHS))
    p.add_argument("--sizes", type=int, nargs="+", default=[16, 24, 32])
    p.add_argument("--candidates", type=int, default=40, help="queries drawn per graph and size at most")
    p.add_argument("--cap", type=float, default=2.0, help="seconds a candidate's count may take")
    p.add_argument("--backend", default="auto", choices=BACKENDS)
    args = p.parse_args(argv)
    selections = {}
    for name in args.graphs:
        vertices, degree, labels, seed = GRAPHS[name]
        out = args.dir / name
        out.mkdir(parents=True, exist_ok=True)
        distsm.write_graph(clustered_graph(vertices, degree, labels, seed=seed), out / "data.graph")
        selection = argparse.Namespace(
            data=str(out / "data.graph"), dir=str(out), sizes=args.sizes, per_size=0, per_decade=1, keep_capped=0,
            candidates=args.candidates, min_count=10.0, max_count=1e11, cap=args.cap, seed=seed,
            backend=args.backend, relabel=0)
        selections[name] = {"graph": {"vertices": vertices, "average_degree": degree, "labels": labels,
                                      "seed": seed}, **dense_heavy.select(selection)}
        kept = selections[name]["manifest"]["queries"]
        print(f"{name}: kept {len(kept)} queries, counts {sorted(q['count'] for q in kept)}", flush=True)
    print(f"wrote {meta.write('dense_suites', {'dir': str(args.dir), 'graphs': selections}, args.out)}")
