#!/usr/bin/env python3
"""Benchmark of the GPU engine (CuPy backend) against the NumPy backend, written as JSON.

Sections (each writes into the JSON as soon as it is done, so a run cut short keeps what it measured):

* ``hprd``: the 200 HPRD queries (dense, 16 vertices) as a batch: wall time of the whole batch (best and median
  of ``--hprd-reps`` passes after a warm-up pass), per-query time from CUDA events (median, p95), matches/s,
  peak pool memory, the same batch on NumPy once, speedup, and a check against the known answers.
* ``rmat``: an R-MAT graph (default 2**20 vertices, 16M edges, 16 Zipf vertex labels, ``--edge-labels`` Zipf
  edge labels) and ``--queries`` random-walk queries of ``--qsize`` vertices (alternating dense/sparse).  Each GPU
  query runs under a time cap (``--query-timeout``; a capped query is reported as timed out, EGSM's "OT").
  NumPy runs on the first ``--numpy-subset`` queries only (said so in the JSON); speedups are over the queries
  both finished.
* ``budget``: one query whose largest level needs >= 10x the memory budget: its largest level's bytes (the
  engine's own accounting) are measured, the budget set to a tenth, and the count compared with the
  unbudgeted one; reports chunks (extend calls) and the query's peak pool memory.

Times are seconds unless a key says ``_ms``.  Per-query GPU times include filtering and planning (the whole
``count`` from a graph already indexed on the device), as in SGSI/EGSM.

    python -m benchmarks run gpu [--out FILE]                 # full run (default benchmarks/results/gpu_engine.json)
    python -m benchmarks.gpu_engine --table FILE              # print the summary table of a result
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import distsm
from benchmarks import common, meta
from benchmarks.generators import query_set, rmat_graph
from distsm.config import options
from distsm.kernels import engine, get_backend
from distsm.kernels.budget import join_entry_bytes
from distsm.kernels.cupy.index import PCSR_LOAD
from distsm.kernels.cupy.pool import watch
from distsm.kernels.cuda_modules import PCSR_SLOTS
from distsm.kernels.cupy.launch import EMPTY_SLOT, PCSR_BUILD, PCSR_LOOKUP
from distsm.kernels.query_plan import MatchOptions


# ------------------------------------------------------------------------------------------------ helpers
class PeakTracker:
    """The process's pool watch (:func:`distsm.kernels.cupy.pool.watch`) as a context that starts a new peak."""

    def __init__(self, cupy: Any):
        self.watch = watch(cupy)

    @property
    def peak(self) -> int:
        return self.watch.peak

    def reset(self) -> int:
        return self.watch.reset()

    def __enter__(self) -> PeakTracker:
        self.reset()
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def timed_count(backend: Any, data: Any, query: Any, budget: int, timeout_s: float, cupy: Any = None,
                count_only: bool = True) -> dict:
    """Count like ``distsm.count`` (filter, plan, chunked walk) but give up after ``timeout_s``.  With
    ``count_only=False`` every match is written to a device table (the listing path's join and compaction) and
    the tables' rows are counted, without copying them to the host."""
    ev0 = ev1 = None
    if cupy is not None:
        ev0, ev1 = cupy.cuda.Event(), cupy.cuda.Event()
        ev0.record()
    t0 = time.perf_counter()
    prepared = engine.prepare(backend, data, query, MatchOptions())
    total, timed_out = 0, False
    if prepared is not None:
        walker = engine.walk(backend, prepared, budget, count_only=count_only)
        for c in walker:
            total += int(c) if count_only else int(c.shape[0])
            if time.perf_counter() - t0 > timeout_s:
                timed_out = True
                break
        walker.close()
    wall = time.perf_counter() - t0
    out = {"count": total, "wall_s": wall, "timed_out": timed_out}
    if ev0 is not None:
        ev1.record()
        ev1.synchronize()
        out["gpu_ms"] = float(cupy.cuda.get_elapsed_time(ev0, ev1))
    return out


def versions(cupy: Any) -> dict:
    v = {"python": platform.python_version(), "numpy": np.__version__, "distsm": distsm.__version__,
         "platform": platform.platform(), "git_commit": meta.git_commit()}
    if cupy is not None:
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        v.update(cupy=cupy.__version__, cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
                 cuda_driver=cupy.cuda.runtime.driverGetVersion(),
                 device=name.decode() if isinstance(name, bytes) else str(name),
                 device_sms=int(props["multiProcessorCount"]), device_memory_bytes=int(props["totalGlobalMem"]))
    return v


# ------------------------------------------------------------------------------------------------ sections
def bench_hprd(args: Any, gpu: Any, cpu: Any, cupy: Any) -> dict:
    d = common.hprd_dir(args.hprd)
    if d is None:
        return {"skipped": "HPRD data not found"}
    data, by_name, expected = common.hprd_suite(d)
    names = sorted(expected)
    queries = [by_name[k] for k in names]
    t = time.perf_counter()
    gpu.index(data)
    index_s = time.perf_counter() - t
    # warm-up pass (kernels loaded, caches hot); its time is reported separately
    t = time.perf_counter()
    first = [distsm.count(data, q, backend="cupy") for q in queries]
    warm_s = time.perf_counter() - t
    passes, per_query_ms = [], []
    counts = first
    for _ in range(args.hprd_reps):
        ms = []
        t = time.perf_counter()
        for q in queries:
            ev0, ev1 = cupy.cuda.Event(), cupy.cuda.Event()
            ev0.record()
            distsm.count(data, q, backend="cupy")
            ev1.record()
            ev1.synchronize()
            ms.append(float(cupy.cuda.get_elapsed_time(ev0, ev1)))
        passes.append(time.perf_counter() - t)
        per_query_ms.extend(ms)
    # The same passes level by level (two launches and two host round trips per level) instead of the fused
    # descent, side by side in this run.
    unfused = []
    with options({"gpu.fuse-levels": False}):
        for _ in range(args.hprd_reps):
            t = time.perf_counter()
            unfused_counts = [distsm.count(data, q, backend="cupy") for q in queries]
            unfused.append(time.perf_counter() - t)
    with PeakTracker(cupy) as tr:
        base = tr.reset()
        for q in queries:
            distsm.count(data, q, backend="cupy")
        peak_query = tr.peak - base
    # where the host time of a GPU pass goes (cProfile inflates it; the split is what matters)
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for q in queries:
        distsm.count(data, q, backend="cupy")
    prof.disable()
    st = pstats.Stats(prof)
    top = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:25]  # by own time
    profile = {"total_s_under_profiler": st.total_tt,
               "top_own_time": [{"function": f"{Path(k[0]).name}:{k[1]}:{k[2]}", "calls": v[1],
                                 "own_s": round(v[2], 5), "cum_s": round(v[3], 5)} for k, v in top]}
    # NumPy, same queries, same process
    cpu.index(data)
    distsm.count(data, queries[0], backend="numpy")
    np_ms = []
    t = time.perf_counter()
    np_counts = []
    for q in queries:
        t1 = time.perf_counter()
        np_counts.append(distsm.count(data, q, backend="numpy"))
        np_ms.append((time.perf_counter() - t1) * 1e3)
    np_batch = time.perf_counter() - t
    total_matches = sum(counts)
    gpu_batch = statistics.median(passes)
    return {
        "data": str(d), "queries": len(queries), "data_vertices": data.n, "data_edges": data.m,
        "index_build_s": index_s, "index_stats": gpu.last_index_stats,
        "counts_match_expected": counts == [expected[k] for k in names],
        "numpy_counts_match": np_counts == counts, "total_matches": total_matches,
        "gpu_warmup_pass_s": warm_s, "gpu_batch_s_passes": passes, "gpu_batch_s_best": min(passes),
        "gpu_batch_s_median": gpu_batch,
        "gpu_query_ms_median": statistics.median(per_query_ms), "gpu_query_ms_p95": pct(per_query_ms, 95),
        "gpu_matches_per_s": total_matches / gpu_batch if gpu_batch else None,
        "gpu_peak_query_pool_bytes": peak_query, "gpu_pass_profile": profile,
        "gpu_batch_s_level_by_level": statistics.median(unfused),
        "level_by_level_counts_match": unfused_counts == counts,
        "fused_descent_speedup": statistics.median(unfused) / gpu_batch if gpu_batch else None,
        "numpy_batch_s": np_batch, "numpy_query_ms_median": statistics.median(np_ms),
        "numpy_query_ms_p95": pct(np_ms, 95), "speedup_batch": np_batch / gpu_batch if gpu_batch else None,
        "target": "all 200 under 0.4 s together on one H100",
        "target_met": gpu_batch < 0.4,
    }


def run_set(gpu: Any, g: Any, qs: list, cap: float, cupy: Any, deadline: float) -> list[dict]:
    """Run each query on the GPU under ``cap`` seconds (until ``deadline``); rows with counts, times, peaks."""
    rows = []
    with PeakTracker(cupy) as tr:
        budget = gpu.default_budget()
        for i, (kind, q) in enumerate(qs):
            if time.perf_counter() > deadline:
                break
            base = tr.reset()
            r = timed_count(gpu, g, q, budget, cap, cupy)
            r.update(i=i, kind=kind, query_edges=q.m, peak_query_pool_bytes=tr.peak - base)
            rows.append(r)
    return rows


def summarize_set(rows: list[dict], n_queries: int, cap: float) -> dict:
    done = [r for r in rows if not r["timed_out"]]
    ms = [r["gpu_ms"] for r in done]
    total_ms = sum(r["gpu_ms"] for r in rows)
    return {
        "queries": n_queries, "run": len(rows), "finished": len(done), "timed_out": len(rows) - len(done),
        "not_run_deadline": n_queries - len(rows), "cap_s": cap,
        "kinds": {k: sum(r["kind"] == k for r in rows) for k in sorted({r["kind"] for r in rows})},
        "query_ms_median_finished": statistics.median(ms) if ms else None,
        "query_ms_p95_finished": pct(ms, 95),
        "query_ms_median_all_timeouts_at_cap": statistics.median(
            [r["gpu_ms"] if not r["timed_out"] else cap * 1e3 for r in rows]) if rows else None,
        "matches_finished": sum(r["count"] for r in done),
        "matches_enumerated_all": sum(r["count"] for r in rows),
        "matches_per_s_all": sum(r["count"] for r in rows) / (total_ms / 1e3) if total_ms else None,
        "peak_query_pool_bytes_max": max((r["peak_query_pool_bytes"] for r in rows), default=None),
        "per_query": rows,
    }


def numpy_subset(cpu: Any, g: Any, qs: list, rows: list[dict], k: int, cap: float, deadline: float) -> dict:
    """NumPy on the first ``k`` GPU rows: time speedup where both finished, enumeration-rate ratio otherwise."""
    sub = []
    for r in rows[:k]:
        if time.perf_counter() > deadline:
            break
        nr = timed_count(cpu, g, qs[r["i"]][1], cpu.default_budget(), cap)
        both = not nr["timed_out"] and not r["timed_out"]
        g_rate = r["count"] / (r["gpu_ms"] / 1e3) if r["gpu_ms"] > 0 else None
        n_rate = nr["count"] / nr["wall_s"] if nr["wall_s"] > 0 else None
        sub.append({"i": r["i"], "numpy_s": nr["wall_s"], "numpy_count": nr["count"],
                    "numpy_timed_out": nr["timed_out"],
                    "gpu_ms": r["gpu_ms"], "gpu_count": r["count"], "gpu_timed_out": r["timed_out"],
                    "counts_equal": (nr["count"] == r["count"]) if both else None,
                    "time_speedup": (nr["wall_s"] * 1e3 / r["gpu_ms"]) if both and r["gpu_ms"] > 0 else None,
                    "rate_ratio": (g_rate / n_rate) if g_rate and n_rate else None})
    sp = [x["time_speedup"] for x in sub if x["time_speedup"] is not None]
    rr = [x["rate_ratio"] for x in sub if x["rate_ratio"] is not None]
    return {"note": f"NumPy ran only on the first {len(sub)} of these GPU queries, capped at {cap} s each; "
                    "time_speedup needs both to finish; rate_ratio compares matches enumerated per second "
                    "(capped runs included)",
            "queries": len(sub), "both_finished": len(sp),
            "all_counts_equal": all(x["counts_equal"] for x in sub if x["counts_equal"] is not None),
            "time_speedup_median": statistics.median(sp) if sp else None,
            "time_speedup_total": (sum(x["numpy_s"] for x in sub if x["time_speedup"] is not None) * 1e3 /
                                   sum(x["gpu_ms"] for x in sub if x["time_speedup"] is not None)) if sp else None,
            "rate_ratio_median": statistics.median(rr) if rr else None, "per_query": sub}


def bench_rmat(args: Any, gpu: Any, cpu: Any, cupy: Any, deadline: float, result: dict) -> tuple[Any, list]:
    t = time.perf_counter()
    g = rmat_graph(args.scale, args.edges, args.vertex_labels, args.edge_labels, seed=args.seed)
    gen_s = time.perf_counter() - t
    t = time.perf_counter()
    spec = query_set(g, args.queries, args.qsize, seed=args.seed + 1)
    sets = {"spec": (spec, args.query_timeout, args.numpy_timeout,
                     f"{args.queries} random-walk queries of {args.qsize} vertices, alternating dense/sparse "
                     "(the brief's set)")}
    for size, count in ((args.qsize, args.core_queries), *((int(x), args.small_queries)
                                                          for x in args.small_sizes.split(",") if x)):
        if count <= 0:
            continue
        qs = query_set(g, count, size, seed=args.seed + 3 + size, kinds=("core",), attempts=3000)
        sets[f"core{size}"] = (qs, args.core_timeout, args.numpy_core_timeout,
                               f"random-walk queries of {size} vertices whose every vertex has degree >= 2 "
                               "(no pendant vertices: more selective; an extra set)")
    qgen_s = time.perf_counter() - t
    result.update(graph={"generator": "R-MAT a,b,c,d = 0.57,0.19,0.19,0.05; Zipf(alpha=1) labels",
                         "scale": args.scale, "vertices": g.n, "edges": g.m, "vertex_labels": args.vertex_labels,
                         "edge_labels": args.edge_labels, "max_degree": int(np.diff(g.indptr).max()),
                         "generate_s": gen_s, "seed": args.seed},
                  query_generation_s=qgen_s, sets=list(sets))
    t = time.perf_counter()
    gpu.index(g)
    result["index"] = {"gpu_index_build_s": time.perf_counter() - t, "stats": gpu.last_index_stats}
    timed_count(gpu, g, spec[0][1], gpu.default_budget(), 0.5, cupy)  # warm-up
    ran = []
    for name, (qs, cap, _ncap, what) in sets.items():
        rows = run_set(gpu, g, qs, cap, cupy, deadline)
        result[name] = {"what": what, "size": int(qs[0][1].n) if qs else None,
                        **summarize_set(rows, len(qs), cap)}
        ran += [(r, qs[r["i"]][1]) for r in rows]
    cpu.index(g)
    for name, (qs, _cap, ncap, _what) in sets.items():
        result[name]["numpy_subset"] = numpy_subset(cpu, g, qs, result[name]["per_query"], args.numpy_subset, ncap,
                                                    deadline + args.numpy_grace)
    result["target"] = "median < 50 ms for the 12-vertex queries on one H100"
    return g, ran


def bench_budget(args: Any, gpu: Any, cupy: Any, g: Any, ran: list) -> dict:
    """A query whose largest level needs >= 10x the budget: same count, bounded memory.  The slowest R-MAT
    query that finished, or (when none did) the HPRD query with the most matches."""
    cands = [(r, q) for r, q in ran if not r["timed_out"] and r["count"] > 0 and r["gpu_ms"] < 2000]
    if cands:
        r, q = max(cands, key=lambda rq: rq[0]["gpu_ms"])
        label = f"R-MAT {r['kind']} #{r['i']}"
    else:
        d = common.hprd_dir(args.hprd)
        if d is None:
            return {"skipped": "no finished R-MAT query with matches and no HPRD data"}
        expected = common.hprd_expected(d)
        name = max(expected, key=lambda k: expected[k])
        g = distsm.read_graph(common.hprd_data_path(d))
        q = distsm.read_graph(common.hprd_query_path(name, d))
        label = f"HPRD {name} (no R-MAT query finished under its cap)"
    need: list[int] = []
    calls = {"extend": 0}
    orig_w, orig_e = gpu.workload, gpu.extend

    def spy_w(idx, table, step):
        delta, offsets, total = orig_w(idx, table, step)
        need.append(total * join_entry_bytes(table.shape[1] + 1))
        return delta, offsets, total

    def spy_e(*a, **k):
        calls["extend"] += 1
        return orig_e(*a, **k)

    gpu.workload = spy_w
    try:
        with options({"gpu.fuse-levels": False}):  # a fused descent computes its workloads in its kernel
            free = timed_count(gpu, g, q, gpu.default_budget(), 60, cupy)
    finally:
        del gpu.workload
    largest = max(need) if need else 0
    budget = max(largest // 10, 1)
    gpu.extend = spy_e
    try:
        with PeakTracker(cupy) as tr:
            base = tr.reset()
            small = timed_count(gpu, g, q, budget, 120, cupy)
            peak = tr.peak - base
    finally:
        del gpu.extend
    return {"query": label, "largest_level_bytes": largest, "budget_bytes": budget,
            "ratio": largest / budget, "count_default_budget": free["count"], "count_small_budget": small["count"],
            "counts_equal": free["count"] == small["count"] and not small["timed_out"],
            "default_budget_ms": free["gpu_ms"], "small_budget_ms": small["gpu_ms"],
            "extend_calls_small_budget": calls["extend"], "peak_query_pool_bytes_small_budget": peak}


def bench_pcsr(args: Any, gpu: Any, cupy: Any, g: Any) -> dict:
    """The (vertex, label) -> run hash on the R-MAT graph's adjacency with ``--pcsr-labels`` Zipf labels: build
    time, and lookup time against binary search in the sorted run keys (same kernel, hash off)."""
    from generators import zipf_labels

    L = args.pcsr_labels
    rng = np.random.default_rng(args.seed + 2)
    rows = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(g.indptr))
    keys = cupy.unique(cupy.asarray(rows * L + zipf_labels(rng, rows.shape[0], L)))
    del rows
    runs = int(keys.shape[0])
    groups = 1
    while groups * PCSR_SLOTS * PCSR_LOAD < runs:
        groups *= 2
    table = cupy.full(groups * PCSR_SLOTS, EMPTY_SLOT, dtype=cupy.uint64)
    ev0, ev1 = cupy.cuda.Event(), cupy.cuda.Event()
    ev0.record()
    gpu.kernels.grid(PCSR_BUILD, runs, run_keys=keys, runs=runs, table=table, gmask=groups - 1)
    ev1.record()
    ev1.synchronize()
    build_ms = float(cupy.cuda.get_elapsed_time(ev0, ev1))
    # queries: every run once (shuffled) plus as many random pairs (mostly absent)
    perm = cupy.asarray(rng.permutation(runs))
    qk = cupy.concatenate([keys[perm], cupy.asarray(rng.integers(0, g.n, runs) * L + rng.integers(0, L, runs))])
    qv, ql = (qk // L).astype(cupy.int32), (qk % L).astype(cupy.int32)
    m = int(qk.shape[0])
    out_h = cupy.empty(m, dtype=cupy.int64)
    out_b = cupy.empty(m, dtype=cupy.int64)

    def run(mask: int, out: Any) -> float:
        best = float("inf")
        for _ in range(3):
            ev0.record()
            gpu.kernels.grid(PCSR_LOOKUP, m, vs=qv, labels=ql, m=m, L=L, run_keys=keys, pcsr=table, gmask=mask,
                             out=out)
            ev1.record()
            ev1.synchronize()
            best = min(best, float(cupy.cuda.get_elapsed_time(ev0, ev1)))
        return best

    hash_ms = run(groups - 1, out_h)
    bs_ms = run(-(runs + 1), out_b)
    ok = bool((out_h == out_b).all()) and bool((out_h[:runs] == perm).all())
    return {"labels": L, "runs": runs, "groups": groups, "table_bytes": int(table.nbytes), "load": runs / (groups * 16),
            "build_ms": build_ms, "lookups": m, "hash_lookup_ms": hash_ms, "binary_search_lookup_ms": bs_ms,
            "hash_lookups_per_s": m / (hash_ms / 1e3), "results_equal": ok}


# ------------------------------------------------------------------------------------------------ table
def print_table(res: dict) -> None:
    def f(x: Any, nd: int = 3) -> str:
        if x is None:
            return "-"
        if isinstance(x, float):
            return f"{x:.{nd}f}"
        return str(x)

    v = res.get("versions", {})
    print(f"device: {v.get('device', '?')}  cupy {v.get('cupy', '?')}  cuda {v.get('cuda_runtime', '?')}  "
          f"seed {res.get('seed')}")
    h = res.get("hprd", {})
    if h and "skipped" not in h:
        print(f"HPRD 200 : gpu batch {f(h['gpu_batch_s_median'])} s (best {f(h['gpu_batch_s_best'])}), "
              f"query median {f(h['gpu_query_ms_median'])} ms p95 {f(h['gpu_query_ms_p95'])} ms | "
              f"numpy batch {f(h['numpy_batch_s'])} s | speedup {f(h['speedup_batch'], 2)}x | "
              f"answers ok {h['counts_match_expected']} | target<0.4s {h['target_met']}")
    r = res.get("rmat", {})
    if r.get("graph"):
        gr = r["graph"]
        ix = r.get("index", {})
        print(f"R-MAT {gr['vertices']} v / {gr['edges']} e (max degree {gr['max_degree']}), index "
              f"{f(ix.get('gpu_index_build_s'), 2)} s")
        for name in r.get("sets", []):
            gg = r.get(name)
            if not gg:
                continue
            ns = gg.get("numpy_subset", {})
            print(f"  {name:6s} {gg['queries']} x {gg['size']}-vertex {gg['kinds']}: "
                  f"finished {gg['finished']}/{gg['run']} within {gg['cap_s']} s (not run {gg['not_run_deadline']}); "
                  f"median finished {f(gg['query_ms_median_finished'], 1)} ms, p95 {f(gg['query_ms_p95_finished'], 1)}"
                  f" ms; median (timeouts at cap) {f(gg['query_ms_median_all_timeouts_at_cap'], 1)} ms; "
                  f"{f(gg['matches_per_s_all'], 0)} matches/s; peak pool {gg['peak_query_pool_bytes_max']} B")
            print(f"       numpy on {ns.get('queries')}: both finished {ns.get('both_finished')}, time speedup median "
                  f"{f(ns.get('time_speedup_median'), 1)}x, enumeration-rate ratio median "
                  f"{f(ns.get('rate_ratio_median'), 0)}x, counts equal {ns.get('all_counts_equal')}")
    pc = res.get("pcsr", {})
    if pc and "skipped" not in pc:
        print(f"PCSR     : {pc['runs']} runs ({pc['labels']} labels) built in {f(pc['build_ms'], 2)} ms; "
              f"{pc['lookups']} lookups: hash {f(pc['hash_lookup_ms'], 2)} ms vs binary search "
              f"{f(pc['binary_search_lookup_ms'], 2)} ms; equal {pc['results_equal']}")
    b = res.get("budget", {})
    if b and "skipped" not in b:
        print(f"budget   : largest level {b['largest_level_bytes']} B vs budget {b['budget_bytes']} B "
              f"({f(b['ratio'], 1)}x): counts equal {b['counts_equal']} ({b['count_small_budget']}), "
              f"{b['extend_calls_small_budget']} extend calls, peak {b['peak_query_pool_bytes_small_budget']} B, "
              f"{f(b['small_budget_ms'], 1)} ms vs {f(b['default_budget_ms'], 1)} ms")


# ------------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> None:
    ap = common.parser(__doc__, "gpu_engine")
    ap.add_argument("--table", help="print the summary table of this JSON file and exit")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--sections", default="hprd,rmat,budget,pcsr")
    ap.add_argument("--pcsr-labels", type=int, default=8)
    ap.add_argument("--hprd", help="HPRD folder (default: tests/data/hprd or ../shared/data/hprd)")
    ap.add_argument("--hprd-reps", type=int, default=3)
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edges", type=int, default=16_000_000)
    ap.add_argument("--vertex-labels", type=int, default=16)
    ap.add_argument("--edge-labels", type=int, default=1)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--qsize", type=int, default=12)
    ap.add_argument("--query-timeout", type=float, default=0.5, help="GPU cap per query of the brief's set (s)")
    ap.add_argument("--core-queries", type=int, default=30, help="extra core queries of --qsize vertices")
    ap.add_argument("--small-sizes", default="6,8", help="sizes of extra, smaller core query sets")
    ap.add_argument("--small-queries", type=int, default=20)
    ap.add_argument("--core-timeout", type=float, default=1.0, help="GPU cap per core query (s)")
    ap.add_argument("--numpy-subset", type=int, default=4)
    ap.add_argument("--numpy-timeout", type=float, default=2.0)
    ap.add_argument("--numpy-core-timeout", type=float, default=3.0)
    ap.add_argument("--numpy-grace", type=float, default=60.0, help="seconds past the deadline NumPy may use")
    ap.add_argument("--max-seconds", type=float, default=210.0,
                    help="stop starting GPU R-MAT queries this many seconds after the benchmark started")
    args = ap.parse_args(argv)
    if args.table:
        print_table(json.loads(Path(args.table).read_text()))
        return
    start = time.perf_counter()
    import cupy

    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    gpu, cpu = get_backend("cupy"), get_backend("numpy")
    res: dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv), "seed": args.seed,
                           "versions": versions(cupy), "args": vars(args),
                           "timing": "GPU per-query times: CUDA events around the whole count (filter + plan + join); "
                                     "batch times: host wall clock; NumPy: host wall clock"}

    def save() -> None:
        path.write_text(json.dumps(res, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o)))

    sections = set(args.sections.split(","))
    if "hprd" in sections:
        res["hprd"] = bench_hprd(args, gpu, cpu, cupy)
        save()
        print_table(res)
    ran: list = []
    g = None
    if "rmat" in sections or "budget" in sections:
        res["rmat"] = {}
        g, ran = bench_rmat(args, gpu, cpu, cupy, start + args.max_seconds, res["rmat"])
        save()
    if "budget" in sections and g is not None:
        res["budget"] = bench_budget(args, gpu, cupy, g, ran)
        save()
    if "pcsr" in sections and g is not None:
        res["pcsr"] = bench_pcsr(args, gpu, cupy, g)
    res["total_s"] = time.perf_counter() - start
    save()
    print_table(res)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
