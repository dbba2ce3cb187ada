"""The device index: :func:`build_index`'s arrays on the GPU, the PCSR hash of (vertex, label) -> run, the
vertices sorted by label, and the prebuilt kernel arguments that name the graph."""

from __future__ import annotations

import dataclasses
import mmap
import time
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.cupy.base import DeviceBase
from distsm.kernels.cuda_modules import PCSR_SLOTS
from distsm.kernels.cupy.launch import EMPTY_SLOT, FILL_U64, PCSR_BUILD, PCSR_LOOKUP
from distsm.kernels.array_backend import INDEXES, NUMPY
from distsm.kernels.index import DataIndex, index_to, memory_mapped

PCSR_LOAD = 0.5        # target slot occupancy


@dataclass(frozen=True)
class GpuIndex(DataIndex):
    """:class:`DataIndex` plus the GPU-only structures."""

    by_label: Any = None                  # int32[n] vertices sorted by (label, id)
    label_bounds: dict[int, tuple[int, int]] = field(default_factory=dict)  # label -> [lo, hi) in by_label (host)
    pcsr: Any = None                      # uint64[groups * 16] (a 16-slot dummy when unused)
    pcsr_mask: int = 0                    # groups - 1 (a power of two minus one); -(runs + 1): no hash
    run_keys_arg: Any = None              # run_keys, or a dummy int64 array when num_labels == 1
    stats: dict[str, Any] = field(default_factory=dict)
    #: named kernel arguments that describe the graph (prebuilt: launches are hot): the probe's and the workload's
    probe_args: dict[str, Any] = field(default_factory=dict)
    run_args: dict[str, Any] = field(default_factory=dict)
    #: the O(|E|) arrays are page-locked host memory the kernels read over the bus (:meth:`IndexOps.host_resident`)
    adjacency_in_host: bool = False


class IndexOps(DeviceBase):
    """Building, adopting and moving device indexes."""

    def index(self, graph: Graph) -> GpuIndex:
        idx: GpuIndex = INDEXES.get_or(graph, lambda: self._build_index(graph), self.name)
        self.last_index_stats = idx.stats
        return idx

    def _build_index(self, graph: Graph) -> GpuIndex:
        t0 = time.perf_counter()
        # build_index does its work on the host: the device's index is a copy of the host twin's, which the
        # placement's host side then finds on the graph instead of building it again.
        host = NUMPY.index(graph)
        return self._gpu_index(index_to(host, self.xp), np.asarray(graph.vertex_labels), t0, self.options.pcsr)

    def as_gpu_index(self, idx: DataIndex) -> GpuIndex:
        """``idx`` with this backend's device structures (an index built elsewhere, e.g. on the host or memory
        mapped, is moved to the device once and cached for its lifetime)."""
        if isinstance(idx, GpuIndex):
            return idx
        cached = self._foreign.get(idx)
        if cached is not None:
            return cached
        t0 = time.perf_counter()
        moved = index_to(idx, self.xp)
        return self._foreign.put(idx, self._gpu_index(moved, np.asarray(self.to_host(moved.vertex_labels)), t0,
                                                      self.options.pcsr))

    def host_resident(self, host: DataIndex, in_place: bool = False) -> GpuIndex:
        """``host`` (NumPy arrays) with its O(|E|) arrays copied to page-locked host memory that the kernels read
        in place over the bus (zero copy: only the bytes a probe touches cross it, nothing is cached on the
        device) and its O(|V|) arrays on the device.  Runs are found by binary search in the mapped run keys,
        since a hash of them would be O(|E|) device memory.  ``in_place`` registers the pages of memory-mapped
        arrays in place instead of copying them, so that every process mapping the same files (the workers of
        one host) reads one copy; arrays the driver will not register are copied (``self.shared_host_bytes``
        says how many bytes were registered in place)."""
        xp = self.xp
        device_id = xp.cuda.Device().id
        self.shared_host_bytes = 0

        def mapped(a: np.ndarray) -> Any:
            if in_place:
                registered = _register_mapped(xp, a, device_id)
                if registered is not None:
                    self.shared_host_bytes += int(a.nbytes)
                    return registered
            a = np.ascontiguousarray(a)
            size = max(int(a.nbytes), 1)
            pinned = xp.cuda.alloc_pinned_memory(size)
            np.frombuffer(pinned, a.dtype, a.size).reshape(a.shape)[...] = a
            mem = xp.cuda.UnownedMemory(pinned.ptr, size, pinned, device_id)
            return xp.ndarray(a.shape, a.dtype, xp.cuda.MemoryPointer(mem, 0))

        kw = {f.name: getattr(host, f.name) for f in fields(DataIndex)}
        shared_pairs = host.pair_keys is host.entry_keys
        for name in ("nbr", "indptr", "run_start", "run_end", "run_keys", "entry_keys", "pair_keys"):
            if kw[name] is not None and not (name == "pair_keys" and shared_pairs):
                kw[name] = mapped(kw[name])
        if shared_pairs:
            kw["pair_keys"] = kw["entry_keys"]
        for name in ("vertex_labels", "degrees", "sig"):
            kw[name] = xp.asarray(kw[name])
        kw["vertices_by_label"] = {k: xp.asarray(v) for k, v in host.vertices_by_label.items()}
        device_bytes = sum(int(kw[k].nbytes) for k in ("vertex_labels", "degrees", "sig")) + 4 * host.n
        kw["nbytes"] = device_bytes
        return dataclasses.replace(self._gpu_index(DataIndex(**kw), np.asarray(host.vertex_labels), time.perf_counter(),
                                                   False), adjacency_in_host=True)

    def adjacency_over_bus(self, idx: DataIndex) -> bool:
        return isinstance(idx, GpuIndex) and idx.adjacency_in_host

    def adopt_index(self, idx: DataIndex) -> GpuIndex:
        return self.as_gpu_index(idx)

    def with_adjacency(self, core: DataIndex, **arrays: Any) -> GpuIndex:
        core = self.as_gpu_index(core)
        kw = {f.name: getattr(core, f.name) for f in fields(DataIndex)}
        kw.update(arrays)
        extra = sum(int(v.nbytes) for k, v in arrays.items() if v is not None and k != "pair_keys")
        kw["nbytes"] = core.nbytes + extra
        return self._with_runs(DataIndex(**kw), core.by_label, core.label_bounds, {}, self.options.pcsr)

    def _gpu_index(self, base: DataIndex, vlab: np.ndarray, t0: float, pcsr: bool) -> GpuIndex:
        n = base.n
        order = np.argsort(vlab, kind="stable").astype(np.int32)
        ulab, first = np.unique(vlab[order], return_index=True)
        bounds = np.append(first, n)
        label_bounds = {int(lab): (int(bounds[i]), int(bounds[i + 1])) for i, lab in enumerate(ulab)}
        by_label = self.xp.asarray(order)
        self._sync()
        stats: dict[str, Any] = {"index_build_upload_s": time.perf_counter() - t0}
        return self._with_runs(base, by_label, label_bounds, stats, pcsr)

    def _with_runs(self, base: DataIndex, by_label: Any, label_bounds: dict[int, tuple[int, int]],
                   stats: dict[str, Any], use_pcsr: bool) -> GpuIndex:
        """The GPU index of ``base``: the (vertex, label) -> run hash over its runs (when ``use_pcsr`` and the
        graph has several labels) and the prebuilt kernel arguments; ``by_label``/``label_bounds`` are the
        vertices grouped by label (shared by gathered pieces)."""
        n = base.n
        stats.update(num_labels=base.num_labels, pcsr=False)
        L = base.num_labels
        if L > 1 and use_pcsr:
            runs = int(base.run_keys.shape[0])
            if runs >= 2**32 - 1:
                raise ValueError("PCSR run ids are 32-bit; this graph has too many (vertex, label) runs")
            groups = 1
            while groups * PCSR_SLOTS * PCSR_LOAD < max(runs, 1):
                groups *= 2
            pcsr = self._empty_slots(groups * PCSR_SLOTS)
            with self._timer() as tm:
                if runs:
                    self.kernels.grid(PCSR_BUILD, runs, run_keys=base.run_keys, runs=runs, table=pcsr,
                                      gmask=groups - 1)
            stats.update(pcsr=True, pcsr_build_ms=tm.ms, pcsr_groups=groups, pcsr_runs=runs,
                         pcsr_bytes=int(pcsr.nbytes), pcsr_load=runs / (groups * PCSR_SLOTS))
            mask = groups - 1
        else:
            pcsr = self._empty_slots(PCSR_SLOTS)
            # several labels but no hash: kernels binary-search run_keys (mask encodes -(runs + 1))
            mask = -(int(base.run_keys.shape[0]) + 1) if L > 1 else 0
        run_keys_arg = base.run_keys if base.run_keys is not None else base.run_start
        nbytes = base.nbytes + int(by_label.nbytes) + int(pcsr.nbytes)
        stats["index_bytes"] = nbytes
        kw = {f.name: getattr(base, f.name) for f in fields(DataIndex)}
        kw["nbytes"] = nbytes
        probe_args = dict(nbr=base.nbr, indptr=base.indptr, run_start=base.run_start, run_end=base.run_end,
                          run_keys=run_keys_arg, pcsr=pcsr, gmask=mask, L=L, pair_keys=base.pair_keys, n=n)
        run_args = dict(L=L, run_keys=run_keys_arg, pcsr=pcsr, gmask=mask, run_start=base.run_start,
                        run_end=base.run_end)
        return GpuIndex(**kw, by_label=by_label, label_bounds=label_bounds, pcsr=pcsr, pcsr_mask=mask,
                        run_keys_arg=run_keys_arg, stats=stats, probe_args=probe_args, run_args=run_args)

    def _empty_slots(self, n: int) -> Any:
        """``n`` empty hash slots (``cupy.full`` would compile a kernel for the constant on first use)."""
        out = self.xp.empty(n, dtype=self.xp.uint64)
        self.kernels.grid(FILL_U64, n, out=out, n=n, value=EMPTY_SLOT)
        return out

    def pcsr_lookup(self, idx: GpuIndex, v: Any, labels: Any) -> Any:
        """Run id of each ``(v[i], labels[i])`` through the hash (-1 when absent); for tests and tools."""
        xp = self.xp
        v = xp.ascontiguousarray(xp.asarray(v, dtype=xp.int32))
        labels = xp.ascontiguousarray(xp.asarray(labels, dtype=xp.int32))
        out = xp.empty(v.shape[0], dtype=xp.int64)
        if v.shape[0]:
            self.kernels.grid(PCSR_LOOKUP, v.shape[0], vs=v, labels=labels, m=v.shape[0], L=idx.num_labels,
                              run_keys=idx.run_keys_arg, pcsr=idx.pcsr, gmask=idx.pcsr_mask, out=out)
        return out


#: cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterReadOnly (memory maps are read-only).
_REGISTER_FLAGS = 1 | 2 | 8
#: cudaDevAttrCanUseHostPointerForRegisteredMem: the device reads registered memory at its host address.
_HOST_POINTER_ATTR = 91


class _Registration:
    """Keeps a registered memory map alive and unregisters its pages when the last device view goes."""

    def __init__(self, runtime: Any, base: int, array: np.ndarray):
        self.runtime, self.base, self.array = runtime, base, array

    def __del__(self) -> None:
        try:
            self.runtime.hostUnregister(self.base)
        except Exception:  # the context may already be gone at interpreter exit; the pages go with the process
            pass


def _register_mapped(xp: Any, a: np.ndarray, device_id: int) -> Any | None:
    """A device view of the memory-mapped array ``a``'s own pages, page-locked in place (no copy), or None when
    ``a`` is not a contiguous memory map or the driver cannot map registered memory at its host address."""
    if not memory_mapped(a) or not a.flags.c_contiguous or a.nbytes == 0:
        return None
    runtime = xp.cuda.runtime
    if runtime.deviceGetAttribute(_HOST_POINTER_ATTR, device_id) != 1:
        return None
    ptr = int(a.ctypes.data)
    page = mmap.PAGESIZE
    base = ptr - ptr % page
    length = -(-(ptr + int(a.nbytes) - base) // page) * page
    try:
        runtime.hostRegister(base, length, _REGISTER_FLAGS)
    except runtime.CUDARuntimeError:
        return None
    mem = xp.cuda.UnownedMemory(ptr, int(a.nbytes), _Registration(runtime, base, a), device_id)
    return xp.ndarray(a.shape, a.dtype, xp.cuda.MemoryPointer(mem, 0))
