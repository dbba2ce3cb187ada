"""Zero-copy staging: small page-locked host slots that kernels read and write in place."""

from __future__ import annotations

import threading
from collections.abc import Callable
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


class UploadRing:
    """A few page-locked host buffers that small host arrays are packed into and copied to the device from,
    asynchronously: ``cupy.asarray`` of a host array took about 100 us a call on the lent H200 host (a pinned-pool
    allocation, its watch list and a new event each time), which a light query's device join paid twice.  A slot
    is written again only after its last copy has finished (its event); the lock keeps threads to their own slot."""

    SLOTS = 4

    def __init__(self, cupy: Any, slot_bytes: int):
        self._cupy = cupy
        self.slot_bytes = slot_bytes
        self._mem = cupy.cuda.alloc_pinned_memory(self.SLOTS * slot_bytes)
        self._buf = np.frombuffer(self._mem, np.uint8, self.SLOTS * slot_bytes)
        self._events: list[Any] = [None] * self.SLOTS
        self._next = 0
        self._lock = threading.Lock()

    def copy(self, fill: Callable[[np.ndarray], None], nbytes: int) -> Any:
        """A device ``uint8`` array of ``nbytes`` (at most :attr:`slot_bytes`) holding what ``fill`` writes into
        the host view it is given, copied on the current stream (work queued after it on that stream sees it)."""
        cupy = self._cupy
        with self._lock:
            i = self._next
            self._next = (i + 1) % self.SLOTS
            event = self._events[i]
            if event is not None:
                event.synchronize()
            start = i * self.slot_bytes
            fill(self._buf[start:start + nbytes])
            dev = cupy.empty(nbytes, dtype=cupy.uint8)
            stream = cupy.cuda.get_current_stream()
            dev.data.copy_from_host_async(self._mem.ptr + start, nbytes, stream)
            if event is None:
                event = self._events[i] = cupy.cuda.Event(block=False, disable_timing=True)
            event.record(stream)
        return dev
