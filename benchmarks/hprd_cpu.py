"""The NumPy engine against networkx and igraph VF2 on the 200 HPRD queries, side by side in one run.

    python -m benchmarks.hprd_cpu [--networkx-seconds 120] [--rapidmatch BIN] [--out FILE]

``distsm-numpy`` counts the queries one at a time (``distsm.count``); ``distsm-numpy-batch`` counts all 200 as one
batch (``distsm.count_batch`` on one part: the light queries filtered, planned and joined together), whose time is
shared equally among its queries; ``distsm-numpy-batch-again`` counts the same query objects once more (what the
batch caches on them, such as each query's automorphism group, is then known).

``--rapidmatch BIN`` adds RapidMatch (a binary built from RapidsAtHKUST/RapidMatch, run per query as
``benchmarks.peers`` runs it; its time is the ``Query time`` it prints, file loading excluded), and the ratios of
every engine to the batch's time as well.

Every engine's counts are checked against the published answers.  networkx is far slower than the others, so it
gets a time allowance: it runs queries in order until the allowance is spent (a query that runs past what is
left is abandoned mid-way), and the result names how many it finished; ratios are taken on those queries only.
"""

from __future__ import annotations

import statistics
import time

import distsm
from benchmarks import common, meta


def run_distsm(data, queries, backend="numpy"):
    distsm.count(data, next(iter(queries.values())), backend=backend)  # build the index once, outside timing
    out = {}
    for name, q in queries.items():
        with common.Timer() as t:
            c = distsm.count(data, q, backend=backend)
        out[name] = (c, t.seconds)
    return out


def run_distsm_batch(data, queries, backend="numpy"):
    """``(first, again)``: the batch's per-query shares of its time on fresh query objects, and on the same objects
    once more (what a batch caches on its queries, such as their adjacency lists, is then known).

    Untimed first, as RapidMatch's graph loading is: a warm-up batch of 16 other queries (random walks on the
    data graph, 4 to 32 vertices), which builds the index and the one-part store and runs the batch's code
    paths once in this process."""
    from benchmarks.generators import query_set

    qs = list(queries.values())
    warm = [q for size in (4, 8, 16, 32) for _, q in query_set(data, 4, size, seed=size)]
    distsm.count_batch(data, warm, partitions=1, backend=backend)
    out = []
    for _ in range(2):
        with common.Timer() as t:
            results = distsm.count_batch(data, qs, partitions=1, backend=backend)
        out.append({name: (r.count, t.seconds / len(qs)) for name, r in zip(queries, results)})
    return out


def run_rapidmatch(binary, cap=60.0):
    """RapidMatch on each HPRD query in its own process (see :func:`benchmarks.peers.run_peer`); the queries it
    finished, with its count and its own query time."""
    from benchmarks.peer_runs import PEERS
    from benchmarks.peers import hprd_suite, run_peer

    suite = hprd_suite(None)
    out = {}
    for q in suite.queries:
        rec = run_peer(PEERS["rapidmatch"], binary, suite.data, q, cap, 30.0, [])
        if rec["status"] == "ok":
            out[q.name] = (rec["count"], rec["seconds"])
    return out


def ratios_to(base, engines):
    """Summed seconds of every other engine over ``base``'s, on the queries both finished."""
    ours = engines[base]
    return {f"{name} / {base}": round(sum(r[n][1] for n in r) / sum(ours[n][1] for n in r), 2)
            for name, r in engines.items() if name != base and r}


def run_igraph(data, queries):
    try:
        import igraph
    except ImportError:
        return None
    g = igraph.Graph(n=data.n, edges=list(zip(data.edge_src.tolist(), data.edge_dst.tolist())))
    color = data.vertex_labels.tolist()
    out = {}
    for name, q in queries.items():
        h = igraph.Graph(n=q.n, edges=list(zip(q.edge_src.tolist(), q.edge_dst.tolist())))
        with common.Timer() as t:
            c = g.count_subisomorphisms_vf2(h, color1=color, color2=q.vertex_labels.tolist())
        out[name] = (int(c), t.seconds)
    return out


def run_networkx(data, queries, allowance):
    from networkx.algorithms import isomorphism as iso

    gd = data.to_networkx()
    out, deadline = {}, time.perf_counter() + allowance
    for name, q in queries.items():
        gm = iso.GraphMatcher(gd, q.to_networkx(), node_match=iso.categorical_node_match("label", None))
        t = time.perf_counter()
        c = 0
        for _ in gm.subgraph_monomorphisms_iter():
            c += 1
            if c % 64 == 0 and time.perf_counter() > deadline:
                break
        if time.perf_counter() > deadline:
            break
        out[name] = (c, time.perf_counter() - t)
    return out


def summarise(res, expected):
    times = [t for _, t in res.values()]
    return {
        "queries": len(res),
        "correct": sum(res[n][0] == expected[n] for n in res),
        "total_seconds": round(sum(times), 4),
        "median_ms": round(1000 * statistics.median(times), 3),
        "max_ms": round(1000 * max(times), 3),
        "per_query": {n: {"count": c, "seconds": round(t, 6)} for n, (c, t) in res.items()},
    }


def main(argv=None):
    p = common.parser(__doc__, "hprd_cpu")
    p.add_argument("--networkx-seconds", type=float, default=120.0)
    p.add_argument("--rapidmatch", metavar="BIN", help="RapidMatch's binary (RapidMatch.out), run per query")
    args = p.parse_args(argv)
    with common.Timer() as load:
        data, queries, expected = common.hprd_suite()
    load_s = load.seconds
    engines = {"distsm-numpy": run_distsm(data, queries)}
    engines["distsm-numpy-batch"], engines["distsm-numpy-batch-again"] = run_distsm_batch(data, queries)
    if args.rapidmatch:
        engines["rapidmatch"] = run_rapidmatch(args.rapidmatch)
    ig = run_igraph(data, queries)
    if ig is not None:
        engines["igraph-vf2"] = ig
    engines["networkx-vf2"] = run_networkx(data, queries, args.networkx_seconds)
    result = {name: summarise(r, expected) for name, r in engines.items()}
    ratios = ratios_to("distsm-numpy", engines)
    if args.rapidmatch:
        ratios.update(ratios_to("distsm-numpy-batch", engines))
    path = meta.write("hprd_cpu", {"load_seconds": round(load_s, 3), "networkx_allowance_s": args.networkx_seconds,
                                   "engines": result, "time_ratios_on_common_queries": ratios}, args.out)
    print(f"{'engine':24} {'queries':>7} {'correct':>7} {'total s':>9} {'median ms':>10}")
    for name, s in result.items():
        print(f"{name:24} {s['queries']:7d} {s['correct']:7d} {s['total_seconds']:9.3f} {s['median_ms']:10.3f}")
    for k, v in ratios.items():
        print(f"{k}: {v}x")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
