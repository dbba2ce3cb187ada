#!/usr/bin/env bash
# The trailing count of the dense heavy queries on the GPU machine, before and after the fused kernel, in one run:
#
#   GMATCH_TEST=.peers/gmatch-test bash benchmarks/device_trailing.sh       # on the device (carry .whl and .peers)
#
# The queries are benchmarks/dense_heavy.py's: the first dense random-walk query of each size drawn by
# benchmarks.generators.query_set(data, 8, size, seed=size) (heavy_16_0, heavy_24_0 and heavy_32_0 of the suite's
# recorded run; SIZES overrides the sizes).  For each, distsm plans the count on the GPU and joins the core; every
# core table is counted twice by one TrailingCounter, by the array code (the old path) and by the fused kernel,
# each timed with CUDA events, the two totals checked equal.  A whole count with its stage times follows.
# $OUT/trailing.json holds every figure; the table is printed last.
set -uo pipefail
OUT=${OUT:-results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$WORK/deps" .whl/*.whl
fi
python3 -m pip install -q --no-deps --no-build-isolation --no-compile --target "$WORK/site" . >"$WORK/pip.log" 2>&1 \
  || { cat "$WORK/pip.log"; exit 1; }
export PYTHONPATH="$WORK/site:$WORK/deps:$PWD"
GMATCH_TEST=$(cd "${GMATCH_TEST:-.peers/gmatch-test}" && pwd)
(cd "$WORK" && python3 - "$GMATCH_TEST/data.graph" "$OUT/trailing.json" ${SIZES:-16 24 32} <<'PY'
import json, platform, sys, time

import cupy

import distsm
from benchmarks.generators import query_set
from distsm.kernels import counting, get_backend
from distsm.kernels.ce_join import walk_core
from distsm.kernels.counting import Count, Target
from distsm.kernels.explain import Explanation
from distsm.kernels.placement import Placement
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.trailing import TrailingCounter

data_path, out_path, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
data = distsm.read_graph(data_path)
gpu = get_backend("cupy")
budget = gpu.default_budget()


def timed(f):
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    value = f()
    end.record()
    end.synchronize()
    return value, cupy.cuda.get_elapsed_time(start, end) / 1e3


rows = []
for size in sizes:
    query = [q for kind, q in query_set(data, 8, size, size, kinds=("dense",)) if kind == "dense"][0]
    name = f"heavy_{size}_0"
    stages = Count(Placement.of(gpu, data), Target(query, MatchOptions()), budget)
    planned = stages.plan(force=True)
    plan = planned.plan
    assert plan is not None and planned.runner is not None and planned.runner.backend is gpu, planned.reason
    # Both paths run once on a few rows first: compilation stays out of the timings.
    warm = TrailingCounter(gpu, plan, planned.ce, homomorphism=False, budget=planned.parts.trailing)
    first = next(walk_core(gpu, planned.ce, plan.core[0], list(plan.steps), planned.parts.core, True))
    assert warm.count(first[:4096]) == warm.count_arrays(first[:4096])
    del first
    counter = TrailingCounter(gpu, plan, planned.ce, homomorphism=False, budget=planned.parts.trailing)
    old = fused = 0.0
    total = core_rows = array_entries = 0
    for table in walk_core(gpu, planned.ce, plan.core[0], list(plan.steps), planned.parts.core, True):
        core_rows += int(table.shape[0])
        before = counter.entries
        a, t_old = timed(lambda: counter.count_arrays(table))
        array_entries += counter.entries - before
        b, t_fused = timed(lambda: counter.count(table))
        assert a == b, (name, a, b)
        total, old, fused = total + a, old + t_old, fused + t_fused
    report = Explanation()
    t = time.perf_counter()
    whole = counting.count(gpu, data, query, MatchOptions(), budget=budget, explain=report)
    whole_s = time.perf_counter() - t
    assert whole == total or report.path != "trailing", (name, whole, total)
    row = {"query": name, "vertices": query.n, "edges": query.m, "core": len(plan.core),
           "trailing": len(plan.trailing), "groups": [len(g) for g in plan.groups], "core_rows": core_rows,
           "count": total, "array_s": round(old, 4), "fused_s": round(fused, 4),
           "array_entries": array_entries, "fused_entries": counter.entries - array_entries,
           "whole_count": whole, "whole_s": round(whole_s, 4), "whole_path": report.path,
           "whole_stages": {k: round(v, 4) for k, v in report.seconds.items()}}
    print(json.dumps(row))
    rows.append(row)
dev = cupy.cuda.runtime.getDeviceProperties(0)["name"]
json.dump({"benchmark": "device_trailing", "device": dev.decode() if isinstance(dev, bytes) else dev,
           "host": platform.node(), "data": data_path, "rows": rows}, open(out_path, "w"), indent=1)
print(f"\n{'query':<12} {'core':>4} {'trail':>5} {'core rows':>11} {'count':>16} {'array s':>8} {'fused s':>8} "
      f"{'speed-up':>8} {'whole s':>8}")
for r in rows:
    print(f"{r['query']:<12} {r['core']:>4} {r['trailing']:>5} {r['core_rows']:>11} {r['count']:>16} "
          f"{r['array_s']:>8.3f} {r['fused_s']:>8.4f} {r['array_s'] / max(r['fused_s'], 1e-9):>8.1f} "
          f"{r['whole_s']:>8.3f}")
PY
)
