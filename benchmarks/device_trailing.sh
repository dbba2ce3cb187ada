#!/usr/bin/env bash
# The trailing count of the dense heavy queries on the GPU machine, before and after the fused kernel, in one run:
#
#   GMATCH_TEST=.peers/gmatch-test bash benchmarks/device_trailing.sh       # on the device (carry .whl and .peers)
#
# The queries are benchmarks/dense_heavy.py's as its recorded run drew them (benchmarks/results/dense_heavy_h100.json):
# candidates 0, 1 and 7 of benchmarks.generators.query_set(data, 8, 16, seed=16, kinds=("dense",)) are heavy_16_0,
# heavy_16_1 and heavy_16_2, whose counts gMatch's suite run settled (its 24- and 32-vertex ones are capped: no
# count of distsm's finished within the cap).  QUERIES overrides them as SIZE:CANDIDATE:NAME words.  For each,
# distsm plans the count on the GPU and joins the core; every core table is counted twice by one TrailingCounter,
# by the array code (the old path) and by the fused kernel, each timed with CUDA events, the two totals checked
# equal.  A whole count with its stage times follows.  $OUT/trailing.json holds every figure; the table is last.
#
# BENCH=0 leaves out the trailing-count comparison.  WARMUP_CHECK=1 first runs `python -m distsm warmup` into an
# empty CuPy kernel cache, then counts gMatch's suite (checked against its expected output) and the heavy queries in
# a fresh process, and lists the kernels that process still compiled ($OUT/warmup_check.json; their CUDA sources in
# $OUT/compiled_after_warmup.cu).
. "$(dirname "$0")/device_install.sh"
export PYTHONPATH="$PYTHONPATH:$PWD"
QUERIES=${QUERIES:-"16:0:heavy_16_0 16:1:heavy_16_1 16:7:heavy_16_2"}

cat >"$WORK/trailing_bench.py" <<'PY'
"""suite ROOT QUERY...: gMatch's suite and the heavy queries, counted once each; bench ROOT OUT QUERY...: the
trailing count of each heavy query by both paths (see benchmarks/device_trailing.sh)."""
import json, sys, time
from pathlib import Path

import cupy

import distsm
from benchmarks import meta
from benchmarks.generators import query_set
from distsm.kernels import counting, get_backend
from distsm.kernels.ce_join import CoreOrder, walk_core
from distsm.kernels.counting import Count, Target
from distsm.kernels.explain import Explanation
from distsm.kernels.placement import Placement
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.trailing import TrailingCounter


def heavy(data, words):
    for word in words:
        size, candidate, name = word.split(":")
        drawn = [q for kind, q in query_set(data, 8, int(size), int(size), kinds=("dense",)) if kind == "dense"]
        yield name, drawn[int(candidate)]


def timed(f):
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    value = f()
    end.record()
    end.synchronize()
    return value, cupy.cuda.get_elapsed_time(start, end) / 1e3


def suite(root, words):
    root = Path(root)
    data = distsm.read_graph(root / "data.graph")
    expected = [int(x) for x in (root / "expected_output.txt").read_text().split()]
    t = time.perf_counter()
    for i, want in enumerate(expected):
        got = distsm.count(data, distsm.read_graph(root / "query_graph" / f"Q_{i}.graph"), backend="cupy")
        assert got == want, (i, got, want)
    print(f"gMatch's suite: {len(expected)} counts equal to its expected output in {time.perf_counter() - t:.2f} s")
    for name, query in heavy(data, words):
        t = time.perf_counter()
        print(f"{name}: {distsm.count(data, query, backend='cupy')} in {time.perf_counter() - t:.2f} s (first)")


def bench(root, out_path, words):
    data = distsm.read_graph(Path(root) / "data.graph")
    gpu = get_backend("cupy")
    budget = gpu.default_budget()
    rows = []
    for name, query in heavy(data, words):
        planned = Count(Placement.of(gpu, data), Target(query, MatchOptions()), budget).plan(force=True)
        plan = planned.plan
        assert plan is not None and planned.runner is not None, planned.reason
        if planned.runner.backend is not gpu:
            print(json.dumps({"query": name, "skipped": planned.reason}))
            continue

        def tables():
            return walk_core(gpu, planned.ce, CoreOrder(plan.core[0], plan.steps), planned.parts.core, True)

        # Both paths count the first table once untimed: compilation stays out of the timings.
        warm = TrailingCounter(gpu, plan, planned.ce, homomorphism=False, budget=planned.parts.trailing)
        first = next(tables())
        assert warm.count(first) == warm.count_arrays(first)
        del first
        counter = TrailingCounter(gpu, plan, planned.ce, homomorphism=False, budget=planned.parts.trailing)
        old = fused = 0.0
        total = core_rows = array_entries = 0
        for table in tables():
            core_rows += int(table.shape[0])
            before = counter.entries
            a, t_old = timed(lambda: counter.count_arrays(table))
            array_entries += counter.entries - before
            b, t_fused = timed(lambda: counter.count(table))
            assert a == b, (name, a, b)
            total, old, fused = total + a, old + t_old, fused + t_fused
        report = Explanation()
        t = time.perf_counter()
        whole = counting.count(gpu, data, Target(query, MatchOptions()), budget=budget, explain=report)
        whole_s = time.perf_counter() - t
        assert whole == total, (name, whole, total)
        row = {"query": name, "vertices": query.n, "edges": query.m, "core": len(plan.core),
               "trailing": len(plan.trailing), "groups": [len(g) for g in plan.groups], "core_rows": core_rows,
               "count": total, "array_s": round(old, 4), "fused_s": round(fused, 4),
               "array_entries": array_entries, "fused_entries": counter.entries - array_entries,
               "whole_s": round(whole_s, 4), "whole_path": report.path,
               "whole_stages": {k: round(v, 4) for k, v in report.seconds.items()}}
        print(json.dumps(row))
        rows.append(row)
    meta.write("device_trailing", {"data": str(root), "rows": rows}, out_path)
    print(f"\n{'query':<12} {'core':>4} {'trail':>5} {'core rows':>11} {'count':>14} {'array s':>8} {'fused s':>8} "
          f"{'speed-up':>8} {'whole s':>8}")
    for r in rows:
        print(f"{r['query']:<12} {r['core']:>4} {r['trailing']:>5} {r['core_rows']:>11} {r['count']:>14} "
              f"{r['array_s']:>8.3f} {r['fused_s']:>8.4f} {r['array_s'] / max(r['fused_s'], 1e-9):>8.1f} "
              f"{r['whole_s']:>8.3f}")


if __name__ == "__main__":
    if sys.argv[1] == "suite":
        suite(sys.argv[2], sys.argv[3:])
    else:
        bench(sys.argv[2], sys.argv[3], sys.argv[4:])
PY

if [ "${WARMUP_CHECK:-0}" = 1 ]; then
  export CUPY_CACHE_DIR="$WORK/cache"
  T0=$(date +%s)
  (cd "$WORK" && python3 -m distsm warmup --json >"$OUT/warmup.json" 2>"$WORK/warmup.err") || tail -n 20 "$WORK/warmup.err"
  T1=$(date +%s)
  touch "$WORK/marker"
  # CuPy then also writes each kernel's CUDA source beside its binary: what the fresh process compiled is kept.
  # shellcheck disable=SC2086
  (cd "$WORK" && CUPY_CACHE_SAVE_CUDA_SOURCE=1 \
     timeout "${SUITE_TIMEOUT:-120}" python3 trailing_bench.py suite "$GMATCH_TEST" $QUERIES)
  find "$CUPY_CACHE_DIR" -name "*.cu" -newer "$WORK/marker" -exec sh -c 'echo "// ==== $1"; cat "$1"' _ {} \; \
    >"$OUT/compiled_after_warmup.cu"
  NAMES=$(find "$CUPY_CACHE_DIR" -type f -newer "$WORK/marker" -exec strings {} \; 2>/dev/null \
          | grep -oE "cupy_[a-z_0-9]+|trailing_count|extend_[a-z_]+" | sort -u | tr '\n' ' ')
  echo "{\"warmup_s\": $((T1 - T0)), \"compiled_after_warmup\": \"$NAMES\"}" | tee "$OUT/warmup_check.json"
fi
if [ "${BENCH:-1}" = 1 ]; then
  # shellcheck disable=SC2086
  (cd "$WORK" && timeout "${BENCH_TIMEOUT:-240}" python3 trailing_bench.py bench "$GMATCH_TEST" "$OUT/trailing.json" \
     $QUERIES)
fi
