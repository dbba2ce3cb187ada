"""One memory budget split into the parts a count or a listing holds at once, from one table of bytes per entry.

A caller gives one number of bytes (``memory_budget``); the engine's stages hold different tables at different
times.  :class:`BudgetPlan` is the one place that number is cut up:

* the general join: an equal share per level, each level's chunks sized by :func:`join_entry_bytes`;
* a trial general join: chunks cut to its allowance, so that a stopped trial has read little past it;
* the candidate-edge index: built only where its scan fits half of the side's budget (:data:`SCAN_ENTRY_BYTES`),
  with a quarter for position maps and arc bit matrices (lookups);
* once the index is resident, what is left (at least an eighth) goes to the sampler's walks, and half each to the
  core join and the trailing count (:data:`CORE_ENTRY_BYTES`);
* a listing of the first ``limit`` rows: chunks sized for a few times ``limit`` rows.

A device backend with a host twin holds a budget on each side: :attr:`BudgetPlan.host` is what the count may hold
in host memory when its placement hands the index to the host (:mod:`distsm.kernels.placement`).  It is the
caller's budget when the caller gave one, never replaced behind the caller's back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

#: Bytes one output entry of the general join may occupy, before its columns: row ids, offsets, masks and
#: temporaries; each column adds :data:`JOIN_COLUMN_BYTES`.
JOIN_ENTRY_BYTES = 88
JOIN_COLUMN_BYTES = 8

#: Bytes one entry of the core join or of a trailing set may occupy (row, vertex, positions, masks, the new
#: table's row share).
CORE_ENTRY_BYTES = 64

#: Bytes one scanned adjacency entry may occupy while an arc's candidate edges are built (row ids, positions, the
#: neighbour, the mask and the kept values).
SCAN_ENTRY_BYTES = 40

#: Bytes one sampled walk may hold while a level's extension sets are sampled (tens of entries of row, vertex,
#: masks), and the most walks an estimate takes (enough for a few percent on the suites we measure).
WALK_BYTES = 4096
MAX_WALKS = 1024

#: A chunk never shrinks below this many output entries, whatever the budget (keeps tiny budgets finite).
MIN_CHUNK_ENTRIES = 64

#: A batch's candidate filter holds at most this share of its side's budget in one launch's bitsets, and a batched
#: count's scratch tables (one pair per block) at most this share: the rest is the joins'.
FILTER_SHARE = 1 / 4
BATCH_SCRATCH_SHARE = 1 / 4

#: A split index (:mod:`~distsm.kernels.split_runs`) is built while its own arrays take at most this many bytes
#: and at most :data:`SPLIT_SHARE` of the budget of the join that first asks for it; it stays as long as its index.
SPLIT_BYTES = 1 << 30
SPLIT_SHARE = 1 / 8

#: The smallest budget :meth:`BudgetPlan.listing` gives: chunks small enough to answer at once, big enough to keep
#: the per-chunk overhead low.
MIN_LISTING_BUDGET = 32 << 20


class _Budgeted(Protocol):
    def default_budget(self) -> int: ...


def join_entry_bytes(columns: int) -> int:
    """Bytes one output entry of a general-join level with ``columns`` columns may occupy, temporaries included."""
    return JOIN_ENTRY_BYTES + JOIN_COLUMN_BYTES * columns


def default_cpu_budget() -> int:
    """A quarter of physical memory, capped at 4 GiB."""
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        phys = 8 << 30
    return int(min(4 << 30, phys // 4))


def default_budget(backend: _Budgeted, memory_budget: int | None = None) -> int:
    """The budget a call on ``backend`` runs under: ``memory_budget`` when the caller gave one, else the backend's
    own default (:meth:`~distsm.kernels.backend.Backend.default_budget`: free device memory on a GPU,
    :func:`default_cpu_budget` on the host).  Every entry point asks this one function."""
    return int(memory_budget) if memory_budget is not None else int(backend.default_budget())


@dataclass(frozen=True)
class Parts:
    """What a count holds once its candidate-edge index is resident: ``left`` bytes shared by the sampler's walks,
    the core join (``core``) and the trailing count (``trailing``), each of whose chunks holds at most ``chunk``
    bytes (None: its half of ``left``)."""

    left: int
    chunk: int | None = None

    @property
    def core(self) -> int:
        return self.left // 2 if self.chunk is None else min(self.left // 2, self.chunk)

    @property
    def trailing(self) -> int:
        return self.core

    @property
    def walks(self) -> int:
        """Walks a sampler may use (at most :data:`MAX_WALKS`, at least 64)."""
        return int(min(MAX_WALKS, max(64, self.left // WALK_BYTES)))


@dataclass(frozen=True)
class BudgetPlan:
    """One call's budget: ``total`` bytes on the side it runs on, ``host`` bytes in host memory where a device
    hands work to its host twin (the same as ``total`` unless the caller set them apart)."""

    total: int
    host: int

    @classmethod
    def of(cls, budget: int | BudgetPlan) -> BudgetPlan:
        """``budget`` as a plan (an int holds on both sides)."""
        if isinstance(budget, BudgetPlan):
            return budget
        return cls(int(budget), int(budget))

    def side(self, on_host: bool) -> int:
        return self.host if on_host else self.total

    def level(self, levels: int) -> int:
        """One level's share of a general join of ``levels`` levels."""
        return max(self.total // levels, 1)

    def chunk(self, levels: int, columns: int) -> int:
        """Output entries per chunk of a general-join level with ``columns`` columns."""
        return max(self.level(levels) // join_entry_bytes(columns), MIN_CHUNK_ENTRIES)

    def trial(self, chunk_entries: int, levels: int) -> BudgetPlan:
        """The budget of a trial join whose chunks read about ``chunk_entries`` adjacency entries per level."""
        return BudgetPlan(min(self.total, chunk_entries * join_entry_bytes(levels) * levels), self.host)

    def index_fits(self, scan: int, on_host: bool = False) -> bool:
        """Whether a candidate-edge index whose build scans ``scan`` adjacency entries fits half of a side's
        budget."""
        return scan * SCAN_ENTRY_BYTES <= self.side(on_host) // 2

    def index_bytes(self, scan: int) -> int:
        return scan * SCAN_ENTRY_BYTES

    def lookups(self, on_host: bool = False) -> int:
        """Bytes for position maps and arc bit matrices while an index is built."""
        return self.side(on_host) // 4

    def after_index(self, index_bytes: int, on_host: bool = False) -> Parts:
        """The :class:`Parts` left once an index of ``index_bytes`` is resident (at least an eighth)."""
        side = self.side(on_host)
        return Parts(max(side - index_bytes, side // 8))

    def filter_bytes(self, on_host: bool = False) -> int:
        """Bytes one launch of a batch's candidate filter may hold (:data:`FILTER_SHARE` of a side)."""
        return max(int(self.side(on_host) * FILTER_SHARE), 1)

    def batch_scratch(self) -> int:
        """Bytes the scratch tables of one batched-count launch may hold on the device (:data:`BATCH_SCRATCH_SHARE`)."""
        return max(int(self.total * BATCH_SCRATCH_SHARE), 1)

    def split_room(self) -> int:
        """Bytes a split index's own arrays may take (:data:`SPLIT_BYTES`, :data:`SPLIT_SHARE`)."""
        return int(min(SPLIT_BYTES, self.total * SPLIT_SHARE))

    def listing(self, limit: int, columns: int) -> int:
        """The budget for listing the first ``limit`` rows of a ``columns``-vertex query: the join runs depth first
        over chunks, so chunks sized for a few times ``limit`` rows per level reach the first rows sooner than
        chunks sized by the whole budget (never more than it)."""
        wanted = 4 * max(limit, 1) * columns * join_entry_bytes(columns)
        return int(min(self.total, max(wanted, MIN_LISTING_BUDGET)))
