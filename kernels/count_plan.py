"""Cost-based plans for counting: a connected *core* joined level by level, then *trailing* vertices counted.

The trailing vertices ``T`` form an independent set of the query whose complement (the core) is connected, so
once the core is matched each trailing vertex ``j`` has a candidate set ``S_j`` that depends on the core's images
alone: the intersection of its core neighbours' candidate-edge runs, minus the core's images.  The number of
injective completions of a core match is then a function of set sizes (see :mod:`distsm.kernels.trailing`), so a
query with ``|T|`` trailing vertices never enumerates the product of their sets.

Costs come from sampled walks over the candidate-edge index (:mod:`distsm.kernels.sampling`): for every maximal
trailing set (at most :data:`MAX_TRAILING` vertices, label groups of at most :data:`MAX_GROUP`) the sampler
builds a greedy core order, each next vertex the one with the fewest estimated rows, and measures the set
entries the trailing vertices read per core match; a quick order chosen without sampling (GSI's: most neighbours
placed, then fewest candidates) is sampled first, at one extension a level, and is all a plan bound for a device
is most often worth.  A plan costs its core rows plus those entries times the core matches; the cheapest wins.
GSI's greedy order with the last vertex counted is one of the plans considered.

The engine reaches this planner only for queries whose trial general join passed its allowance (see
:mod:`distsm.kernels.counting`): light queries never pay for the index and the sampling.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


from distsm.graph import Graph
from distsm.kernels.ce_join import Extension
from distsm.kernels.order import query_adjacency
from distsm.kernels.sampling import SampledOrder, Sampler
from distsm.kernels.trailing_sets import TrailingSets, members

#: Trailing vertices at most, and at most this many sharing a vertex label (Bell(5) = 52 partitions).
MAX_TRAILING = 6
MAX_GROUP = 5
#: Maximal trailing sets sampled at most (large queries have very many).
MAX_SAMPLED = 12
#: Trailing sets sampled in a row without a cheaper plan before sampling stops: sets come most promising first, and
#: on gMatch's suite, the four generated dense suites and HPRD with 8 labels no set after one that found nothing
#: cheaper ever did, while such sets took up to 547 of a 32-vertex query's 862 sampled extensions
#: (benchmarks/README.md, 'Measurements behind the engine's settings').
TRAILING_PATIENCE = 1
#: A plan estimated to cost less than this (entries read and written) is run without sampling more candidates.
QUICK_COST = 1e6
#: One sampled extension (a candidate vertex tried at one level of a greedy order over the walks), in the plans'
#: cost units (a quarter of a millisecond of NumPy, like this many entries of a join); sampling stops once it has
#: cost more than PLAN_SHARE of the best plan found on the host, and on a device more than PLAN_SHARE_DEVICE of the
#: time the plan's work is predicted to take there (see sampling_allowance).
EVALUATION_COST = 3e4
PLAN_SHARE = 0.25
PLAN_SHARE_DEVICE = 0.3
#: A plan's core join and trailing count on a device take its estimated work over DEVICE_WORK_PER_S seconds, past
#: a few milliseconds of launches that no plan avoids: fitted to H200 stage times of gMatch's suite and two generated
#: dense suites, within a factor of three either way (a unit of work runs there some 1,000 times faster than on NumPy
#: in trailing counts, ten times in core joins).
DEVICE_WORK_PER_S = 1.5e11
#: Seconds of NumPy per unit of the plans' cost (an evaluation costs EVALUATION_COST of them).
HOST_SECONDS_PER_UNIT = 2.5e-4 / EVALUATION_COST
#: Walks the quick order is sampled with, and every plan whose sampling is not worth a greedy order of the whole
#: query at the sampler's full count (:func:`plan_count`): on the GPU machine, fewer walks cost the planner less
#: than they cost the plans (``benchmarks run paired`` with ``engine.plan-walks``; benchmarks/README.md).
QUICK_WALKS = 256
#: How much faster than NumPy a device runs a plan's work, as the cluster's split decisions weigh it
#: (:func:`host_scale`; dense 32-vertex HPRD queries against NumPy: benchmarks/README.md, 'Measurements behind the
#: engine's settings').
DEVICE_SPEEDUP = 40.0


def sampling_allowance(cost: float, on_device: bool, device_share: float = PLAN_SHARE_DEVICE) -> float:
    """The sampling a plan of estimated work ``cost`` is worth, in the plans' cost units: :data:`PLAN_SHARE` of it
    on the host, and on a device the NumPy time of ``device_share`` of the time its work takes there
    (:data:`DEVICE_WORK_PER_S`)."""
    if on_device:
        return device_share * cost / DEVICE_WORK_PER_S / HOST_SECONDS_PER_UNIT
    return PLAN_SHARE * cost


def host_scale(cost: float, on_device: bool) -> float:
    """A plan's estimated work ``cost`` in NumPy's terms: divided by :data:`DEVICE_SPEEDUP` where it runs on a
    device."""
    return cost / DEVICE_SPEEDUP if on_device else cost


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
    walks: int = field(default=0, compare=False)  # the sampler's walks when it was estimated

    @property
    def order(self) -> tuple[int, ...]:
        return self.core + tuple(t.vertex for t in self.trailing)

    @property
    def arcs(self) -> frozenset[tuple[int, int, int]]:
        """The arcs of the candidate-edge index the core join and the trailing count read (each query edge is
        read in one direction only: from its end placed first)."""
        return frozenset(arc for ext in (*self.steps, *self.trailing) for _, arc in ext.links)


@dataclass
class _Planning:
    """What :func:`plan_count` reads of its query: labels, neighbours, candidate counts and the forced start."""

    query: Graph
    sizes: list[int]
    homomorphism: bool
    start: int | None

    def __post_init__(self) -> None:
        self.labels = [int(x) for x in self.query.vertex_labels]
        self.nbrs = [{w for w, _ in arcs} for arcs in query_adjacency(self.query)]
        self.everything = frozenset(range(self.query.n))

    def label_groups(self, trailing: Iterable[int]) -> list[list[int]] | None:
        """``trailing`` grouped by vertex label, None where a group is over :data:`MAX_GROUP` (injective counts)."""
        groups: dict[int, list[int]] = {}
        for j in sorted(trailing):
            groups.setdefault(self.labels[j], []).append(j)
        if not self.homomorphism and max(len(g) for g in groups.values()) > MAX_GROUP:
            return None
        return list(groups.values())

    def groups_of(self, trailing: frozenset[int]) -> list[list[int]]:
        groups = self.label_groups(trailing)
        assert groups is not None, "trailing sets are drawn from those with valid label groups"
        return groups

    def start_of(self, core: frozenset[int]) -> int:
        if self.start is not None:
            return self.start
        return min(core, key=lambda u: (self.sizes[u] / max(len(self.nbrs[u] & core), 1), u))

    def trailing_sets(self) -> TrailingSets:
        """The valid trailing sets (:class:`~distsm.kernels.trailing_sets.TrailingSets`): no forced start, label
        groups of at most :data:`MAX_GROUP` vertices (injective counts)."""
        return TrailingSets(self.query, min(MAX_TRAILING, self.query.n - 1),
                            0 if self.start is None else 1 << self.start,
                            None if self.homomorphism else MAX_GROUP)

    def core_plan(self, sampler: Sampler, trailing: frozenset[int]) -> Candidate:
        """The sampled greedy order of the core that ``trailing`` leaves, as a candidate plan."""
        core = self.everything - trailing
        return sampler.core_order(core, self.start_of(core)), len(core), self.groups_of(trailing)

    def quick_order(self) -> list[int]:
        """An order of the whole query chosen without sampling, as GSI's is: from :meth:`start_of`, each next
        vertex the one with the most neighbours placed, then the fewest candidates."""
        order = [self.start_of(self.everything)]
        placed = set(order)
        while len(order) < self.query.n:
            u = min((v for v in self.everything - placed if self.nbrs[v] & placed),
                    key=lambda v: (-len(self.nbrs[v] & placed), self.sizes[v], v))
            order.append(u)
            placed.add(u)
        return order

    def splits(self, sampler: Sampler, fixed: list[int] | None = None) -> list[Candidate]:
        """The splits of one order of the whole query (the sampled greedy one, or ``fixed``) whose suffix is a
        valid trailing set."""
        whole = sampler.core_order(self.everything, self.start_of(self.everything), fixed)
        out = []
        for k in range(max(self.query.n - MAX_TRAILING, 1), self.query.n):
            suffix = whole.order[k:]
            if all(not (self.nbrs[a] & set(suffix)) for a in suffix) and \
                    (groups := self.label_groups(suffix)) is not None:
                out.append((whole, k, groups))
        return out

    def maximal_by_promise(self) -> list[frozenset[int]]:
        """The first :data:`MAX_SAMPLED` maximal trailing sets, first the largest, then those that leave the vertices
        with the most candidates to counting (growing a trailing set never adds join levels, so only maximal sets
        are sampled)."""
        logs = [math.log(max(size, 1)) for size in self.sizes]
        return [frozenset(members(mask)) for mask in self.trailing_sets().most_promising(MAX_SAMPLED, logs)]


#: A candidate plan: a sampled order, how many of its vertices the core takes, the trailing label groups.
Candidate = tuple[SampledOrder, int, list[list[int]]]


def plan_count(query: Graph, sampler: Sampler, sizes: list[int], homomorphism: bool = False,
               trailing: frozenset[int] | None = None, start: int | None = None,
               allowance: Callable[[float], float] = lambda cost: sampling_allowance(cost, False)) -> CountPlan:
    """The cheapest :class:`CountPlan` (see the module docstring); ``trailing`` forces that trailing set, and
    ``start`` the core's first vertex (never trailing then: slices of a count restrict its images, which the core
    join does at its first level).  ``allowance(cost)`` is the sampling a plan of that estimated cost is worth, in
    the plans' cost units (:func:`sampling_allowance`: for a plan bound for a device, a share of the time it is
    predicted to take there).

    Candidates, in the order they are sampled while the sampling is worth it: every split of a quick order of the
    whole query (chosen without sampling, :meth:`_Planning.quick_order`) and then of the sampled greedy order
    whose suffix is a valid trailing set (a vertex with a large fan-out may be better joined last than left in a
    core it would blow up); for the maximal trailing sets, most promising first, the sampled greedy order of each
    one's core, until one finds no cheaper plan (:data:`TRAILING_PATIENCE`).

    The sample follows the count it plans: the quick and greedy orders are sampled with :data:`QUICK_WALKS` walks,
    and the sampler's full count of walks is drawn (both orders sampled again with them) only for a plan whose
    sampling is worth a greedy order of the whole query at that count."""
    q = _Planning(query, sizes, homomorphism, start)
    if trailing is not None:
        if not q.trailing_sets().valid(sum(1 << u for u in trailing)):
            raise ValueError(f"{sorted(trailing)} is not a trailing set of this query (independent, at most "
                             f"{MAX_TRAILING} vertices, a connected rest, label groups of at most {MAX_GROUP})")
        return _cheapest(sampler, [q.core_plan(sampler, trailing)])
    # The quick order first: its sampling (a vertex a level) costs a fraction of the greedy order's (every vertex
    # that may follow, a level), and a plan bound for a device is most often worth no more (see _Sampled.spent).
    full = sampler.walks
    sampler.draw(QUICK_WALKS)
    sampled = _Sampled(sampler, allowance)
    sampled.add(q.splits(sampler, q.quick_order()))
    if sampled.enough():
        return sampled.result()
    sampled = sampled.orders(q)
    # A greedy order at the full count costs about full / QUICK_WALKS times the evaluations it makes.
    if full > sampler.walks and sampled.best is not None and \
            sampled.worth(query.n * (query.n - 1) // 2 * full // sampler.walks):
        # Estimates of different sample sizes are not compared: both orders are sampled again.
        sampler.draw(full)
        sampled = _Sampled(sampler, allowance)
        sampled.add(q.splits(sampler, q.quick_order()))
        sampled = sampled.orders(q)
    if sampled.enough():
        return sampled.result()
    unimproved = 0
    for trailing_set in q.maximal_by_promise():
        if sampled.best is not None and (sampled.spent() or unimproved >= TRAILING_PATIENCE):
            break
        best = sampled.best
        sampled.add([q.core_plan(sampler, trailing_set)])
        unimproved = 0 if sampled.best is not best else unimproved + 1
    return sampled.result()


class _Sampled:
    """The candidate plans :func:`plan_count` has sampled, the cheapest of them, and whether sampling more is worth
    it (``allowance(cost)``: see :func:`plan_count`; evaluations before ``free`` are not charged)."""

    def __init__(self, sampler: Sampler, allowance: Callable[[float], float]):
        self.sampler, self.allowance = sampler, allowance
        self.candidates: list[Candidate] = []
        self.best: CountPlan | None = None
        self.free = 0

    def add(self, candidates: list[Candidate]) -> None:
        if candidates:
            self.candidates += candidates
            found = _cheapest(self.sampler, candidates)
            if self.best is None or found.cost < self.best.cost:
                self.best = found

    def spent(self) -> bool:
        """Whether the evaluations charged so far pass the allowance of the best plan found so far."""
        assert self.best is not None
        return (self.sampler.evaluations - self.free) * EVALUATION_COST > self.allowance(self.best.cost)

    def orders(self, q: _Planning) -> _Sampled:
        """These candidates and every split of the sampled greedy order of the whole query.  The quick order's
        evaluations are not held against the greedy order's: that would cut short the search for a better plan of
        exactly the heavy queries that are worth one."""
        self.free = self.sampler.evaluations
        self.add(q.splits(self.sampler))
        return self

    def worth(self, evaluations: int) -> bool:
        """Whether the best plan found so far is worth that many more evaluations."""
        assert self.best is not None
        return evaluations * EVALUATION_COST <= self.allowance(self.best.cost)

    def enough(self) -> bool:
        """A plan that cheap, or one whose sampling so far is all it is worth, is not worth the greedy order, nor
        enumerating the trailing sets (about as long as sampling the whole order on a 16-vertex query)."""
        return self.best is not None and (self.best.cost < QUICK_COST or self.spent())

    def result(self) -> CountPlan:
        if self.best is None:
            raise ValueError("a counting plan needs a query of two or more vertices")
        return dataclasses.replace(self.best, plans_tried=len(self.candidates))


def _cheapest(sampler: Sampler, candidates: list[Candidate]) -> CountPlan:
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
                             tuple(sampled.estimates[:k]), work, cost, len(candidates), sampler.walks)
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
