#!/usr/bin/env bash
# Build gMatch's neighbor variant (w20chen/gMatch 8acf4e5) for benchmarks/peers.py from a clean source tree:
#   bash benchmarks/peer_patches/gmatch_neighbor.sh SRC_DIR [ARCH]    # prints the binary's path last
# SRC_DIR/neighbor is built by gmatch_build.sh, which lists the changes and their reasons: the bitmap variant's
# four, each needed here too (peers.py records them as --peer-patch
# gmatch=ceil_div_renamed+timers_3_decimals+sm90_static_cmake+cmake_3.25).  The binary printed is
# build/SubgraphMatching_labeled (the one gMatch's own test uses); build/SubgraphMatching_unlabeled, which reads
# every data graph as unlabelled, is built next to it.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/gmatch_build.sh" "${1:?usage: $0 SRC_DIR [ARCH]}" neighbor "${2:-90}"
