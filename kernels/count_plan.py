"""Cost-based plans for counting: a connected *core* joined level by level, then *trailing* vertices counted.

The trailing vertices ``T`` form an independent set of the query whose complement (the core) is connected, so
once the core is matched each trailing vertex ``j`` has a candidate set ``S_j`` that depends on the core's images
alone: the intersection of its core neighbours' candidate-edge runs, minus the core's images.  The number of
injective completions of a core match is then a function of set sizes (see :mod:`distsm.kernels.trailing`), so a
query with ``|T|`` trailing vertices never enumerates the product of their sets.

Costs come from sampled walks over the candidate-edge index (:mod:`distsm.kernels.sampling`): for every maximal
trailing set (at most :data:`MAX_TRAILING` vertices, label groups of at most :data:`MAX_GROUP`) the sampler
builds a greedy core order, each next vertex the one with the fewest estimated rows, and measures the set
entries the trailing vertices read per core match.  A plan costs its core rows plus those entries times the core
matches; the cheapest wins.  GSI's greedy order with the last vertex counted is one of the plans considered.

Before any index is built, :func:`gate_cost` bounds the general join's work from label statistics alone, so light
queries skip the planner's fixed costs.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels.ce_join import Extension
from distsm.kernels.index import DataIndex
from distsm.kernels.lifetime_cache import LifetimeCache
from distsm.kernels.order import query_adjacency
from distsm.kernels.sampling import SampledOrder, Sampler

#: Trailing vertices at most, and at most this many sharing a vertex label (Bell(5) = 52 partitions).
MAX_TRAILING = 6
MAX_GROUP = 5
#: Independent sets enumerated at most, and maximal ones sampled at most (large queries have very many).
MAX_SUBSETS = 4096
MAX_SAMPLED = 12
#: A plan estimated to cost less than this (entries read and written) is run without sampling more candidates.
QUICK_COST = 1e6
#: One sampled extension (a candidate vertex tried at one level of a greedy order over the walks), in the plans'
#: cost units (a quarter of a millisecond of NumPy, like this many entries of a join); sampling stops once it has
#: cost more than PLAN_SHARE of the best plan found.
EVALUATION_COST = 3e4
PLAN_SHARE = 0.25


@dataclass(frozen=True)
class CountPlan:
    """Core join steps, trailing vertices (grouped by vertex label) and the sampled estimates."""

    core: tuple[int, ...]
    steps: tuple[Extension, ...]                 # steps[i] adds core[i + 1]
    trailing: tuple[Extension, ...]
    groups: tuple[tuple[int, ...], ...]          # indexes into ``trailing`` sharing a vertex label
    level_estimates: tuple[float, ...]           # estimated rows after each core level
    trailing_work: float                         # estimated set entries read per core match
    cost: float
    plans_tried: int = field(default=0, compare=False)

    @property
    def order(self) -> tuple[int, ...]:
        return self.core + tuple(t.vertex for t in self.trailing)


def independent_sets(query: Graph, limit: int) -> list[frozenset[int]]:
    """Non-empty independent sets of at most ``limit`` vertices whose complement is non-empty and connected, in
    lexicographic order of their sorted vertices (the first :data:`MAX_SUBSETS`)."""
    # Vertex sets are bit masks (bit u: vertex u): a connectivity check is a few word operations per vertex.
    nbrs = [sum(1 << w for w in {w for w, _ in arcs}) for arcs in query_adjacency(query)]
    everything = (1 << query.n) - 1
    found: list[frozenset[int]] = []

    def connected(core: int) -> bool:
        seen = frontier = core & -core
        while frontier:
            reached = 0
            while frontier:
                low = frontier & -frontier
                reached |= nbrs[low.bit_length() - 1]
                frontier ^= low
            frontier = reached & core & ~seen
            seen |= frontier
        return seen == core

    def grow(chosen: int, size: int, blocked: int, start: int) -> None:
        for v in range(start, query.n):
            if blocked >> v & 1 or len(found) >= MAX_SUBSETS:
                continue
            grown = chosen | 1 << v
            core = everything & ~grown
            if core and connected(core):
                found.append(frozenset(u for u in range(v + 1) if grown >> u & 1))
            if size + 1 < limit:
                grow(grown, size + 1, blocked | nbrs[v] | 1 << v, v + 1)

    grow(0, 0, 0, 0)
    return found


def plan_count(query: Graph, sampler: Sampler, sizes: list[int], homomorphism: bool = False,
               trailing: frozenset[int] | None = None) -> CountPlan:
    """The cheapest :class:`CountPlan` (see the module docstring); ``trailing`` forces that trailing set.

    Candidates: for every maximal trailing set, the sampled greedy order of its core; and every split of the
    sampled greedy order of the whole query whose suffix is a valid trailing set (a vertex with a large
    fan-out may be better joined last than left in a core it would blow up)."""
    labels = [int(x) for x in query.vertex_labels]
    adj = query_adjacency(query)
    everything = frozenset(range(query.n))
    nbrs = [{w for w, _ in adj[u]} for u in range(query.n)]

    def label_groups(trailing: Iterable[int]) -> list[list[int]] | None:
        groups: dict[int, list[int]] = {}
        for j in sorted(trailing):
            groups.setdefault(labels[j], []).append(j)
        if not homomorphism and max(len(g) for g in groups.values()) > MAX_GROUP:
            return None
        return list(groups.values())

    def groups_of(trailing: frozenset[int]) -> list[list[int]]:
        groups = label_groups(trailing)
        assert groups is not None, "trailing sets are drawn from those with valid label groups"
        return groups

    def start_of(core: frozenset[int]) -> int:
        return min(core, key=lambda u: (sizes[u] / max(len(nbrs[u] & core), 1), u))

    sets = {t for t in independent_sets(query, min(MAX_TRAILING, query.n - 1)) if label_groups(t) is not None}
    # Growing a trailing set never adds join levels, so only maximal sets are sampled: first the largest, then
    # those that leave the vertices with the most candidates to counting.
    maximal = [t for t in sets if not any(t | {v} in sets for v in everything - t)]
    maximal.sort(key=lambda t: (-len(t), -sum(math.log(max(sizes[j], 1)) for j in t), sorted(t)))
    if trailing is not None:
        if trailing not in sets:
            raise ValueError(f"{sorted(trailing)} is not a trailing set of this query (independent, at most "
                             f"{MAX_TRAILING} vertices, a connected rest, label groups of at most {MAX_GROUP})")
        core = everything - trailing
        return _cheapest(sampler, [(sampler.core_order(core, start_of(core)), len(core), groups_of(trailing))])
    # First the splits of one greedy order of the whole query; a plan that cheap is not worth more sampling.
    whole = sampler.core_order(everything, start_of(everything))
    candidates = []
    for k in range(max(query.n - MAX_TRAILING, 1), query.n):
        suffix = whole.order[k:]
        if all(not (nbrs[a] & set(suffix)) for a in suffix) and (groups := label_groups(suffix)) is not None:
            candidates.append((whole, k, groups))
    best = _cheapest(sampler, candidates) if candidates else None
    if best is not None and best.cost < QUICK_COST:
        return best
    for trailing_set in maximal[:MAX_SAMPLED]:
        # Sampling more orders is worth at most a share of the work of the best plan found so far.
        if best is not None and sampler.evaluations * EVALUATION_COST > PLAN_SHARE * best.cost:
            break
        core = everything - trailing_set
        candidates.append((sampler.core_order(core, start_of(core)), len(core), groups_of(trailing_set)))
        found = _cheapest(sampler, candidates[-1:])
        if best is None or found.cost < best.cost:
            best = found
    if best is None:
        raise ValueError("a counting plan needs a query of two or more vertices")
    return dataclasses.replace(best, plans_tried=len(candidates))


def _cheapest(sampler: Sampler, candidates: list[tuple[SampledOrder, int, list[list[int]]]]) -> CountPlan:
    """The cheapest of ``(sampled order, core size, trailing label groups)`` candidates as a :class:`CountPlan`."""
    best: CountPlan | None = None
    for sampled, k, groups in candidates:
        work, trailing = sampler.trailing(sampled.walks[k - 1], sampled.columns(k), [j for g in groups for j in g],
                                          groups)
        cost = sampled.cost(k) + sampled.estimates[k - 1] * work
        if best is None or cost < best.cost:
            index_of = {t.vertex: i for i, t in enumerate(trailing)}
            best = CountPlan(tuple(sampled.order[:k]), tuple(sampled.steps[:k - 1]), tuple(trailing),
                             tuple(tuple(index_of[j] for j in g) for g in groups),
                             tuple(sampled.estimates[:k]), work, cost, len(candidates))
    if best is None:
        raise ValueError("a counting plan needs a query of two or more vertices")
    return best


def partitions(items: tuple[int, ...]) -> list[tuple[int, tuple[tuple[int, ...], ...]]]:
    """Every set partition of ``items`` with its Möbius coefficient ``prod_B (-1)^(|B|-1) (|B|-1)!``.

    The number of injective maps picking one element of ``S_j`` for each ``j`` is
    ``sum_partitions coef * prod_blocks |intersection of the block's sets|`` (inclusion-exclusion over which
    choices coincide)."""
    if not items:
        return [(1, ())]
    first, rest = items[0], items[1:]
    out = []
    for coef, blocks in partitions(rest):
        out.append((coef, ((first,),) + blocks))
        for i, block in enumerate(blocks):
            size = len(block)
            grown = blocks[:i] + ((first,) + block,) + blocks[i + 1:]
            # Growing a block of size s to s + 1 multiplies its factor (-1)^(s-1) (s-1)! by -s.
            out.append((-coef * size, grown))
    return out


def blocks_needed(groups: tuple[tuple[int, ...], ...]) -> set[tuple[int, ...]]:
    """Blocks of two or more trailing vertices whose intersections some partition needs."""
    need: set[tuple[int, ...]] = set()
    for g in groups:
        for size in range(2, len(g) + 1):
            need.update(itertools.combinations(g, size))
    return need


def gate_cost(backend: Backend, idx: DataIndex, query: Graph, candidates: list[Any]) -> float:
    """An upper-leaning estimate of the general join's rows from label statistics alone (no index built).

    An arc ``w -> u`` fans out to ``entries(label(w), e, label(u)) / degree sum of label(w)`` neighbours per
    unit of degree, scaled by the mean degree of ``C(w)`` and the share of ``label(u)``'s vertices that are
    candidates.  Levels multiply the smallest fan-out of their links (further links are taken to prune
    nothing), so a query estimated light is light.  The order starts at the vertex with the fewest candidates
    and adds the one with the smallest fan-out next (ties to the lower id)."""
    stats = label_pair_statistics(backend, idx)
    labels = query.vertex_labels.tolist()
    sizes = [int(c.shape[0]) for c in candidates]
    mean_degree = [d / s if s else 0.0 for d, s in zip(degree_sums(backend, idx, candidates, sizes), sizes)]
    adj = query_adjacency(query)
    n = query.n
    # fan[u]: the smallest fan-out into u from a placed vertex, kept up to date as vertices are placed; the heap
    # holds (fan-out, vertex) pairs, stale ones skipped when popped.
    fan = [math.inf] * n
    placed = [False] * n
    heap: list[tuple[float, int]] = []

    def place(w: int) -> None:
        placed[w] = True
        lw = labels[w]
        degree_sum = stats.degree_sum.get(lw, 0)
        for u, e in adj[w]:
            if placed[u]:
                continue
            f = 0.0
            if degree_sum:
                share = sizes[u] / max(stats.vertices.get(labels[u], 0), 1)
                f = stats.pairs.get((lw, e, labels[u]), 0) / degree_sum * mean_degree[w] * share
            if f < fan[u]:
                fan[u] = f
                heapq.heappush(heap, (f, u))

    start = min(range(n), key=lambda u: (sizes[u], u))
    place(start)
    est = total = float(sizes[start])
    for _ in range(n - 1):
        while heap and (placed[heap[0][1]] or heap[0][0] != fan[heap[0][1]]):
            heapq.heappop(heap)
        if not heap:
            raise ValueError("the query graph is not connected")
        f, u = heapq.heappop(heap)
        place(u)
        est *= f
        total += est
    return total


def degree_sums(backend: Backend, idx: DataIndex, candidates: list[Any], sizes: list[int]) -> list[int]:
    """Sum of data degrees over each candidate array, from one gather and prefix sum (one transfer on a device)."""
    xp = backend.xp
    if not sum(sizes):
        return [0] * len(sizes)
    inclusive = xp.cumsum(idx.degrees[xp.concatenate(candidates)].astype(xp.int64))
    ends = np.cumsum(sizes)
    at_ends = backend.to_host(inclusive[xp.asarray(np.maximum(ends - 1, 0))]).tolist()
    out, before = [], 0
    for end, value in zip(ends.tolist(), at_ends):
        value = value if end else 0
        out.append(value - before)
        before = value
    return out


@dataclass(frozen=True)
class LabelPairStatistics:
    """Adjacency entries per (vertex label, effective edge label, neighbour label), degree sums and vertex
    counts per vertex label of one data graph."""

    pairs: dict[tuple[int, int, int], int]
    degree_sum: dict[int, int]
    vertices: dict[int, int]


_STATS = LifetimeCache()


def label_pair_statistics(backend: Backend, idx: DataIndex) -> LabelPairStatistics:
    """The :class:`LabelPairStatistics` of ``idx`` (computed on the host once per index, kept while it lives)."""
    cached = _STATS.get(idx)
    if cached is not None:
        return cached
    host = backend.to_host
    vlab = host(idx.vertex_labels).astype(np.int64)
    degrees = host(idx.degrees).astype(np.int64)
    nbr = host(idx.nbr).astype(np.int64)
    rows = np.repeat(np.arange(idx.n), degrees)
    # Each run holds one effective label: number the entries' runs back to their labels.
    if idx.num_labels == 1:
        elab = np.zeros(nbr.shape[0], np.int64)
    else:
        keys = host(idx.run_keys)
        lengths = host(idx.run_end) - host(idx.run_start)
        elab = np.repeat(keys % idx.num_labels, lengths)
    key = (vlab[rows] * idx.num_labels + elab) * (int(vlab.max(initial=0)) + 1) + vlab[nbr]
    uniq, counts = np.unique(key, return_counts=True)
    width = int(vlab.max(initial=0)) + 1
    pairs = {(int(k // width // idx.num_labels), int(k // width % idx.num_labels), int(k % width)): int(c)
             for k, c in zip(uniq, counts)}
    ul, inverse = np.unique(vlab, return_inverse=True)
    degree_sum = {int(lab): int(d) for lab, d in zip(ul, np.bincount(inverse, weights=degrees).astype(np.int64))}
    vertices = {int(lab): int(c) for lab, c in zip(ul, np.bincount(inverse))}
    return _STATS.put(idx, LabelPairStatistics(pairs, degree_sum, vertices))
