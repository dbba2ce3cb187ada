"""Zero-copy staging: small page-locked host slots that kernels read and write in place."""

from __future__ import annotations

from typing import Any

import numpy as np

from distsm.kernels.cuda_modules import PROG_MAX
from distsm.kernels.cupy.launch import STAGING_ECHO, Launcher


class Staging:
    """A ring of small page-locked host slots that kernels use directly (zero copy; with unified addressing a
    ``cudaHostAlloc`` pointer is valid in kernels): the single-block extend reads the step program from one and
    writes its survivor count to another, which saves a host-to-device copy and a device-to-host copy per call.
    The engine finishes each ``extend`` (it reads the count) before the next, so slots are reused safely; the
    ring only guards against a few calls in flight from other threads."""

    SLOTS = 64
    PROG_BYTES = PROG_MAX * 4
    SLOT_BYTES = PROG_BYTES + 64

    def __init__(self, cupy: Any):
        size = self.SLOTS * self.SLOT_BYTES
        self._mem = cupy.cuda.alloc_pinned_memory(size)
        self.buf = np.frombuffer(self._mem, np.uint8, size)
        self.base = int(self._mem.ptr)
        self.i = 0

    def take(self) -> tuple[np.uint64, np.ndarray, np.uint64, np.ndarray]:
        """(program address, int32 view, result address, int64 view) of the next slot."""
        i = self.i
        self.i = (i + 1) % self.SLOTS
        off = i * self.SLOT_BYTES
        prog = self.buf[off:off + self.PROG_BYTES].view(np.int32)
        res = self.buf[off + self.PROG_BYTES:off + self.PROG_BYTES + 8].view(np.int64)
        return np.uint64(self.base + off), prog, np.uint64(self.base + off + self.PROG_BYTES), res


def staging_selftest() -> bool:
    """Check that a kernel can read and write page-locked host memory directly (run it in a child process
    first where a failure must not poison the caller's CUDA context); True when it works."""
    import cupy

    st = Staging(cupy)
    pa, pv, ra, rv = st.take()
    pv[:3] = (3, 7, 9)
    rv[0] = -1
    Launcher().launch(STAGING_ECHO, 1, 32, src=pa, dst=ra)
    cupy.cuda.get_current_stream().synchronize()
    return int(rv[0]) == 19
