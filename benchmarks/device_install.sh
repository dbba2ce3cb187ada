# Sourced by the single-tree device scripts (device_trailing.sh, device_warmup.sh): installs the carried wheels
# (.whl/) and this checkout into a scratch folder $WORK and puts them on PYTHONPATH; $OUT is where results go and
# $GMATCH_TEST the absolute path of gMatch's test folder (default .peers/gmatch-test).
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
