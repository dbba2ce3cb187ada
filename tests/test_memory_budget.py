"""The join holds no more than its memory budget, however many partial matches a query has."""

import tracemalloc

import numpy as np
import pytest
from oracles import random_graph

import distsm
from distsm import Graph
from distsm.kernels import counting, get_backend
from distsm.kernels.query_plan import MatchOptions


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("path", ["general", "trailing"])
def test_count_stays_within_budget_and_matches_unbounded_count(path):
    rng = np.random.default_rng(3)
    data = random_graph(rng, 200, 0.1, 1, 1, False)  # ~2,000 edges: about a million 4-vertex paths
    query = Graph.from_edges([(0, 1), (1, 2), (2, 3)])
    backend = get_backend("numpy")
    distsm.count(data, Graph.from_edges([(0, 1)]), backend="numpy")  # build the index outside the measurement

    def run(budget):
        return counting.count(backend, data, counting.Target(query, MatchOptions()), budget=budget, path=path)

    unbounded, unbounded_peak = _peak_bytes(lambda: run(64 << 30))
    budget = 1 << 20
    if path == "general":
        assert unbounded_peak > 10 * budget  # without a budget the tables are far larger than it
    bounded, peak = _peak_bytes(lambda: run(budget))
    assert bounded == unbounded == distsm.count(data, query, backend="numpy")
    assert peak <= budget * 1.25, f"peak {peak} bytes over budget {budget}"


def test_listing_streams_in_chunks_within_budget():
    rng = np.random.default_rng(4)
    data = random_graph(rng, 100, 0.1, 1, 1, False)
    query = Graph.from_edges([(0, 1), (1, 2), (2, 3)])
    budget = 1 << 18
    total = distsm.count(data, query, backend="numpy")

    def consume():
        seen = 0
        for rows in distsm.iter_matches(data, query, memory_budget=budget, backend="numpy"):
            seen += rows.shape[0]
        return seen

    seen, peak = _peak_bytes(consume)
    assert seen == total
    assert peak <= budget * 1.25
