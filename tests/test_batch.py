"""The batched light stage (:mod:`distsm.kernels.batch`): a batch's light queries joined together give exactly the
counts of one query at a time and of independent oracles (networkx VF2, brute force, HPRD's published counts), under
every semantics, on directed and undirected graphs; queries past their allowance or the budget are left to the
per-query path, and :func:`~distsm.plan.execute.run_whole_jobs` then gives what one job at a time gives."""

from unittest.mock import patch

import numpy as np
import pytest
from hprd import DATA, expected_counts, query_path
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, networkx_matches, queries_for, random_connected_query, random_graph, subgraph_key

import distsm
from distsm import Graph, Semantics
from distsm.kernels import batch, counting, engine, get_backend
from distsm.kernels.array_backend import ArrayBackend
from distsm.kernels.query_plan import Constraints, MatchOptions
from distsm.partitioned import PartitionedMatcher
from distsm.plan.execute import run_job, run_whole_jobs, whole_query_jobs
from distsm.plan.search import symmetry
from distsm.plan.work import QueryWork

NUMPY = get_backend("numpy")
SEMANTICS = {"plain": Semantics(), "induced": Semantics(induced=True), "homomorphism": Semantics(homomorphism=True),
             "unique": Semantics(unique=True)}


def oracle(data: Graph, query: Graph, sem: Semantics) -> int:
    """The count by networkx VF2 (brute force for homomorphisms; distinct matched subgraphs for unique counts)."""
    if sem.homomorphism:
        return len(brute_force(data, query, homomorphism=True))
    matches = networkx_matches(data, query, induced=sem.induced)
    if sem.unique:
        return len({subgraph_key(data, query, f) for f in matches})
    return len(matches)


def alone(data: Graph, query: Graph, sem: Semantics) -> int:
    """The count of the per-query stages (light trial, else plan and run)."""
    return counting.count(NUMPY, data, counting.Target(query, sem.match_options, symmetry(query, sem)), budget=1 << 26)


def light(data: Graph, queries: list[Graph], sem: Semantics, allowance=None, budget: int = 1 << 26):
    return batch.count_light(NUMPY, NUMPY.index(data),
                             batch.LightBatch(queries, sem.match_options, [symmetry(q, sem).less_than for q in queries],
                                         allowance), budget)


case = dict(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 9), p=st.floats(0.2, 0.8), vl=st.integers(1, 3),
            el=st.integers(1, 2), directed=st.booleans(), sizes=st.lists(st.integers(1, 4), min_size=1, max_size=5),
            semantics=st.sampled_from(sorted(SEMANTICS)))


@scaled(60)
@given(**case, members=st.sampled_from(["mask", "bitset", "sorted keys"]))
def test_batch_counts_equal_oracles_and_one_at_a_time(seed, n, p, vl, el, directed, sizes, semantics, members):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, el, directed)
    queries = queries_for(rng, data, sizes, vl, el)
    sem = SEMANTICS[semantics]
    with patch.object(batch, "SET_MASK", batch.SET_MASK if members == "mask" else 0), \
            patch.object(batch, "SET_BITS", 0 if members == "sorted keys" else batch.SET_BITS):
        found = light(data, queries, sem)
    expected = [oracle(data, q, sem) for q in queries]
    assert found == expected  # tiny graphs: every query is light
    assert [alone(data, q, sem) for q in queries] == expected
    assert found[-1] == 0  # the query whose label the data graph lacks


@scaled(40)
@given(**case, per_vertex=st.sampled_from([0, 1, 4, 16]))
def test_queries_past_their_allowance_are_left_to_the_per_query_path(seed, n, p, vl, el, directed, sizes, semantics,
                                                                      per_vertex):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, el, directed)
    queries = queries_for(rng, data, sizes, vl, el)
    sem = SEMANTICS[semantics]
    allowance = [per_vertex * q.n for q in queries]
    found = light(data, queries, sem, allowance)
    expected = [oracle(data, q, sem) for q in queries]
    for value, want, q in zip(found, expected, queries):
        assert value is None or value == want
        if value is None:  # only a join that reads adjacency entries can pass an allowance
            assert q.n > 1
    if per_vertex == 0:
        # A zero allowance admits only joins that read nothing: single vertices and empty first runs.
        assert all(v is None or v == 0 or q.n == 1 for v, q in zip(found, queries))
    # The batch-then-alone driver answers every query exactly.
    matcher = PartitionedMatcher(data, 1, backend=NUMPY)
    # The batch on the cluster's site gets the queries that do not take the depth-first search: each keeps its
    # allowance.
    by_query = {id(q): a for q, a in zip(queries, allowance)}
    with patch.object(batch.LightBatch, "allowances", lambda self: [by_query[id(q)] for q in self.queries]):
        results = matcher.count_batch(queries, sem, 1 << 26)
    assert [r.count for r in results] == expected


def test_a_budget_bounds_every_join_of_the_batch_and_skips_what_fits_nowhere():
    rng = np.random.default_rng(7)
    data = random_graph(rng, 12, 0.5, 2, 2, False)
    queries = queries_for(rng, data, [2, 3, 3, 4, 2, 3], 2, 2)
    sem = Semantics()
    expected = [oracle(data, q, sem) for q in queries]
    allowance = [50 * q.n for q in queries]
    idx = NUMPY.index(data)
    prepared = [engine.prepare(NUMPY, idx, q, sem.match_options) for q in queries]
    need = [None if p is None else batch.need_bytes(p, a) for p, a in zip(prepared, allowance)]
    with_candidates = sum(p is not None for p in prepared)
    assert with_candidates == len(queries) - 1  # the lone query has none
    calls: list[tuple[int, int]] = []  # (queries, bytes they may hold) of every joint count
    real = ArrayBackend.count_prepared

    def spy(self, ps, allow, budget):
        calls.append((len(ps), sum(batch.need_bytes(p, a) for p, a in zip(ps, allow))))
        return real(self, ps, allow, budget)

    with patch.object(ArrayBackend, "count_prepared", spy):
        # Room for everything: one join with every allowance whole.
        assert light(data, queries, sem, allowance, budget=1 << 30) == expected
        assert calls == [(with_candidates, sum(b for b in need if b is not None))]
        largest = max(b for b in need if b is not None)
        for budget in (largest, largest - 1, largest // 3):
            calls.clear()
            found = light(data, queries, sem, allowance, budget=budget)
            # Round one holds every query with cut allowances; the queries past theirs run again in groups.
            assert calls[0][0] == with_candidates and all(held <= budget for _, held in calls)
            for value, want, b in zip(found, expected, need):
                assert value == want or (value is None and b is not None and b > budget)
    assert light(data, queries, sem, allowance, budget=1) == [None] * (len(queries) - 1) + [0]


def test_run_whole_jobs_equals_one_job_at_a_time_with_heavy_and_light_queries():
    import networkx as nx

    g = nx.gnm_random_graph(300, 3000, seed=1)
    data = Graph.from_networkx(g)
    edge, wedge, triangle, path7 = (Graph.from_networkx(q) for q in (nx.path_graph(2), nx.path_graph(3),
                                                                      nx.cycle_graph(3), nx.path_graph(7)))
    queries = [edge, path7, wedge, triangle]
    matcher = PartitionedMatcher(data, 1, backend=NUMPY)
    sem = Semantics()
    [job] = whole_query_jobs()
    together = list(run_whole_jobs(matcher, queries, sem, 1 << 26, split_work=1e8))
    apart = [run_job(matcher, job, QueryWork(q, sem, 1 << 26), split_work=1e8) for q in queries]
    assert [(r.stage, r.part, r.count, r.heavy is not None) for r in together] == \
        [(r.stage, r.part, r.count, r.heavy is not None) for r in apart]
    assert together[1].heavy and together[1].count == 0  # the 7-path (about 10^10 embeddings) is split instead
    degrees = np.array([d for _, d in g.degree()])
    assert [together[k].count for k in (0, 2, 3)] == [2 * g.number_of_edges(), int((degrees * (degrees - 1)).sum()),
                                                      len(networkx_matches(data, triangle))]
    assert all(not r.heavy for k, r in enumerate(together) if k != 1)


def test_queries_a_batch_leaves_count_alone_with_its_filter_and_no_second_trial(monkeypatch):
    """A query past the batch's allowance is counted by its own job over the batch's candidates, without filtering
    or a trial join again; the counts equal one job at a time."""
    import networkx as nx

    from distsm.kernels import counting

    g = nx.gnm_random_graph(300, 3000, seed=2)
    data = Graph.from_networkx(g)
    # A 5-vertex fork, not a path: a 5-path's closed form would count it without a plan.
    fork = nx.Graph([(0, 1), (1, 2), (2, 3), (2, 4)])
    queries = [Graph.from_networkx(q) for q in (nx.path_graph(2), fork, nx.star_graph(3))]
    matcher = PartitionedMatcher(data, 1, backend=NUMPY)
    [job] = whole_query_jobs()
    apart = [run_job(matcher, job, QueryWork(q, Semantics(), 1 << 26)).count for q in queries]
    filters, trials, plans = [], [], []
    monkeypatch.setattr(NUMPY, "candidates_of", _recorded(NUMPY.candidates_of, filters))
    monkeypatch.setattr(counting.Count, "_join", _recorded(counting.Count._join, trials))
    monkeypatch.setattr(counting.Count, "plan", _recorded(counting.Count.plan, plans))
    with distsm.options({"engine.trial-entries": 64, "engine.trial-ratio-host": 0.0}):
        together = list(run_whole_jobs(matcher, queries, Semantics(), 1 << 26))
    assert [r.count for r in together] == apart
    assert len(plans) == 3  # every query left the batch for its own job
    assert len(filters) == 1 and len(filters[0][1][1]) == 3 and not trials  # one batched filter, no solo trial


@pytest.mark.parametrize("on_device", [False, True])
def test_a_devices_batch_leaves_its_leftovers_their_own_trial(monkeypatch, on_device):
    """A device's batch refuses queries whose levels outgrow its scratch tables, untried: its leftovers run their
    own trial join (a host's leftovers were tried by the batch and plan directly)."""
    from types import SimpleNamespace

    from distsm.plan import execute

    site = SimpleNamespace(backend=SimpleNamespace(on_device=on_device), worker="w", moved_bytes=lambda: 0,
                           device_bytes=lambda: 0, adjacency_choice=lambda: None)
    jobs = []
    monkeypatch.setattr(execute, "_light_counts", lambda site, queries, *args: [None, 7])
    monkeypatch.setattr(execute, "run_job", lambda site, job, *args, **kwargs: jobs.append(job) or "alone")
    results = list(run_whole_jobs(site, [Graph.from_edges([(0, 1)], n=2)] * 2, Semantics(), 1 << 26))
    assert results[0] == "alone" and results[1].count == 7
    [job] = jobs
    assert job.heavy is not on_device


def test_a_batch_hands_off_the_queries_left_after_the_next_one_when_asked(monkeypatch):
    """Before each query counted alone while others are left after it, ``hand_off`` is asked with those; the ones it
    takes are not counted and come back as None, in their places."""
    from types import SimpleNamespace

    from distsm.plan import execute

    site = SimpleNamespace(backend=SimpleNamespace(on_device=False), worker="w", moved_bytes=lambda: 0,
                           device_bytes=lambda: 0, adjacency_choice=lambda: None)
    queries = [Graph.from_edges([(0, 1)], n=2, vertex_labels=[k, k]) for k in range(4)]
    counted, asked = [], []
    monkeypatch.setattr(execute, "_light_counts", lambda site, queries, *args: [None, 5, None, None])
    monkeypatch.setattr(execute, "run_job",
                        lambda site, job, work, *args, **kwargs: counted.append(queries.index(work.query)) or "alone")
    for takes, want_asked, want_counted, want in (
            (True, [[2, 3]], [0], ["alone", 5, None, None]),
            (False, [[2, 3], [3]], [0, 2, 3], ["alone", 5, "alone", "alone"])):
        asked.clear()
        counted.clear()

        def hand_off(later, takes=takes):
            asked.append(later)
            return takes

        results = list(run_whole_jobs(site, queries, Semantics(), 1 << 26, hand_off=hand_off))
        assert [r if r is None or isinstance(r, str) else r.count for r in results] == want
        assert asked == want_asked and counted == want_counted


@pytest.mark.parametrize("seed", range(4))
def test_a_batch_filter_in_chunks_equals_one_query_at_a_time(monkeypatch, seed):
    """A batch whose pools are large is filtered a run of queries at a time; each query's candidates equal its own
    filter's."""
    from distsm.kernels import candidate_filter

    rng = np.random.default_rng(seed)
    data = random_graph(rng, 60, 0.2, 2, 1, False)
    queries = [random_connected_query(rng, data, int(rng.integers(2, 6)), 0.3, 2, 1) for _ in range(12)]
    idx = NUMPY.index(data)
    alone = [[list(c) for c in NUMPY.candidates_of(idx, [q], homomorphism=False)[0]] for q in queries]
    # Runs cut by the caller's room ...
    runs: list = []
    monkeypatch.setattr(NUMPY, "candidates_of", _recorded(NUMPY.candidates_of, runs))
    by_room = NUMPY.candidates_of(idx, queries, homomorphism=False, room=16 * candidate_filter.FILTER_ENTRY_BYTES)
    assert [[list(c) for c in sets] for sets in by_room] == alone
    assert len(runs) > 2  # the call itself and at least two runs
    monkeypatch.undo()
    # ... and by the fixed run length.
    monkeypatch.setattr(candidate_filter, "FILTER_CHUNK_ENTRIES", 16)
    chunked = NUMPY.candidates_of(idx, queries, homomorphism=False)
    assert [[list(c) for c in sets] for sets in chunked] == alone


def _recorded(function, calls):
    """``function`` that appends its arguments to ``calls`` first."""
    def record(*args, **kwargs):
        calls.append((kwargs, args))
        return function(*args, **kwargs)
    return record


def test_hprd_200_queries_as_one_batch_match_the_published_counts():
    data = distsm.read_graph(DATA)
    names = list(expected_counts())
    queries = [distsm.read_graph(query_path(n)) for n in names]
    found = light(data, queries, Semantics(), budget=1 << 30)
    assert dict(zip(names, found)) == expected_counts()  # every HPRD query is light
    results = distsm.count_batch(data, queries, partitions=1, backend="numpy", names=names)
    assert {r.query: r.count for r in results} == expected_counts()


def test_the_batch_rejects_spanning_searches_and_mixed_indexes():
    rng = np.random.default_rng(1)
    a, b = random_graph(rng, 6, 0.6, 1, 1, False), random_graph(rng, 6, 0.6, 1, 1, False)
    q = Graph.from_edges(np.array([[0, 1]]), n=2)
    pa = engine.prepare(NUMPY, a, q, MatchOptions())
    pb = engine.prepare(NUMPY, b, q, MatchOptions())
    assert pa is not None and pb is not None
    with pytest.raises(ValueError, match="one index"):
        NUMPY.count_prepared([pa, pb], [100, 100], 1 << 30)
    with pytest.raises(ValueError, match="one allowance"):
        NUMPY.count_prepared([pa], [], 1 << 30)
    spanning = engine.prepare(NUMPY, a, q, MatchOptions(), constraints=Constraints(prime_edge=0))
    assert spanning is not None
    with pytest.raises(ValueError, match="spanning"):
        NUMPY.count_prepared([spanning], [100], 1 << 30)


@pytest.mark.gpu
@scaled(20)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(20, 200), deg=st.integers(2, 8), vl=st.integers(1, 4),
       el=st.integers(1, 3), directed=st.booleans(), sizes=st.lists(st.integers(1, 6), min_size=1, max_size=12),
       semantics=st.sampled_from(sorted(SEMANTICS)), per_vertex=st.sampled_from([8, 64, 32768]))
def test_cupy_batches_equal_numpy(seed, n, deg, vl, el, directed, sizes, semantics, per_vertex):
    """The array-level batch under the CuPy backend (``ArrayBackend.count_prepared``, and the backend's own
    ``count_prepared``) gives NumPy's answers on fresh random inputs."""
    gpu = get_backend("cupy")
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, deg / n, vl, el, directed)
    queries = queries_for(rng, data, sizes, vl, el)
    sem = SEMANTICS[semantics]
    allowance = [per_vertex * q.n for q in queries]
    expected = light(data, queries, sem, allowance)
    for backend in (gpu, NUMPY):
        idx = backend.index(data)
        prepared = [engine.prepare(backend, idx, q, sem.match_options,
                                   constraints=Constraints(symmetry(q, sem).less_than))
                    for q in queries]
        live = [k for k, p in enumerate(prepared) if p is not None]
        want = [expected[k] for k in live]
        ps, allow = [prepared[k] for k in live], [allowance[k] for k in live]
        budget = 1 << 30
        for found in (ArrayBackend.count_prepared(backend, ps, allow, budget),
                      backend.count_prepared(ps, allow, budget)):
            # A backend may leave more queries to the per-query path (its buffers), never answer differently.
            assert all(f is None or f == w for f, w in zip(found, want))
            if backend is NUMPY:
                assert found == want
    # Either backend's light stage may leave a query to the per-query stages (None: past its allowance as that
    # backend reads it, or, on the device, levels that outgrow the scratch tables); what it answers is exact, and
    # the batch driver, which counts the others alone, answers every query exactly.
    truth = [alone(data, q, sem) for q in queries]
    assert all(e is None or e == t for e, t in zip(expected, truth))
    found = batch.count_light(gpu, gpu.index(data), batch.LightBatch(queries, sem.match_options,
                                                                [symmetry(q, sem).less_than for q in queries],
                                                                allowance), 1 << 28)
    assert all(f is None or f == t for f, t in zip(found, truth)), (found, truth)
    # The batch on the cluster's site gets the queries that do not take the depth-first search: each keeps its
    # allowance.
    by_query = {id(q): a for q, a in zip(queries, allowance)}
    with patch.object(batch.LightBatch, "allowances", lambda self: [by_query[id(q)] for q in self.queries]):
        results = PartitionedMatcher(data, 1, backend=gpu).count_batch(queries, sem, 1 << 28)
    assert [r.count for r in results] == truth


@scaled(40)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(2, 7), extra=st.floats(0, 1), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans())
def test_stabilizer_chain_shortcuts_keep_the_automorphism_group(seed, size, extra, vl, el, directed):
    """A batch plans each whole query's symmetry (its stabiliser chain) without searches where colour refinement
    separates every vertex: the chain still gives the group the engine's full self-match enumeration lists."""
    from distsm.plan.automorphism import automorphisms, stabilizer_chain

    rng = np.random.default_rng(seed)
    data = random_graph(rng, 4, 0.5, vl, el, directed)
    query = random_connected_query(rng, data, size, extra, vl, el)
    every = {tuple(int(x) for x in row) for row in automorphisms(query)}
    chain = stabilizer_chain(query)
    assert chain.order == len(every)
    assert set(chain.generators) <= every
