"""The candidates of one query's vertices, held as one array: what a backend's batched filter
(:meth:`~distsm.kernels.backend.Backend.candidates_of`) returns per query.

A batch of HPRD-size queries has thousands of query vertices.  An array object per vertex (a view on the device
costs microseconds to make) and a bitset looked up per vertex cost more on the host than the filter itself, so the
sets of one query stay one array until a per-query path asks for a vertex's own."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import Any


class CandidateSets(Sequence[Any]):
    """Vertex ``u``'s candidates are ``values[starts[u]:starts[u] + sizes[u]]`` (sorted data ids; vertex 0's
    first, so ``values`` is every set in vertex order).  ``rows``, where the filter built them, holds each vertex's
    membership set as the backend's tests read it, row ``u`` for vertex ``u`` (a 2-D array).

    Indexing gives vertex ``u``'s candidates as a view, made on first use and then kept, so that every use of a
    vertex's set sees one array object (caches keyed by identity see one key)."""

    def __init__(self, values: Any, sizes: Sequence[int], rows: Any = None) -> None:
        self.values = values
        self.sizes = list(sizes)
        self.rows = rows
        self.starts = list(accumulate(self.sizes, initial=0))[:-1]
        self._views: list[Any] = [None] * len(self.sizes)

    def __len__(self) -> int:
        return len(self.sizes)

    def __getitem__(self, u: int) -> Any:  # type: ignore[override]
        view = self._views[u]
        if view is None:
            start = self.starts[u]
            view = self._views[u] = self.values[start:start + self.sizes[u]]
        return view

    def __iter__(self) -> Iterator[Any]:
        return (self[u] for u in range(len(self.sizes)))


def candidate_sets(xp: Any, cands: Sequence[Any]) -> CandidateSets:
    """``cands`` (one array per query vertex, on ``xp``) as :class:`CandidateSets`: itself where it is one, else
    its arrays concatenated (without rows)."""
    if isinstance(cands, CandidateSets):
        return cands
    arrays = list(cands)
    return CandidateSets(xp.concatenate(arrays), [int(a.shape[0]) for a in arrays])
