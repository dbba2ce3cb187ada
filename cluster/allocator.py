"""The host allocator of worker processes.

Dask's nanny starts every worker with ``MALLOC_TRIM_THRESHOLD_=65536`` (``distributed.nanny.pre-spawn-environ``)
so that freed memory goes back to the operating system.  Setting any of glibc's malloc tunables also switches off
glibc's dynamic mmap threshold, which stays at 128 KiB: every NumPy temporary above that is then mapped afresh and
page-faulted on first touch, and unmapped when freed.  The joins' host paths allocate such temporaries per level
and chunk; heavy R-MAT queries counted on the CPU took a quarter to a third longer under the nanny's setting
(``python -m benchmarks run allocator``).
Raising the mmap threshold keeps those temporaries in the heap.  The nanny's trim threshold would still hand the
heap's free top back to the system after nearly every free, and the next temporary would fault it in again: the
trim threshold goes to twice the mmap threshold, as glibc's dynamic setting would put it (``benchmarks run
allocator`` measures the three settings).
"""

from __future__ import annotations

import ctypes
import sys

#: glibc's ``mallopt`` parameter number of the mmap threshold (``malloc.h``).
M_MMAP_THRESHOLD = -3
#: ... and of the trim threshold.
M_TRIM_THRESHOLD = -1
#: glibc refuses mmap thresholds above this on 64-bit systems (``DEFAULT_MMAP_THRESHOLD_MAX``).
MAX_MMAP_THRESHOLD = 32 << 20


def set_mmap_threshold(nbytes: int) -> bool:
    """Serve allocations of at most ``nbytes`` from the heap in this process and keep up to twice that free at the
    heap's top (glibc's ``mallopt``); returns whether the allocator took the values (False off Linux, on a C
    library without ``mallopt``, or a value it refuses)."""
    if not 0 < nbytes <= MAX_MMAP_THRESHOLD:
        raise ValueError(f"an mmap threshold must be 1 to {MAX_MMAP_THRESHOLD} bytes, got {nbytes}")
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no mallopt: musl and other C libraries
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, nbytes)) and bool(mallopt(M_TRIM_THRESHOLD, 2 * nbytes))
