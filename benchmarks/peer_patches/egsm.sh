#!/usr/bin/env bash
# Build EGSM (w20chen/gMatch 8acf4e5, compared_system/EGSM; Sun and Luo, SIGMOD'23) for benchmarks/peers.py from a
# clean source tree:
#   bash benchmarks/peer_patches/egsm.sh SRC_DIR [ARCH]      # prints the binary's path (SRC_DIR/build/EGSM) last
# The changes, each as small as its reason allows (peers.py records them as --peer-patch
# egsm=timers_3_decimals+sm90_static_nd+toolkit_include):
# * timers_3_decimals: its timers (utils/cuda_helpers.h's PRINT_LOCAL_TIME / PRINT_TOTAL_TIME) print whole
#   milliseconds, too coarse for millisecond queries (now 3 decimals);
# * sm90_static_nd: one target architecture (ARCH, default 90) instead of "native", and its nucleus library nd
#   static (the CUDA library was static already), so the binary needs nothing from its build folder;
# * toolkit_include: main.cpp, compiled by the host compiler, includes cuda_runtime.h from a hard-coded
#   /usr/local/cuda/include; it now comes from the toolkit of the nvcc CMake found (the same folder wherever
#   /usr/local/cuda is that toolkit, as on this workplace's machines).
# Nothing else needs changing for CUDA 13 and CMake 3.25 (it built with no error or warning): it has no ceil_div of
# its own (its macro is DIV_CEIL), its cub calls (DeviceScan/Select/RadixSort/Reduce) and
# cooperative_groups::coalesced_threads still exist, its CMake minimum (3.10) is met, and its
# set(CMAKE_CXX_COMPILER g++) comes after project(), so CMake keeps the compiler it found.  Its CMakeLists sets
# CMAKE_BUILD_TYPE to RELEASE (-O3 -DNDEBUG).
#
# Command line: EGSM -q QUERY -d DATA [-m BFS-DFS|BFS|DFS] [--f3 on|off] [--f3start V] [--ao on|off] [--lb on|off]
# [--gpu ID] (CLI11; defaults BFS-DFS, on, UINT32_MAX, on, on, 0).  Both files are `t N M`, then `v id label degree`
# per vertex in id order 0..N-1 (the declared degree lays out its adjacency arrays), then `e u v` per edge: it reads
# only two numbers after `e`, so a third (edge label) column derails its reader; gMatch's test suite and distsm's
# write_graph of an edge-unlabelled graph have none.  The query is read first and numbers the labels (data labels
# that no query vertex has become one extra label).  A query over 16 vertices or 32 edges (its `t N M` line) makes
# it print "The query graph should have at most 16 vertices and 32 edges." and exit with status 255 (a missing file:
# "File not exist!", also 255).
# What it prints (stdout), in order:
#   Build Cuckoo Tries, time (ms): H(host), K(kernel)
#   Filtering, time (ms): H(host), K(kernel)
#   "# Candidate edges:" and a count per query edge, the plan's groups, "Before Allocation, Free ...GB, Total:
#   ...GB" and "After allocation, ..." (around its 6 GB result pool),
#   per group of the join: "Finish group I, time (ms): H(host), K(kernel)" and "Group I # partial results: N"
#   (or "Stop group I, ..." + "Combine remaining groups." and "Finish last group, time (ms): ..."),
#   Total join time (ms): H(host) K(kernel)          <- note: no comma after the name or between the readings
#   Triggered Load Balancing: true|false
#   # Matches: N
#   End.
# H is the host clock and K a CUDA-event reading, in ms (3 decimals with this patch).  Outside all three timers:
# reading both files, copying both graphs to the GPU, the candidate cardinalities, the plan (matching order), the
# result pool's allocation and the join's setup copies.
set -euo pipefail
src=$(cd "${1:?usage: $0 SRC_DIR [ARCH]}" && pwd)
arch=${2:-90}
cd "$src"
sed -i 's/static_cast<unsigned long>(diff.count() \* 1000)/std::fixed << std::setprecision(3) << (diff.count() * 1000)/; s/static_cast<unsigned long>(kernel_time)/kernel_time/; s/static_cast<unsigned long>(total_host \* 1000)/std::fixed << std::setprecision(3) << (total_host * 1000)/; s/static_cast<unsigned long>(total_kernel)/total_kernel/' utils/cuda_helpers.h
grep -q '#include <iomanip>' utils/cuda_helpers.h || sed -i '0,/#include/s//#include <iomanip>\n#include/' utils/cuda_helpers.h
sed -i "s/\"native\"/\"$arch\"/g; s/add_library(nd SHARED/add_library(nd STATIC/; s|include_directories(/usr/local/cuda/include)|include_directories(\${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})|" CMakeLists.txt
mkdir -p build && cd build
cmake .. >cmake.log 2>&1 || { tail -n 30 cmake.log; exit 1; }
make -j"$(nproc)" >make.log 2>&1 || { grep -m 20 -i "error" make.log; exit 1; }
echo "$src/build/EGSM"
