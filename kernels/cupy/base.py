"""The CuPy backend's shared state and plumbing: the array module, the kernel launcher, options, staging."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from distsm.config import GpuOptions, gpu_options
from distsm.kernels.array_backend import NUMPY, ArrayBackend
from distsm.kernels.array_ops import cast
from distsm.kernels.backend import Backend
from distsm.kernels.cupy import array_ops
from distsm.kernels.cupy.launch import Launcher
from distsm.kernels.cupy.pool import watch
from distsm.kernels.cupy.staging import Staging
from distsm.kernels.index import DataIndex, index_to
from distsm import caches

BUDGET_CACHE_S = 1.0   # default_budget() re-reads the driver's free memory at most this often
#: upload() copies host arrays under this many bytes together, in one buffer.
PACKED_BYTES = 1 << 20


class DeviceBase(ArrayBackend):
    """What every part of the CuPy backend uses: ``xp = cupy``, the launcher, the options (``distsm.gpu.*``,
    read at each call from :func:`distsm.config.gpu_options`) and the weak caches tied to query objects."""

    name = "cupy"
    on_device = True

    def __init__(self) -> None:
        import cupy

        array_ops.register()
        super().__init__(cupy)
        self.kernels = Launcher()
        self._progs = caches.owned(self, "cupy step programs", "join step -> [host program, device copy or None]")
        self._dummies: dict[np.dtype, Any] = {}  # e.g. the partition array outside spanning searches
        self._bitsets = caches.owned(self, "cupy candidate bitsets",
                                     "candidate array -> its bitset, made by the filter kernel")
        #: rows / split pieces per tier of the tiered extend, summed over launches (benchmarks read and reset it)
        self.tier_stats: dict[str, int] = {}
        self._sms: int | None = None
        self.last_index_stats: dict[str, Any] = {}
        self._budget_cache: tuple[float, int] | None = None
        self._foreign = caches.owned(self, "cupy adopted indexes", "index built elsewhere -> its GpuIndex")
        self._staging: Staging | None = None
        self._peak = watch(cupy)
        self._descents = caches.owned(self, "cupy descents",
                                      "plan -> (bitset ids, bitsets, (level table + programs, bitset addresses))")

    @property
    def options(self) -> GpuOptions:
        """The ``distsm.gpu.*`` options in force now."""
        return gpu_options()

    # ------------------------------------------------------------------ plumbing
    def synchronize(self) -> None:
        self._sync()

    def host(self) -> Backend:
        """The NumPy backend: planning and small joins run there, below a device's launch latencies."""
        return NUMPY

    def _sync(self) -> None:
        self.xp.cuda.get_current_stream().synchronize()

    def to_host(self, a: Any) -> np.ndarray:
        return self.xp.asnumpy(a)

    def upload(self, arrays: Sequence[np.ndarray]) -> list[Any]:
        """Host arrays on the device, those under :data:`PACKED_BYTES` in one copy: laid end to end at multiples
        of 8 bytes, each a view of its part (a copy costs tens of microseconds on the lent hosts, and a small
        plan's candidate-edge index has 70 arrays); larger ones copied each."""
        xp = self.xp
        host = [np.ascontiguousarray(a) for a in arrays]
        starts, end = [], 0
        for a in host:
            starts.append(end if a.nbytes < PACKED_BYTES else -1)
            end += -(-a.nbytes // 8) * 8 if a.nbytes < PACKED_BYTES else 0
        buf = np.empty(end, dtype=np.uint8)
        for a, at in zip(host, starts):
            if at >= 0:
                buf[at:at + a.nbytes] = a.reshape(-1).view(np.uint8)
        dev = xp.asarray(buf)
        # Each view is made from a pointer into the buffer in one call, not by slicing, viewing and reshaping it:
        # a 24-vertex query's index has hundreds of arrays.
        return [xp.asarray(a) if at < 0 else xp.ndarray(a.shape, dtype=a.dtype, memptr=dev.data + at)
                for a, at in zip(host, starts)]

    def from_host(self, host: DataIndex) -> DataIndex:
        """``host`` with its arrays copied to the device."""
        return index_to(host, self.xp)

    def release_memory(self) -> None:
        """Hand the device and pinned memory pools' free blocks back to the driver."""
        self.xp.get_default_memory_pool().free_all_blocks()
        self.xp.get_default_pinned_memory_pool().free_all_blocks()

    def peak_bytes(self) -> int | None:
        """The most bytes this process had in use in CuPy's pool since :meth:`reset_peak`
        (:class:`~distsm.kernels.cupy.pool.PoolPeak`)."""
        return self._peak.peak

    def reset_peak(self) -> None:
        self._peak.reset()

    def available_bytes(self) -> int:
        """The device memory free now (workers sharing a GPU see what the others left)."""
        return int(self.xp.cuda.runtime.memGetInfo()[0])

    def default_budget(self) -> int:
        """Half of the device memory that is free (free in the driver plus free in CuPy's pool)."""
        now = time.monotonic()
        if self._budget_cache is not None and now - self._budget_cache[0] < BUDGET_CACHE_S:
            return self._budget_cache[1]
        free, _total = self.xp.cuda.runtime.memGetInfo()
        pool = self.xp.get_default_memory_pool()
        budget = int((free + pool.free_bytes()) // 2)
        self._budget_cache = (now, budget)
        return budget

    def _sm_count(self) -> int:
        if self._sms is None:
            props = self.xp.cuda.runtime.getDeviceProperties(self.xp.cuda.Device().id)
            self._sms = int(props["multiProcessorCount"])
        return self._sms

    def _stage(self) -> Staging:
        """The staging ring, allocated on first use."""
        if self._staging is None:
            self._staging = Staging(self.xp)
        return self._staging

    def _dummy(self, dtype: Any) -> Any:
        """A one-element device array of ``dtype`` for kernel arguments a launch does not read."""
        key = np.dtype(dtype)
        a = self._dummies.get(key)
        if a is None:
            a = self._dummies[key] = self.xp.zeros(1, dtype=key)
        return a

    def _as_table(self, table: Any) -> Any:
        if table.dtype == np.int32 and table.flags.c_contiguous:
            return table
        return cast(self.xp.ascontiguousarray(table), np.int32)

    def _timer(self) -> Any:
        backend = self

        class _T:
            ms = 0.0

            def __enter__(self) -> _T:
                self.e0, self.e1 = backend.xp.cuda.Event(), backend.xp.cuda.Event()
                self.e0.record()
                return self

            def __exit__(self, *exc: object) -> None:
                self.e1.record()
                self.e1.synchronize()
                self.ms = float(backend.xp.cuda.get_elapsed_time(self.e0, self.e1))

        return _T()
