"""PBE shared execution against one search per query edge, on unlabelled symmetric queries.

    python -m benchmarks.pbe_shared [--scale 12] [--edges 20000] [--ks 4 8] [--backend auto] [--out FILE]

For each query (triangle, 4-cycle, diamond, 4-clique, house, 5-clique) and partition count k, on an R-MAT
power-law graph: the intra/inter split of the matches, and the partial matches produced and seconds taken by the
inter-partition search with shared execution and without it, side by side in one run.  Every count is checked
against the unpartitioned engine first.  Also records the planner's time on the 200 HPRD queries and on
16-vertex symmetric queries.
"""

from __future__ import annotations

import sys

import networkx as nx

import distsm
from benchmarks import common, meta
from distsm import caches
from distsm import Graph, Semantics
from distsm.kernels import get_backend
from distsm.partitioned import PartitionedMatcher
from distsm.plan import inter_partition_plan
from distsm.plan.distribution import Directions
from distsm.vocabulary import BACKENDS, Strategy

QUERIES = {
    "triangle": nx.complete_graph(3),
    "4-cycle": nx.cycle_graph(4),
    "diamond": nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]),
    "4-clique": nx.complete_graph(4),
    "house": nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)]),
    "5-clique": nx.complete_graph(5),
}


def planner_seconds() -> dict[str, float]:
    _, queries, _ = common.hprd_suite()
    hprd = []
    for q in queries.values():
        caches.site("stabiliser chains").pop(q)
        with common.Timer() as t:
            inter_partition_plan(q)
        hprd.append(t.seconds)
    sym = {}
    for name, g in {"K16": nx.complete_graph(16), "C16": nx.cycle_graph(16), "K8,8": nx.complete_bipartite_graph(8, 8),
                    "Q4 hypercube": nx.hypercube_graph(4), "4x4 grid": nx.grid_2d_graph(4, 4)}.items():
        with common.Timer() as t:
            inter_partition_plan(Graph.from_networkx(g))
        sym[name] = round(t.seconds, 4)
    return {"hprd_max_s": round(max(hprd), 4), "hprd_total_s": round(sum(hprd), 4), "symmetric_16_vertex_s": sym}


def main(argv=None):
    p = common.parser(__doc__, "pbe_shared")
    common.add_rmat_options(p, scale=12, edges=20_000, labels=1, seed=1)
    p.add_argument("--ks", type=int, nargs="+", default=[4, 8])
    p.add_argument("--backend", default="auto", choices=BACKENDS,
                   help="engine backend (auto: CuPy where a GPU is present)")
    args = p.parse_args(argv)
    data, graph = common.rmat_from(args)
    be = get_backend(args.backend)
    budget = 1 << 30
    rows = []
    for k in args.ks:
        matcher = PartitionedMatcher(data, k, backend=be)
        # Untimed warm-up (kernels compiled, pools and caches filled), so the first query's times are comparable.
        warm = Graph.from_networkx(QUERIES["triangle"])
        distsm.count(data, warm, backend=be.name)
        for share in (True, False):
            matcher.count(warm, Semantics(), budget, Directions(Strategy.PBE, share=share))
        for name, g in QUERIES.items():
            q = Graph.from_networkx(g)
            with common.Timer() as t:
                whole = distsm.count(data, q, backend=be.name)
            whole_s = t.seconds
            shared = matcher.count(q, Semantics(), budget, Directions(Strategy.PBE))
            alone = matcher.count(q, Semantics(), budget, Directions(Strategy.PBE, share=False))
            assert shared.count == alone.count == whole, (name, k, shared.count, alone.count, whole)
            print(f"checked {name} k={k}: {whole} matches", file=sys.stderr, flush=True)
            rows.append({
                "query": name, "k": k, "matches": whole, "unpartitioned_s": round(whole_s, 4),
                "intra_matches": sum(shared.intra), "inter_matches": shared.inter,
                "intra_share": round(sum(shared.intra) / whole, 4) if whole else None,
                "intra_s": round(shared.seconds["intra"], 4),
                "edge_groups": len(shared.plan.groups),
                "shared": {"partial_matches": shared.partial_matches,
                           "inter_s": round(shared.seconds["inter"], 4)},
                "per_edge": {"partial_matches": alone.partial_matches,
                             "inter_s": round(alone.seconds["inter"], 4)},
                "partial_ratio": round(alone.partial_matches / max(shared.partial_matches, 1), 2),
                "time_ratio": round(alone.seconds["inter"] / max(shared.seconds["inter"], 1e-9), 2),
                "cross_edges": matcher.cross_edge_count,
            })
    planner = planner_seconds()
    path = meta.write("pbe_shared", {"graph": graph, "backend": be.name, "results": rows, "planner": planner},
                      args.out)
    print(f"graph: {data.n} vertices, {data.m} edges (R-MAT scale {args.scale}, seed {args.seed})")
    print(f"{'query':9} {'k':>2} {'matches':>10} {'intra%':>7} {'partial x':>9} {'time x':>7}")
    for r in rows:
        print(f"{r['query']:9} {r['k']:2d} {r['matches']:10d} {100 * (r['intra_share'] or 0):6.1f}% "
              f"{r['partial_ratio']:9.2f} {r['time_ratio']:7.2f}")
    print(f"planner: HPRD max {planner['hprd_max_s']}s; 16-vertex symmetric {planner['symmetric_16_vertex_s']}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
