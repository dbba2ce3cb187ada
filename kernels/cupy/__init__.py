"""The GPU backend: the :class:`~distsm.kernels.array_backend.ArrayBackend` interface on CuPy, with the hot path
as RawModule kernels (``kernels/cuda/*.cu``, loaded from the fatbins the build compiled ahead,
:mod:`distsm.kernels.cuda_modules`; compiled by NVRTC on first use where there are none).

One module per concern, each a layer of :class:`CupyBackend`:

* :mod:`.launch`: one typed description per kernel, the loaded modules and launches with named arguments.
* :mod:`.staging`: page-locked host slots that the single-block kernels read and write in place (zero copy).
* :mod:`.pool`: the most device bytes the process had in use (a watch on CuPy's pool), which budgets bound.
* :mod:`.base`: the state every layer shares: options (``distsm.gpu.*``), launcher, weak caches, budget.
* :mod:`.index`: :class:`GpuIndex`, the device index with its PCSR-style hash of (vertex, effective label) ->
  run (open addressing, 16 eight-byte slots = one 128-byte group per lookup), built on the GPU when the graph
  has more than one effective label, plus the vertices sorted by label; build and upload times are in
  ``index.stats`` (and ``backend.last_index_stats``).
* :mod:`.filter`: candidates and their bitsets in one launch against the column-major signature table.
* :mod:`.join`: workloads and the extend paths (fused single block, entry-parallel, tiered by row workload).
* :mod:`.descent`: the fused descent, every level that fits one block in one launch.
* :mod:`.batch`: the fused descents of many prepared queries in one launch, a block per query.
* :mod:`.dfs`: the depth-first set-intersection search (``dfs.cu``), a warp per task.
* :mod:`.array_ops`: ``join.cu`` kernels behind :mod:`distsm.kernels.array_ops` (``bincount``, ``count_true``) for
  device arrays, registered when the backend starts: CuPy's own compile a reduction per array-size class.

Every device array comes from CuPy's default memory pool and is released when the query's objects die
(per-step programs and precomputed bitsets are tied to the lifetime of the plan step / candidate array through
weak references), so nothing accumulates across queries.  Importing this package needs no CuPy; constructing
the backend does (:func:`distsm.kernels.get_backend` is the one place that does).
"""

from __future__ import annotations

from distsm.kernels.cupy.batch import BatchOps
from distsm.kernels.cupy.descent import DescentOps
from distsm.kernels.cupy.dfs import DfsOps
from distsm.kernels.cupy.filter import FilterOps
from distsm.kernels.cupy.index import GpuIndex
from distsm.kernels.cupy.staging import staging_selftest
from distsm.kernels.cupy.trailing import TrailingOps


class CupyBackend(DfsOps, TrailingOps, FilterOps, DescentOps, BatchOps):
    """Backend on one CUDA device through CuPy (``xp = cupy``)."""


__all__ = ["CupyBackend", "GpuIndex", "staging_selftest"]
