#!/usr/bin/env bash
# Build gMatch's bitmap variant (w20chen/gMatch 8acf4e5) for benchmarks/peers.py from a clean source tree:
#   bash benchmarks/peer_patches/gmatch_bitmap.sh SRC_DIR [ARCH]      # prints the binary's path last
# SRC_DIR/bitmap is built by gmatch_build.sh, which lists the changes and their reasons (peers.py records them as
# --peer-patch gmatch=ceil_div_renamed+timers_3_decimals+sm90_static_cmake+cmake_3.25).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/gmatch_build.sh" "${1:?usage: $0 SRC_DIR [ARCH]}" bitmap "${2:-90}"
