"""The trial-placement benchmark's fit: the allowance it picks minimises the summed time of its queries, and its
cost model recovers the device's costs from per-query times."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.trial_placement import fit, judge


def rows(host_rate: float, const: float, per_vertex: float, per_entry: float, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(30):
        n, entries = int(rng.integers(8, 33)), int(10 ** rng.uniform(3, 6.5))
        out.append({"kept": True, "n": n, "host": {"entries": entries, "seconds": entries / host_rate},
                    "device": {"entries": entries // 10, "seconds": const + per_vertex * n + per_entry * entries}})
    out.append({"kept": False, "n": 16, "host": None, "device": None})
    return out


def test_the_allowance_minimises_the_summed_time_and_the_model_recovers_the_costs():
    given = rows(1.2e7, 4e-4, 5e-5, 1 / 4e10)
    found = fit(given)
    kept = [r for r in given if r["kept"]]
    assert found["queries"] == 30
    grid = [judge(kept, pv)["rule_s"] for pv in range(0, 20_000, 50)]
    assert found["rule"]["rule_s"] <= min(grid) + 1e-12
    assert found["rule"]["best_s"] <= found["rule"]["rule_s"] <= min(found["rule"]["host_s"], found["rule"]["device_s"])
    assert found["rule"]["geomean_over_best"] >= 1.0
    assert found["host_entries_per_s"] == pytest.approx(1.2e7)
    assert found["device_s"] == pytest.approx(4e-4, rel=1e-6)
    assert found["device_s_per_vertex"] == pytest.approx(5e-5, rel=1e-6)


def test_a_host_slower_on_every_query_gets_no_trial():
    given = rows(1e3, 1e-4, 0.0, 0.0)
    assert fit(given)["trial_host_entries"] == 0


def test_too_few_queries_fit_nothing():
    assert "note" in fit(rows(1.2e7, 4e-4, 5e-5, 1 / 4e10)[:2])


def test_the_fit_sends_queries_with_many_candidates_to_the_device():
    """Where the host is faster on queries with few candidates and slower on those with many, the fit picks a
    candidate limit between them, and the rule beats the best single allowance."""
    given = []
    for i in range(20):
        few = i % 2 == 0
        entries = 2_000 if few else 40_000
        given.append({"kept": True, "n": 16, "candidates": 500 + i if few else 5_000 + i,
                      "host": {"entries": entries, "seconds": 4e-4 if few else 4e-3},
                      "device": {"entries": entries, "seconds": 1.2e-3}})
    found = fit(given)
    assert 518 <= found["trial_host_candidates"] < 5_000
    assert found["trial_host_entries"] * 16 >= 2_000
    assert found["rule"]["rule_s"] == pytest.approx(found["rule"]["best_s"])
    assert found["rule"]["rule_s"] < min(judge([r for r in given if r["kept"]], pv)["rule_s"] for pv in (0, 125, 2_500))
