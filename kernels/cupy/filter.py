"""The candidate filter on the device: label pools against the signature table, candidate bitsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from distsm.graph import Graph
from distsm.kernels.array_ops import cumsum
from distsm.kernels.vertex_sets import restricted
from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.query_plan import Allowed
from distsm.kernels.cupy.index import IndexOps
from distsm.kernels.cuda_modules import BATCH_BLOCK, FILTER_HEAD
from distsm.kernels.cupy.launch import (BITSET_ROWS, BITSET_SET, FILTER_BATCH, FILTER_FLAGS, FILTER_SCATTER,
                                        FILTER_SMALL)
from distsm.kernels.index import DataIndex
from distsm.kernels.signature import signatures


class FilterOps(IndexOps):
    """:meth:`candidates` filters every query vertex's label pool in one launch, compacts survivors in order and
    builds all candidate bitsets at the same time (:meth:`candidates_of`: for many queries in one launch);
    :meth:`bitset` returns those (or builds one)."""

    def candidates(self, idx: DataIndex, query: Graph, *, homomorphism: bool,
                   restrict: Mapping[int, Allowed] | None = None) -> list[Any]:
        idx = self.as_gpu_index(idx)
        sets = self._filter_one(idx, query, query_info(idx, [query], homomorphism)[0], homomorphism)
        cands = list(sets)
        if sets.rows is not None:
            for u, arr in enumerate(cands):
                self._bitsets.put(arr, sets.rows[u])
        for u, allowed in (restrict or {}).items():
            cands[u] = restricted(self.xp, cands[u], allowed)
        return cands

    def _filter_one(self, idx: Any, query: Graph, info: tuple[np.ndarray, int], homomorphism: bool) -> CandidateSets:
        """The candidates of ``query`` (with its :func:`query_info`) by the one-query filter kernels, whose pools
        may be any size."""
        xp = self.xp
        nq = query.n
        qinfo, items = info
        if items == 0:
            return CandidateSets(xp.zeros(0, dtype=self.vertex_dtype), [0] * nq)
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
            scan = cumsum(flags)
            self.kernels.grid(FILTER_SCATTER, items, **head, items=items, flags=flags, scan=scan, out=out,
                              seg_counts=seg_counts, words=words, nwords=nwords)
            del flags, scan
        return CandidateSets(out, self.to_host(seg_counts).tolist(), words)

    def candidates_of(self, idx: DataIndex, queries: Sequence[Graph], *, homomorphism: bool,
                      room: int | None = None) -> list[CandidateSets]:
        """:meth:`candidates` of every query (no restriction), the same arrays, each query's as one
        :class:`~distsm.kernels.candidate_sets.CandidateSets` with its bitsets as ``rows``; the filters of queries
        whose label pools hold at most ``distsm.gpu.small-limit`` vertices run in one launch (``filter_batch``: a
        block per query), with one upload of their query signatures and pools and one copy of the candidate counts
        back.  Launches are split so that the bitsets of one take at most ``room`` bytes
        (:meth:`~distsm.kernels.budget.BudgetPlan.filter_bytes` of the caller's budget; None: one launch)."""
        if not queries:
            return []
        idx = self.as_gpu_index(idx)
        infos = query_info(idx, queries, homomorphism)
        out: list[CandidateSets | None] = []   # None: filtered by a batched launch below
        groups: list[list[int]] = [[]]
        held, limit = 0, room if room is not None else float("inf")
        bitset_bytes = 4 * ((idx.n + 31) // 32)
        for i, (query, (_, items)) in enumerate(zip(queries, infos)):
            if items == 0 or items > self.options.small_limit:
                out.append(self._filter_one(idx, query, infos[i], homomorphism))
            else:
                out.append(None)
                if groups[-1] and held + bitset_bytes * query.n > limit:
                    groups.append([])
                    held = 0
                groups[-1].append(i)
                held += bitset_bytes * query.n
        for group in groups:
            if group:
                found = self._filter_batch(idx, [queries[i] for i in group], [infos[i] for i in group], homomorphism)
                for i, cands in zip(group, found):
                    out[i] = cands
        return cast(list[CandidateSets], out)   # every None was filled by its group's launch

    def _filter_batch(self, idx: Any, queries: list[Graph], infos: list[tuple[np.ndarray, int]],
                      homomorphism: bool) -> list[CandidateSets]:
        """The candidates of ``queries`` (with their :func:`query_info`) by one ``filter_batch`` launch."""
        xp = self.xp
        nq = np.asarray([q.n for q in queries], dtype=np.int64)
        items = np.asarray([n for _, n in infos], dtype=np.int64)
        qlen = np.asarray([a.shape[0] for a, _ in infos], dtype=np.int64)
        header = np.empty((len(queries), FILTER_HEAD), dtype=np.int64)
        header[:, 0] = FILTER_HEAD * len(queries) + np.cumsum(qlen) - qlen
        header[:, 1] = nq
        header[:, 2] = items
        header[:, 3] = np.cumsum(items) - items
        header[:, 4] = np.cumsum(nq) - nq
        head = xp.asarray(np.concatenate([header.reshape(-1), *(a for a, _ in infos)]))
        nwords = (idx.n + 31) // 32
        out = xp.empty(int(items.sum()), dtype=xp.int32)
        seg_counts = xp.empty(int(nq.sum()), dtype=xp.int64)
        words = xp.empty((int(nq.sum()), nwords), dtype=xp.uint32)
        self.kernels.launch(FILTER_BATCH, len(queries), BATCH_BLOCK, by_label=idx.by_label, head=head, sig=idx.sig,
                            n=idx.n, degrees=idx.degrees, check_deg=0 if homomorphism else 1, out=out,
                            seg_counts=seg_counts, words=words, nwords=nwords)
        counts = self.to_host(seg_counts).tolist()
        return [CandidateSets(out[first:first + size], counts[v0:v0 + n], words[v0:v0 + n])
                for _, n, size, first, v0 in header.tolist()]

    def upload_candidates(self, idx: DataIndex, arrays: Sequence[np.ndarray]) -> CandidateSets:
        """:meth:`ArrayBackend.upload_candidates <distsm.kernels.array_backend.ArrayBackend.upload_candidates>`
        with every vertex's bitset row set by one launch: the values and each value's row go over in one upload (a
        host filter's candidates reach a device trial this way; one copy and one launch per vertex cost more than
        a light query's join)."""
        sizes = [int(a.shape[0]) for a in arrays]
        m = sum(sizes)
        members = np.concatenate(arrays).astype(np.int32) if m else np.zeros(0, dtype=np.int32)
        values, rows = self.upload([members, np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)])
        nwords = (idx.n + 31) // 32
        words = self.xp.zeros((len(sizes), nwords), dtype=self.xp.uint32)
        if m:
            self.kernels.grid(BITSET_ROWS, m, members=values, rows=rows, m=m, words=words, nwords=nwords)
        return CandidateSets(values, sizes, words)

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


def query_info(idx: Any, queries: Sequence[Graph], homomorphism: bool) -> list[tuple[np.ndarray, int]]:
    """``(qinfo, items)`` of each query for the filter kernels (int64 ``[lo[nq] | ioff[nq+1] | qdeg[nq] |
    qsig[SIG_WORDS * nq]]``, see ``join.cu``; ``items`` the size of its label pools), the signatures of all queries
    computed together (a query vertex's signature depends on its own adjacency only)."""
    sizes = np.asarray([q.n for q in queries], dtype=np.int64)
    degrees = np.concatenate([np.asarray(q.degrees, np.int64) for q in queries])
    labels = np.concatenate([np.asarray(q.vertex_labels, np.int64) for q in queries])
    total = int(sizes.sum())
    qsig = signatures(np, total, np.arange(total).repeat(degrees),
                      np.concatenate([np.asarray(q.neighbor_labels) for q in queries]),
                      np.concatenate([q.vertex_labels[np.asarray(q.neighbors, np.int64)] for q in queries]),
                      presence_only=homomorphism)
    bounds = np.asarray([idx.label_bounds.get(lab, (0, 0)) for lab in labels.tolist()], dtype=np.int64).reshape(-1, 2)
    lo, pool = bounds[:, 0], bounds[:, 1] - bounds[:, 0]
    out = []
    for a, b in zip((np.cumsum(sizes) - sizes).tolist(), np.cumsum(sizes).tolist()):
        ioff = np.zeros(b - a + 1, np.int64)
        np.cumsum(pool[a:b], out=ioff[1:])
        out.append((np.concatenate([lo[a:b], ioff, degrees[a:b], np.asarray(qsig[:, a:b], np.int64).reshape(-1)]),
                    int(ioff[-1])))
    return out
