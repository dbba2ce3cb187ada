"""The general join over adjacency runs split by the neighbours' vertex labels (kernels/split_runs.py): the runs
against the graph's own neighbour lists, and joins over them against brute force and against whole runs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, make_case, random_graph

from distsm.kernels import engine, split_runs
from distsm.kernels.array_backend import NumpyBackend
from distsm.kernels.engine import Watch
from distsm.kernels.placement import Trial
from distsm.kernels.query_plan import MatchOptions

NUMPY = NumpyBackend()
BIG = 1 << 30  # a budget with room for every split index here


@pytest.fixture(scope="module")
def gpu():
    from distsm.kernels import get_backend

    return get_backend("cupy")


@scaled(40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), p=st.floats(0.05, 0.6), vl=st.integers(2, 5),
       el=st.integers(1, 3), directed=st.booleans())
def test_split_runs_hold_each_vertex_s_neighbours_of_one_vertex_label(seed, n, p, vl, el, directed):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, el, directed)
    idx = NUMPY.index(data)
    found = split_runs.split_index(NUMPY, idx, BIG)
    labels = np.asarray(data.vertex_labels)
    if len(set(labels.tolist())) < 2 or data.m == 0:
        assert found is None  # nothing to split
        return
    assert found is not None and split_runs.split_index(NUMPY, idx, BIG) is found  # built once per index
    split = found.index
    assert np.all(np.diff(split.entry_keys) > 0)  # one binary search answers membership
    for v in range(n):
        for e in range(data.num_effective_labels):
            whole = data.neighbors_of(v, e)
            for label in range(found.labels):
                s, t = NUMPY.run_bounds(split, np.array([v]), found.label(e, label))
                expected = whole[labels[whole] == label]
                np.testing.assert_array_equal(split.nbr[int(s[0]):int(t[0])], expected)
                y = np.arange(n)
                np.testing.assert_array_equal(NUMPY.has_edge(split, np.array([v]), found.label(e, label), y),
                                              np.isin(y, expected))


def _general(data, query, split: bool, trial: Trial | None = None) -> tuple[int, dict[str, int]]:
    """The general join's count of ``query`` on NumPy, over split runs or whole ones, and its statistics."""
    prepared = engine.prepare(NUMPY, data, query, MatchOptions())
    if prepared is None:
        return 0, {}
    stats: dict[str, int] = {}
    original = split_runs.split_index
    try:
        if not split:
            split_runs.split_index = lambda backend, idx, budget: None
        total = sum(int(c) for c in engine.walk(NUMPY, prepared, 1 << 24, True, watch=Watch(stats, trial=trial)))
    finally:
        split_runs.split_index = original
    return total, stats


@scaled(60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 8), p=st.floats(0.3, 0.9), vl=st.integers(2, 3),
       el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(2, 4), sampled=st.booleans())
def test_a_join_over_split_runs_counts_as_brute_force_and_reads_no_more_than_whole_runs(
        seed, n, p, vl, el, directed, qsize, sampled):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    expected = len(brute_force(data, query))
    split_total, split_stats = _general(data, query, split=True)
    whole_total, whole_stats = _general(data, query, split=False)
    assert split_total == whole_total == expected
    assert split_stats.get("gathered", 0) <= whole_stats.get("gathered", 0)


def test_split_runs_read_only_the_new_vertex_s_label():
    """A hub of label 0 with 50 spokes of each of 4 labels: a join from the hub to its label-1 neighbours reads
    those 50 entries of its row, not all 200."""
    from distsm.graph import Graph

    spokes = 50
    edges = np.array([(0, k) for k in range(1, 4 * spokes + 1)])
    labels = np.concatenate([[0], np.tile(np.arange(4), spokes)])
    data = Graph.from_edges(edges, n=4 * spokes + 1, vertex_labels=labels)
    query = Graph.from_edges(np.array([(0, 1)]), n=2, vertex_labels=[0, 1])
    prepared = engine.prepare(NUMPY, data, query, MatchOptions())
    assert prepared is not None and prepared.plan.order[0] == 0  # the hub is query vertex 0's one candidate
    split_total, split_stats = _general(data, query, split=True)
    whole_total, whole_stats = _general(data, query, split=False)
    assert split_total == whole_total == spokes
    assert (split_stats["gathered"], whole_stats["gathered"]) == (spokes, 4 * spokes)


def test_a_host_trial_reads_whole_runs_and_a_host_join_split_ones():
    rng = np.random.default_rng(3)
    data = random_graph(rng, 40, 0.2, 3, 1, False)
    query = random_graph(rng, 3, 1.0, 3, 1, False)
    prepared = engine.prepare(NUMPY, data, query, MatchOptions())
    assert prepared is not None
    assert split_runs.split(NUMPY, prepared, BIG, trial=True) is prepared
    joined = split_runs.split(NUMPY, prepared, BIG)
    found = split_runs.split_index(NUMPY, prepared.index, BIG)
    assert found is not None and joined.index is found.index
    labels = query.vertex_labels.tolist()
    for step, moved in zip(prepared.plan.steps, joined.plan.steps):
        own = labels[step.vertex]
        assert moved.first_label == found.label(step.first_label, own)
        assert moved.checks == tuple((c, found.label(e, own)) for c, e in step.checks)


def test_a_split_over_its_share_of_the_budget_is_refused_once_and_joins_read_whole_runs():
    rng = np.random.default_rng(7)
    data = random_graph(rng, 60, 0.15, 4, 1, False)
    idx = NUMPY.index(data)
    backend = NumpyBackend()
    assert split_runs.split_index(backend, idx, 64) is None
    # Refused once, not weighed again: a later join with room for it reads whole runs too.
    assert split_runs.split_index(backend, idx, BIG) is None
    query = random_graph(rng, 3, 1.0, 4, 1, False)
    prepared = engine.prepare(backend, idx, query, MatchOptions())
    assert prepared is not None and split_runs.split(backend, prepared, BIG) is prepared


def test_an_unlabelled_graph_has_no_split_index():
    rng = np.random.default_rng(1)
    data = random_graph(rng, 30, 0.2, 1, 2, True)
    assert split_runs.split_index(NUMPY, NUMPY.index(data), BIG) is None


@pytest.mark.gpu
@pytest.mark.parametrize("el, directed", [(1, False), (3, False), (2, True)])
def test_split_runs_on_cupy_are_numpy_s_and_count_alike(gpu, el, directed):
    from oracles import sampled_query

    rng = np.random.default_rng(11 + el)
    data = random_graph(rng, 300, 0.03, 6, el, directed)
    host_index = NUMPY.index(data)
    adopted = split_runs.split_index(gpu, host_index, BIG)  # a host index the device adopts splits on the device ...
    host = split_runs.split_index(NUMPY, host_index, BIG)  # ... and stays the host's own on the host
    assert adopted is not None and host is not None and isinstance(host.index.nbr, np.ndarray)
    assert not isinstance(adopted.index.nbr, np.ndarray)
    dev = split_runs.split_index(gpu, gpu.index(data), BIG)
    assert dev is not None and host.labels == dev.labels
    for name in ("nbr", "run_keys", "run_start", "run_end", "entry_keys"):
        np.testing.assert_array_equal(gpu.to_host(getattr(dev.index, name)), getattr(host.index, name))
    for _ in range(6):
        query = sampled_query(rng, data, 4)
        if query is None:
            continue
        expected = _general(data, query, split=False)[0]
        prepared = engine.prepare(gpu, data, query, MatchOptions())
        got = 0 if prepared is None else sum(int(c) for c in engine.walk(gpu, prepared, 1 << 24, True))
        assert got == expected


@pytest.mark.parametrize("backend_name", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_a_batch_reads_whole_runs_on_every_backend(backend_name):
    """The hub graph's query under an allowance of twice its split read and half its whole one: a batch (light
    queries, whole runs; see kernels/batch.py) leaves it to the per-query stages (None) on the host and the device
    alike, where a single query's device join would read its 50 label-1 entries."""
    from distsm.graph import Graph
    from distsm.kernels import get_backend
    from distsm.kernels.batch import LightBatch, count_light

    spokes = 50
    edges = np.array([(0, k) for k in range(1, 4 * spokes + 1)])
    labels = np.concatenate([[0], np.tile(np.arange(4), spokes)])
    data = Graph.from_edges(edges, n=4 * spokes + 1, vertex_labels=labels)
    query = Graph.from_edges(np.array([(0, 1)]), n=2, vertex_labels=[0, 1])
    backend = get_backend(backend_name)
    batch = LightBatch([query], MatchOptions(), allowance=[2 * spokes])
    assert count_light(backend, backend.index(data), batch, 1 << 26) == [None]


def test_a_relabelled_step_keeps_every_other_field():
    """Step.relabelled (split_runs' renumbering) builds the step positionally: against dataclasses.replace on a
    step whose every field differs, so that a field added or moved is not lost."""
    import dataclasses

    from distsm.kernels.query_plan import Step

    values = {f.name: (i + 1,) * (i + 1) for i, f in enumerate(dataclasses.fields(Step))}
    step = Step(**values)
    checks = ((7, 70), (8, 80))
    assert step.relabelled(99, checks) == dataclasses.replace(step, first_label=99, checks=checks)
