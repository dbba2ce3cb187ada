"""Tuning options: the one place distsm reads them, from ``dask.config`` under the ``distsm`` key.

Defaults live in ``distsm/distsm.yaml`` and are registered with :func:`dask.config.update_defaults` (the Dask
idiom), so a Dask config file, ``dask.config.set`` or an environment variable (``DASK_DISTSM__GPU__PINNED=False``)
overrides them.  :func:`options` sets some for a block of code, checking their names and values.  Readers call
:func:`gpu_options` / :func:`engine_options` at the time they decide; both cost a dictionary comparison while the
configuration is unchanged.  A request (every public entry point, every task of a cluster batch) runs under one
:func:`snapshot` of the options taken when it starts, so its stages all see the same values, whatever another
thread sets meanwhile; :func:`options` inside it takes effect for its block.  Dask is imported on the first read,
which keeps ``import distsm`` light.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any, Literal, TypeVar, cast

from distsm import caches

LoadBalance = Literal["entry", "tiered"]
LOAD_BALANCE: tuple[LoadBalance, ...] = ("entry", "tiered")
TrailingBits = Literal["auto", "always", "never"]
TRAILING_BITS: tuple[TrailingBits, ...] = ("auto", "always", "never")


@dataclass(frozen=True)
class GpuOptions:
    """Options of the CuPy backend (``distsm.gpu.*``; defaults in ``distsm.yaml``, the README's table says what
    each does)."""

    fuse_levels: bool
    load_balance: LoadBalance
    pinned: bool
    small_limit: int
    descend_limit: int
    pcsr: bool
    tier_limits: tuple[int, int] | None
    #: the fused trailing count by bit rows where they read fewer words than the runs' walk and probes
    #: ("auto"), wherever they fit ("always") or never
    trailing_bits: TrailingBits = "auto"

    def __post_init__(self) -> None:
        for name, allowed in (("load_balance", LOAD_BALANCE), ("trailing_bits", TRAILING_BITS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"distsm.gpu.{name.replace('_', '-')} must be one of "
                                 f"{', '.join(map(repr, allowed))}, got {getattr(self, name)!r}")
        for name in ("small_limit", "descend_limit"):
            if getattr(self, name) < 0:
                raise ValueError(f"distsm.gpu.{name.replace('_', '-')} must be >= 0, got {getattr(self, name)!r}")
        if self.tier_limits is not None and (len(self.tier_limits) != 2 or min(self.tier_limits) < 1):
            raise ValueError(f"distsm.gpu.tier-limits must be null or two positive integers, got {self.tier_limits!r}")


@dataclass(frozen=True)
class EngineOptions:
    """Options of the join driver (``distsm.engine.*``)."""

    host_work: float
    #: adjacency entries per query vertex a count's trial general join may always read before it is stopped
    trial_entries: int
    #: allowance per adjacency entry that refinement would scan, for a trial on the host and on a device
    trial_ratio_host: float
    trial_ratio_device: float
    #: adjacency entries per query vertex a device backend's first trial on its host may read: about what the host
    #: reads in the time the device's join of a light query takes (benchmarks/trial_placement.py measures both)
    trial_host_entries: int
    #: ... and only for queries whose filter left at most this many candidates in all (past it the host's trial
    #: seldom finishes and costs the device's join its own time: benchmarks/trial_placement.py fits both)
    trial_host_candidates: int
    #: adjacency entries above which a device backend refines candidates on the device instead of the host
    device_refine: int
    #: bytes one chunk of a core join or trailing count on the host may hold
    host_chunk_bytes: int
    #: a device backend filters on its host when the query's label pools hold at most this many data vertices
    host_filter_vertices: int = 10240
    #: measured arc selectivity (kernels/dfs.py) from which a count takes the depth-first set-intersection search
    dfs_selectivity: float = 0.15
    #: whether the host's search (the device kernel's reference) is taken unasked too (CPU workers, tests); a
    #: shortcut's closed form (4-cycles, 5-paths) is taken unasked either way
    dfs_host: bool = False
    #: walks a counting plan's sampler draws at most (its memory share may allow fewer)
    plan_walks: int = 1024
    #: sampling a plan bound for a device is worth at most this share of the time it is predicted to take there
    plan_share_device: float = 0.3

    def __post_init__(self) -> None:
        if self.host_chunk_bytes < 1:
            raise ValueError(f"distsm.engine.host-chunk-bytes must be >= 1, got {self.host_chunk_bytes!r}")
        if self.plan_walks < 1:
            raise ValueError(f"distsm.engine.plan-walks must be >= 1, got {self.plan_walks!r}")
        for name in ("trial_entries", "trial_ratio_host", "trial_ratio_device", "trial_host_entries",
                     "trial_host_candidates", "device_refine", "host_filter_vertices", "dfs_selectivity",
                     "plan_share_device"):
            if getattr(self, name) < 0:
                raise ValueError(f"distsm.engine.{name.replace('_', '-')} must be >= 0, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class ClusterOptions:
    """Options of the Dask layer (``distsm.cluster.*``)."""

    #: device bytes each worker may hold (its parts, the whole graph's index when it fits, the join); None: the
    #: device's free memory on GPU workers, half the host's memory on CPU workers
    device_budget: int | None
    #: host allocations up to this many bytes come from the heap in worker processes, which keep twice it free at the
    #: heap's top (glibc's mmap and trim thresholds; see ``distsm.cluster.allocator``); None leaves the allocator as
    #: the worker was started
    mmap_threshold: int | None
    #: a query sent whole to a worker is split into slices over the cluster when its counting plan is estimated at
    #: this much work or more, one slice per this much work (entries read and written; see
    #: ``distsm.cluster.tasks.wholes``)
    split_work: float
    #: ... but only a query whose counting plan is estimated at this much work or more (and at ``split_work`` or
    #: more) is split at all
    split_threshold: float
    #: GPU workers run :func:`distsm.warm.warm_process` when they load their first part
    warm_workers: bool = True

    def __post_init__(self) -> None:
        if self.device_budget is not None and self.device_budget <= 0:
            raise ValueError(f"distsm.cluster.device-budget must be null or a positive number of bytes, "
                             f"got {self.device_budget!r}")
        if self.split_work < 0:
            raise ValueError(f"distsm.cluster.split-work must be >= 0, got {self.split_work!r}")
        if self.split_threshold < 0:
            raise ValueError(f"distsm.cluster.split-threshold must be >= 0, got {self.split_threshold!r}")
        if self.mmap_threshold is not None and not 0 < self.mmap_threshold <= 32 << 20:
            raise ValueError(f"distsm.cluster.mmap-threshold must be null or 1 to {32 << 20} bytes, "
                             f"got {self.mmap_threshold!r}")


_Opts = TypeVar("_Opts", GpuOptions, EngineOptions, ClusterOptions)
_F = TypeVar("_F", bound=Callable[..., Any])
_SECTIONS: dict[str, type] = {"gpu": GpuOptions, "engine": EngineOptions, "cluster": ClusterOptions}
_dask_config: Any = None
_defaults: dict[str, Any] = {}
_PARSED = caches.cache("parsed options", "section name -> (the raw values, the options parsed from them)")
#: The options the running request took when it started (section name -> options; None: outside any request).
class _Running(threading.local):
    """The options the request running in this thread took (section name -> options; None outside any request),
    with ``ContextVar``'s ``get``, ``set`` and ``reset``.  Not a ``ContextVar``: while one is set, every NumPy
    operation looks its error state up in a non-empty context, about 30 ns more each (several microseconds of a
    light count).  Requests run in one thread (a Dask task's as well), and a lazy result re-enters its snapshot
    around each item (:func:`restored`)."""

    taken: dict[str, Any] | None = None

    def get(self) -> dict[str, Any] | None:
        return self.taken

    def set(self, taken: dict[str, Any] | None) -> dict[str, Any] | None:
        before, self.taken = self.taken, taken
        return before

    def reset(self, before: dict[str, Any] | None) -> None:
        self.taken = before


_SNAPSHOT = _Running()


def _config() -> Any:
    """``dask.config`` with distsm's defaults registered (once)."""
    global _dask_config
    if _dask_config is None:
        import dask.config
        import yaml

        _defaults.update(yaml.safe_load((resources.files("distsm") / "distsm.yaml").read_text())["distsm"])
        dask.config.update_defaults({"distsm": _defaults})
        _dask_config = dask.config
    return _dask_config


def _convert(cls: type, name: str, value: Any) -> Any:
    kind = {f.name: f.type for f in fields(cls)}[name]
    if kind == "bool":
        # Environment variables arrive parsed by Dask ("0" as 0, "False" as False); a string is taken at its word.
        if isinstance(value, str):
            return value.strip().lower() not in ("0", "false", "no", "off", "")
        return bool(value)
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "int | None":
        return None if value is None else int(value)
    if name == "tier_limits":
        return None if value is None else tuple(int(x) for x in value)
    return value


def _section(name: str, cls: type[_Opts]) -> _Opts:
    taken = _SNAPSHOT.get()
    return cast(_Opts, taken[name]) if taken is not None else _configured(name, cls)


def _configured(name: str, cls: type[_Opts]) -> _Opts:
    # Over the defaults, not instead of them: a ``dask.config.set`` block entered before they were registered
    # deletes the whole ``distsm`` key on its way out, as it found none.
    current = _config().config.get("distsm", {}).get(name) or {}
    seen = _PARSED.get(caches.GLOBAL, name)
    if seen is not None and seen[0] == current:
        return cast(_Opts, seen[1])
    raw = {**_defaults.get(name, {}), **current}
    known = {f.name for f in fields(cls)}
    values = {}
    for key, value in raw.items():
        attr = key.replace("-", "_")
        if attr not in known:
            raise ValueError(f"unknown option distsm.{name}.{key}; known: "
                             f"{', '.join(sorted(k.replace('_', '-') for k in known))}")
        values[attr] = _convert(cls, attr, value)
    opts = cls(**values)
    _PARSED.put(caches.GLOBAL, (dict(current), opts), name)
    return opts


def gpu_options() -> GpuOptions:
    """The CuPy backend's options as configured now."""
    return _section("gpu", GpuOptions)


def engine_options() -> EngineOptions:
    """The join driver's options as configured now."""
    return _section("engine", EngineOptions)


def cluster_options() -> ClusterOptions:
    """The Dask layer's options as configured now."""
    return _section("cluster", ClusterOptions)


@contextmanager
def options(values: Mapping[str, Any] | None = None, **kwargs: Any) -> Iterator[None]:
    """Set options for the ``with`` block, e.g. ``with distsm.options({"gpu.fuse-levels": False}):``.

    Keys are ``section.name`` below ``distsm`` (``gpu.pinned``, ``engine.host-work``; keyword arguments use
    ``gpu__pinned`` for the same).  An unknown name or a bad value raises ``ValueError`` before anything is
    set; the previous values come back when the block exits."""
    merged = dict(values or {})
    merged.update({k.replace("__", "."): v for k, v in kwargs.items()})
    for key, value in merged.items():
        section, _, name = key.partition(".")
        cls = _SECTIONS.get(section)
        attr = name.replace("-", "_")
        if cls is None or attr not in {f.name for f in fields(cls)}:
            raise ValueError(f"unknown option {key!r}; known: " + ", ".join(
                f"{s}.{f.name.replace('_', '-')}" for s, c in _SECTIONS.items() for f in fields(c)))
        replace(_section(section, cls), **{attr: _convert(cls, attr, value)})  # validates the value
    with _config().set({f"distsm.{k}": v for k, v in merged.items()}):
        outer = _SNAPSHOT.get()
        if outer is None:
            yield
            return
        # A request's block sees what it sets; the sections it leaves alone stay as the request took them.
        touched = {key.partition(".")[0] for key in merged}
        token = _SNAPSHOT.set(_Taken({**outer, **{name: _configured(name, _SECTIONS[name]) for name in touched}}))
        try:
            yield
        finally:
            _SNAPSHOT.reset(token)


class _Taken(dict[str, Any]):
    """A request's options by section, each taken from the configuration when the request first reads it: a count
    that reads one section does not parse the others.  Nothing of the caller's runs inside a request but its
    progress callback, so a section taken late reads what one taken at the start would have; :meth:`complete` takes
    the rest at once where the request hands out a lazy result."""

    def __missing__(self, name: str) -> Any:
        value = self[name] = _configured(name, _SECTIONS[name])
        return value

    def complete(self) -> _Taken:
        for name in _SECTIONS:
            self[name]  # noqa: B018 (taken by __missing__)
        return self


@contextmanager
def snapshot() -> Iterator[dict[str, Any]]:
    """Run the block as one request: every read of the options in it (in this thread or task) sees the values
    configured as it starts, unless :func:`options` sets some for a block inside it.  Inside another snapshot it
    keeps that one.  Yields the snapshot (section name -> options), which :func:`restored` re-enters."""
    taken = _SNAPSHOT.get()
    if taken is not None:
        yield taken
        return
    taken = _Taken().complete()
    token = _SNAPSHOT.set(taken)
    try:
        yield taken
    finally:
        _SNAPSHOT.reset(token)


def under_snapshot(function: _F) -> _F:
    """``function`` run as one request (:func:`snapshot`); an iterator it returns keeps the snapshot while it is
    consumed (:func:`restored`)."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        # snapshot() spelled out: its generator-based context manager costs a light count a few microseconds.
        taken = _SNAPSHOT.get()
        if taken is None:
            taken = _Taken()
            token = _SNAPSHOT.set(taken)
            try:
                result = function(*args, **kwargs)
            finally:
                _SNAPSHOT.reset(token)
        else:
            result = function(*args, **kwargs)
        if not isinstance(result, Iterator):
            return result
        # The caller may change the options before consuming it: take every section now.
        return restored(taken.complete() if isinstance(taken, _Taken) else taken, result)

    return cast(_F, call)


def restored(taken: dict[str, Any], items: Iterator[Any]) -> Iterator[Any]:
    """``items`` produced under the snapshot ``taken``: a lazy result of a request (an iterator of matches) keeps the
    options its request started with while the caller consumes it."""
    while True:
        token = _SNAPSHOT.set(taken)
        try:
            item = next(items)
        except StopIteration:
            return
        finally:
            _SNAPSHOT.reset(token)
        yield item
