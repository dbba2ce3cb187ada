"""distsm (NumPy backend, and CuPy with ``--gpu``) against rdflib's SPARQL engine on LUBM-shaped data.

Usage: python -m benchmarks.rdf_lubm [--universities 1 2 5 10] [--departments 5] [--scale 1] [--rdflib-max 10]
       [--gpu] [--out FILE]

For each size: generate the data (distsm.rdf.lubm), load it into distsm (``RDFGraph``, both without and with
``rdf:type`` folding) and into rdflib (parsing the same N-Triples text), then time every BGP-only LUBM query
(best of ``--repeat``); answers are compared as multisets and any disagreement is recorded and fails the run.
Writes ``--out`` (default ``benchmarks/results/rdf_lubm.json``) through ``benchmarks.meta.write``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import Any

from benchmarks import common
from benchmarks.meta import write
from distsm.rdf import RDFGraph, evaluate, lubm


def _best(fn: Any, repeat: int) -> tuple[float, Any]:
    """Best time of ``repeat`` runs (one run only when it takes over a second) and the last output."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
        if best > 1.0:
            break
    return best, out


def _canon(t: Any) -> str:
    import rdflib

    from distsm.rdf.ntriples import literal

    if isinstance(t, rdflib.URIRef):
        return f"<{t}>"
    if isinstance(t, rdflib.BNode):
        return f"_:{t}"
    return literal(str(t), t.language, None if t.datatype is None else str(t.datatype))


def run(universities: list[int], departments: int, rdflib_max: int, repeat: int,
        rdflib_query_max: float = 5.0, scale: float = 1.0, rdflib_skip: tuple[str, ...] = (),
        gpu: bool = False) -> dict[str, Any]:
    sizes = []
    slow: dict[str, float] = {}  # rdflib's last time per query: queries past rdflib_query_max are not rerun larger
    mismatches = 0
    for u in universities:
        triples = list(lubm.generate(u, departments=departments, scale=scale, seed=0))
        entry: dict[str, Any] = {"universities": u, "departments": departments, "scale": scale,
                                 "triples": len(triples)}
        t = time.perf_counter()
        plain = RDFGraph.from_triples(triples)
        plain.graph()
        entry["distsm_load_s"] = time.perf_counter() - t
        t = time.perf_counter()
        folded = RDFGraph.from_triples(triples, fold_types=True)
        folded.graph()
        entry["distsm_fold_load_s"] = time.perf_counter() - t
        rg = None
        if u <= rdflib_max:
            import rdflib

            nt = "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
            t = time.perf_counter()
            rg = rdflib.Graph()
            rg.parse(data=nt, format="nt")
            entry["rdflib_load_s"] = time.perf_counter() - t
        queries = {}
        for name, q in lubm.QUERIES.items():
            rec: dict[str, Any] = {}
            rec["distsm_s"], res = _best(lambda q=q, g=plain: evaluate(g, q), repeat)
            rec["distsm_fold_s"], resf = _best(lambda q=q, g=folded: evaluate(g, q), repeat)
            rec["rows"] = len(res)
            ours = Counter(res.decoded())
            ok = ours == Counter(resf.decoded())
            if gpu:
                evaluate(plain, q, backend="cupy")  # warm-up: kernels compiled, index on the device
                rec["distsm_gpu_s"], resg = _best(lambda q=q, g=plain: evaluate(g, q, backend="cupy"), repeat)
                ok = ok and Counter(resg.decoded()) == ours
            if rg is not None and name in rdflib_skip:
                rec["rdflib_skipped"] = "--rdflib-skip"
            elif rg is not None and slow.get(name, 0.0) > rdflib_query_max:
                rec["rdflib_skipped"] = f"took {slow[name]:.1f}s at a smaller size (limit {rdflib_query_max}s)"
            elif rg is not None:
                rec["rdflib_s"], rows = _best(lambda q=q, g=rg: list(g.query(q)), repeat)
                theirs = Counter(tuple(_canon(r.asdict()[v]) for v in res.variables) for r in rows)
                ok = ok and theirs == ours
                slow[name] = rec["rdflib_s"]
                rec["speedup_vs_rdflib"] = rec["rdflib_s"] / max(rec["distsm_s"], 1e-9)
            rec["agree"] = ok
            mismatches += not ok
            queries[name] = rec
            print(f"U={u:3d} {name:4s} rows={rec['rows']:7d} distsm={rec['distsm_s'] * 1e3:8.2f}ms "
                  f"fold={rec['distsm_fold_s'] * 1e3:8.2f}ms "
                  + (f"gpu={rec['distsm_gpu_s'] * 1e3:8.2f}ms " if gpu else "")
                  + (f"rdflib={rec['rdflib_s'] * 1e3:9.2f}ms" if "rdflib_s" in rec else "rdflib=(skipped)")
                  + ("" if ok else "  MISMATCH"), file=sys.stderr, flush=True)
        entry["queries"] = queries
        sizes.append(entry)
    return {"sizes": sizes, "mismatches": mismatches, "repeat": repeat,
            "backends": ["numpy", "cupy"] if gpu else ["numpy"], "rdflib_skip": rdflib_skip,
            "rdflib_max_universities": rdflib_max, "rdflib_query_max_s": rdflib_query_max}


def main(argv: list[str] | None = None) -> int:
    ap = common.parser(__doc__, "rdf_lubm")
    ap.add_argument("--universities", type=int, nargs="+", default=[1, 2, 5, 10])
    ap.add_argument("--departments", type=int, default=5)
    ap.add_argument("--rdflib-max", type=int, default=10, help="skip rdflib above this many universities")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rdflib-skip", nargs="*", default=[], metavar="Q",
                    help="queries not to time on rdflib (its join order makes Q9 take minutes at LUBM sizes)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the per-department head counts")
    ap.add_argument("--rdflib-query-max", type=float, default=5.0, metavar="SECONDS",
                    help="stop timing rdflib on a query at larger sizes once it took this long")
    ap.add_argument("--gpu", action="store_true", help="also time the CuPy backend (answers must agree)")
    args = ap.parse_args(argv)
    payload = run(args.universities, args.departments, args.rdflib_max, args.repeat, args.rdflib_query_max, args.scale,
                  tuple(args.rdflib_skip), args.gpu)
    path = write("rdf_lubm", payload, args.out)
    print(f"wrote {path}", file=sys.stderr)
    return 1 if payload["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
