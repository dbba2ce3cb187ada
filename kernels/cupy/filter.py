"""The candidate filter on the device: label pools against the signature table, candidate bitsets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.array_backend import restricted
from distsm.kernels.records import Allowed
from distsm.kernels.cupy.index import IndexOps
from distsm.kernels.cupy.launch import BITSET_SET, FILTER_FLAGS, FILTER_SCATTER, FILTER_SMALL
from distsm.kernels.index import DataIndex
from distsm.kernels.signature import signatures


class FilterOps(IndexOps):
    """:meth:`candidates` filters every query vertex's label pool in one launch, compacts survivors in order and
    builds all candidate bitsets at the same time; :meth:`bitset` returns those (or builds one)."""

    def candidates(self, idx: DataIndex, query: Graph, *, homomorphism: bool,
                   restrict: Mapping[int, Allowed] | None = None) -> list[Any]:
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
        check_deg = 0 if homomorphism else 1
        head = dict(by_label=idx.by_label, qinfo=dq, nq=nq)
        if items <= self.options.small_limit:
            words = xp.empty((nq, nwords), dtype=xp.uint32)
            seg_counts = xp.empty(nq, dtype=xp.int64)
            self.kernels.single(FILTER_SMALL, **head, sig=idx.sig, n=idx.n, degrees=idx.degrees, check_deg=check_deg,
                                items=items, out=out, seg_counts=seg_counts, words=words, nwords=nwords)
        else:
            words = xp.zeros((nq, nwords), dtype=xp.uint32)
            seg_counts = xp.zeros(nq, dtype=xp.int64)
            flags = xp.empty(items, dtype=xp.int32)
            self.kernels.grid(FILTER_FLAGS, items, **head, sig=idx.sig, n=idx.n, degrees=idx.degrees,
                              check_deg=check_deg, items=items, flags=flags)
            scan = xp.cumsum(flags, dtype=xp.int64)
            self.kernels.grid(FILTER_SCATTER, items, **head, items=items, flags=flags, scan=scan, out=out,
                              seg_counts=seg_counts, words=words, nwords=nwords)
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
            self.kernels.grid(BITSET_SET, m.shape[0], members=m, m=m.shape[0], words=words)
        return words
