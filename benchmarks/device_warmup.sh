#!/usr/bin/env bash
# The first-use compile cliff on the GPU machine, cold and after `distsm warmup`, in one call:
#
#   GMATCH_TEST=.peers/gmatch-test bash benchmarks/device_warmup.sh      # carry .whl and .peers
#
# 1. cold: an empty CuPy kernel cache (CUPY_CACHE_DIR), a fresh process counts each heavy gMatch query twice;
# 2. warmed: another empty cache, `python -m distsm warmup` fills it (timed), then a fresh process counts the same
#    queries twice, and another fresh process runs gMatch's whole suite and HPRD's 200 queries; the kernel files
#    each step added to the cache are counted (after the warm-up, none should be).
# $OUT/warmup.json holds every figure with the machine and commit; the table is printed last.
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
export PYTHONPATH="$WORK/site:$WORK/deps"
GMATCH_TEST=$(cd "${GMATCH_TEST:-.peers/gmatch-test}" && pwd)
HEAVY=${HEAVY:-"Q_13 Q_8 Q_14"}
files() { find "$1" -type f 2>/dev/null | wc -l; }
firsts() {  # firsts LABEL: a fresh process counts each heavy query twice; one JSON line per query
  (cd "$WORK" && python3 - "$1" "$GMATCH_TEST" $HEAVY <<'PY'
import json, sys, time
import distsm
label, root, names = sys.argv[1], sys.argv[2], sys.argv[3:]
data = distsm.read_graph(f"{root}/data.graph")
for name in names:
    q = distsm.read_graph(f"{root}/query_graph/{name}.graph")
    times, counts = [], []
    for _ in range(2):
        t = time.perf_counter()
        counts.append(distsm.count(data, q, backend="cupy"))
        times.append(time.perf_counter() - t)
    assert counts[0] == counts[1]
    print(json.dumps({"step": label, "query": name, "count": counts[0], "first_s": round(times[0], 4),
                      "second_s": round(times[1], 4)}))
PY
  )
}
{
  export CUPY_CACHE_DIR="$WORK/cold-cache"
  firsts cold
  echo "{\"step\": \"cold\", \"kernel_files\": $(files "$CUPY_CACHE_DIR")}"
  export CUPY_CACHE_DIR="$WORK/warm-cache"
  start=$(date +%s.%N)
  (cd "$WORK" && python3 -m distsm warmup >"$WORK/warmup.log" 2>&1) || cat "$WORK/warmup.log" >&2
  echo "{\"step\": \"warmup\", \"seconds\": $(echo "$(date +%s.%N) - $start" | bc), \"kernel_files\": $(files "$CUPY_CACHE_DIR")}"
  before=$(files "$CUPY_CACHE_DIR")
  firsts warmed
  echo "{\"step\": \"warmed\", \"kernel_files_added\": $(( $(files "$CUPY_CACHE_DIR") - before ))}"
  before=$(files "$CUPY_CACHE_DIR")
  (cd "$WORK" && ln -sf "$OLDPWD/benchmarks" . && timeout "${SUITE_TIMEOUT:-300}" python3 -m benchmarks run peers \
     --suites gmatch-test hprd --backend cupy --max-seconds 20 --startup-seconds 100 --gmatch-test "$GMATCH_TEST" \
     --out "$WORK/suites.json" >"$WORK/suites.log" 2>&1) || tail -n 5 "$WORK/suites.log" >&2
  echo "{\"step\": \"suites after warmup\", \"kernel_files_added\": $(( $(files "$CUPY_CACHE_DIR") - before ))}"
} | tee "$WORK/steps.jsonl"
python3 - "$WORK/steps.jsonl" "$OUT/warmup.json" "$(git rev-parse HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, platform, subprocess, sys
steps = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
json.dump({"benchmark": "device_warmup", "commit": sys.argv[3], "host": platform.node(),
           "gpu": gpu.stdout.strip(), "steps": steps}, open(sys.argv[2], "w"), indent=1)
print(f"{'step':<22}{'query':<8}{'first s':>10}{'second s':>10}{'first-second':>14}")
for s in steps:
    if "query" in s:
        print(f"{s['step']:<22}{s['query']:<8}{s['first_s']:>10.3f}{s['second_s']:>10.3f}"
              f"{s['first_s'] - s['second_s']:>14.3f}")
    else:
        print(s)
PY
