"""Kernel launches: one typed description per kernel of the CUDA modules, and the loaded modules.

The sizes both sides use are defined in :mod:`distsm.kernels.cuda_modules`, with the modules' compile options and
their fatbins compiled ahead.  Each kernel is described once
(:class:`Kernel`: argument names and types in the order of its signature in ``join.cu``, checked against the
source by ``tests/test_kernel_specs.py``); a launch passes named values, and a missing, extra or mistyped one
raises :class:`KernelArgumentError` in Python instead of reaching the GPU as a misplaced pointer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm import caches
from distsm.kernels.cuda_modules import (ARRAYS_MODULE, BLOCK, EMPTY_SLOT_BITS, JOIN_MODULE, MAX_GRID, SMALL_BLOCK,
                                         TRAILING_MODULE, DFS_MODULE, Module, runs_on)

EMPTY_SLOT = np.uint64(EMPTY_SLOT_BITS)


class KernelArgumentError(TypeError):
    """A launch's arguments do not match its kernel's description."""


@dataclass(frozen=True)
class Arg:
    """One kernel argument: ``dtype`` of the scalar, or of the array a pointer (``pointer``) points to."""

    name: str
    dtype: type[np.generic]
    pointer: bool = False


def _p(name: str, dtype: type[np.generic]) -> Arg:
    return Arg(name, dtype, True)


_i32, _i64, _u32, _u64 = np.int32, np.int64, np.uint32, np.uint64


@dataclass(frozen=True)
class Kernel:
    """A kernel of ``module``: its name and arguments in signature order."""

    name: str
    args: tuple[Arg, ...]
    module: Module = JOIN_MODULE

    def __post_init__(self) -> None:
        # (name, scalar type or None, pointee dtype or None) per argument, so that a launch does no lookups.
        plan = tuple((a.name, None if a.pointer else a.dtype, np.dtype(a.dtype) if a.pointer else None)
                     for a in self.args)
        object.__setattr__(self, "_plan", plan)

    def pack(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The positional arguments of a launch from named ``values``.

        A scalar is converted to its C type (an out-of-range value raises).  A pointer takes a device array of
        its dtype, or an ``np.uint64`` address (page-locked host memory that the kernel reads in place)."""
        if len(values) != len(self.args):
            names = {a.name for a in self.args}
            missing, extra = sorted(names - values.keys()), sorted(values.keys() - names)
            raise KernelArgumentError(f"{self.name}: missing arguments {missing}, unexpected {extra}")
        out = []
        for name, scalar, pointee in self._plan:  # type: ignore[attr-defined]
            try:
                v = values[name]
            except KeyError:
                raise KernelArgumentError(f"{self.name}: missing argument {name!r}") from None
            if scalar is not None:
                out.append(scalar(v))
                continue
            dtype = getattr(v, "dtype", None)
            if dtype is pointee or type(v) is np.uint64 or dtype == pointee:
                out.append(v)
            else:
                raise KernelArgumentError(f"{self.name}: argument {name!r} must be a {pointee} device array or an "
                                          f"address, got {type(v).__name__} of dtype {getattr(v, 'dtype', None)}")
        return tuple(out)


#: The arguments of DSM_PROBE_ARGS (join.cu), shared by the entry-parallel extend kernels.
PROBE_ARGS = (_p("table", _i32), Arg("ncols", _i32), _p("offsets", _i64), Arg("nrows", _i64), _p("delta", _i64),
              _p("nbr", _i32), _p("indptr", _i64), _p("run_start", _i64), _p("run_end", _i64),
              _p("run_keys", _i64), _p("pcsr", _u64), Arg("gmask", _i64), Arg("L", _i32), _p("pair_keys", _i64),
              Arg("n", _i64), _p("bits", _u32), _p("part", _i32), _p("prog", _i32))
#: The graph arguments a workload kernel reads to find a row's run.
_RUN_ARGS = (Arg("L", _i32), _p("run_keys", _i64), _p("pcsr", _u64), Arg("gmask", _i64), _p("run_start", _i64),
             _p("run_end", _i64))
_WORKLOAD_HEAD = (_p("table", _i32), Arg("ncols", _i32), Arg("nrows", _i64), Arg("first_col", _i32),
                  Arg("label", _i32)) + _RUN_ARGS
_FILTER_HEAD = (_p("by_label", _i32), _p("qinfo", _i64), Arg("nq", _i32))

PCSR_BUILD = Kernel("pcsr_build", (_p("run_keys", _i64), Arg("runs", _i64), _p("table", _u64), Arg("gmask", _i64)))
PCSR_LOOKUP = Kernel("pcsr_lookup", (_p("vs", _i32), _p("labels", _i32), Arg("m", _i64), Arg("L", _i32),
                                     _p("run_keys", _i64), _p("pcsr", _u64), Arg("gmask", _i64), _p("out", _i64)))
FILTER_SMALL = Kernel("filter_small", _FILTER_HEAD + (
    _p("sig", _u32), Arg("n", _i64), _p("degrees", _i64), Arg("check_deg", _i32), Arg("items", _i64),
    _p("out", _i32), _p("seg_counts", _i64), _p("words", _u32), Arg("nwords", _i64)))
FILTER_FLAGS = Kernel("filter_flags", _FILTER_HEAD + (
    _p("sig", _u32), Arg("n", _i64), _p("degrees", _i64), Arg("check_deg", _i32), Arg("items", _i64),
    _p("flags", _i32)))
FILTER_SCATTER = Kernel("filter_scatter", _FILTER_HEAD + (
    Arg("items", _i64), _p("flags", _i32), _p("scan", _i64), _p("out", _i32), _p("seg_counts", _i64),
    _p("words", _u32), Arg("nwords", _i64)))
BITSET_SET = Kernel("bitset_set", (_p("members", _i32), Arg("m", _i64), _p("words", _u32)))
BITSET_ROWS = Kernel("bitset_rows", (_p("members", _i32), _p("rows", _i32), Arg("m", _i64), _p("words", _u32),
                                     Arg("nwords", _i64)))
WORKLOAD_SMALL = Kernel("workload_small", _WORKLOAD_HEAD + (_p("offsets", _i64), _p("delta", _i64),
                                                            _p("total", _i64)))
WORKLOAD_COUNTS = Kernel("workload_counts", _WORKLOAD_HEAD + (_p("counts", _i64), _p("starts", _i64)))
WORKLOAD_DELTA = Kernel("workload_delta", (_p("starts", _i64), _p("offsets", _i64), Arg("nrows", _i64)))
EXTEND_SMALL = Kernel("extend_small", PROBE_ARGS + (Arg("a", _i64), Arg("m", _i64), Arg("count_only", _i32),
                                                    _p("out", _i32), _p("count", _i64)))
DESCEND_SMALL = Kernel("descend_small", (
    _p("table0", _i32), Arg("nrows0", _i64), Arg("level0", _i32), Arg("nq", _i32), _p("desc", _i32),
    _p("bits_list", _u64), Arg("count_only", _i32), Arg("cap", _i64), _p("buf0", _i32), _p("buf1", _i32),
    _p("offsets", _i64), _p("delta", _i64), _p("nbr", _i32), _p("indptr", _i64), _p("run_start", _i64),
    _p("run_end", _i64), _p("run_keys", _i64), _p("pcsr", _u64), Arg("gmask", _i64), Arg("L", _i32),
    _p("pair_keys", _i64), Arg("n", _i64), _p("part", _i32), _p("res", _i64)))
#: The graph arguments of the descent kernels (the probe's, without the table, the step and the partition).
_DESCENT_GRAPH = (_p("nbr", _i32), _p("indptr", _i64), _p("run_start", _i64), _p("run_end", _i64),
                  _p("run_keys", _i64), _p("pcsr", _u64), Arg("gmask", _i64), Arg("L", _i32), _p("pair_keys", _i64),
                  Arg("n", _i64))
DESCEND_BATCH = Kernel("descend_batch", (
    _p("head", _i64), Arg("nqueries", _i64), Arg("progs_at", _i64), Arg("rows", _i64), Arg("table_words", _i64),
    _p("bufs", _i32), _p("work", _i64)) + _DESCENT_GRAPH + (_p("res", _i64),))
FILTER_BATCH = Kernel("filter_batch", (
    _p("by_label", _i32), _p("head", _i64), _p("sig", _u32), Arg("n", _i64), _p("degrees", _i64),
    Arg("check_deg", _i32), _p("out", _i32), _p("seg_counts", _i64), _p("words", _u32), Arg("nwords", _i64)))
EXTEND_FLAGS = Kernel("extend_flags", PROBE_ARGS + (Arg("a", _i64), Arg("m", _i64), _p("cand_out", _i32),
                                                    _p("flags", _i32)))
EXTEND_WRITE = Kernel("extend_write", (
    _p("table", _i32), Arg("ncols", _i32), _p("offsets", _i64), Arg("nrows", _i64), Arg("a", _i64), Arg("m", _i64),
    _p("cand_out", _i32), _p("scan", _i64), _p("out", _i32)))
EXTEND_COUNT = Kernel("extend_count", PROBE_ARGS + (Arg("a", _i64), Arg("m", _i64), _p("counter", _u64)))
EXTEND_TIERED = Kernel("extend_tiered", PROBE_ARGS + (
    _p("items", _i64), Arg("count", _i64), Arg("group", _i32), Arg("a", _i64), Arg("mode", _i32),
    _p("counter", _u64), _p("cand_out", _i32), _p("item_out", _i64)))
EXTEND_WRITE_ITEMS = Kernel("extend_write_items", (
    _p("table", _i32), Arg("ncols", _i32), _p("item_out", _i64), _p("scan", _i64), Arg("n_items", _i64),
    Arg("a", _i64), _p("cand_out", _i32), Arg("total", _i64), _p("out", _i32)))
STAGING_ECHO = Kernel("staging_echo", (_p("src", _i32), _p("dst", _i64)))
COUNT_TRUE = Kernel("count_true", (_p("mask", np.uint8), Arg("n", _i64), _p("out", _u64)))
HISTOGRAM = {np.dtype(k): Kernel(f"histogram_{name}", (_p("x", k), Arg("n", _i64), Arg("size", _i64), _p("out", _u64)))
             for k, name in ((_i32, "i32"), (_i64, "i64"))}
WEIGHTED_HISTOGRAM = {np.dtype(k): Kernel(f"weighted_histogram_{name}", (
    _p("x", k), _p("w", np.float64), Arg("n", _i64), Arg("size", _i64), _p("out", np.float64)))
    for k, name in ((_i32, "i32"), (_i64, "i64"))}

#: Every kernel of ``join.cu``, by name.
KERNELS: dict[str, Kernel] = {k.name: k for k in (
    PCSR_BUILD, PCSR_LOOKUP, FILTER_SMALL, FILTER_FLAGS, FILTER_SCATTER, BITSET_SET, BITSET_ROWS, WORKLOAD_SMALL,
    WORKLOAD_COUNTS, WORKLOAD_DELTA, EXTEND_SMALL, DESCEND_SMALL, EXTEND_FLAGS, EXTEND_WRITE, EXTEND_COUNT,
    EXTEND_TIERED, EXTEND_WRITE_ITEMS, STAGING_ECHO, DESCEND_BATCH, FILTER_BATCH, COUNT_TRUE,
    *HISTOGRAM.values(), *WEIGHTED_HISTOGRAM.values())}


#: Loaded modules, shared by every :class:`Launcher` of the process (a module is read and loaded once per device).
_LOADED = caches.cache("cuda modules", "GLOBAL, (fatbin or None for NVRTC, Module, device) -> cupy.RawModule")


def load_module(module: Module) -> Any:
    """``module`` as a ``cupy.RawModule``: from a fatbin built for its source and options that runs on this GPU
    (:func:`~distsm.kernels.cuda_modules.runs_on`), else compiled by NVRTC (and kept in CuPy's kernel cache)."""
    import cupy

    device = cupy.cuda.Device()
    capability = int(device.compute_capability)
    path = next((str(p) for p, archs in module.fatbins() if runs_on(archs, capability)), None)

    def load() -> Any:
        if path is not None:
            return cupy.RawModule(path=path)
        return cupy.RawModule(code=module.path.read_text(), options=module.options)

    return _LOADED.get_or(caches.GLOBAL, load, sub=(path, module, device.id))


class Launcher:
    """Modules loaded on first use, and launches of their kernels with named arguments.

    A module loads from a fatbin compiled ahead (:func:`load_module`) where the package was built with one for
    its source and options that runs on the GPU, and is compiled by NVRTC otherwise."""

    def __init__(self) -> None:
        self._modules: dict[Module, Any] = {}
        self._functions: dict[str, Any] = {}

    def function(self, kernel: Kernel) -> Any:
        f = self._functions.get(kernel.name)
        if f is None:
            module = self._modules.get(kernel.module)
            if module is None:
                module = self._modules[kernel.module] = load_module(kernel.module)
            f = module.get_function(kernel.name)
            self._functions[kernel.name] = f
        return f

    def grid(self, kernel: Kernel, items: int, /, **values: Any) -> None:
        """A grid-stride launch of ``BLOCK`` threads per block covering ``items`` work items."""
        self.launch(kernel, max(1, min((int(items) + BLOCK - 1) // BLOCK, MAX_GRID)), BLOCK, **values)

    def single(self, kernel: Kernel, /, **values: Any) -> None:
        """A single-block launch of ``SMALL_BLOCK`` threads."""
        self.launch(kernel, 1, SMALL_BLOCK, **values)

    def launch(self, kernel: Kernel, grid: int, block: int, /, **values: Any) -> None:
        """``grid`` blocks of ``block`` threads (positional, so that no kernel argument name can clash)."""
        self.function(kernel)((grid,), (block,), kernel.pack(values))


# ------------------------------------------------------------------ trailing.cu (the fused trailing count)
_TRAILING_HEAD = (_p("table", _i32), Arg("ncols", _i32), _p("parents", _i32), _p("xs", _i32), Arg("nrows", _i64),
                  Arg("rows_per_block", _i64), _p("prog", _i32), _p("arcs", _i64), Arg("narcs", _i32))
_TRAILING_SUMS = (_p("block_total", _i64), _p("block_bound", np.float64), _p("block_work", _i64))
TRAILING_COUNT = Kernel("trailing_count", _TRAILING_HEAD + _TRAILING_SUMS, TRAILING_MODULE)
TRAILING_COUNT_BITS = Kernel("trailing_count_bits", _TRAILING_HEAD + (_p("bits", _i64),) + _TRAILING_SUMS,
                             TRAILING_MODULE)
TR_BIT_ROWS = Kernel("tr_bit_rows", (_p("desc", _i64), Arg("narcs", _i32), Arg("per_arc", _i32)), TRAILING_MODULE)
_CE_EXTEND_HEAD = (_p("table", _i32), Arg("ncols", _i32), Arg("nrows", _i64), _p("prog", _i32), _p("arcs", _i64),
                   Arg("narcs", _i32))
CE_EXTEND_COUNT = Kernel("ce_extend_count", _CE_EXTEND_HEAD + (_p("counts", _i64),), TRAILING_MODULE)
CE_EXTEND_PAIRS = Kernel("ce_extend_pairs", _CE_EXTEND_HEAD + (_p("starts", _i64), _p("parents", _i32), _p("xs", _i32)),
                         TRAILING_MODULE)
CE_GATHER_ROWS = Kernel("ce_gather_rows", (_p("table", _i32), Arg("ncols", _i32), _p("parents", _i32), _p("xs", _i32),
                                           Arg("nrows", _i64), _p("out", _i32)), TRAILING_MODULE)

#: Every kernel of ``trailing.cu``, by name.
TRAILING_KERNELS: dict[str, Kernel] = {k.name: k for k in (TRAILING_COUNT, TRAILING_COUNT_BITS, TR_BIT_ROWS,
                                                            CE_EXTEND_COUNT, CE_EXTEND_PAIRS, CE_GATHER_ROWS)}


# ------------------------------------------------------------------ dfs.cu (the depth-first set-intersection search)
DFS_TASKS = Kernel("dfs_tasks", (_p("prog", _i32), _p("verts", _i32), Arg("nv", _i64), _p("ptr", _i64),
                                 _p("up", _i64), Arg("L", _i32), _p("start", _i64), _p("count", _i64)), DFS_MODULE)
#: The arguments of DFS_COUNT_ARGS (dfs.cu), shared by the search kernels: the program, the ranked graph, the tasks
#: and the warps' stored sets.
_DFS_COUNT_ARGS = (
    _p("words", _i32), _p("nbr", _i32), _p("ptr", _i64), _p("up", _i64), _p("vlab", _i32), Arg("L", _i32),
    _p("verts", _i32), _p("task_ptr", _i64), _p("task_start", _i64), Arg("nv", _i64), Arg("ntasks", _i64),
    _p("bufs", _i32), Arg("cap", _i64))
DFS_COUNT = Kernel("dfs_count", _DFS_COUNT_ARGS + (_p("next", _i64), _p("result", _u64)), DFS_MODULE)
CLIQUE_COUNT = Kernel("clique_count", _DFS_COUNT_ARGS + (
    _p("rows", _u32), Arg("bmax", _i32), _p("weight", _i64), _p("next", _i64), _p("result", _u64)), DFS_MODULE)

#: Every kernel of ``dfs.cu``, by name.
DFS_KERNELS: dict[str, Kernel] = {k.name: k for k in (DFS_TASKS, DFS_COUNT, CLIQUE_COUNT)}


# ------------------------------------------------------------------ arrays.cu (array primitives between joins)
def _arrays(name: str, *args: Arg) -> Kernel:
    return Kernel(name, args, ARRAYS_MODULE)


_TYPE_NAMES = ((_i32, "i32"), (_i64, "i64"))
#: What a scan sums per entry (arrays.cu): the value, or 1 where it is non-zero, or equal to a value.
SCAN_SUM, SCAN_NONZERO, SCAN_EQUAL = 0, 1, 2
_SELECT = (Arg("n", _i64), Arg("mode", _i32), Arg("value", _i64))
_f64 = np.float64
#: Scans by input dtype, and the dtype they sum in.
SCAN_TYPES = {np.dtype(_i32): np.dtype(_i64), np.dtype(_i64): np.dtype(_i64), np.dtype(_f64): np.dtype(_f64)}
_SCAN_NAMES = ((_i32, "i32"), (_i64, "i64"), (_f64, "f64"))
SCAN_SUMS = {np.dtype(t): _arrays(f"ar_scan_sums_{s}", _p("x", t), *_SELECT, _p("sums", a))
             for t, s in _SCAN_NAMES for a in (SCAN_TYPES[np.dtype(t)].type,)}
SCAN_APPLY = {np.dtype(t): _arrays(f"ar_scan_apply_{s}", _p("x", t), *_SELECT, _p("carry", a), _p("out", a))
              for t, s in _SCAN_NAMES for a in (SCAN_TYPES[np.dtype(t)].type,)}
SCATTER_SELECTED = {np.dtype(t): _arrays(f"ar_scatter_selected_{s}", _p("x", t), *_SELECT, _p("incl", _i64),
                                         _p("out", _i64)) for t, s in _TYPE_NAMES}
EXPAND = _arrays("ar_expand", _p("incl", _i64), Arg("rows", _i64), Arg("total", _i64), _p("row", _i64),
                 _p("rank", _i64))
GATHER_RUNS = _arrays("ar_gather_runs", _p("values", _i32), _p("start", _i64), _p("row", _i64), _p("rank", _i64),
                      Arg("n", _i64), _p("out", _i32))
#: Gathers by (values dtype, index dtype).
TAKE = {(np.dtype(a), np.dtype(i)): _arrays(f"ar_take_{sa}_{si}", _p("a", a), _p("idx", i), Arg("stride", _i64),
                                            Arg("n", _i64), _p("out", a))
        for a, sa in _SCAN_NAMES for i, si in _TYPE_NAMES if sa != "f64" or si == "i64"}
SPANS = {np.dtype(t): _arrays(f"ar_spans_{s}", _p("lo", _i64), _p("hi", _i64), _p("pos", t), Arg("n", _i64),
                              _p("start", _i64), _p("length", _i64)) for t, s in _TYPE_NAMES}
SCALED_ADD = _arrays("ar_scaled_add", _p("a", _i64), Arg("scale", _i64), _p("b", _i32), Arg("n", _i64),
                     _p("out", _i64))
SUBTRACT = _arrays("ar_subtract_i64", _p("a", _i64), _p("b", _i64), Arg("n", _i64), _p("out", _i64))
SEARCH_RIGHT = {np.dtype(t): _arrays(f"ar_search_right_{s}", _p("a", t), Arg("n", _i64), Arg("value", t),
                                     _p("out", _i64)) for t, s in ((_i64, "i64"), (_f64, "f64"))}
#: Casts by (from dtype, to dtype).
CAST = {(np.dtype(_i64), np.dtype(_i32)): _arrays("ar_i64_to_i32", _p("x", _i64), Arg("n", _i64), _p("out", _i32)),
        (np.dtype(_i32), np.dtype(_i64)): _arrays("ar_i32_to_i64", _p("x", _i32), Arg("n", _i64), _p("out", _i64)),
        (np.dtype(_i64), np.dtype(_f64)): _arrays("ar_i64_to_f64", _p("x", _i64), Arg("n", _i64), _p("out", _f64))}
FILL_U64 = _arrays("ar_fill_u64", _p("out", _u64), Arg("n", _i64), Arg("value", _u64))
FILL_I32 = _arrays("ar_fill_i32", _p("out", _i32), Arg("n", _i64), Arg("value", _i32))
TAKE_SUM = _arrays("ar_take_sum_i64_i32", _p("a", _i64), _p("idx", _i32), Arg("n", _i64), _p("out", _u64))
IOTA = {np.dtype(t): _arrays(f"ar_iota_{s}", Arg("n", _i64), Arg("start", _i64), Arg("step", _i64), _p("out", t))
        for t, s in _TYPE_NAMES}
SCATTER_IOTA = _arrays("ar_scatter_iota", _p("idx", _i64), Arg("n", _i64), _p("out", _i64))
SCATTER_I32 = _arrays("ar_scatter_i32", _p("idx", _i64), _p("values", _i32), Arg("n", _i64), _p("out", _i32))
DIVMOD = _arrays("ar_divmod", _p("keys", _i64), Arg("n", _i64), Arg("d", _i64), _p("quot", _i64), _p("rem", _i32))
RUN_UPPER = _arrays("ar_run_upper", _p("ptr", _i64), _p("nbr", _i32), Arg("R", _i64), Arg("nruns", _i64),
                    _p("up", _i64))
MAX_I64 = _arrays("ar_max_i64", _p("x", _i64), Arg("n", _i64), _p("out", _u64))
AFFINE = {np.dtype(t): _arrays(f"ar_affine_{s}", _p("x", t), Arg("scale", _i64), Arg("offset", _i64),
                               Arg("floor", _i64), Arg("n", _i64), _p("out", _i64)) for t, s in _TYPE_NAMES}
POLY2 = _arrays("ar_poly2_f64", _p("x", _f64), Arg("c0", _f64), Arg("c1", _f64), Arg("c2", _f64), Arg("n", _i64),
                _p("out", _f64))
MINIMUM = _arrays("ar_minimum_i64", _p("a", _i64), _p("b", _i64), Arg("n", _i64), _p("out", _i64))
SEARCH_LEFT = _arrays("ar_search_left_f64", _p("a", _f64), Arg("m", _i64), _p("values", _f64), Arg("k", _i64),
                      _p("out", _i64))
KEY_RANGES = _arrays("ar_key_ranges", _p("keys", _i64), Arg("m", _i64), _p("base", _i64), _p("bound", _i64),
                     Arg("c0", _i64), Arg("c1", _i64), Arg("n", _i64), _p("lo", _i64), _p("length", _i64))
EQUAL_PAIRS = _arrays("ar_equal_pairs", _p("keys", _i64), Arg("n", _i64), _p("out", _u64))
WALK_SUMS = _arrays("ar_walk_sums", _p("nbr", _i32), _p("start", _i64), _p("length", _i64), _p("weights", _i64),
                    _p("vlab", _i32), Arg("label", _i32), Arg("rows", _i64), _p("out", _u64))
COUNT_MEMBERS = _arrays("ar_count_members", _p("s", _i32), Arg("m", _i64), _p("x", _i32), Arg("n", _i64),
                        _p("out", _u64))

#: Every kernel of ``arrays.cu``, by name.
ARRAY_KERNELS: dict[str, Kernel] = {k.name: k for k in (
    *SCAN_SUMS.values(), *SCAN_APPLY.values(), *SCATTER_SELECTED.values(), EXPAND, GATHER_RUNS, *TAKE.values(),
    *SPANS.values(), SCALED_ADD, SUBTRACT, *SEARCH_RIGHT.values(), *CAST.values(), FILL_U64, FILL_I32, TAKE_SUM,
    *IOTA.values(), SCATTER_IOTA, SCATTER_I32, DIVMOD, RUN_UPPER, MAX_I64, COUNT_MEMBERS, *AFFINE.values(), POLY2,
    KEY_RANGES, EQUAL_PAIRS, WALK_SUMS, MINIMUM, SEARCH_LEFT)}
