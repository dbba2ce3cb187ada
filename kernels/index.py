"""Search structures built once per data graph and kept on the backend's device.

The CSR rows are sorted by (effective label, neighbour).  A *run* is the sorted slice ``N(v, e)``; runs are
numbered in storage order, so ``run_id * n + neighbour`` is globally sorted and one binary search over it answers
"is ``y`` in ``N(x, e)``?" (the CPU analogue of GSI's PCSR lookup).  ``pair_keys`` (``v * n + neighbour`` over all
labels, sorted) counts the adjacency entries between two vertices, which induced matching needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import array_ops
from distsm.kernels.signature import signatures


@dataclass(frozen=True)
class DataIndex:
    """Device-resident structures of one data graph (arrays belong to ``xp``)."""

    n: int
    num_labels: int               # effective labels in use (runs are per row when this is 1)
    vertex_labels: Any            # int32[n]
    degrees: Any                  # int64[n]
    nbr: Any                      # int32[nnz]
    indptr: Any                   # int64[n+1]
    run_keys: Any                 # int64[runs]  v * num_labels + e, sorted (None when num_labels == 1)
    run_start: Any                # int64[runs]
    run_end: Any                  # int64[runs]
    entry_keys: Any               # int64[nnz]  run_id * n + neighbour, sorted
    pair_keys: Any                # int64[nnz]  v * n + neighbour, sorted (is entry_keys when num_labels == 1)
    sig: Any                      # uint32[SIG_WORDS, n]
    label_entries: dict[int, int]  # effective label -> adjacency entries (host)
    vertices_by_label: dict[int, Any]  # vertex label -> int32 vertex ids (device)
    nbytes: int


def estimate_index_bytes(n: int, nnz: int, labelled: bool) -> int:
    """Upper bound on the device bytes of a graph's index with ``n`` vertices and ``nnz`` adjacency entries:
    per vertex labels, degrees, offsets, signature and the by-label order; per entry neighbour and keys; per run
    (at most one per entry when several effective labels exist) bounds, key and hash slots."""
    per_entry = 20 + (56 if labelled else 0)
    return 44 * n + per_entry * nnz


def estimate_core_bytes(n: int) -> int:
    """Upper bound on the device bytes an out-of-core search keeps for the whole graph whatever the part: the
    index's per-vertex arrays (see :func:`estimate_index_bytes`) and the part of every vertex."""
    return 48 * n


def csr_of_index(idx: DataIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjacency ``(indptr, neighbours, each entry's effective label)`` as :class:`~distsm.graph.Graph` keeps
    it, from a host index of the graph (its runs group each row's entries by label)."""
    nnz = int(idx.nbr.shape[0])
    if idx.run_keys is None:  # one effective label: 0 (zeros from calloc touch no page until read)
        labels = np.zeros(nnz, dtype=np.int32)
    else:
        labels = np.repeat((np.asarray(idx.run_keys) % idx.num_labels).astype(np.int32),
                           np.asarray(idx.run_end) - np.asarray(idx.run_start))
    return np.asarray(idx.indptr), np.asarray(idx.nbr), labels


def build_index(graph: Graph, xp: Any) -> DataIndex:
    """Build the :class:`DataIndex` of ``graph`` on the host and move it to ``xp``'s device."""
    n, nnz = graph.n, graph.nnz
    L = graph.num_effective_labels
    rows = np.repeat(np.arange(n, dtype=np.int64), graph.degrees)
    nbr = graph.neighbors.astype(np.int64)
    elab = graph.neighbor_labels.astype(np.int64)
    if L == 1:
        run_keys = None
        run_start = np.asarray(graph.indptr[:-1])
        run_end = np.asarray(graph.indptr[1:])
        entry_keys = rows * n + nbr
        pair_keys = entry_keys
    else:
        rk = rows * L + elab
        first = np.ones(nnz, bool)
        first[1:] = rk[1:] != rk[:-1]
        starts = np.flatnonzero(first)
        run_keys = rk[starts]
        run_start = starts.astype(np.int64)
        run_end = np.append(starts[1:], nnz).astype(np.int64)
        run_id = np.cumsum(first) - 1
        entry_keys = run_id * n + nbr
        pair_keys = np.sort(rows * n + nbr)
    # Effective labels are 0..L-1: counted, not sorted (np.unique sorted every entry: seconds at 64M edges).
    per_label = np.bincount(elab, minlength=L)
    labs = np.flatnonzero(per_label)
    cnt = per_label[labs]
    vlab = np.asarray(graph.vertex_labels)
    order = np.argsort(vlab, kind="stable")
    ulab, first_pos = np.unique(vlab[order], return_index=True)
    bounds = np.append(first_pos, n)
    sig = signatures(np, n, rows, elab, vlab[nbr])
    host = dict(
        vertex_labels=vlab, degrees=np.asarray(graph.degrees), nbr=np.asarray(graph.neighbors),
        indptr=np.asarray(graph.indptr), run_keys=run_keys, run_start=run_start, run_end=run_end,
        entry_keys=entry_keys, pair_keys=pair_keys, sig=sig,
    )
    dev = {k: (None if v is None else xp.asarray(v)) for k, v in host.items()}
    if L == 1:
        dev["pair_keys"] = dev["entry_keys"]
    by_label = {int(lab): xp.asarray(order[bounds[i]:bounds[i + 1]].astype(np.int32)) for i, lab in enumerate(ulab)}
    nbytes = sum(int(v.nbytes) for k, v in dev.items() if v is not None and not (k == "pair_keys" and L == 1))
    nbytes += n * 4
    return DataIndex(n=n, num_labels=L, label_entries={int(a): int(b) for a, b in zip(labs, cnt)},
                     vertices_by_label=by_label, nbytes=nbytes, **dev)


def entry_run_keys(idx: DataIndex, xp: Any) -> Any:
    """Each adjacency entry's run key ``v * num_labels + e`` (int64; ``idx`` has several effective labels): each
    run of the index holds one effective label, so its entries number back to it."""
    run, _ = array_ops.expand(array_ops.subtract(xp.asarray(idx.run_end), xp.asarray(idx.run_start)))
    return array_ops.take(xp.asarray(idx.run_keys), run)


def memory_mapped(a: Any) -> bool:
    """Whether ``a`` is a NumPy memory map or a view of one (its pages are a file's, shared through the page cache)."""
    return isinstance(a, np.memmap) or isinstance(getattr(a, "base", None), np.memmap)


def index_to(index: DataIndex, xp: Any) -> DataIndex:
    """The same index with its arrays on ``xp``'s device (e.g. a memory-mapped NumPy index moved to a GPU)."""
    import dataclasses

    moved = {f.name: getattr(index, f.name) for f in dataclasses.fields(index)}
    copies: dict[int, Any] = {}
    for name, value in moved.items():
        if isinstance(value, np.ndarray):
            # An array the index holds twice (pair_keys is entry_keys with one effective label) is copied once.
            if id(value) not in copies:
                copies[id(value)] = xp.asarray(value)
            moved[name] = copies[id(value)]
    moved["vertices_by_label"] = {k: xp.asarray(v) for k, v in index.vertices_by_label.items()}
    return DataIndex(**moved)
