#!/usr/bin/env python3
"""HPRD's 200 queries on the CuPy backend, one at a time against one batch, written as JSON.

* ``one_at_a_time``: ``distsm.count`` of each query in turn (filter, plan and join; the graph indexed on the device
  beforehand), as today's per-query path runs them.
* ``batched``: the backend's batched light stage by hand: ``candidates_many`` (every query's filter in one launch),
  ``engine.prepare`` of each query with those candidates (planning on the host), ``count_prepared`` (every join in
  one launch, each query allowed ``distsm.engine.trial-entries`` adjacency entries per query vertex, as a trial
  join), and the queries it leaves (None) counted alone by ``engine.walk``.  Each stage is timed.

A warm-up pass of each runs first (kernels compiled or loaded, memory pools filled); then ``--reps`` passes of each,
alternating, every pass ending in a device synchronisation and timed by the host clock (``time.perf_counter``).
Every pass's counts are checked against HPRD's published counts before any time is reported.

    python -m benchmarks.batch_gpu [--out FILE] [--reps N] [--hprd DIR]
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import distsm
from benchmarks import common, meta
from distsm.config import engine_options, gpu_options
from distsm.kernels import engine, get_backend
from distsm.kernels.query_plan import MatchOptions


def one_at_a_time(gpu: Any, data: distsm.Graph, queries: list[distsm.Graph]) -> tuple[list[int], float]:
    """Counts of ``queries`` by ``distsm.count`` one after another, and the seconds the pass took."""
    t = time.perf_counter()
    counts = [distsm.count(data, q, backend="cupy") for q in queries]
    gpu.synchronize()
    return counts, time.perf_counter() - t


def batched(gpu: Any, data: distsm.Graph, queries: list[distsm.Graph]) -> tuple[list[int], dict[str, Any]]:
    """Counts of ``queries`` by the batched stage, and its stages' seconds and the queries left to ``walk``."""
    per_vertex = engine_options().trial_entries
    stages: dict[str, Any] = {}
    t0 = time.perf_counter()
    idx = gpu.index(data)
    cands = gpu.candidates_many(idx, queries, False)
    gpu.synchronize()
    t1 = time.perf_counter()
    prepared = [engine.prepare(gpu, idx, q, MatchOptions(), candidates=c) for q, c in zip(queries, cands)]
    t2 = time.perf_counter()
    live = [p for p in prepared if p is not None]
    got = iter(gpu.count_prepared(live, [per_vertex * len(p.plan.order) for p in live]))
    t3 = time.perf_counter()
    counts, alone = [], 0
    for p in prepared:
        c = 0 if p is None else next(got)
        if c is None:
            alone += 1
            c = sum(int(x) for x in engine.walk(gpu, p, gpu.default_budget(), count_only=True))
        counts.append(int(c))
    gpu.synchronize()
    t4 = time.perf_counter()
    stages.update(filter_s=t1 - t0, plan_s=t2 - t1, count_s=t3 - t2, alone_s=t4 - t3, total_s=t4 - t0,
                  counted_alone=alone)
    return counts, stages


def _summary(values: list[float]) -> dict[str, float]:
    return {"best": min(values), "median": statistics.median(values), "all": values}


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__, "batch_gpu")
    p.add_argument("--reps", type=int, default=5, help="timed passes of each (default 5)")
    p.add_argument("--hprd", default=None, help="HPRD folder (default: tests/data/hprd, else a shared copy)")
    args = p.parse_args(argv)
    d = common.hprd_dir(args.hprd)
    if d is None:
        raise SystemExit("HPRD data not found (tests/data/hprd or a shared copy); pass --hprd DIR")
    data, by_name, expected = common.hprd_suite(d)
    names = list(expected)
    queries = [by_name[k] for k in names]
    want = [expected[k] for k in names]
    gpu = get_backend("cupy")
    t = time.perf_counter()
    gpu.index(data)
    gpu.synchronize()
    index_s = time.perf_counter() - t

    def check(counts: list[int], how: str) -> None:
        bad = [(k, c, w) for k, c, w in zip(names, counts, want) if c != w]
        if bad:
            raise SystemExit(f"{how}: {len(bad)} counts differ from the published ones, e.g. {bad[:5]}")

    warm_one = one_at_a_time(gpu, data, queries)
    check(warm_one[0], "one at a time (warm-up)")
    warm_batch = batched(gpu, data, queries)
    check(warm_batch[0], "batched (warm-up)")
    singles, stages = [], []
    for _ in range(args.reps):
        counts, seconds = one_at_a_time(gpu, data, queries)
        check(counts, "one at a time")
        singles.append(seconds)
        counts, stage = batched(gpu, data, queries)
        check(counts, "batched")
        stages.append(stage)
    totals = [s["total_s"] for s in stages]
    payload = {
        "queries": len(queries), "hprd": str(d), "reps": args.reps, "index_s": index_s,
        "small_limit": gpu_options().small_limit, "trial_entries": engine_options().trial_entries,
        "timing": "host wall clock of whole passes, each ending in a device synchronisation",
        "warm_up": {"one_at_a_time_s": warm_one[1], "batched": warm_batch[1]},
        "one_at_a_time_s": _summary(singles),
        "batched_s": _summary(totals),
        "batched_stages": {k: _summary([s[k] for s in stages])
                           for k in ("filter_s", "plan_s", "count_s", "alone_s")},
        "counted_alone": stages[-1]["counted_alone"],
        "speedup_median": statistics.median(singles) / statistics.median(totals),
        "counts_checked": "every pass equal to HPRD's published counts",
    }
    path = meta.write("batch_gpu", payload, args.out)
    stage = {k: payload["batched_stages"][k]["median"] for k in ("filter_s", "plan_s", "count_s", "alone_s")}
    print(f"HPRD {len(queries)} queries: one at a time {payload['one_at_a_time_s']['median']:.4f} s, batched "
          f"{payload['batched_s']['median']:.4f} s (median of {args.reps}; "
          + ", ".join(f"{k[:-2]} {v:.4f}" for k, v in stage.items())
          + f"; {payload['counted_alone']} counted alone) -> {path}")

if __name__ == "__main__":
    main()
