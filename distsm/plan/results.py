"""What a query's jobs found and the query's result: :class:`JobResult` per job (a count or rows, and its cost),
:class:`Heavy` where a whole query's worker finds it too heavy to count alone, and :func:`merge`, which combines
one query's job results into its :class:`QueryResult`, the same in process and on a cluster."""

from __future__ import annotations

import time
import traceback as tb
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from distsm.kernels.dfs import SearchShare
from distsm.plan.inter import InterPartitionPlan, Strategy
from distsm.plan.split import SharedPlan
from distsm.semantics import Semantics

#: The statuses a :class:`QueryResult` may have.
STATUSES = ("ok", "timeout", "cancelled", "error")


@dataclass(frozen=True)
class AdjacencyChoice:
    """Where a site reads the whole graph's adjacency (``mode``: ``"device"``, ``"host"`` or ``"gather"``; see
    :class:`~distsm.residency.Residency`) and why (``reason``, in words)."""

    mode: str
    reason: str = ""


@dataclass
class JobResult:
    """What one :class:`Job` found: a count (or the rows it listed) and its cost."""

    stage: str
    part: int | None
    count: int
    rows: np.ndarray | None
    seconds: float
    worker: str
    partial_matches: int = 0     # partial matches produced (the work measure PBE reports); spanning searches
    gathered_bytes: int = 0      # adjacency read by spanning searches (4 bytes per entry scanned)
    bytes_h2d: int = 0           # out of core: part indexes and gathered adjacency copied to the device
    device_bytes: int = 0        # the site's peak device bytes after the job (as far as its backend knows them)
    adjacency: AdjacencyChoice | None = None  # where the site read the whole graph's adjacency, and why
    heavy: Heavy | None = None   # a whole query found too heavy to count alone (then count is 0), and why
    #: a slice of a unique count: ``count`` is embeddings, and the query's matches are the sum over its slices
    #: divided by this (``|Aut(Q)|``; see :mod:`distsm.plan.split`)
    automorphisms: int | None = None
    #: of ``seconds``, what a slice spent before counting: its shared plan's index built where it runs (see
    #: :meth:`PlanCache.shared_index`), or the slices cut by the worker that found the query heavy
    setup_seconds: float = 0.0


@dataclass
class QueryResult:
    """The outcome of one query, in process or on a cluster.

    ``count`` is the number of matches (or of listed rows, with ``rows``).  A PBE plan's count is
    ``sum(intra) + inter`` (``intra`` per part); a global plan counted every match in one join over the whole
    graph, and then ``intra`` and ``inter`` are None (:attr:`runs` says which).  ``semantics`` and ``plan`` name
    what was computed.  ``distribution`` says how a cluster spread the query: ``"whole"`` (one job on one worker)
    or ``"sliced"`` (its jobs and slices over the workers), and ``distribution_reason`` why; ``peak_device_bytes``
    is each worker's peak device bytes as of its last job for the query, and ``bytes_h2d`` the bytes the query
    moved host to device (out of core).  ``seconds`` holds ``plan``, ``intra`` and ``inter`` (each summed over the
    query's jobs), ``inter_slice_max`` (its longest spanning job or slice), ``inter_setup`` (of ``inter``, what
    slicing cost before its slices counted) and ``merge``.  A query that did not finish has ``status``
    ``"timeout"``, ``"cancelled"`` or ``"error"`` and no count; an error keeps its ``exception`` and formatted
    ``traceback``.
    """

    query: str
    status: str = "ok"
    count: int | None = None
    rows: np.ndarray | None = None
    semantics: Semantics | None = None
    plan: InterPartitionPlan | None = None
    partitions: int | None = None
    intra: list[int] | None = None
    inter: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    partial_matches: int = 0
    gathered_bytes: int = 0
    bytes_h2d: int = 0
    workers: list[str] = field(default_factory=list)
    peak_device_bytes: dict[str, int] = field(default_factory=dict)
    #: per worker, where it read the whole graph's adjacency and why
    adjacency: dict[str, AdjacencyChoice] = field(default_factory=dict)
    distribution: str | None = None
    distribution_reason: str = ""
    error: str | None = None
    exception: BaseException | None = None
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def strategy(self) -> Strategy | None:
        return None if self.plan is None else self.plan.strategy

    @property
    def regime(self) -> str | None:
        """Where the graph lived while the query ran and why, in words (None where no job reported it)."""
        modes = {c.mode for c in self.adjacency.values()}
        if not modes:
            return None
        why = "; ".join(sorted({c.reason for c in self.adjacency.values() if c.reason}))
        if modes == {"device"}:
            where = "in core: the whole graph's index on each device"
        else:
            ways = {"host": "read in place from host memory", "gather": "gathered per table chunk into device memory"}
            where = ("out of core: each device holds the per-vertex arrays and the parts it searches, the adjacency "
                     + " or ".join(ways[m] for m in sorted(modes - {"device"})))
        return f"{where} ({why})" if why else where

    @property
    def runs(self) -> str | None:
        """What ran, in words (None for a query that did not finish)."""
        if not self.ok:
            return None
        if self.intra is None:
            return "one join over the whole graph counting every match"
        return f"intra-partition joins of {len(self.intra)} parts plus spanning searches"

    def summary(self) -> dict[str, Any]:
        """JSON-ready: the query, status, count, semantics, plan, split and timings (no rows)."""
        out: dict[str, Any] = {"query": self.query, "status": self.status, "count": self.count,
                               "seconds": {k: round(v, 6) for k, v in self.seconds.items()}}
        if self.semantics is not None:
            out["semantics"] = self.semantics.as_dict()
        if self.ok:
            out.update(strategy=None if self.strategy is None else self.strategy.value, runs=self.runs,
                       intra=None if self.intra is None else sum(self.intra), inter=self.inter,
                       partitions=self.partitions, distribution=self.distribution, regime=self.regime,
                       bytes_h2d=self.bytes_h2d, gathered_bytes=self.gathered_bytes,
                       peak_device_bytes=max(self.peak_device_bytes.values(), default=0))
        else:
            out["error"] = self.error
        return out

    @classmethod
    def failed(cls, query: str, status: str, error: str, exception: BaseException | None = None) -> QueryResult:
        """The result of a query that did not finish (``status`` ``"timeout"``, ``"cancelled"``, ``"error"``)."""
        if status not in STATUSES[1:]:
            raise ValueError(f"not a failure status: {status!r}")
        trace = None
        if exception is not None and exception.__traceback__ is not None:
            trace = "".join(tb.format_exception(type(exception), exception, exception.__traceback__))
        return cls(query, status, error=error, exception=exception, traceback=trace)


@dataclass(frozen=True)
class Heavy:
    """A whole query whose counting plan is estimated too heavy to count alone: its worker splits it instead, by
    ``shared`` (its plan and candidate-edge index) where it has one, else (a count that takes the general join)
    by slices of the global join that plan themselves."""

    reason: str
    shared: SharedPlan | None = None
    #: a count that takes the depth-first search: the ranges of its tasks the cluster counts apart
    search: SearchShare | None = None
    #: a count that takes the general join: its count from the stages that found it heavy, where its worker keeps
    #: it whole after all (its trial and plan are not run again)
    resume: Callable[[], int] | None = None


def concat_rows(chunks: Iterable[np.ndarray], columns: int) -> np.ndarray:
    """One ``int64[rows, columns]`` array of row chunks (empty when there are none)."""
    rows = list(chunks)
    return np.concatenate(rows) if rows else np.zeros((0, columns), np.int64)


@dataclass(frozen=True)
class Listing:
    """A query whose jobs listed their matches: rows of ``columns`` vertices (the query's), at most ``limit`` of
    them kept (None: all)."""

    columns: int
    limit: int | None = None


def merge(query: str, sem: Semantics, plan: InterPartitionPlan, k: int, results: list[JobResult], *,
          listing: Listing | None = None, plan_seconds: float = 0.0) -> QueryResult:
    """Combine the results of one query's jobs into its :class:`QueryResult` (``listing``: their rows, else their
    counts)."""
    t = time.perf_counter()
    intra = sorted((p for p in results if p.stage == "intra"), key=lambda p: p.part or 0)  # intra jobs name parts
    inter = [p for p in results if p.stage == "inter"]
    seconds = {"plan": plan_seconds, "intra": sum(p.seconds for p in intra), "inter": sum(p.seconds for p in inter),
               # the longest slice bounds how well the spanning search spreads over workers
               "inter_slice_max": max((p.seconds for p in inter), default=0.0),
               # what slicing cost before the slices counted (indexes built where they run, the cuts)
               "inter_setup": sum(p.setup_seconds for p in inter)}
    result = QueryResult(query, "ok", semantics=sem, plan=plan, partitions=k, seconds=seconds,
                         partial_matches=sum(p.partial_matches for p in inter),
                         gathered_bytes=sum(p.gathered_bytes for p in inter),
                         bytes_h2d=sum(p.bytes_h2d for p in results), workers=sorted({p.worker for p in results}))
    for p in results:
        result.peak_device_bytes[p.worker] = max(result.peak_device_bytes.get(p.worker, 0), p.device_bytes)
        if p.adjacency is not None:
            result.adjacency[p.worker] = p.adjacency
    if intra:
        result.intra = [p.count for p in intra]
        result.inter = sum(p.count for p in inter)
    if listing is not None:
        rows = concat_rows((p.rows for p in intra + inter if p.rows is not None and p.rows.shape[0]),
                           listing.columns)
        result.rows = rows if listing.limit is None else rows[:listing.limit]
        result.count = int(result.rows.shape[0])
    else:
        result.count = sum(p.count for p in results if p.automorphisms is None)
        embeddings = [(p.count, p.automorphisms) for p in results if p.automorphisms is not None]
        if embeddings:
            total, automorphisms = sum(c for c, _ in embeddings), embeddings[0][1]
            if total % automorphisms:
                raise RuntimeError(f"{query}: its slices found {total} embeddings, not a multiple of |Aut| = "
                                   f"{automorphisms}")
            result.count += total // automorphisms
    seconds["merge"] = time.perf_counter() - t
    return result
