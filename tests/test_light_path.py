"""The NumPy light path: the fused descent, the filter's key-range pools and packed signature tests, the
membership lookups and the plan steps, each checked against the general path or a definition.

Light queries (all of HPRD's) run through :meth:`ArrayBackend.descend`, which reuses each level's run counts
instead of the engine's chunked :meth:`extend`; the two must give the same rows under every semantics, budget
and spanning filter.  Brute force (``oracles``) pins the answers independently.
"""

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, make_case

import distsm
from distsm import Graph
from distsm.kernels import counting, engine, get_backend
from distsm.kernels.array_backend import ArrayBackend, NumpyBackend
from distsm.kernels.records import LevelExtension, Spanning
from distsm.kernels.order import query_adjacency
from distsm.kernels.query_plan import Constraints, MatchOptions, build_plan
from distsm.kernels import signature
from distsm.kernels.signature import BUCKETS_PER_WORD, SIG_WORDS, bucket_of, packed, signatures
from distsm.labels import reconcile

SETTINGS = scaled(60)
NUMPY = get_backend("numpy")

case_args = dict(
    seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9), p=st.floats(0.2, 0.9), vl=st.sampled_from([1, 2, 3, 9]),
    el=st.integers(1, 3), directed=st.booleans(), qsize=st.integers(2, 5), sampled=st.booleans(),
)


class Unfused(NumpyBackend):
    """The NumPy backend without its fused descent: the engine extends every level through :meth:`extend`."""

    def descend(self, *args, **kwargs):
        return None


UNFUSED = Unfused()


def walk_rows(backend, prepared, budget, spanning=None):
    """Every match the join produces, as tuples indexed by query vertex, and their count from a counting walk."""
    inv = prepared.plan.inverse_order
    tables = [backend.to_host(t)[:, inv] for t in engine.walk(backend, prepared, budget, False, spanning)]
    rows = [tuple(int(x) for x in r) for t in tables for r in t]
    count = sum(int(c) for c in engine.walk(backend, prepared, budget, True, spanning))
    assert count == len(rows) == len(set(rows)), "counting and listing disagree, or a row repeats"
    return set(rows)


@SETTINGS
@given(**case_args, induced=st.booleans(), homomorphism=st.booleans(), symmetry=st.booleans(),
       budget=st.sampled_from([1, 3000, 1 << 30]))
def test_fused_descent_equals_the_level_by_level_join(seed, n, p, vl, el, directed, qsize, sampled, induced,
                                                      homomorphism, symmetry, budget):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    options = MatchOptions(induced=induced, homomorphism=homomorphism)
    less_than = ((0, 1),) if symmetry else ()
    fused = engine.prepare(NUMPY, data, query, options, constraints=Constraints(less_than))
    plain = engine.prepare(UNFUSED, data, query, options, constraints=Constraints(less_than))
    expected = {r for r in brute_force(data, query, induced=induced, homomorphism=homomorphism)
                if not symmetry or r[0] < r[1]}
    if fused is None:
        assert plain is None and not expected
        return
    assert fused.plan == plain.plan
    assert walk_rows(NUMPY, fused, budget) == walk_rows(UNFUSED, plain, budget) == expected


@SETTINGS
@given(**case_args, homomorphism=st.booleans(), parts=st.integers(2, 3), part_seed=st.integers(0, 2**32 - 1),
       budget=st.sampled_from([1, 1 << 30]))
def test_fused_spanning_searches_equal_the_level_by_level_join(seed, n, p, vl, el, directed, qsize, sampled,
                                                                homomorphism, parts, part_seed, budget):
    """Per prime edge (DUPREMOVE) and globally (spanning only): the fused descent keeps the rows the level-by-level
    join keeps, and the prime-edge searches together list each brute-force match spanning two parts once."""
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    options = MatchOptions(homomorphism=homomorphism)
    part = np.random.default_rng(part_seed).integers(0, parts, data.n).astype(np.int32)
    spanning_matches = {r for r in brute_force(data, query, homomorphism=homomorphism)
                        if len({int(part[v]) for v in r}) > 1}
    searches = [dict(prime_edge=j) for j in range(query.m)] + [dict(spanning_only=True)]
    by_prime: list[tuple] = []
    for kwargs in searches:
        fused = engine.prepare(NUMPY, data, query, options, constraints=Constraints(**kwargs))
        plain = engine.prepare(UNFUSED, data, query, options, constraints=Constraints(**kwargs))
        if fused is None:
            assert plain is None
            found: set[tuple] = set()
        else:
            spanning = Spanning(part, fused.plan.prime)
            found = walk_rows(NUMPY, fused, budget, spanning)
            assert found == walk_rows(UNFUSED, plain, budget, spanning)
        if "prime_edge" in kwargs:
            by_prime.extend(found)
        else:
            assert found == spanning_matches
    assert sorted(by_prime) == sorted(spanning_matches)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 300), queries=st.integers(0, 300))
def test_membership_lookup_equals_the_generic_one_and_isin(seed, size, queries):
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(-50, 1000, size))
    probe = rng.integers(-100, 1100, queries)
    probe[: min(queries, 3)] = [keys[0] - 1, keys[-1], keys[-1] + 1][: min(queries, 3)]
    expected = np.isin(probe, keys)
    assert np.array_equal(NumpyBackend()._contains(keys, probe), expected)
    assert np.array_equal(ArrayBackend(np)._contains(keys, probe), expected)


# The fixture is only used through a context opened per example.
@settings(SETTINGS, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 1100), entries=st.integers(0, 500),
       presence_only=st.booleans(), dense=st.booleans())
def test_signatures_follow_their_definition(seed, n, entries, presence_only, dense, monkeypatch):
    """Bucket ``b`` of vertex ``v`` holds 00, 01 or 11 for none, one, or two or more of ``v``'s entries hashed to
    ``b`` (01 for any under ``presence_only``), whether the cells are counted densely (queries) or sorted."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.integers(0, n, entries))
    labels, nbr_labels = rng.integers(0, 5, entries), rng.integers(0, 40, entries)
    with monkeypatch.context() as m:
        m.setattr(signature, "DENSE_CELLS", 1 << 40 if dense else 0)
        got = signatures(np, n, rows, labels, nbr_labels, presence_only=presence_only)
    buckets = bucket_of(np, labels, nbr_labels).tolist()
    seen: dict[tuple[int, int], int] = {}
    for v, b in zip(rows.tolist(), buckets):
        seen[(v, b)] = seen.get((v, b), 0) + 1
    expected = np.zeros((SIG_WORDS, n), dtype=np.uint32)
    for (v, b), k in seen.items():
        code = 1 if presence_only or k == 1 else 3
        expected[b // BUCKETS_PER_WORD, v] |= np.uint32(code << (2 * (b % BUCKETS_PER_WORD)))
    assert got.dtype == np.uint32 and got.flags.c_contiguous and np.array_equal(got, expected)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), words=st.integers(1, 5), n=st.integers(1, 40))
def test_packed_words_cover_exactly_when_every_word_covers(seed, words, n):
    rng = np.random.default_rng(seed)
    # Sparse random words, so that coverage holds often enough to be tested both ways.
    sig = (rng.integers(0, 2**32, (words, n), dtype=np.uint32) & rng.integers(0, 2**32, (words, n), dtype=np.uint32)
           & rng.integers(0, 2**32, (words, n), dtype=np.uint32))
    wide = packed(np, sig)
    assert wide.dtype == np.uint64 and wide.shape == ((words + 1) // 2, n)
    for v, u in itertools.product(range(n), repeat=2):
        each = all(int(sig[w, v]) & int(sig[w, u]) == int(sig[w, u]) for w in range(words))
        both = all(int(wide[w, v]) & int(wide[w, u]) == int(wide[w, u]) for w in range(wide.shape[0]))
        assert each == both


def test_filter_pools_at_the_label_and_degree_edges():
    """A label the data lacks, a degree above every data vertex's (empty unless homomorphism) and the largest
    and smallest labels the pools hold."""
    data = Graph.from_edges([(0, 1), (0, 2), (0, 3), (4, 5)], n=6, vertex_labels=[7, 2, 2, 2, 9, 0])
    idx = NUMPY.index(data)
    star = reconcile(Graph.from_edges([(0, 1), (0, 2), (0, 3), (0, 4)], n=5, vertex_labels=[7, 2, 2, 2, 2]), data)
    assert [c.tolist() for c in NUMPY.candidates(idx, star, homomorphism=False)] == [[], [1, 2, 3], [1, 2, 3],
                                                                                     [1, 2, 3], [1, 2, 3]]
    assert NUMPY.candidates(idx, star, homomorphism=True)[0].tolist() == [0]
    edge = reconcile(Graph.from_edges([(0, 1)], n=2, vertex_labels=[9, 0]), data)
    assert [c.tolist() for c in NUMPY.candidates(idx, edge, homomorphism=False)] == [[4], [5]]
    missing = reconcile(Graph.from_edges([(0, 1)], n=2, vertex_labels=[7, 3]), data)
    got = NUMPY.candidates(idx, missing, homomorphism=True)
    assert set(got[0].tolist()) <= {0} and got[1].tolist() == [] and all(c.dtype == NUMPY.vertex_dtype for c in got)


@SETTINGS
@given(**case_args, induced=st.booleans(), homomorphism=st.booleans(), pairs=st.integers(0, 2),
       prime=st.booleans())
def test_plan_steps_follow_their_definition(seed, n, p, vl, el, directed, qsize, sampled, induced, homomorphism,
                                            pairs, prime):
    """Each step's first edge and checks are the new vertex's linking edges, rarest label first then by column
    (ties in adjacency order); its distinct columns are the earlier unlinked columns of its label; the order
    starts with the prime edge where there is one and grows connected."""
    _, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 50, query.n).tolist()
    entries = {e: int(rng.integers(0, 5)) for e in range(2 * el)}
    less_than = tuple(tuple(int(x) for x in rng.choice(query.n, 2, replace=False)) for _ in range(pairs))
    prime_edge = int(rng.integers(0, query.m)) if prime and query.m else None
    options = MatchOptions(induced=induced, homomorphism=homomorphism)
    plan = build_plan(query, sizes, entries, 100, options, Constraints(less_than, prime_edge=prime_edge))
    order = list(plan.order)
    assert sorted(order) == list(range(query.n))
    if prime_edge is not None:
        assert {order[0], order[1]} == {int(query.edge_src[prime_edge]), int(query.edge_dst[prime_edge])}
    adj = query_adjacency(query)
    labels = query.vertex_labels.tolist()
    col = {u: i for i, u in enumerate(order)}
    for i, step in enumerate(plan.steps, start=1):
        u = order[i]
        assert step.vertex == u
        linking = [(col[w], e ^ 1 if query.directed else e) for w, e in adj[u] if col[w] < i]
        assert linking, "every vertex after the first is adjacent to an earlier one"
        ranked = sorted(linking, key=lambda ce: (entries.get(ce[1], 0), ce[0]))
        got = [(step.first_col, step.first_label), *step.checks]
        if step.cross_first:
            # Level 1 of a spanning search walks the prime edge first; the other links keep their ranking.
            assert i == 1 and prime_edge is not None
            ranked.remove(got[0])
            ranked.insert(0, got[0])
        assert got == ranked
        linked = {c for c, _ in linking}
        distinct = () if homomorphism else tuple(
            c for c in range(i) if c not in linked and labels[order[c]] == labels[u])
        assert step.distinct_cols == distinct
        assert step.greater_than == tuple(col[a] for a, b in less_than if b == u and col[a] < i)
        assert step.less_than == tuple(col[b] for a, b in less_than if a == u and col[b] < i)


@SETTINGS
@given(**case_args, homomorphism=st.booleans(), cap=st.sampled_from([0, 1, 3, 10, 1 << 30]),
       count_only=st.booleans())
def test_descent_stops_where_a_level_exceeds_its_cap(seed, n, p, vl, el, directed, qsize, sampled, homomorphism,
                                                     cap, count_only):
    """The fused descent hands back the table of the first level whose output space exceeds ``cap`` with that
    level's workload, and every level it extended on the way is the full level-by-level extension."""
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    prepared = engine.prepare(NUMPY, data, query, MatchOptions(homomorphism=homomorphism))
    if prepared is None:
        return
    idx, plan, nq = prepared.index, prepared.plan, query.n
    table = prepared.candidates[plan.order[0]][:, None]
    if nq == 1:
        return
    run = NUMPY.descend(idx, table, 1, plan, prepared.bits, count_only, cap)
    level = 1
    for total, survivors in run.levels:
        step = plan.steps[level - 1]
        delta, offsets, expected_total = NUMPY.workload(idx, table, step)
        assert total == expected_total <= cap
        last = count_only and level == nq - 1
        if total:
            table = NUMPY.extend(idx, table, LevelExtension(step, delta, offsets, prepared.bits[step.vertex], last), 0,
                                 total)
        else:
            table = 0 if last else table[:0]
        assert survivors == (table if last else table.shape[0])
        level += 1
    if run.level == nq:
        # A count's last level is only counted; a level left without rows ends the descent early.
        assert run.count == (table if isinstance(table, int) else table.shape[0])
        assert count_only or np.array_equal(run.table, table)
    else:
        assert run.level == level and np.array_equal(run.table, table)
        delta, offsets, total = NUMPY.workload(idx, table, plan.steps[level - 1])
        assert total > cap and run.workload[2] == total
        assert np.array_equal(run.workload[0], delta) and np.array_equal(run.workload[1], offsets)


@SETTINGS
@given(**case_args, induced=st.booleans(), homomorphism=st.booleans(), symmetry=st.booleans(),
       row_seed=st.integers(0, 2**32 - 1))
def test_one_row_tables_filter_as_their_row_ids_say(seed, n, p, vl, el, directed, qsize, sampled, induced,
                                                    homomorphism, symmetry, row_seed):
    """A one-row table extended by ``_row_extend`` (scalar column tests, checks against the column vertex's run)
    keeps exactly the entries, and builds the rows, that the general ``_survivors`` keeps from the same row's
    first-edge run with explicit row ids, at every level of the plan."""
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    options = MatchOptions(induced=induced, homomorphism=homomorphism)
    prepared = engine.prepare(NUMPY, data, query, options, constraints=Constraints(((0, 1),) if symmetry else ()))
    if prepared is None:
        return
    rng = np.random.default_rng(row_seed)
    idx = prepared.index
    for level, step in enumerate(prepared.plan.steps, start=1):
        table = rng.integers(0, data.n, (1, level)).astype(NUMPY.vertex_dtype)
        lo, hi = NUMPY._run_of(idx, int(table[0, step.first_col]), step.first_label)
        cand = idx.nbr[lo:hi]
        bits = prepared.bits[step.vertex]
        for count_only in (False, True):
            entries, row = NUMPY._row_extend(idx, table, step, bits, count_only, cap=data.nnz + 1)
            explicit = NUMPY._survivors(idx, table, step, np.zeros(cand.shape[0], np.int64), cand, bits, count_only,
                                        None)
            assert entries == hi - lo
            assert np.array_equal(row, explicit)


@SETTINGS
@given(**case_args, vertex_seed=st.integers(0, 2**32 - 1))
def test_one_vertex_membership_broadcasts_over_its_candidates(seed, n, p, vl, el, directed, qsize, sampled,
                                                              vertex_seed):
    """``has_edge`` and ``pair_count`` with a one-element ``x`` (a one-row table's column) answer for every ``y``
    as an ``x`` repeated to ``y``'s length does, labels the data graph lacks included."""
    data, _ = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    idx = NUMPY.index(data)
    rng = np.random.default_rng(vertex_seed)
    x = rng.integers(0, data.n, 1)
    y = rng.integers(0, data.n, int(rng.integers(0, 2 * data.n)))
    repeated = np.repeat(x, y.shape[0])
    for label in range(-1, idx.num_labels + 2):
        assert np.array_equal(NUMPY.has_edge(idx, x, label, y), NUMPY.has_edge(idx, repeated, label, y))
    assert np.array_equal(NUMPY.pair_count(idx, x, y), NUMPY.pair_count(idx, repeated, y))


@SETTINGS
@given(**case_args, vertex_seed=st.integers(0, 2**32 - 1))
def test_one_vertex_run_equals_the_vectorised_bounds(seed, n, p, vl, el, directed, qsize, sampled, vertex_seed):
    """``_run_of`` (a one-row table's run, in Python ints) gives the bounds ``run_bounds`` gives, labels the data
    graph lacks included, and the slice it names is the vertex's neighbours through that label."""
    data, _ = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    idx = NUMPY.index(data)
    v = int(np.random.default_rng(vertex_seed).integers(0, data.n))
    for label in range(-1, idx.num_labels + 2):
        s, t = NUMPY.run_bounds(idx, np.array([v]), label)
        lo, hi = NUMPY._run_of(idx, v, label)
        assert (lo, hi) == (int(s[0]), int(t[0])) or lo == hi == int(t[0] - s[0]) == 0
        expected = data.neighbors_of(v, label) if 0 <= label < idx.num_labels else []
        assert sorted(idx.nbr[lo:hi].tolist()) == sorted(np.asarray(expected).tolist())


def test_light_queries_finish_their_trial_without_measuring_the_scan(monkeypatch):
    """The trial's allowance needs refinement's scan measure only once the join passes the least allowance, so a
    light query never takes it, and a query that passes it still counts exactly."""
    from distsm.kernels import candidate_edges

    data, query = make_case(7, 9, 0.6, 2, 1, False, 4, False)
    expected = len(brute_force(data, query))
    measured = []
    real = candidate_edges.scan_entries
    monkeypatch.setattr(candidate_edges, "scan_entries", lambda *a: measured.append(1) or real(*a))
    assert counting.count(NUMPY, data, counting.Target(query, MatchOptions()), budget=1 << 26) == expected
    assert not measured
    with distsm.options({"engine.trial-entries": 1}):
        assert counting.count(NUMPY, data, counting.Target(query, MatchOptions()), budget=1 << 26) == expected
    assert measured
