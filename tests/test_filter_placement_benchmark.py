"""The filter-placement benchmark's fit: the pool limit it picks minimises the summed time of the queries it fits,
and queries left out of the fit do not move it."""

from __future__ import annotations

import pytest

from benchmarks.filter_placement import fit, judge


def rows(split: int, seed: int = 0) -> list[dict]:
    """Queries whose filter is faster on the host below ``split`` pool vertices and on the device above it."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(40):
        pools = int(10 ** rng.uniform(2, 6))
        host = 5e-4 + pools * 2e-8
        device = 5e-4 + split * 2e-8 + pools * 2e-9
        out.append({"suite": "s", "pools": pools, "host": host, "device": device, "kept": True})
    return out


def test_the_limit_minimises_the_summed_time():
    given = rows(20_000)
    found = fit(given)
    assert found["queries"] == 40
    grid = [judge(given, limit)["rule_s"] for limit in range(0, 2_000_000, 500)]
    assert found["rule"]["rule_s"] <= min(grid) + 1e-12
    assert found["rule"]["best_s"] <= found["rule"]["rule_s"] <= min(found["rule"]["host_s"], found["rule"]["device_s"])
    # Here the faster side changes once, near 20,000 pool vertices, so the rule is the faster side everywhere.
    assert found["rule"]["rule_s"] == pytest.approx(found["rule"]["best_s"])
    assert found["rule"]["geomean_over_best"] == pytest.approx(1.0)
    below = [r["pools"] for r in given if r["pools"] < 20_000]
    above = [r["pools"] for r in given if r["pools"] > 20_000 * 10 / 9]
    assert max(below) <= found["host_filter_vertices"] < min(above)


def test_queries_left_out_do_not_move_the_limit():
    given = rows(20_000)
    heavy = [{"suite": "s", "pools": 10, "host": 9.0, "device": 0.5, "kept": False}]
    assert fit(given + heavy) == fit(given)


def test_a_device_faster_on_every_query_gets_limit_zero_and_too_few_queries_fit_nothing():
    given = [{"suite": "s", "pools": p, "host": 2e-3, "device": 1e-3, "kept": True} for p in (10, 100, 1000)]
    assert fit(given)["host_filter_vertices"] == 0
    assert "note" in fit(given[:2])


def test_measure_counts_each_query_on_both_sides_and_records_its_pools(tmp_path):
    """On NumPy (no host twin, so both settings run alike) the rows carry each query's pool vertices as the
    placement computes them, the count, and both sides' times."""
    from oracles import brute_force, random_graph

    import distsm
    from benchmarks import peers
    from benchmarks.filter_placement import measure
    from distsm.kernels import get_backend
    from distsm.kernels.placement import pool_vertices

    import numpy as np

    rng = np.random.default_rng(4)
    data = random_graph(rng, 30, 0.3, 3, 1, False)
    query = distsm.Graph.from_edges([(0, 1), (1, 2)], vertex_labels=[0, 1, 2])
    distsm.write_graph(data, tmp_path / "data.graph")
    distsm.write_graph(query, tmp_path / "q.graph")
    suite = peers.Suite("tiny", str(tmp_path / "data.graph"),
                        [peers.Query("q", str(tmp_path / "q.graph"), query.n, query.m)])
    [row] = measure(suite, 2, 10.0, backend="numpy")
    assert row["count"] == len(brute_force(data, query))
    assert row["pools"] == pool_vertices(get_backend("numpy").index(data), query)
    assert row["kept"] and row["host"] > 0 and row["device"] > 0
