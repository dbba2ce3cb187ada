"""Packing a batch's whole queries into tasks: the client's label-and-degree cost bound and the groups."""

import networkx as nx
import numpy as np
import pytest
from oracles import random_graph

import distsm
from distsm.cluster.grouping import GROUPS_PER_WORKER, LabelDegreeCost, whole_groups
from distsm.request import query_for


def _brute_cost(data, query):
    """Min over query vertices of the total degree of the data vertices of its label and at least its degree."""
    best = None
    for v in range(query.n):
        ok = (data.vertex_labels == query.vertex_labels[v]) & (data.degrees >= query.degrees[v])
        total = int(data.degrees[ok].sum())
        best = total if best is None else min(best, total)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_label_degree_cost_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    data = random_graph(rng, 80, 0.08, 3, 1, False)
    cost = LabelDegreeCost(data)
    for g in [nx.path_graph(3), nx.cycle_graph(4), nx.star_graph(4), nx.complete_graph(4), nx.star_graph(60)]:
        for _ in range(3):
            nx.set_node_attributes(g, {v: int(rng.integers(0, 3)) for v in g}, "label")
            q = query_for(data, distsm.Graph.from_networkx(g))
            assert cost(q) == _brute_cost(data, q)
        nx.set_node_attributes(g, {v: 7 for v in g}, "label")  # no data vertex has it
        assert cost(query_for(data, distsm.Graph.from_networkx(g))) == 0


def test_groups_cover_every_query_once_heaviest_first():
    rng = np.random.default_rng(5)
    for n, workers in [(1, 1), (7, 2), (200, 1), (200, 8), (200, 16), (16, 8), (50, 3)]:
        costs = rng.lognormal(0, 2, n).tolist()
        groups = whole_groups(costs, workers)
        assert sorted(i for g in groups for i in g) == list(range(n))
        assert len(groups) <= min(n, 2 * GROUPS_PER_WORKER * workers)
        flat = [i for g in groups for i in g]
        assert [costs[i] for i in flat] == sorted(costs, reverse=True)  # groups taken in decreasing cost
        if n >= 4 * GROUPS_PER_WORKER * workers:
            assert len(groups) >= GROUPS_PER_WORKER * workers // 2
            # the tail balances: the last group weighs no more than the first
            weight = [sum(costs[i] for i in g) + len(g) * np.mean(costs) for g in groups]
            assert weight[-1] <= weight[0]


def test_a_query_heavier_than_a_group_is_a_group_of_its_own_and_equal_queries_share():
    groups = whole_groups([1000.0] + [1.0] * 40, 2)
    assert groups[0] == [0]
    assert all(len(g) > 1 for g in groups[1:-1])
    assert whole_groups([0.0] * 12, 1) != [[i] for i in range(12)]  # queries estimated at 0 still group
    assert whole_groups([], 4) == []
    with pytest.raises(ValueError, match="workers"):
        whole_groups([1.0], 0)


def test_larger_slices_start_first_and_every_slice_before_the_batch():
    """Slices outrank every query of a batch, and of two slices the one estimated at more work ranks higher, so
    the scheduler starts the largest first; estimates past the range keep the order they can."""
    from distsm.cluster.tasks import SPLIT_PRIORITY, slice_priority

    works = [0.0, 5e2, 2e3, 1e6, 3.7e8, 1e12, 1e30]
    ranks = [slice_priority(w) for w in works]
    assert ranks == sorted(ranks) and len(set(ranks[2:5])) == 3
    assert min(ranks) == SPLIT_PRIORITY > 10_000  # a batch's query priorities count up from 0
    assert ranks[-1] < 2 * SPLIT_PRIORITY and slice_priority(-1.0) == SPLIT_PRIORITY


def test_a_heavy_count_gets_one_slice_per_split_work_within_bounds():
    from distsm.cluster.tasks import slice_count

    assert slice_count(3e7, 3e7, 32) == 2  # just heavy: still split
    assert slice_count(1.4e8, 3e7, 32) == 5
    assert slice_count(1e11, 3e7, 32) == 32
    assert slice_count(1e9, 0.0, 8) == 8  # split-work 0 splits everything as finely as allowed
    assert [slice_count(w, 1e7, 64) for w in (1e7, 2e8, 4e8, 1e9)] == [2, 20, 40, 64]


def test_a_group_submits_a_heavy_querys_slices_before_it_counts_the_next_query(monkeypatch):
    """A group task hands a heavy query's slices to the cluster as soon as that query's plan shows it heavy, while
    the group's later queries are still to be counted; each later query is counted after the submission, and the
    heavy query's job is charged the seconds its slices took to cut."""
    from types import SimpleNamespace

    from distsm.cluster import tasks
    from distsm.plan.results import Heavy, JobResult

    events = []
    heavy = JobResult("inter", None, 0, None, 0.1, "w", heavy=Heavy("heavy", shared=object()))

    def counted(site, graphs, sem, budget, control=None, split_work=None, hand_off=None):
        for g in graphs:
            events.append(("counted", g))
            yield heavy if g == "h" else JobResult("inter", None, 1, None, 0.1, "w")

    def submit(name, state, query, measured, budget, split):
        events.append(("submitted", query.graph))
        return ["future"], 0.25

    monkeypatch.setattr(tasks, "run_whole_jobs", counted)
    monkeypatch.setattr(tasks, "_submit_shared", submit)
    state = SimpleNamespace(job_budget=lambda budget: budget)
    queries = [SimpleNamespace(graph=g, sem=None, split=4) for g in ("a", "h", "b", "c")]
    submitted: dict[int, list] = {}
    measured = tasks._measured("m", state, queries, None, None, submitted, {})
    assert events == [("counted", "a"), ("counted", "h"), ("submitted", "h"), ("counted", "b"), ("counted", "c")]
    assert submitted == {1: ["future"]} and [m.count for m in measured] == [1, 0, 1, 1]
    assert measured[1].heavy is heavy.heavy
    # Cutting the slices is charged to the job that found the query heavy, as setup.
    assert (measured[1].seconds, measured[1].setup_seconds) == pytest.approx((0.35, 0.25))
