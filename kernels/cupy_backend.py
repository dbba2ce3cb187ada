"""The GPU backend: the :class:`ArrayBackend` interface on CuPy, with the hot path as RawModule kernels.

Kernels live in ``kernels/cuda/join.cu`` (compiled by NVRTC on first use).  What runs where:

* :meth:`index` keeps :func:`build_index`'s arrays on the device and adds a PCSR-style hash of
  (vertex, effective label) -> run (open addressing, 16 eight-byte slots = one 128-byte group per lookup), built
  on the GPU when the graph has more than one effective label, plus the vertices sorted by label.  Build and
  upload times are in ``index.stats`` (and ``backend.last_index_stats``).
* :meth:`candidates` filters every query vertex's label pool against the column-major signature table in one
  launch, compacts survivors in order and builds all candidate bitsets at the same time; :meth:`bitset`
  returns those (or builds one for other member arrays).
* :meth:`workload` computes run bounds and the inclusive prefix sum on the device; ``offsets`` stays there.
* :meth:`extend` is entry-parallel over the chunk ``[a, b)`` of the level's output space: a thread per output
  entry finds its row by binary search in ``offsets`` and runs every check of the step (bitset, symmetry
  columns, injectivity, other linking edges by PCSR + binary search in the sorted run, induced pair counts).
  Survivors are compacted in entry order, so tables (and listings) are identical to the NumPy backend's, or
  only counted (uint64) on the last level of a count.  Chunks of at most ``small_limit`` entries (and tables of
  at most ``small_limit`` rows in :meth:`workload`) use fused single-block kernels: one launch, one host
  round trip per call.  :meth:`descend` goes further: one single-block launch runs every following level while
  each fits ``small_limit`` entries (the HPRD queries end to end), and hands a level that does not back to the
  level-by-level path with its workload already computed.
* ``load_balance = "tiered"`` runs rows by workload tiers (warp / block / split over blocks, thresholds from the
  histogram); listing then compacts through a per-group shared-memory write cache, so only survivors are
  written and the scan runs over work items, not entries.

Every device array comes from CuPy's default memory pool and is released when the query's objects die
(per-step programs and precomputed bitsets are tied to the lifetime of the plan step / candidate array through
weak references), so nothing accumulates across queries.
"""

from __future__ import annotations

import mmap
import os
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.array_backend import Allowed, ArrayBackend, Descent, restricted
from distsm.kernels.lifetime_cache import LifetimeCache
from distsm.kernels.index import DataIndex, build_index
from distsm.kernels.query_plan import QueryPlan, Step
from distsm.kernels.signature import signatures

KERNEL_PATH = Path(__file__).resolve().parent / "cuda" / "join.cu"
BLOCK = 256            # threads per block of the grid-stride kernels
SMALL_BLOCK = 1024     # threads of the fused single-block kernels
MAX_GRID = 65535
PCSR_SLOTS = 16        # 8-byte slots per 128-byte group
PCSR_LOAD = 0.5        # target slot occupancy
EMPTY_SLOT = np.uint64(0xFFFFFFFFFFFFFFFF)
DEFAULT_SMALL_LIMIT = 8192
TIER_COLS = 64         # DSM_TIER_COLS / DSM_TIER_CHECKS in join.cu: larger steps stay entry-parallel
TIER_CHECKS = 32
BUDGET_CACHE_S = 1.0   # default_budget() re-reads the driver's free memory at most this often

PROG_MAX = 2048       # program words the single-block kernel keeps in shared memory (DSM_PROG_MAX)
DESCENT_RESULT_WORDS = PROG_MAX // 2   # int64 words of descend_small's result (a staging slot's program area)

_i32, _i64 = np.int32, np.int64


class _Staging:
    """A ring of small page-locked host slots that kernels use directly (zero copy; with unified addressing a
    ``cudaHostAlloc`` pointer is valid in kernels): the single-block extend reads the step program from one and
    writes its survivor count to another, which saves a host-to-device copy and a device-to-host copy per call.
    The engine finishes each ``extend`` (it reads the count) before the next, so slots are reused safely; the
    ring only guards against a few calls in flight from other threads."""

    SLOTS = 64
    PROG_BYTES = PROG_MAX * 4
    SLOT_BYTES = PROG_BYTES + 64

    def __init__(self, cupy: Any = None):
        size = self.SLOTS * self.SLOT_BYTES
        if cupy is not None:
            self._mem = cupy.cuda.alloc_pinned_memory(size)
            self.buf = np.frombuffer(self._mem, np.uint8, size)
            self.base = int(self._mem.ptr)
        else:  # host emulation: plain host memory
            self.buf = np.zeros(size, np.uint8)
            self.base = int(self.buf.ctypes.data)
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

    be = CupyBackend()
    st = _Staging(cupy)
    pa, pv, ra, rv = st.take()
    pv[:3] = (3, 7, 9)
    rv[0] = -1
    be._fn("staging_echo")((1,), (32,), (pa, ra))
    cupy.cuda.get_current_stream().synchronize()
    return int(rv[0]) == 19


@dataclass(frozen=True)
class GpuIndex(DataIndex):
    """:class:`DataIndex` plus the GPU-only structures."""

    by_label: Any = None                  # int32[n] vertices sorted by (label, id)
    label_bounds: dict[int, tuple[int, int]] = field(default_factory=dict)  # label -> [lo, hi) in by_label (host)
    pcsr: Any = None                      # uint64[groups * 16] (a 16-slot dummy when unused)
    pcsr_mask: int = 0                    # groups - 1 (a power of two minus one); -(runs + 1): no hash
    run_keys_arg: Any = None              # run_keys, or a dummy int64 array when num_labels == 1
    stats: dict[str, Any] = field(default_factory=dict)
    probe_args: tuple = ()                # kernel arguments naming the graph (prebuilt: launches are hot)
    run_args: tuple = ()


class CupyBackend(ArrayBackend):
    """Backend on one CUDA device through CuPy (``xp = cupy``)."""

    name = "cupy"

    def __init__(self, xp: Any = None, module: Any = None):
        if xp is None:
            import cupy

            xp = cupy
        super().__init__(xp)
        self._module = module
        self._functions: dict[str, Any] = {}
        self._progs = LifetimeCache()     # step -> [host program, device copy or None]
        self._no_part: Any = None  # stands in for the partition array outside spanning searches
        self._no_i64: Any = None
        self._bitsets = LifetimeCache()   # candidate array -> its bitset, made by the filter kernel
        #: fused single-block kernels handle at most this many rows / entries per call (0 = never)
        self.small_limit = DEFAULT_SMALL_LIMIT
        #: "entry" (a thread per output entry) or "tiered" (warp / block / split-row tiers by row workload) for
        #: chunks above small_limit (DISTSM_LOAD_BALANCE sets the default)
        self.load_balance = os.environ.get("DISTSM_LOAD_BALANCE", "entry")
        self.tier_stats: dict[str, int] = {}
        #: fixed (warp_max, block_max) instead of thresholds from the histogram (tests use it to reach every tier)
        self.tier_limits: tuple[int, int] | None = None
        self._sms: int | None = None
        #: hash (vertex, label) -> run on the GPU when the graph has several effective labels
        self.use_pcsr = True
        self.last_index_stats: dict[str, Any] = {}
        self._budget_cache: tuple[float, int] | None = None
        self._foreign = LifetimeCache()   # index built elsewhere -> its GpuIndex
        #: zero-copy staging of programs and counts for the single-block extend (DISTSM_PINNED=0 turns it off)
        self.use_staging = os.environ.get("DISTSM_PINNED", "1") != "0"
        self._staging: _Staging | None = None
        #: run every level that fits one block in one launch (descend_small); off: level by level
        self.fuse_levels = os.environ.get("DISTSM_FUSE_LEVELS", "1") != "0"
        self._descents = LifetimeCache()  # plan -> (bitset ids, bitsets, (level table + programs, bitset addresses))

    # ------------------------------------------------------------------ plumbing
    @property
    def _is_cupy(self) -> bool:
        return self.xp is not np

    def _fn(self, name: str) -> Any:
        f = self._functions.get(name)
        if f is None:
            if self._module is None:
                import cupy

                self._module = cupy.RawModule(code=KERNEL_PATH.read_text(), options=("--std=c++17",))
            f = self._module.get_function(name)
            self._functions[name] = f
        return f

    def _launch(self, name: str, items: int, args: tuple) -> None:
        grid = max(1, min((int(items) + BLOCK - 1) // BLOCK, MAX_GRID))
        self._fn(name)((grid,), (BLOCK,), args)

    def _launch_single(self, name: str, args: tuple) -> None:
        self._fn(name)((1,), (SMALL_BLOCK,), args)

    def synchronize(self) -> None:
        self._sync()

    def host(self) -> ArrayBackend:
        """The NumPy backend: planning and small joins run there, below a device's launch latencies."""
        from distsm.kernels import get_backend

        return get_backend("numpy")

    def _sync(self) -> None:
        if self._is_cupy:
            self.xp.cuda.get_current_stream().synchronize()

    def to_host(self, a: Any) -> np.ndarray:
        if self._is_cupy:
            return self.xp.asnumpy(a)
        return np.asarray(a)

    def default_budget(self) -> int:
        """Half of the device memory that is free (free in the driver plus free in CuPy's pool)."""
        if not self._is_cupy:
            return super().default_budget()
        now = time.monotonic()
        if self._budget_cache is not None and now - self._budget_cache[0] < BUDGET_CACHE_S:
            return self._budget_cache[1]
        free, _total = self.xp.cuda.runtime.memGetInfo()
        pool = self.xp.get_default_memory_pool()
        budget = int((free + pool.free_bytes()) // 2)
        self._budget_cache = (now, budget)
        return budget

    # ------------------------------------------------------------------ data graph
    def index(self, graph: Graph) -> GpuIndex:
        key = f"index:{self.name}"
        idx = graph._derived.get(key)
        if idx is None:
            idx = self._build_index(graph)
            graph._derived[key] = idx
        self.last_index_stats = idx.stats
        return idx

    def _build_index(self, graph: Graph) -> GpuIndex:
        t0 = time.perf_counter()
        return self._gpu_index(build_index(graph, self.xp), np.asarray(graph.vertex_labels), t0)

    def as_gpu_index(self, idx: DataIndex) -> GpuIndex:
        """``idx`` with this backend's device structures (an index built elsewhere, e.g. on the host or memory
        mapped, is moved to the device once and cached for its lifetime)."""
        if isinstance(idx, GpuIndex):
            return idx
        cached = self._foreign.get(idx)
        if cached is not None:
            return cached
        t0 = time.perf_counter()
        xp = self.xp
        kw = {}
        for f in fields(DataIndex):
            v = getattr(idx, f.name)
            if f.name == "vertices_by_label":
                v = {k: xp.asarray(a) for k, a in v.items()}
            elif hasattr(v, "shape"):
                v = xp.asarray(v)
            kw[f.name] = v
        return self._foreign.put(idx, self._gpu_index(DataIndex(**kw), np.asarray(self.to_host(kw["vertex_labels"])),
                                                      t0))

    def host_resident(self, host: DataIndex, share: bool = False) -> GpuIndex:
        """``host`` (NumPy arrays) with its O(|E|) arrays copied to page-locked host memory that the kernels read
        in place over the bus (zero copy: only the bytes a probe touches cross it, nothing is cached on the
        device) and its O(|V|) arrays on the device.  Runs are found by binary search in the mapped run keys,
        since a hash of them would be O(|E|) device memory.  ``share`` registers the pages of memory-mapped
        arrays in place instead of copying them, so that every process mapping the same files (the workers of
        one host) reads one copy; arrays the driver will not register are copied (``self.shared_host_bytes``
        says how many bytes were registered in place)."""
        xp = self.xp
        if not self._is_cupy:
            return self.as_gpu_index(host)
        device_id = xp.cuda.Device().id
        self.shared_host_bytes = 0

        def mapped(a: np.ndarray) -> Any:
            if share:
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
        saved, self.use_pcsr = self.use_pcsr, False
        try:
            return self._gpu_index(DataIndex(**kw), np.asarray(host.vertex_labels), time.perf_counter())
        finally:
            self.use_pcsr = saved

    def adopt_index(self, idx: DataIndex) -> GpuIndex:
        return self.as_gpu_index(idx)

    def with_adjacency(self, core: DataIndex, **arrays: Any) -> GpuIndex:
        core = self.as_gpu_index(core)
        kw = {f.name: getattr(core, f.name) for f in fields(DataIndex)}
        kw.update(arrays)
        extra = sum(int(v.nbytes) for k, v in arrays.items() if v is not None and k != "pair_keys")
        kw["nbytes"] = core.nbytes + extra
        return self._with_runs(DataIndex(**kw), core.by_label, core.label_bounds, {})

    def _gpu_index(self, base: DataIndex, vlab: np.ndarray, t0: float) -> GpuIndex:
        n = base.n
        order = np.argsort(vlab, kind="stable").astype(np.int32)
        ulab, first = np.unique(vlab[order], return_index=True)
        bounds = np.append(first, n)
        label_bounds = {int(lab): (int(bounds[i]), int(bounds[i + 1])) for i, lab in enumerate(ulab)}
        by_label = self.xp.asarray(order)
        self._sync()
        stats: dict[str, Any] = {"index_build_upload_s": time.perf_counter() - t0}
        return self._with_runs(base, by_label, label_bounds, stats)

    def _with_runs(self, base: DataIndex, by_label: Any, label_bounds: dict[int, tuple[int, int]],
                   stats: dict[str, Any]) -> GpuIndex:
        """The GPU index of ``base``: the (vertex, label) -> run hash over its runs and the prebuilt kernel
        arguments; ``by_label``/``label_bounds`` are the vertices grouped by label (shared by gathered pieces)."""
        xp = self.xp
        n = base.n
        stats.update(num_labels=base.num_labels, pcsr=False)
        L = base.num_labels
        if L > 1 and self.use_pcsr:
            runs = int(base.run_keys.shape[0])
            if runs >= 2**32 - 1:
                raise ValueError("PCSR run ids are 32-bit; this graph has too many (vertex, label) runs")
            groups = 1
            while groups * PCSR_SLOTS * PCSR_LOAD < max(runs, 1):
                groups *= 2
            pcsr = xp.full(groups * PCSR_SLOTS, EMPTY_SLOT, dtype=xp.uint64)
            with self._timer() as tm:
                if runs:
                    self._launch("pcsr_build", runs, (base.run_keys, _i64(runs), pcsr, _i64(groups - 1)))
            stats.update(pcsr=True, pcsr_build_ms=tm.ms, pcsr_groups=groups, pcsr_runs=runs,
                         pcsr_bytes=int(pcsr.nbytes), pcsr_load=runs / (groups * PCSR_SLOTS))
            mask = groups - 1
        else:
            pcsr = xp.full(PCSR_SLOTS, EMPTY_SLOT, dtype=xp.uint64)
            # several labels but no hash: kernels binary-search run_keys (mask encodes -(runs + 1))
            mask = -(int(base.run_keys.shape[0]) + 1) if L > 1 else 0
        run_keys_arg = base.run_keys if base.run_keys is not None else base.run_start
        nbytes = base.nbytes + int(by_label.nbytes) + int(pcsr.nbytes)
        stats["index_bytes"] = nbytes
        kw = {f.name: getattr(base, f.name) for f in fields(DataIndex)}
        kw["nbytes"] = nbytes
        probe_args = (base.nbr, base.indptr, base.run_start, base.run_end, run_keys_arg, pcsr, _i64(mask), _i32(L),
                      base.pair_keys, _i64(n))
        run_args = (_i32(L), run_keys_arg, pcsr, _i64(mask), base.run_start, base.run_end)
        return GpuIndex(**kw, by_label=by_label, label_bounds=label_bounds, pcsr=pcsr, pcsr_mask=mask,
                        run_keys_arg=run_keys_arg, stats=stats, probe_args=probe_args, run_args=run_args)

    def _timer(self) -> Any:
        backend = self

        class _T:
            ms = 0.0

            def __enter__(self):
                if backend._is_cupy:
                    self.e0, self.e1 = backend.xp.cuda.Event(), backend.xp.cuda.Event()
                    self.e0.record()
                self.t0 = time.perf_counter()
                return self

            def __exit__(self, *exc):
                if backend._is_cupy:
                    self.e1.record()
                    self.e1.synchronize()
                    self.ms = float(backend.xp.cuda.get_elapsed_time(self.e0, self.e1))
                else:
                    self.ms = (time.perf_counter() - self.t0) * 1e3
                return False

        return _T()

    def pcsr_lookup(self, idx: GpuIndex, v: Any, labels: Any) -> Any:
        """Run id of each ``(v[i], labels[i])`` through the hash (-1 when absent); for tests and tools."""
        xp = self.xp
        v = xp.ascontiguousarray(xp.asarray(v, dtype=xp.int32))
        labels = xp.ascontiguousarray(xp.asarray(labels, dtype=xp.int32))
        out = xp.empty(v.shape[0], dtype=xp.int64)
        if v.shape[0]:
            self._launch("pcsr_lookup", v.shape[0], (v, labels, _i64(v.shape[0]), _i32(idx.num_labels),
                                                     idx.run_keys_arg, idx.pcsr, _i64(idx.pcsr_mask), out))
        return out

    # ------------------------------------------------------------------ filter
    def candidates(self, idx: DataIndex, query: Graph, *, homomorphism: bool,
                   restrict: dict[int, Allowed] | None = None) -> list[Any]:
        xp = self.xp
        idx = self.as_gpu_index(idx)
        nq = query.n
        qrows = np.repeat(np.arange(nq), query.degrees)
        qnbr = np.asarray(query.neighbors, np.int64)
        qsig = signatures(np, nq, qrows, np.asarray(query.neighbor_labels), query.vertex_labels[qnbr],
                          presence_only=homomorphism)
        lo = np.zeros(nq, np.int64)
        sizes = np.zeros(nq, np.int64)
        for u in range(nq):
            a, b = idx.label_bounds.get(int(query.vertex_labels[u]), (0, 0))
            lo[u], sizes[u] = a, b - a
        ioff = np.zeros(nq + 1, np.int64)
        np.cumsum(sizes, out=ioff[1:])
        items = int(ioff[-1])
        if items == 0:
            return [xp.zeros(0, dtype=self.vertex_dtype) for _ in range(nq)]
        qinfo = np.concatenate([lo, ioff, np.asarray(query.degrees, np.int64),
                                np.asarray(qsig, np.int64).reshape(-1)])
        dq = xp.asarray(qinfo)
        nwords = (idx.n + 31) // 32
        out = xp.empty(items, dtype=xp.int32)
        check_deg = _i32(0 if homomorphism else 1)
        if items <= self.small_limit:
            words = xp.empty((nq, nwords), dtype=xp.uint32)
            seg_counts = xp.empty(nq, dtype=xp.int64)
            self._launch_single("filter_small", (idx.by_label, dq, _i32(nq), idx.sig, _i64(idx.n), idx.degrees,
                                                 check_deg, _i64(items), out, seg_counts, words, _i64(nwords)))
        else:
            words = xp.zeros((nq, nwords), dtype=xp.uint32)
            seg_counts = xp.zeros(nq, dtype=xp.int64)
            flags = xp.empty(items, dtype=xp.int32)
            self._launch("filter_flags", items, (idx.by_label, dq, _i32(nq), idx.sig, _i64(idx.n), idx.degrees,
                                                 check_deg, _i64(items), flags))
            scan = xp.cumsum(flags, dtype=xp.int64)
            self._launch("filter_scatter", items, (idx.by_label, dq, _i32(nq), _i64(items), flags, scan, out,
                                                   seg_counts, words, _i64(nwords)))
            del flags, scan
        counts = self.to_host(seg_counts)
        cands = []
        start = 0
        for u in range(nq):
            c = int(counts[u])
            arr = out[start:start + c]
            start += c
            self._bitsets.put(arr, words[u])  # not weak-referenceable: bitset() builds it on demand
            cands.append(arr)
        for u, allowed in (restrict or {}).items():
            cands[u] = restricted(xp, cands[u], allowed)
        return cands

    def bitset(self, idx: DataIndex, members: Any) -> Any:
        words = self._bitsets.get(members)
        if words is not None:
            return words
        xp = self.xp
        words = xp.zeros((idx.n + 31) // 32, dtype=xp.uint32)
        m = xp.ascontiguousarray(members.astype(xp.int32, copy=False))
        if m.shape[0]:
            self._launch("bitset_set", m.shape[0], (m, _i64(m.shape[0]), words))
        return words

    # ------------------------------------------------------------------ join
    def _program(self, step: Step, device: bool, spanning: Any = None) -> Any:
        """The step's checks as int32 words (host array, or a device copy when ``device``); both are cached for
        the lifetime of ``step`` (a step is always run with, or always without, its spanning filter)."""
        ent = self._progs.get(step)
        if ent is None:
            prog: list[int] = [0]
            for cols in (step.greater_than, step.less_than, step.distinct_cols):
                prog.append(len(cols))
                prog.extend(int(c) for c in cols)
            for pairs in (step.checks, step.pair_checks):
                prog.append(len(pairs))
                for c, x in pairs:
                    prog.extend((int(c), int(x)))
            if spanning is None:
                prog.append(0)
            else:
                prime = spanning.prime
                prog.extend((1, int(step.cross_first), int(step.first_col), int(step.require_spanning),
                             -1 if prime is None else int(prime.edge_index), int(bool(prime and prime.directed)),
                             len(step.dup_checks)))
                for col, code, j in step.dup_checks:
                    prog.extend((int(col), int(code), int(j)))
            prog[0] = len(prog)
            ent = self._progs.put(step, [np.asarray(prog, dtype=np.int32), None])
        if not device:
            return ent[0]
        if ent[1] is None:
            ent[1] = self.xp.asarray(ent[0])
        return ent[1]

    def _as_table(self, table: Any) -> Any:
        if table.dtype == np.int32 and table.flags.c_contiguous:
            return table
        return self.xp.ascontiguousarray(table, dtype=self.xp.int32)

    def workload(self, idx: DataIndex, table: Any, step: Step) -> tuple[Any, Any, int]:
        """``(delta, offsets, total)``: device int64 arrays (``offsets`` is the inclusive prefix sum) and the
        level's output size on the host (read from page-locked memory on the small path: no extra copy)."""
        xp = self.xp
        idx = self.as_gpu_index(idx)
        table = self._as_table(table)
        nrows, ncols = int(table.shape[0]), int(table.shape[1])
        buf = xp.empty((2, nrows), dtype=xp.int64)
        offsets, delta = buf[0], buf[1]
        if nrows == 0:
            return delta, offsets, 0
        head = (table, _i32(ncols), _i64(nrows), _i32(step.first_col), _i32(step.first_label)) + idx.run_args
        if nrows <= self.small_limit:
            if self.use_staging:
                if self._staging is None:
                    self._staging = _Staging(self.xp if self._is_cupy else None)
                _, _, ra, rv = self._staging.take()
                self._launch_single("workload_small", head + (offsets, delta, ra))
                self._sync()
                return delta, offsets, int(rv[0])
            res = xp.empty(1, dtype=xp.int64)
            self._launch_single("workload_small", head + (offsets, delta, res))
            return delta, offsets, int(self.to_host(res)[0])
        self._launch("workload_counts", nrows, head + (offsets, delta))
        offsets = xp.cumsum(offsets)
        self._launch("workload_delta", nrows, (delta, offsets, _i64(nrows)))
        return delta, offsets, int(offsets[-1])

    def extend(self, idx: DataIndex, table: Any, step: Step, delta: Any, offsets: Any, a: int, b: int,
               bits: Any, count_only: bool, spanning: Any = None) -> Any:
        xp = self.xp
        idx = self.as_gpu_index(idx)
        # Spanning searches run their cross-edge / DUPREMOVE tests inside the probe, so counts never materialise.
        part = self._dummy_i32() if spanning is None else xp.ascontiguousarray(spanning.part, dtype=xp.int32)
        table = self._as_table(table)
        nrows, ncols = int(table.shape[0]), int(table.shape[1])
        m = int(b) - int(a)
        if m <= 0:
            return 0 if count_only else xp.zeros((0, ncols + 1), dtype=table.dtype)
        head = (table, _i32(ncols), offsets, _i64(nrows), delta) + idx.probe_args + (bits, part)
        hprog = self._program(step, device=False, spanning=spanning)
        if m <= self.small_limit and hprog.shape[0] <= PROG_MAX:
            out = xp.empty((1 if count_only else m, ncols + 1), dtype=xp.int32)
            tail = (_i64(a), _i64(m), _i32(1 if count_only else 0), out)
            if self.use_staging:
                if self._staging is None:
                    self._staging = _Staging(self.xp if self._is_cupy else None)
                pa, pv, ra, rv = self._staging.take()
                pv[:hprog.shape[0]] = hprog
                self._launch_single("extend_small", head + (pa,) + tail + (ra,))
                self._sync()
                c = int(rv[0])
            else:
                res = xp.empty(1, dtype=xp.int64)
                self._launch_single("extend_small", head + (self._program(step, True, spanning),) + tail + (res,))
                c = int(self.to_host(res)[0])
            if count_only:
                return c
            return out[:c]
        probe = head + (self._program(step, device=True, spanning=spanning),)
        tiered = (self.load_balance == "tiered" and ncols <= TIER_COLS and len(step.checks) <= TIER_CHECKS)
        if count_only:
            counter = xp.zeros(1, dtype=xp.uint64)
            if tiered:
                self._extend_tiered(probe, offsets, nrows, a, b, counter)
            else:
                self._launch("extend_count", m, probe + (_i64(a), _i64(m), counter))
            return int(self.to_host(counter)[0])
        cand = xp.empty(m, dtype=xp.int32)
        if tiered:
            item_out = self._extend_tiered(probe, offsets, nrows, a, b, None, cand)
            n_items = int(item_out.shape[0]) // 3
            scan = xp.cumsum(item_out[0::3])
            total = int(scan[-1]) if n_items else 0
            out = xp.empty((total, ncols + 1), dtype=xp.int32)
            if total:
                self._launch("extend_write_items", total, (table, _i32(ncols), item_out, scan, _i64(n_items), _i64(a),
                                                           cand, _i64(total), out))
            return out
        flags = xp.empty(m, dtype=xp.int32)
        self._launch("extend_flags", m, probe + (_i64(a), _i64(m), cand, flags))
        scan = xp.cumsum(flags, dtype=xp.int64)
        del flags
        total = int(scan[-1])
        out = xp.empty((total, ncols + 1), dtype=xp.int32)
        if total:
            self._launch("extend_write", m, (table, _i32(ncols), offsets, _i64(nrows), _i64(a), _i64(m), cand, scan,
                                             out))
        return out

    def descend(self, idx: DataIndex, table: Any, level: int, plan: QueryPlan, bits: list[Any], count_only: bool,
                cap: int, spanning: Any = None) -> Descent | None:
        """The fused descent (``descend_small``: one block, one launch, one host round trip for every level whose
        output space fits ``min(cap, small_limit)`` entries); None when the table or a step program is too large."""
        xp = self.xp
        nq = len(plan.order)
        cap = min(int(cap), self.small_limit)
        nrows = int(table.shape[0])
        if not self.fuse_levels or cap <= 0 or nrows > cap or 4 + 2 * nq > DESCENT_RESULT_WORDS:
            return None
        desc = self._descent_program(plan, bits, spanning)
        if desc is None:
            return None
        prog, bits_list = desc
        idx = self.as_gpu_index(idx)
        table = self._as_table(table)
        part = self._dummy_i32() if spanning is None else xp.ascontiguousarray(spanning.part, dtype=xp.int32)
        bufs = xp.empty((2, cap * nq), dtype=xp.int32)
        work = xp.empty((2, cap), dtype=xp.int64)
        offsets, delta = work[0], work[1]
        words = 4 + 2 * nq
        head = (table, _i64(nrows), _i32(level), _i32(nq), prog, bits_list, _i32(1 if count_only else 0), _i64(cap),
                bufs[0], bufs[1], offsets, delta) + idx.probe_args + (part,)
        if self.use_staging:
            if self._staging is None:
                self._staging = _Staging(self.xp if self._is_cupy else None)
            pa, pv, _, _ = self._staging.take()
            rv = pv.view(np.int64)[:words]
            rv[:] = 0
            self._launch_single("descend_small", head + (pa,))
            self._sync()
            res = rv.copy()
        else:
            dres = xp.zeros(words, dtype=xp.int64)
            self._launch_single("descend_small", head + (dres,))
            res = self.to_host(dres)
        reached, rows = int(res[0]), int(res[1])
        levels = [(int(res[4 + 2 * j]), int(res[5 + 2 * j])) for j in range(level, reached)]
        source = (table, bufs[0], bufs[1])[int(res[3])]
        if reached == nq:
            out = None if count_only else source[:rows * nq].reshape(rows, nq)
            return Descent(nq, out, rows, None, levels)
        at = table if reached == level else source[:rows * reached].reshape(rows, reached)
        return Descent(reached, at, 0, (delta[:rows], offsets[:rows], int(res[2])), levels)

    def _descent_program(self, plan: QueryPlan, bits: list[Any], spanning: Any) -> tuple[Any, Any] | None:
        """``descend_small``'s level table and programs, and the device addresses of the steps' bitsets, on the
        device; cached for the lifetime of ``plan`` (while its bitsets are the same objects).  None when a step
        program is too long for shared memory."""
        key = tuple(id(bits[step.vertex]) for step in plan.steps)
        ent = self._descents.get(plan)
        if ent is not None and ent[0] == key:
            return ent[2]
        progs = [self._program(step, device=False, spanning=spanning) for step in plan.steps]
        if any(p.shape[0] > PROG_MAX for p in progs):
            return None
        head = np.zeros(4 * len(progs), dtype=np.int32)
        at = head.shape[0]
        for j, (step, p) in enumerate(zip(plan.steps, progs)):
            head[4 * j:4 * j + 4] = (step.first_col, step.first_label, at, j)
            at += p.shape[0]
        words = np.concatenate([head, *progs]) if progs else head
        held = [bits[step.vertex] for step in plan.steps]
        addrs = np.asarray([b.data.ptr if self._is_cupy else b.ctypes.data for b in held], dtype=np.uint64)
        value = (self.xp.asarray(words), self.xp.asarray(addrs))
        # The bitsets are held with their addresses: an id in the key is never reused while the entry lives.
        self._descents.put(plan, (key, held, value))
        return value

    # ------------------------------------------------------------------ tiered load balance
    def _dummy_i32(self) -> Any:
        """A one-element int32 device array for kernel arguments a launch does not read."""
        if self._no_part is None:
            self._no_part = self.xp.zeros(1, dtype=self.xp.int32)
        return self._no_part

    def _dummy_i64(self) -> Any:
        """A one-element int64 device array for kernel arguments a launch does not read."""
        if self._no_i64 is None:
            self._no_i64 = self.xp.zeros(1, dtype=self.xp.int64)
        return self._no_i64

    def tier_thresholds(self, widths: np.ndarray, total: int) -> tuple[int, int]:
        """``(warp_max, block_max)`` from a histogram of the rows' entry counts ``widths`` (host, > 0).

        A row of at most ``warp_max`` entries gets a warp: ``warp_max`` is twice the upper edge of the power-of-two
        bucket holding the 90th-percentile row, clamped to [64, 1024], so most rows take a warp at most 32 passes.
        A row above ``block_max`` is split into pieces of ``block_max`` entries, one block each: ``block_max`` is
        the fair share of one resident block (``total`` over 8 blocks per SM), at least 4 x ``warp_max``, so one
        huge row never holds the grid's tail.  Rows in between get a block."""
        return self._thresholds(np.bincount(np.floor(np.log2(widths)).astype(np.int64)), total)

    def _thresholds(self, buckets: np.ndarray, total: int) -> tuple[int, int]:
        """:meth:`tier_thresholds` from the log2 histogram (``buckets[j]`` rows of ``2**j`` to ``2**(j+1) - 1``)."""
        cum = np.cumsum(buckets)
        j90 = int(np.searchsorted(cum, 0.9 * cum[-1]))
        warp_max = int(min(max(2 ** (j90 + 2), 64), 1024))
        block_max = int(max(4 * warp_max, -(-total // (8 * self._sm_count()))))
        return warp_max, block_max

    def _sm_count(self) -> int:
        if self._sms is None:
            self._sms = int(self.xp.cuda.runtime.getDeviceProperties(self.xp.cuda.Device().id)["multiProcessorCount"]) \
                if self._is_cupy else 132
        return self._sms

    def _extend_tiered(self, probe: tuple, offsets: Any, nrows: int, a: int, b: int, counter: Any,
                       cand: Any = None) -> Any:
        """Entries [a, b) through :func:`extend_tiered`: rows bucketed by workload into warp, block and split tiers
        (thresholds from :meth:`tier_thresholds`).  Counts into ``counter`` (uint64), or with ``counter=None``
        compacts through the kernel's write cache: each item's survivors go to the front of its range of
        ``cand`` and the returned ``item_out`` (int64, 3 per item in entry order) holds (survivors, row, first
        entry).  The work items are built on the device: only the histogram and the item counts come to the
        host, never per-row arrays."""
        xp = self.xp
        r0, r1 = (int(x) for x in self.to_host(xp.searchsorted(offsets, xp.asarray([a, b - 1], dtype=xp.int64),
                                                                     side="right")))
        r1 += 1
        ends = offsets[r0:r1]
        starts = xp.empty_like(ends)
        starts[0] = offsets[r0 - 1] if r0 else 0
        starts[1:] = ends[:-1]
        lo, hi = xp.maximum(starts, a), xp.minimum(ends, b)
        width = hi - lo
        if self.tier_limits:
            warp_max, block_max = self.tier_limits
        else:
            live = width[width > 0].astype(xp.float64)
            warp_max, block_max = self._thresholds(self.to_host(xp.bincount(xp.floor(xp.log2(live)).astype(xp.int64))),
                                                   b - a)
        # Every row with entries takes one item, or ceil(width / block_max) above warp_max (a block-tier row: one;
        # a split row: more).  Items are numbered in entry order: a row's first item follows all earlier rows'.
        per_row = xp.where(width > warp_max, (width + (block_max - 1)) // block_max, (width > 0).astype(xp.int64))
        first = xp.cumsum(per_row) - per_row
        warp = xp.flatnonzero((width > 0) & (width <= warp_max))
        big = xp.flatnonzero(width > warp_max)
        # Item p of the block launch belongs to the big row whose piece range [cum - pieces, cum) holds p.
        pieces = per_row[big]
        cum = xp.cumsum(pieces)
        n_block, n_split_rows = (int(x) for x in self.to_host(xp.stack([cum[-1], (pieces > 1).sum()]))) \
            if big.shape[0] else (0, 0)
        p = xp.arange(n_block, dtype=xp.int64)
        owner = xp.searchsorted(cum, p, side="right")
        row = big[owner]
        piece = p - (cum - pieces)[owner]
        start = lo[row] + piece * block_max
        block_items = xp.stack([row + r0, start, xp.minimum(start + block_max, hi[row]), first[row] + piece], axis=1)
        warp_items = xp.stack([warp + r0, lo[warp], hi[warp], first[warp]], axis=1)
        st = self.tier_stats
        st["launches"] = st.get("launches", 0) + 1
        st["warp_rows"] = st.get("warp_rows", 0) + int(warp.shape[0])
        st["block_rows"] = st.get("block_rows", 0) + int(big.shape[0]) - n_split_rows
        st["split_rows"] = st.get("split_rows", 0) + n_split_rows
        st["split_pieces"] = st.get("split_pieces", 0) + n_block - (int(big.shape[0]) - n_split_rows)
        mode = 0 if counter is not None else 1
        item_out = xp.empty(3 * (int(warp.shape[0]) + n_block), dtype=xp.int64) if mode else self._dummy_i64()
        fn = self._fn("extend_tiered")
        for items, group in ((warp_items, 32), (block_items, BLOCK)):
            count = int(items.shape[0])
            if count == 0:
                continue
            dev = xp.ascontiguousarray(items.astype(xp.int64, copy=False))
            per_block = BLOCK // group
            grid = max(1, min(-(-count // per_block), MAX_GRID))
            fn((grid,), (BLOCK,), probe + (dev, _i64(count), _i32(group), _i64(a), _i32(mode),
                                           self._dummy_i64() if counter is None else counter,
                                           self._dummy_i32() if cand is None else cand, item_out))
        return item_out if mode else None


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
    if not (isinstance(a, np.memmap) or isinstance(a.base, np.memmap)) or not a.flags.c_contiguous or a.nbytes == 0:
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
