#!/usr/bin/env bash
# Build one variant of gMatch (w20chen/gMatch 8acf4e5) for benchmarks/peers.py from a clean source tree:
#   bash benchmarks/peer_patches/gmatch_build.sh SRC_DIR VARIANT [ARCH]      # prints the binary's path last
# VARIANT is bitmap (binary build/SubgraphMatching) or neighbor (binary build/SubgraphMatching_labeled; its
# build/SubgraphMatching_unlabeled, which reads every data graph as unlabelled, is built next to it).
# gmatch_bitmap.sh and gmatch_neighbor.sh call this.  Both variants need the same changes, each as small as its
# reason allows (peers.py records them as --peer-patch
# gmatch=ceil_div_renamed+timers_3_decimals+sm90_static_cmake+cmake_3.25):
# * ceil_div_renamed: its ceil_div macro (helper.h) clashes with cuda::ceil_div of CUDA 13's headers (renamed
#   gm_ceil_div);
# * timers_3_decimals: its timers (helper.h's PRINT_LOCAL_TIME / PRINT_TOTAL_TIME) print whole milliseconds, too
#   coarse for millisecond queries (now 3 decimals);
# * sm90_static_cmake: one target architecture (ARCH, default 90) instead of "native", static libraries;
# * cmake_3.25: its CMake minimum is 3.26; 3.25 builds it the same.
# The neighbor variant needs one more (recorded as +dfs_shared_opt_in):
# * dfs_shared_opt_in: its DFS kernels take dynamic shared memory by the query's size (89 KB on gMatch's Q_18) but
#   never opt in past the 48 KB a launch gets by default (cudaFuncSetAttribute's
#   MaxDynamicSharedMemorySize), so on an H200 the occupancy came out 0 and the launch failed with "invalid
#   argument" (join_bfs_dfs.cu:1170); each kernel now opts in to the size it is launched with, before its
#   occupancy is computed and before its launch (Q_18's occupancy is computed for one kernel, another launched).
set -euo pipefail
case ${2:-} in
    bitmap) binary=SubgraphMatching ;;
    neighbor) binary=SubgraphMatching_labeled ;;
    *) echo "usage: $0 SRC_DIR bitmap|neighbor [ARCH]" >&2; exit 2 ;;
esac
src=$(cd "$1" && pwd)/$2
arch=${3:-90}
cd "$src"
sed -i 's/\bceil_div\b/gm_ceil_div/g' ./*.cu ./*.h
sed -i 's/static_cast<unsigned long>(diff.count() \* 1000)/std::fixed << std::setprecision(3) << (diff.count() * 1000)/; s/static_cast<unsigned long>(kernel_time)/kernel_time/; s/static_cast<unsigned long>(total_host \* 1000)/std::fixed << std::setprecision(3) << (total_host * 1000)/; s/static_cast<unsigned long>(total_kernel)/total_kernel/' helper.h
grep -q '#include <iomanip>' helper.h || sed -i '0,/#include/s//#include <iomanip>\n#include/' helper.h
sed -i "s/cmake_minimum_required(VERSION 3.26)/cmake_minimum_required(VERSION 3.25)/; s/\"native\"/\"$arch\"/g; s/ SHARED / STATIC /g" CMakeLists.txt
if [ "$2" = neighbor ]; then
    optin='\1cudaFuncSetAttribute(\2, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_shared_size);\n&'
    sed -i -E "s/^(\s*)cudaOccupancyMaxActiveBlocksPerMultiprocessor\(&thread_block_num, (\w+), threadsPerBlock, dynamic_shared_size\);/$optin/; s/^(\s*)(\w+) <<< thread_block_num, threadsPerBlock, dynamic_shared_size >>>/$optin/" ./*.cu
fi
mkdir -p build && cd build
cmake -DCMAKE_BUILD_TYPE=Release .. >cmake.log 2>&1 || { tail -n 30 cmake.log; exit 1; }
make -j"$(nproc)" >make.log 2>&1 || { grep -m 20 -i "error" make.log; exit 1; }
echo "$src/build/$binary"
