#!/usr/bin/env bash
# Several benchmark suites in one call on the GPU machine, each under its own time cap:
#   bash benchmarks/device_suites.sh "symmetric:120 outofcore:200 balance:150"
# Each entry is SUITE:SECONDS[:ARGS...] with ARGS separated by '+' (e.g. "synthetic:200:--edges+100000000").
# Installs the carried wheels (.whl/) and the project (unless INSTALL=0), optionally runs the GPU tests (TESTS=1), then the suites.
# Only the JSON results and one combined log land in $OUT (the device tool brings back a few files only).
set -uo pipefail
OUT=${OUT:-results}
WORK=$(mktemp -d)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
if [ "${INSTALL:-1}" = 1 ]; then  # INSTALL=0 where the project is installed already
  if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target .site .whl/*.whl \
      && export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
  fi
  python3 -m pip install -q --no-deps --no-build-isolation -e . >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log"; exit 1; }
fi
LOG="$OUT/suites.log"
: >"$LOG"
if [ "${TESTS:-0}" = 1 ]; then
  # shellcheck disable=SC2046
  timeout "${TEST_TIMEOUT:-150}" python3 -m pytest -m gpu -q -p no:cacheprovider $(grep -l "mark.gpu" tests/*.py) \
    >"$WORK/pytest.log" 2>&1
  echo "gpu tests rc=$?: $(tail -n 1 "$WORK/pytest.log")" | tee -a "$LOG"
fi
for entry in ${1:-"symmetric:120"}; do
  IFS=: read -r suite cap args <<<"$entry"
  start=$(date +%s)
  result="$WORK/${suite}.json"
  # shellcheck disable=SC2086
  timeout "$cap" python3 -m benchmarks run "$suite" ${args//+/ } --out "$result" >"$WORK/${suite}.log" 2>&1
  rc=$?
  echo "== $suite rc=$rc ($(( $(date +%s) - start )) s)" | tee -a "$LOG"
  tail -n 8 "$WORK/${suite}.log" | tee -a "$LOG"
  [ -f "$result" ] && cp "$result" "$OUT/"
done
