"""How much sampling a device plan is worth: counts of gMatch's suite and the dense heavy suites with the planner's
``PLAN_SHARE_DEVICE`` (:mod:`distsm.kernels.count_plan`) set to each value given, in one process:

    python -m benchmarks run plan-share --shares 0.25 0.025 --gmatch-test .peers/gmatch-test \
        --dense-heavy .peers/dense/hprd6 .peers/dense/hprd8 --backend cupy

Per query and share: one warm count, then ``--repeat`` counts (the median kept) and one ``distsm.explain`` for the
stage times and the plans sampled; ``--rounds`` rounds, the shares in reverse order every other round, the best
median kept.  Counts must agree across shares (and with gMatch's published ones on its suite).  The share is a module
constant, set here for the A/B; the engine reads it at each plan.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import distsm
from benchmarks import meta
from benchmarks.common import parser
from benchmarks.peers import Query, Suite, dense_heavy_suite, gmatch_test_suite
from distsm.kernels import count_plan


def timed(data: distsm.Graph, query: distsm.Graph, backend: str, repeat: int) -> tuple[int, float, dict]:
    """``(count, median seconds of repeat counts, explain)`` after one warm count."""
    distsm.count(data, query, backend=backend)
    seconds, counts = [], set()
    for _ in range(repeat):
        t = time.perf_counter()
        counts.add(distsm.count(data, query, backend=backend))
        seconds.append(time.perf_counter() - t)
    explained = distsm.explain(data, query, backend=backend)
    counts.add(explained.count)
    if len(counts) != 1:
        raise SystemExit(f"counts differ between repeats: {sorted(counts)}")
    return counts.pop(), statistics.median(seconds), {
        "stages_ms": {k: round(v * 1e3, 3) for k, v in explained.seconds.items()},
        "plans_tried": explained.plans_tried, "path": explained.path}


def run(suite: Suite, shares: list[float], backend: str, repeat: int, rounds: int) -> dict:
    """Per query of ``suite``: per share its count, best median seconds and last explain."""
    data = distsm.read_graph(suite.data)
    out: dict[str, dict] = {}
    kept = count_plan.PLAN_SHARE_DEVICE
    try:
        for q in suite.queries:
            out[q.name] = _query(data, q, shares, backend, repeat, rounds)
            print(f"{suite.name} {q.name}: " + " | ".join(f"{s}: {1e3 * rec['seconds']:.1f} ms"
                                                           for s, rec in out[q.name].items()), flush=True)
    finally:
        count_plan.PLAN_SHARE_DEVICE = kept
    return out


def _query(data: distsm.Graph, q: Query, shares: list[float], backend: str, repeat: int, rounds: int) -> dict:
    """Per share: the count, the best median seconds over the rounds and the last explain's stages."""
    query = distsm.read_graph(q.path)
    row: dict[str, dict] = {}
    for r in range(rounds):
        for share in (shares if r % 2 == 0 else shares[::-1]):
            count_plan.PLAN_SHARE_DEVICE = share
            n, median, explained = timed(data, query, backend, repeat)
            rec = row.setdefault(str(share), {"count": n, "seconds": median, "medians": []})
            if rec["count"] != n:
                raise SystemExit(f"{q.name}: share {share} counted {n}, earlier {rec['count']}")
            rec["medians"].append(round(median, 6))
            rec["seconds"] = min(rec["seconds"], median)
            rec.update(explained)
    counts = {rec["count"] for rec in row.values()}
    if len(counts) != 1 or (q.expected is not None and counts != {q.expected}):
        raise SystemExit(f"{q.name}: counts {sorted(counts)} across shares, expected {q.expected}")
    return row


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "plan_share")
    p.add_argument("--shares", type=float, nargs="+", default=[count_plan.PLAN_SHARE, count_plan.PLAN_SHARE_DEVICE])
    p.add_argument("--gmatch-test", type=Path, metavar="DIR", help="gMatch's test/ directory")
    p.add_argument("--dense-heavy", type=Path, nargs="*", default=[], metavar="DIR",
                   help="folders written by `benchmarks run dense-heavy`")
    p.add_argument("--backend", default="cupy")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    suites = ([gmatch_test_suite(args.gmatch_test, None)] if args.gmatch_test else []) + [
        dense_heavy_suite(d, None, f"dense-heavy:{d.name}") for d in args.dense_heavy]
    if not suites:
        p.error("give --gmatch-test and/or --dense-heavy")
    results = {s.name: run(s, args.shares, args.backend, args.repeat, args.rounds) for s in suites}
    summed = {name: {str(share): round(sum(row[str(share)]["seconds"] for row in rows.values()), 4)
                     for share in args.shares} for name, rows in results.items()}
    for name, sums in summed.items():
        print(f"{name}: summed best medians {sums}")
    meta.write("plan_share", {"backend": args.backend, "shares": args.shares, "repeat": args.repeat,
                              "rounds": args.rounds, "summed_s": summed, "suites": results}, args.out)


if __name__ == "__main__":
    main()
