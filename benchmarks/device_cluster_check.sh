#!/usr/bin/env bash
# Multi-GPU check on the device machine (e.g. nvidia-h200-x2): install, GPU tests, HPRD known answers on a
# dask-cuda cluster with one partition per GPU, then the scaling run over 1..N GPUs.  Results under $OUT.
#   bash benchmarks/device_cluster_check.sh "1 2"
# Knobs (environment): SCALE, EDGES, LABELS, QUERIES, SIZE, TIMEOUT (s per batch), METHOD, SKIP_TESTS=1,
# SCALING_TIMEOUT (s for the whole scaling script).
set -uo pipefail
OUT=${OUT:-results}
GPUS=${1:-"1 2"}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target .site .whl/*.whl \
    && export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/pip.log" 2>&1 || { cat "$OUT/pip.log"; exit 1; }
nvidia-smi --query-gpu=name,memory.total --format=csv >"$OUT/nvidia_smi.txt" 2>&1
[ "${SKIP_TESTS:-0}" = 1 ] || timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_engine.py >"$OUT/pytest_gpu.log" 2>&1
echo "gpu tests: $(tail -n 1 "$OUT/pytest_gpu.log")"
timeout "${SCALING_TIMEOUT:-400}" python3 -m benchmarks.cluster_scaling --hprd --gpus $GPUS --scale "${SCALE:-20}" \
  --edges "${EDGES:-8000000}" --labels "${LABELS:-256}" --queries "${QUERIES:-40}" --size "${SIZE:-8}" \
  --timeout "${TIMEOUT:-90}" --method ${METHOD:-random} --out "$OUT/cluster_scaling.json" 2>"$OUT/scaling.err" | tee "$OUT/scaling.txt"
grep -E "HPRD on|GPU\(s\)|graph " "$OUT/scaling.err"
tail -n 5 "$OUT/scaling.err" | grep -iE "error|failed" || true
