#!/usr/bin/env bash
# One-shot GPU check, run from the repository root on a machine with a CUDA GPU:
#   install the project (no dependencies fetched), run the GPU tests, run the GPU engine benchmark,
#   and print a short table last.  Everything is written under $OUT (default: results/).
#
#   bash benchmarks/device_gpu_check.sh
#
# Knobs (environment): TEST_TIMEOUT (s, default 220), BENCH_TIMEOUT (s, default 290), BENCH_ARGS (extra
# arguments for benchmarks/gpu_engine.py), DISTSM_GPU_EXAMPLES (scales the number of random test cases).
set -uo pipefail
OUT=${OUT:-results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
T0=$(date +%s)

# Wheels carried along (see ../shared/tools/README.md), if any.
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target .site .whl/*.whl \
    && export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
fi
$PY -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/pip.log" 2>&1 || { cat "$OUT/pip.log"; exit 1; }

if ! $PY -c "import distsm" >"$OUT/import.log" 2>&1; then
  echo "import distsm failed on this machine:"; tail -n 3 "$OUT/import.log"
  echo "hint: missing packages travel as wheels: run ../shared/tools/device-wheels in the checkout and pass"
  echo "      carry=['.whl'] to the device call (this script installs .whl/*.whl when present)"
fi

nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv >"$OUT/nvidia_smi.txt" 2>&1
$PY - <<'EOF' 2>&1 | tee "$OUT/env.txt"
import cupy, numpy, sys
p = cupy.cuda.runtime.getDeviceProperties(0)
print("python", sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__,
      "runtime", cupy.cuda.runtime.runtimeGetVersion(), "driver", cupy.cuda.runtime.driverGetVersion(),
      "device", p["name"].decode() if isinstance(p["name"], bytes) else p["name"])
EOF

# Zero-copy staging (kernels using page-locked host memory directly) is checked in a child process, so a
# platform without it cannot poison the tests' CUDA context; without it the backend uses device copies.
if $PY -c "import sys; from distsm.kernels.cupy import staging_selftest; sys.exit(0 if staging_selftest() else 1)" \
    >"$OUT/staging_selftest.log" 2>&1; then
  echo "zero-copy staging: ok"
else
  export DASK_DISTSM__GPU__PINNED=False
  echo "zero-copy staging: unavailable (DASK_DISTSM__GPU__PINNED=False)"; tail -n 5 "$OUT/staging_selftest.log"
fi

echo "== pytest -m gpu"
# Only the files that hold GPU tests: the others may import dev-only packages the GPU machine lacks.
# shellcheck disable=SC2046
timeout "${TEST_TIMEOUT:-220}" $PY -m pytest -m gpu -q -p no:cacheprovider --durations=8 \
  $(grep -l "mark.gpu" tests/*.py) 2>&1 | tee "$OUT/pytest_gpu.log" | tail -n 40
TEST_RC=${PIPESTATUS[0]}
T1=$(date +%s)

echo "== benchmark"
# shellcheck disable=SC2086
timeout "${BENCH_TIMEOUT:-290}" $PY -m benchmarks run gpu --out "$OUT/gpu_engine.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" \
  | tail -n 30
BENCH_RC=${PIPESTATUS[0]}
T2=$(date +%s)

echo
echo "================ summary ================"
echo "pytest rc=$TEST_RC ($((T1 - T0)) s): $(grep -E '(passed|failed|error)' "$OUT/pytest_gpu.log" | tail -n 1)"
echo "benchmark rc=$BENCH_RC ($((T2 - T1)) s)"
if [ -f "$OUT/gpu_engine.json" ]; then
  $PY -m benchmarks.gpu_engine --table "$OUT/gpu_engine.json"
fi
