"""The most device bytes this process has had in use: a watch on CuPy's default memory pool.

Every device array the package makes comes from CuPy's default pool (the kernels allocate through CuPy, and CuPy's
own sorts and scans take their scratch from it too); the staging ring is page-locked host memory.  The pool keeps
freed blocks for reuse, so its ``total_bytes`` overstates what was ever in use at once, and drops when blocks are
handed back: neither is a peak.  :class:`PoolPeak` wraps the pool's allocator once per process and keeps the most
bytes in use after any allocation: a site's peak device bytes, which its budget bounds.
"""

from __future__ import annotations

import threading
from typing import Any


class PoolPeak:
    """The most bytes in use in CuPy's default pool since :meth:`reset` (:attr:`peak`).

    Wraps the pool's allocator where the process still uses it; where someone installed another allocator (RMM,
    a user's own), nothing is wrapped and :attr:`peak` is the pool's total, all it can tell.
    """

    def __init__(self, cupy: Any) -> None:
        self.pool = cupy.get_default_memory_pool()
        self.watching = cupy.cuda.get_allocator() == self.pool.malloc
        self._peak = self.pool.used_bytes()
        if self.watching:
            cupy.cuda.set_allocator(self._malloc)

    def _malloc(self, size: int) -> Any:
        mem = self.pool.malloc(size)
        used = self.pool.used_bytes()
        if used > self._peak:  # a lost race between threads only lowers the peak by one allocation
            self._peak = used
        return mem

    @property
    def peak(self) -> int:
        """Peak bytes in use since :meth:`reset` (the pool's total where the allocator is not watched)."""
        return self._peak if self.watching else int(self.pool.total_bytes())

    def reset(self) -> int:
        """Start a new peak at the bytes in use now, and return them."""
        self._peak = self.pool.used_bytes()
        return self._peak


_lock = threading.Lock()
_watch: PoolPeak | None = None


def watch(cupy: Any) -> PoolPeak:
    """This process's :class:`PoolPeak` (made on first call)."""
    global _watch
    with _lock:
        if _watch is None:
            _watch = PoolPeak(cupy)
        return _watch
