"""The Dask layer on a CPU LocalCluster: batches, cancellation, timeouts, a killed worker, a lost scheduler."""

import os
import signal
import time

import networkx as nx
import numpy as np
import pytest
from hprd import DATA, expected_counts, query_path
from oracles import check_split, random_graph

import distsm
from distsm.cluster import ClusterError
from distsm.matcher import balanced_slices
from distsm.plan import Strategy

EXPECTED = expected_counts()
NAMES = sorted(EXPECTED, key=lambda s: int(s.rsplit("_", 1)[1]))


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as lc:
        with Client(lc) as client:
            yield client


@pytest.fixture(scope="module")
def hprd_matcher(cluster, tmp_path_factory):
    m = distsm.Matcher(str(DATA), cluster=cluster, partitions=4, backend="numpy",
                       partition_dir=tmp_path_factory.mktemp("parts") / "hprd-k4")
    yield m
    m.close()


def test_batch_matches_single_process_answers(hprd_matcher):
    names = NAMES[:60]
    batch = hprd_matcher.submit([str(query_path(n)) for n in names], names=names)
    assert len(batch) == 60
    seen = {}
    for r in batch.as_completed():
        assert r.ok, r.error
        seen[r.query] = r
    assert {n: r.count for n, r in seen.items()} == {n: EXPECTED[n] for n in names}
    for r in seen.values():
        assert r.strategy in (Strategy.PBE, Strategy.GLOBAL) and r.plan.reason
        check_split(r, 4)
    r = seen[names[0]]
    assert r.semantics == distsm.Semantics()
    assert {"plan", "intra", "inter", "merge"} <= set(r.seconds)


def test_every_part_is_loaded_once_on_a_worker(hprd_matcher):
    report = hprd_matcher.load_report
    assert sorted(r["part"] for r in report) == [0, 1, 2, 3]
    assert sum(r["vertices"] for r in report) == 9460
    assert len({r["worker"] for r in report}) == 2  # parts spread over both workers


def test_options_listing_and_unique(hprd_matcher):
    q = str(query_path("query_dense_16_2"))
    assert hprd_matcher.count(q) == EXPECTED["query_dense_16_2"]
    rows = hprd_matcher.match(q)
    assert rows.shape == (EXPECTED["query_dense_16_2"], 16)
    assert {tuple(r) for r in rows.tolist()} == {tuple(r) for r in distsm.match(DATA, q, backend="numpy").tolist()}
    assert hprd_matcher.match(q, limit=5).shape == (5, 16)
    data = distsm.read_graph(DATA)
    qg = distsm.read_graph(q)
    for opts in [dict(induced=True), dict(unique=True), dict(homomorphism=True)]:
        assert hprd_matcher.count(q, **opts) == distsm.count(data, qg, backend="numpy", **opts), opts


def test_symmetric_queries_on_a_random_graph(cluster, tmp_path):
    rng = np.random.default_rng(11)
    data = random_graph(rng, 120, 0.08, 1, 1, False)
    with distsm.Matcher(data, cluster=cluster, partitions=3, backend="numpy", partition_method="random") as m:
        queries = [distsm.Graph.from_networkx(g) for g in [nx.complete_graph(3), nx.cycle_graph(4),
                                                            nx.complete_graph(4), nx.path_graph(4)]]
        expected = [distsm.count(data, q, backend="numpy") for q in queries]
        for strategy in (None, "pbe", "global"):
            results = m.submit(queries, strategy=strategy).results()
            assert [r.count for r in results] == expected, strategy
            for r in results:
                check_split(r, 3)
                assert strategy is None or r.strategy is Strategy(strategy)
            rows = m.submit(queries[:2], strategy=strategy, listing=True).results()
            for r, q in zip(rows, queries[:2]):
                assert {tuple(x) for x in r.rows.tolist()} == {tuple(x) for x in distsm.match(data, q).tolist()}
        with pytest.raises(ValueError, match="strategy"):
            m.submit(queries[:1], strategy="best")


def test_cancel(hprd_matcher):
    batch = hprd_matcher.submit([str(query_path(n)) for n in NAMES], names=NAMES)
    batch.cancel()
    statuses = {r.status for r in batch.results()}
    assert statuses <= {"cancelled", "ok"} and "cancelled" in statuses
    assert hprd_matcher.count(str(query_path(NAMES[3]))) == EXPECTED[NAMES[3]]  # still usable


def test_timeout(hprd_matcher):
    batch = hprd_matcher.submit([str(query_path(n)) for n in NAMES], names=NAMES, timeout=0.05)
    results = batch.results()
    assert len(results) == len(NAMES)
    assert any(r.status == "timeout" for r in results)
    assert all(r.count == EXPECTED[r.query] for r in results if r.ok)
    with pytest.raises(ValueError, match="timeout"):
        hprd_matcher.submit([str(query_path(NAMES[0]))], timeout=0)


def test_killed_worker_does_not_lose_the_batch(hprd_matcher, cluster):
    batch = hprd_matcher.submit([str(query_path(n)) for n in NAMES], names=NAMES)
    it = batch.as_completed()
    first = next(it)
    pids = cluster.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    results = [first, *it]
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    assert {r.query: r.count for r in results} == EXPECTED
    # the next batch re-places the lost worker's partitions and still answers right
    cluster.wait_for_workers(2, timeout=60)
    assert hprd_matcher.count(str(query_path(NAMES[7]))) == EXPECTED[NAMES[7]]


def test_lost_scheduler_is_an_error_not_a_hang(tmp_path):
    from distributed import Client, LocalCluster

    lc = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(lc)
    m = distsm.Matcher(str(DATA), cluster=client, partitions=2, backend="numpy", partition_dir=tmp_path / "p")
    batch = m.submit([str(query_path(n)) for n in NAMES], names=NAMES)
    lc.close()
    t = time.monotonic()
    with pytest.raises(ClusterError, match="lost"):
        batch.results()
    assert time.monotonic() - t < 60
    client.close()


def test_balanced_slices():
    v = np.arange(10)
    w = np.array([100, 1, 1, 1, 1, 1, 1, 1, 1, 100])
    parts = balanced_slices(v, w, 3)
    assert np.array_equal(np.concatenate(parts), v)
    assert all(len(p) for p in parts) and len(parts) <= 3
    assert balanced_slices(np.arange(0), np.arange(0), 4) == []


def test_spanning_slices_are_id_ranges_covering_every_vertex_once(hprd_matcher):
    data = distsm.read_graph(DATA)
    q = distsm.read_graph(query_path("query_dense_16_2"))
    for strategy in ("pbe", "global"):
        plan = hprd_matcher.submit([q], strategy=strategy).results()[0]
        assert plan.ok and plan.count == EXPECTED["query_dense_16_2"]
        ranges = hprd_matcher._slices(Strategy(strategy))
        assert len(ranges) > 1 and all(isinstance(r, range) and len(r) for r in ranges)
        assert [r.start for r in ranges[1:]] == [r.stop for r in ranges[:-1]]
        assert ranges[0].start == 0 and ranges[-1].stop == data.n


def test_dashboard_status_route_and_prometheus_counters(tmp_path):
    import json
    import urllib.request

    from distributed import Client

    from distsm.cluster import local

    lc = local(gpus=None, workers=1, dashboard_address="127.0.0.1:0")
    try:
        with Client(lc) as client:
            with distsm.Matcher(str(DATA), cluster=client, partitions=2, backend="numpy",
                               partition_dir=tmp_path / "p") as m:
                names = NAMES[:5]
                base = client.dashboard_link.rsplit("/", 1)[0]
                # Prometheus counters are per process: earlier tests' schedulers may have counted too.
                before = _metrics(f"{base}/metrics")
                results = m.submit([str(query_path(n)) for n in names], names=names).results()
                matches = sum(r.count for r in results)
                # Workers report to the scheduler apart from returning results: give the reports a moment.
                deadline = time.monotonic() + 20
                while True:
                    status = json.loads(urllib.request.urlopen(f"{base}/distsm/status", timeout=10).read())
                    if status["totals"].get("queries") == 5 or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                after = _metrics(f"{base}/metrics")
                prefixes = set(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes)))
    finally:
        lc.close()
    assert status["totals"]["queries"] == 5 and status["totals"]["matches"] == matches
    batch = status["batches"][-1]
    assert batch["queries"] == 5 and batch["done"] == 5 and not batch["in_flight"]
    assert set(batch["plans"]) == set(names) and all("strategy" in p for p in batch["plans"].values())
    assert after["distsm_queries_done_total"] - before.get("distsm_queries_done_total", 0) == 5
    assert after["distsm_matches_counted_total"] - before.get("distsm_matches_counted_total", 0) == matches
    assert after["distsm_adjacency_gathered_bytes_total"] > before.get("distsm_adjacency_gathered_bytes_total", 0)
    assert {"distsm-load", "distsm-intra", "distsm-inter", "distsm-merge"} <= prefixes


def _metrics(url):
    import urllib.request

    out = {}
    for line in urllib.request.urlopen(url, timeout=10).read().decode().splitlines():
        if line.startswith("distsm_"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out
