#!/usr/bin/env bash
# The first-use compile cliff on the GPU machine, cold and after `distsm warmup`, in one call:
#
#   COMMIT=$(git rev-parse --short HEAD)   # here, then on the device (carry .whl and .peers):
#   COMMIT=... GMATCH_TEST=.peers/gmatch-test bash benchmarks/device_warmup.sh
#
# 1. cold: an empty CuPy kernel cache (CUPY_CACHE_DIR), a fresh process counts each heavy gMatch query twice;
# 2. warmed: another empty cache, `python -m distsm warmup` fills it (timed), then a fresh process counts the same
#    queries twice, and another fresh process runs gMatch's whole suite and HPRD's 200 queries; the kernel files
#    each step added to the cache are counted (after the warm-up, none should be);
# 3. large graph after the warm-up (SKIP_RMAT=1: not): a fresh process builds an R-MAT of 2**RMAT_SCALE vertices
#    (default 22) and RMAT_EDGES edges (16M), 256 labels, and counts 16 queries of 8-12 vertices twice each (the
#    heavy batch of benchmarks/cluster_scaling.py); large graphs take paths and array sizes the suites never do.
# WARMUP=0: no warm-up command at all (what a user gets who never heard of it): one empty cache for every step, the
#    first fresh process's counts are the cold start, and each later step counts the files it adds (0 when the
#    engine's kernels come precompiled, kernels/cuda_modules.py); a motifs step counts each pattern of
#    benchmarks/motifs.py twice on a one-label R-MAT of 2**MOTIF_SCALE vertices (default 18, 2M edges).
# $OUT/warmup.json holds every figure with the machine and commit; the table is printed last.
. "$(dirname "$0")/device_install.sh"
HEAVY=${HEAVY:-"Q_13 Q_8 Q_14"}
files() { find "$1" -type f 2>/dev/null | wc -l; }
firsts() {  # firsts LABEL [PROFILE]: a fresh process counts each heavy query twice; one JSON line per query
  (cd "$WORK" && python3 - "$1" "$GMATCH_TEST" "${2:-}" $HEAVY <<'PY'
import cProfile, io, json, pstats, sys, time
import distsm
from distsm.kernels import get_backend
label, root, profile, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
data = distsm.read_graph(f"{root}/data.graph")
cupy = get_backend("cupy")
t = time.perf_counter()
cupy.index(data)  # the data graph's device index: built once per process whatever the kernel cache holds
cupy.synchronize()
print(json.dumps({"step": label, "index_s": round(time.perf_counter() - t, 4)}))
for i, name in enumerate(names):
    q = distsm.read_graph(f"{root}/query_graph/{name}.graph")
    times, counts = [], []
    for rep in range(2):
        prof = cProfile.Profile() if profile and i == 0 and rep == 0 else None
        t = time.perf_counter()
        if prof:
            prof.enable()
        counts.append(distsm.count(data, q, backend="cupy"))
        times.append(time.perf_counter() - t)
        if prof:
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(14)
            print(out.getvalue(), file=sys.stderr)
    assert counts[0] == counts[1]
    print(json.dumps({"step": label, "query": name, "count": counts[0], "first_s": round(times[0], 4),
                      "second_s": round(times[1], 4)}))
PY
  )
}
rmat_firsts() {  # a fresh process counts cluster_scaling's heavy queries on an R-MAT twice; one JSON line each
  (cd "$WORK" && ln -sfn "$OLDPWD/benchmarks" benchmarks && python3 - "${RMAT_SCALE:-22}" "${RMAT_EDGES:-16000000}" <<'PY'
import json, sys, time
import distsm
from benchmarks.cluster_scaling import scaling_queries
from benchmarks.generators import rmat_graph
from distsm.kernels import get_backend
scale, edges = int(sys.argv[1]), int(sys.argv[2])
data = rmat_graph(scale=scale, edges=edges, vertex_labels=256, edge_labels=1, seed=7, a=0.45, b=0.22, c=0.22)
cupy = get_backend("cupy")
t = time.perf_counter()
cupy.index(data)
cupy.synchronize()
print(json.dumps({"step": "rmat after warmup", "graph": f"R-MAT 2**{scale} vertices, {data.m} edges, 256 labels",
                  "index_s": round(time.perf_counter() - t, 4)}))
graphs, names = scaling_queries(data, 16, [8, 12], 7, ("core", "dense"), "q")
for name, q in zip(names, graphs):
    times, counts = [], []
    for _ in range(2):
        t = time.perf_counter()
        counts.append(distsm.count(data, q, backend="cupy"))
        times.append(time.perf_counter() - t)
    assert counts[0] == counts[1]
    print(json.dumps({"step": "rmat after warmup", "query": name, "count": counts[0], "first_s": round(times[0], 4),
                      "second_s": round(times[1], 4)}))
PY
  )
}
motif_firsts() {  # a fresh process counts every pattern of benchmarks/motifs.py on a one-label R-MAT twice
  (cd "$WORK" && ln -sfn "$OLDPWD/benchmarks" benchmarks && python3 - "${MOTIF_SCALE:-18}" "${MOTIF_EDGES:-2000000}" <<'PY'
import cProfile, io, json, pstats, sys, time
import distsm
from benchmarks.generators import rmat_graph
from benchmarks.motifs import PATTERNS, pattern_graph
from distsm.kernels import get_backend
scale, edges = int(sys.argv[1]), int(sys.argv[2])
data = rmat_graph(scale=scale, edges=edges, vertex_labels=1, edge_labels=1, seed=7)
cupy = get_backend("cupy")
t = time.perf_counter()
cupy.index(data)  # the data graph's device index, as the heavy queries' step builds it first
cupy.synchronize()
print(json.dumps({"step": "motifs", "index_s": round(time.perf_counter() - t, 4)}))
for i, name in enumerate(PATTERNS):
    times, counts = [], []
    for rep in range(2):
        prof = cProfile.Profile() if i == 0 and rep == 0 else None
        t = time.perf_counter()
        if prof:
            prof.enable()
        counts.append(distsm.count(data, pattern_graph(name), backend="cupy"))
        times.append(time.perf_counter() - t)
        if prof:  # where the first pattern's first count goes (the ranked graph and the first search)
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(30)
            print(out.getvalue(), file=sys.stderr)
    assert counts[0] == counts[1]
    print(json.dumps({"step": "motifs", "query": name, "count": counts[0], "first_s": round(times[0], 4),
                      "second_s": round(times[1], 4)}))
PY
  )
}
counted_step() {  # counted_step FUNCTION STEP NAMES_STEP: run FUNCTION, then the kernel files it added and their names
  local before
  before=$(files "$CUPY_CACHE_DIR")
  touch "$WORK/marker"
  "$1"
  echo "{\"step\": \"$2\", \"kernel_files_added\": $(( $(files "$CUPY_CACHE_DIR") - before ))}"
  new_kernels "$CUPY_CACHE_DIR" "$WORK/marker" "$3"
}
new_kernels() {  # new_kernels DIR MARKER [STEP]: one JSON line naming CuPy's kernels in cache files newer than MARKER
  find "$1" -type f -newer "$2" -exec strings {} \; 2>/dev/null | grep -oE "cupy_[a-z_0-9]+" | sort -u \
    | python3 -c "import json, sys; print(json.dumps({'step': sys.argv[1], 'names': sys.stdin.read().split()}))" \
      "${3:-kernels compiled after warmup}"
}
export CUPY_CACHE_SAVE_CUDA_SOURCE=1  # new_kernels names what was compiled
AFTER=$([ "${WARMUP:-1}" = 1 ] && echo "after warmup" || echo "without warmup")
FIRST=$([ "${WARMUP:-1}" = 1 ] && echo warmed || echo fresh)
{
  if [ "${WARMUP:-1}" = 1 ] && [ "${SKIP_COLD:-0}" != 1 ]; then  # SKIP_COLD=1: only the warm-up and what it leaves out
    export CUPY_CACHE_DIR="$WORK/cold-cache"
    firsts cold
    echo "{\"step\": \"cold\", \"kernel_files\": $(files "$CUPY_CACHE_DIR")}"
  fi
  export CUPY_CACHE_DIR="$WORK/warm-cache"
  mkdir -p "$CUPY_CACHE_DIR"
  if [ "${WARMUP:-1}" = 1 ]; then
    (cd "$WORK" && python3 -m distsm warmup --json >"$WORK/warmup.log" 2>"$WORK/warmup.err") || cat "$WORK/warmup.err" >&2
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({'step': 'warmup', 'seconds': round(r['seconds'], 2), 'kernel_files': r['compiled']}))" "$WORK/warmup.log"
  fi
  before=$(files "$CUPY_CACHE_DIR")
  touch "$WORK/marker"
  firsts "$FIRST" profile
  echo "{\"step\": \"$FIRST\", \"kernel_files_added\": $(( $(files "$CUPY_CACHE_DIR") - before ))}"
  new_kernels "$CUPY_CACHE_DIR" "$WORK/marker" "kernels compiled by the heavy queries' process"
  before=$(files "$CUPY_CACHE_DIR")
  touch "$WORK/marker"
  (cd "$WORK" && ln -sf "$OLDPWD/benchmarks" . && timeout "${SUITE_TIMEOUT:-300}" python3 -m benchmarks run peers \
     --suites ${SUITES:-gmatch-test hprd} ${SUITE_ARGS:-} --backend cupy --max-seconds 20 --startup-seconds 100 --gmatch-test "$GMATCH_TEST" \
     --out "$WORK/suites.json" >"$WORK/suites.log" 2>&1) || tail -n 5 "$WORK/suites.log" >&2
  echo "{\"step\": \"suites $AFTER\", \"kernel_files_added\": $(( $(files "$CUPY_CACHE_DIR") - before ))}"
  new_kernels "$CUPY_CACHE_DIR" "$WORK/marker"
  [ "${SKIP_RMAT:-0}" = 1 ] || counted_step rmat_firsts "rmat $AFTER" "kernels compiled by the rmat step"
  [ "${SKIP_MOTIFS:-0}" = 1 ] || counted_step motif_firsts motifs "kernels compiled by the motifs step"
} | tee "$WORK/steps.jsonl"
python3 - "$WORK/steps.jsonl" "$OUT/warmup.json" "${COMMIT:-unknown}" "WARMUP=${WARMUP:-1} HEAVY='$HEAVY' bash benchmarks/device_warmup.sh" <<'PY'
import json, platform, subprocess, sys, time
steps = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
json.dump({"benchmark": "device_warmup", "command": sys.argv[4], "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": {"gpu": gpu.stdout.strip(), "host": platform.node(), "git_commit": sys.argv[3]},
           "steps": steps}, open(sys.argv[2], "w"), indent=1)
print(f"{'step':<22}{'query':<8}{'first s':>10}{'second s':>10}{'first-second':>14}")
for s in steps:
    if "first_s" in s:
        print(f"{s['step']:<22}{s['query']:<8}{s['first_s']:>10.3f}{s['second_s']:>10.3f}"
              f"{s['first_s'] - s['second_s']:>14.3f}")
    else:
        print(s)
PY
