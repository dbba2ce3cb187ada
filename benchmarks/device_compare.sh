#!/usr/bin/env bash
# Before and after in one call on the GPU machine: the same benchmark runs for two trees of distsm (BASE, an
# exported earlier commit, and this checkout), alternating which goes first each round, so that both see the
# same machine, clocks and kernel cache.
#
#   git archive <commit> | (mkdir -p .base && tar -x -C .base)      # here; carry .base (and .whl)
#   BASE=.base ROUNDS=2 TESTS=1 bash benchmarks/device_compare.sh "peers --suites hprd --backend cupy" ...
#
# Each argument is one benchmark command line (after `python -m benchmarks run`), '+' standing for spaces inside
# an argument.  $OUT/compare.json gathers every run (tree, round, command, summed seconds per suite, each query's
# seconds and count, the machine); the runs' own JSON stay on the machine (the device tool brings back a few files only).
# BASE_COMMIT and NEW_COMMIT name the two trees' commits in the results; BASE_ENV and NEW_ENV ("NAME=VALUE ...") set
# environment variables for one tree's runs only (an option one tree has and the other lacks, such as
# DASK_DISTSM__ENGINE__TRIAL_HOST_ENTRIES).  Each tree is installed with --target into
# its own folder and run from a folder holding links to its benchmarks/ and tests/ only, so neither tree's source
# folders shadow the other's installed package.  TESTS=1 runs this checkout's GPU tests first (TEST_TIMEOUT seconds).
set -uo pipefail
OUT=${OUT:-results}
ROOT=$PWD
BASE=${BASE:-.base}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/deps" \
    .whl/*.whl || exit 1
fi
for tree in base new; do
  src=$ROOT; [ "$tree" = base ] && src=$ROOT/$BASE
  python3 -m pip install -q --no-deps --no-build-isolation --no-compile --target "$WORK/$tree-site" "$src" \
    >"$WORK/pip-$tree.log" 2>&1 || { cat "$WORK/pip-$tree.log"; exit 1; }
  mkdir -p "$WORK/run-$tree"
  ln -s "$src/benchmarks" "$src/tests" "$src/pyproject.toml" "$WORK/run-$tree/"
done
run() {  # run TREE COMMAND...: COMMAND with TREE's package first on the path, from TREE's run folder
  local tree=$1; shift
  local commit=${NEW_COMMIT:-new}; [ "$tree" = base ] && commit=${BASE_COMMIT:-base}
  local extra=${NEW_ENV:-}; [ "$tree" = base ] && extra=${BASE_ENV:-}
  # shellcheck disable=SC2086
  (cd "$WORK/run-$tree" && env $extra PYTHONPATH="$WORK/$tree-site:$WORK/run-$tree:$WORK/deps" \
     DISTSM_GIT_COMMIT="$commit" "$@")
}
mkdir -p "$WORK/results"
LOG="$OUT/compare.log"
: >"$LOG"
if [ "${TESTS:-0}" = 1 ]; then
  # shellcheck disable=SC2046
  run new timeout "${TEST_TIMEOUT:-200}" python3 -m pytest -m gpu -q -p no:cacheprovider \
    $(cd "$ROOT" && grep -l "mark.gpu" tests/*.py) >"$OUT/pytest_gpu.log" 2>&1
  echo "gpu tests rc=$?: $(tail -n 1 "$OUT/pytest_gpu.log")" | tee -a "$LOG"
fi
for round in $(seq 1 "${ROUNDS:-1}"); do
  order="base new"; [ $((round % 2)) = 0 ] && order="new base"
  i=0
  for spec in "$@"; do
    i=$((i + 1))
    for tree in $order; do
      result="$WORK/results/${tree}_r${round}_${i}.json"
      start=$(date +%s)
      # shellcheck disable=SC2086
      run "$tree" timeout "${RUN_TIMEOUT:-300}" python3 -m benchmarks run ${spec//+/ } --out "$result" \
        >"$WORK/$tree-$round-$i.log" 2>&1
      echo "== $tree round $round run $i ($spec) rc=$? $(( $(date +%s) - start )) s" | tee -a "$LOG"
      grep -E "summed|solved|exact|^ +(distsm|gmatch)" "$WORK/$tree-$round-$i.log" | tail -n 6 | tee -a "$LOG"
    done
  done
done
python3 - "$WORK/results" "$OUT/compare.json" <<'PY'
import json, pathlib, sys
runs = []
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    tree, rnd, i = f.stem.split("_")
    d = json.loads(f.read_text())
    suites = {name: {"summed_s": round(sum(q["systems"]["distsm"].get("seconds") or 0 for q in s["queries"]), 6),
                     "exact": all(q["systems"]["distsm"].get("exact") for q in s["queries"]),
                     "seconds": {q["name"]: q["systems"]["distsm"].get("seconds") for q in s["queries"]},
                     "counts": {q["name"]: q["systems"]["distsm"].get("count") for q in s["queries"]},
                     "rounds_s": {q["name"]: q["systems"]["distsm"].get("rounds_s") for q in s["queries"]}}
              for name, s in d.get("suites", {}).items()}
    runs.append({"tree": tree, "round": int(rnd[1:]), "run": int(i), "command": d.get("command"),
                 "machine": d.get("machine"), "when": d.get("when"), "suites": suites})
pathlib.Path(sys.argv[2]).write_text(json.dumps({"benchmark": "device_compare", "runs": runs}, indent=1))
print(f"{len(runs)} runs gathered in {sys.argv[2]}")
PY
python3 -m benchmarks.compare_summary "$OUT/compare.json" | tee -a "$LOG"
