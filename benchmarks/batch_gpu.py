#!/usr/bin/env python3
"""HPRD's 200 queries one at a time against one batch (the CuPy backend by default), written as JSON.

* ``one_at_a_time``: ``distsm.count`` of each query in turn (filter, plan and join; the graph indexed on the device
  beforehand), as the per-query path runs them.
* ``light``: the batched light stage (:func:`distsm.kernels.batch.count_light`: every query's filter in one pass,
  plans on the host, every light join together: on the CuPy backend one launch, a block per query), and the queries
  it leaves (None) counted alone by :func:`distsm.kernels.counting.count`.
* ``count_batch``: ``distsm.count_batch(data, queries, partitions=1)``, the public batch call (the light stage
  through ``run_whole_jobs``, plus each query's distribution decision and result record).

A warm-up pass of each runs first (kernels compiled or loaded, memory pools filled); then ``--reps`` passes of each,
in turn, every pass ending in a device synchronisation and timed by the host clock (``time.perf_counter``).
Every pass's counts are checked against HPRD's published counts before any time is reported.

    python -m benchmarks.batch_gpu [--out FILE] [--reps N] [--hprd DIR] [--backend cupy|numpy] [--profile FILE]

``--profile FILE`` adds one more ``count_batch`` pass under cProfile (after the timed ones) and writes its
statistics, sorted by cumulative and by own time, to FILE.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import distsm
from benchmarks import common, meta
from distsm.config import engine_options, gpu_options
from distsm.kernels import counting, get_backend
from distsm.kernels.batch import LightBatch, count_light
from distsm.kernels.query_plan import MatchOptions


def one_at_a_time(be: Any, data: distsm.Graph, queries: list[distsm.Graph]) -> tuple[list[int], dict[str, Any]]:
    """Counts of ``queries`` by ``distsm.count`` one after another, and the seconds the pass took."""
    t = time.perf_counter()
    counts = [distsm.count(data, q, backend=be.name) for q in queries]
    be.synchronize()
    return counts, {"total_s": time.perf_counter() - t}


def light(be: Any, data: distsm.Graph, queries: list[distsm.Graph]) -> tuple[list[int], dict[str, Any]]:
    """Counts of ``queries`` by the batched light stage, the queries it leaves counted alone; the seconds of
    each part and how many were left."""
    options = MatchOptions()
    t0 = time.perf_counter()
    idx = be.index(data)
    found = count_light(be, idx, LightBatch(queries, options), be.default_budget())
    be.synchronize()
    t1 = time.perf_counter()
    counts = [int(c) if c is not None else counting.count(be, idx, counting.Target(q, options),
                                                          budget=be.default_budget())
              for q, c in zip(queries, found)]
    be.synchronize()
    t2 = time.perf_counter()
    return counts, {"light_s": t1 - t0, "alone_s": t2 - t1, "total_s": t2 - t0,
                    "counted_alone": sum(c is None for c in found)}


def public_batch(be: Any, data: distsm.Graph, queries: list[distsm.Graph]) -> tuple[list[int], dict[str, Any]]:
    """Counts of ``queries`` by ``distsm.count_batch(..., partitions=1)`` and the seconds it took."""
    t = time.perf_counter()
    results = distsm.count_batch(data, queries, partitions=1, backend=be.name)
    be.synchronize()
    return [int(r.count) for r in results], {"total_s": time.perf_counter() - t}


def _summary(values: list[float]) -> dict[str, float]:
    return {"best": min(values), "median": statistics.median(values), "all": values}


def write_profile(path: str, call: Callable[[], Any]) -> None:
    """Run ``call`` once under cProfile and write its top functions by cumulative and by own time to ``path``."""
    prof = cProfile.Profile()
    prof.runcall(call)
    text = io.StringIO()
    for key in ("cumulative", "tottime"):
        pstats.Stats(prof, stream=text).sort_stats(key).print_stats(50)
    with open(path, "w") as f:
        f.write(text.getvalue())


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__, "batch_gpu")
    p.add_argument("--reps", type=int, default=5, help="timed passes of each (default 5)")
    p.add_argument("--hprd", default=None, help="HPRD folder (default: tests/data/hprd, else a shared copy)")
    p.add_argument("--backend", default="cupy", choices=("cupy", "numpy"))
    p.add_argument("--profile", default=None, metavar="FILE", help="cProfile statistics of one count_batch pass")
    args = p.parse_args(argv)
    d = common.hprd_dir(args.hprd)
    if d is None:
        raise SystemExit("HPRD data not found (tests/data/hprd or a shared copy); pass --hprd DIR")
    data, by_name, expected = common.hprd_suite(d)
    names = list(expected)
    queries = [by_name[k] for k in names]
    want = [expected[k] for k in names]
    be = get_backend(args.backend)
    t = time.perf_counter()
    be.index(data)
    be.synchronize()
    index_s = time.perf_counter() - t
    ways: dict[str, Callable[..., tuple[list[int], dict[str, Any]]]] = {
        "one_at_a_time": one_at_a_time, "light": light, "count_batch": public_batch}
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in ways}
    for rep in range(args.reps + 1):  # pass 0 is the warm-up
        for name, way in ways.items():
            counts, seconds = way(be, data, queries)
            bad = [(k, c, w) for k, c, w in zip(names, counts, want) if c != w]
            if bad:
                raise SystemExit(f"{name}: {len(bad)} counts differ from the published ones, e.g. {bad[:5]}")
            if rep:
                runs[name].append(seconds)
    summary = {name: {key: _summary([r[key] for r in rs]) for key in rs[0] if key.endswith("_s")}
               for name, rs in runs.items()}
    payload = {
        "queries": len(queries), "hprd": str(d), "backend": be.name, "reps": args.reps, "index_s": index_s,
        "small_limit": gpu_options().small_limit, "trial_entries": engine_options().trial_entries,
        "timing": "host wall clock of whole passes, each ending in a device synchronisation",
        "seconds": summary, "counted_alone": runs["light"][-1]["counted_alone"],
        "speedup_median": {name: summary["one_at_a_time"]["total_s"]["median"] / summary[name]["total_s"]["median"]
                           for name in ("light", "count_batch")},
        "counts_checked": "every pass equal to HPRD's published counts",
    }
    path = meta.write("batch_gpu", payload, args.out)
    if args.profile:
        write_profile(args.profile, lambda: public_batch(be, data, queries))
    print(f"HPRD {len(queries)} queries on {be.name} (median of {args.reps}): "
          + ", ".join(f"{name} {summary[name]['total_s']['median']:.4f} s" for name in ways)
          + f"; {payload['counted_alone']} left to the per-query path -> {path}")


if __name__ == "__main__":
    main()
