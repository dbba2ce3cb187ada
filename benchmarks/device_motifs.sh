#!/usr/bin/env bash
# Build G2Miner's GPU binaries for the motifs suite (benchmarks/motifs.py) on the GPU machine, from the repo root:
#
#   bash benchmarks/device_motifs.sh .peers/GraphMiner .peers/g2patches [BIN_DIR]
#
# (.peers/ is git-ignored here, so a device run must carry .peers/GraphMiner and .peers/g2patches.)
#
# $1: a G2Miner source tree (github chenxuhao/GraphMiner at 2a76e3f6; the cub submodule is not needed: CUDA ships
#     CUB).  $2: a folder of patches (*.patch, applied in name order with `patch -p1`; shared/peers/g2miner and
#     .peers/g2patches hold the same three: 0001 CUDA 13 memoryClockRate, 0002 sgl_multigpu diamond, 0003 diamond
#     64-bit frontier offset).
# $3 (default /tmp/g2bin): where the binaries go, with BUILD_INFO.txt (source commit, patches, nvcc, flags), which
#     the suite records.  A source without .git is recorded as $G2MINER_COMMIT (default: 2a76e3f6, stated).
# The tree is copied to /tmp/g2miner-build (the given one stays clean) and built with the make variables of
# shared/peers/g2miner/README.md: sm_90 (H100, H200), portable host code (-march=x86-64-v3), static cudart.
# Targets: tc_gpu_base tc_multigpu tc_multigpu_base (src/triangle), clique_gpu_base clique_multigpu (src/clique),
# sgl_gpu_base sgl_multigpu (src/sgl); the three folders build at once, each with make -j.  Then, e.g.:
#
#   python -m benchmarks run motifs --g2miner /tmp/g2bin --gpus 1 2 --repeat 3 --out $OUT/motifs.json
set -euo pipefail
SRC=${1:?usage: $0 G2MINER_SOURCE PATCH_DIR [BIN_DIR]}
PATCHES=$(cd "${2:?usage: $0 G2MINER_SOURCE PATCH_DIR [BIN_DIR]}" && pwd)
BIN_OUT=${3:-/tmp/g2bin}
WORK=/tmp/g2miner-build

NVCC_PATH=$(command -v nvcc || true)
[ -n "$NVCC_PATH" ] || NVCC_PATH=/usr/local/cuda/bin/nvcc  # nvcc is not always on PATH
[ -x "$NVCC_PATH" ] || { echo "no nvcc found (PATH or /usr/local/cuda/bin)" >&2; exit 1; }
CUDA_HOME=$(dirname "$(dirname "$NVCC_PATH")")
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
echo "nvcc: $NVCC_PATH ($("$NVCC_PATH" --version | tail -n 2 | head -n 1))"

# Only the tree's own .git names its commit (git -C on a plain copy would name the enclosing repository's).
COMMIT=${G2MINER_COMMIT:-"2a76e3f6 (stated: $SRC has no .git)"}
if [ -e "$SRC/.git" ]; then COMMIT=$(git -C "$SRC" rev-parse HEAD); fi
rm -rf "$WORK"
cp -r "$SRC" "$WORK"
cd "$WORK"
shopt -s nullglob
applied=()
for p in "$PATCHES"/*.patch; do
  patch -p1 --forward --batch <"$p"
  applied+=("$(basename "$p")")
done
[ ${#applied[@]} -gt 0 ] || { echo "no *.patch in $PATCHES" >&2; exit 1; }
mkdir -p bin  # the Makefiles `mv` each binary to ../../bin/

# Command-line variables replace the Makefiles' own (and their += additions to CXXFLAGS).
MAKEVARS=(
  NVCC="$CUDA_HOME/bin/nvcc"
  CUDA_ARCH="-gencode arch=compute_90,code=sm_90"
  CXXFLAGS="-fopenmp -std=c++17 -march=x86-64-v3 -O3"
  NVLDFLAGS="-L$CUDA_HOME/lib64 -lcudart_static -ldl -lrt -lpthread"
)
JOBS=$(nproc)
declare -A TARGETS=(
  [triangle]="tc_gpu_base tc_multigpu tc_multigpu_base"
  [clique]="clique_gpu_base clique_multigpu"
  [sgl]="sgl_gpu_base sgl_multigpu"
)
declare -A PIDS=()
for dir in triangle clique sgl; do
  # shellcheck disable=SC2086  # the target list splits on purpose
  make -C "src/$dir" -j "$JOBS" "${MAKEVARS[@]}" ${TARGETS[$dir]} >"$WORK/make-$dir.log" 2>&1 &
  PIDS[$dir]=$!
done
failed=0
for dir in triangle clique sgl; do
  if ! wait "${PIDS[$dir]}"; then
    echo "=== make in src/$dir failed; last lines of $WORK/make-$dir.log:" >&2
    grep -v -e '^ptxas info' -e 'bytes stack frame' "$WORK/make-$dir.log" | tail -n 40 >&2
    failed=1
  fi
done

mkdir -p "$BIN_OUT"
built=()
for dir in triangle clique sgl; do
  for t in ${TARGETS[$dir]}; do
    if [ -x "bin/$t" ]; then cp "bin/$t" "$BIN_OUT/"; built+=("$t"); else echo "missing: $t" >&2; failed=1; fi
  done
done
{
  echo "source: chenxuhao/GraphMiner $COMMIT (from $SRC)"
  echo "patches: ${applied[*]}"
  echo "nvcc: $("$NVCC_PATH" --version | tail -n 2 | head -n 1)"
  printf 'make: %s\n' "${MAKEVARS[@]}"
  echo "built: ${built[*]}"
} >"$BIN_OUT/BUILD_INFO.txt"
cat "$BIN_OUT/BUILD_INFO.txt"
ls -l "$BIN_OUT"
exit "$failed"
