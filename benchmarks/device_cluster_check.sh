#!/usr/bin/env bash
# Multi-GPU check on the device machine (e.g. nvidia-h200-x2): install, GPU tests, HPRD known answers on a
# dask-cuda cluster with one partition per GPU, then the scaling run over 1..N GPUs: a heavy batch (8-12 vertex
# queries) and an HPRD-style batch of many small queries on an R-MAT graph with Zipf labels, the in-process
# distsm.count time of the same batches, and an out-of-core run (device budget a third of the graph's index).
# Results under $OUT.
#   bash benchmarks/device_cluster_check.sh "1 2"         # one worker per GPU
#   SHARE_GPU=1 bash benchmarks/device_cluster_check.sh "1 2"   # on one GPU: workers share GPU 0 (functional)
# Knobs (environment): SCALE, EDGES, LABELS, QUERIES, SIZE ("8 12"), SMALL_QUERIES, SMALL_SIZE ("4 6"), TIMEOUT
# (s per batch), METHOD, ADJACENCY (auto|device|host|gather), DEVICE_BUDGET (bytes per worker), OUT_OF_CORE
# (host|gather|none), DISTRIBUTE (auto|whole|sliced: the heavy batch's spread), SKIP_TESTS=1, SKIP_HPRD=1,
# STORE_DIR (partition stores kept between calls), SCALING_TIMEOUT (s for the whole scaling script), HEAVY_SECONDS
# ("LOW HIGH": the heavy batch keeps pool queries whose in-process count takes that long), WARMUP=1 (distsm warmup
# first).
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
# WARMUP=1 compiles every kernel first, so that the in-process baseline does not pay compilation.
[ "${WARMUP:-0}" = 1 ] && { python3 -m distsm warmup >"$OUT/warmup.log" 2>&1; echo "warmup rc=$?"; }
[ "${SKIP_TESTS:-0}" = 1 ] || timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_engine.py >"$OUT/pytest_gpu.log" 2>&1
[ "${SKIP_TESTS:-0}" = 1 ] || echo "gpu tests: $(tail -n 1 "$OUT/pytest_gpu.log")"
extra=()
[ "${SKIP_HPRD:-0}" = 1 ] || extra+=(--hprd)
[ "${SHARE_GPU:-0}" = 1 ] && extra+=(--share-gpu)
[ -n "${DEVICE_BUDGET:-}" ] && extra+=(--device-budget "$DEVICE_BUDGET")
[ -n "${HEAVY_SECONDS:-}" ] && extra+=(--heavy-seconds $HEAVY_SECONDS)
[ "${OUT_OF_CORE:-gather}" = none ] || extra+=(--out-of-core "${OUT_OF_CORE:-gather}")
timeout "${SCALING_TIMEOUT:-580}" python3 -m benchmarks.cluster_scaling "${extra[@]}" --gpus $GPUS \
  --scale "${SCALE:-23}" --edges "${EDGES:-50000000}" --labels "${LABELS:-256}" --queries "${QUERIES:-40}" \
  --size ${SIZE:-8 12} --small-queries "${SMALL_QUERIES:-200}" --small-size ${SMALL_SIZE:-4 6} \
  --timeout "${TIMEOUT:-90}" --method "${METHOD:-random}" --adjacency "${ADJACENCY:-auto}" \
  --distribute "${DISTRIBUTE:-auto}" --store-dir "${STORE_DIR:-/tmp/distsm-scaling-stores}" \
  --out "$OUT/cluster_scaling.json" 2>"$OUT/scaling.err" | tee "$OUT/scaling.txt"
grep -E "HPRD on|worker\(s\)|graph |in process" "$OUT/scaling.err"
tail -n 5 "$OUT/scaling.err" | grep -iE "error|failed" || true
