"""The Dask layer on a CPU LocalCluster: batches, cancellation, timeouts, a killed worker, a lost scheduler."""

import os
import platform
import signal
import sys
import time

import networkx as nx
import numpy as np
import pytest
from hprd import DATA, expected_counts, query_path
from oracles import check_split, heavy_case, networkx_matches, random_graph

import distsm
from distsm import Partitioning, Semantics
from distsm.cluster import ClusterError, QueryResult
from distsm.kernels.candidate_edges import scan_entries
from distsm.matcher import longest_first
from distsm.plan.slices import balanced_slices
from distsm.plan import Strategy
from distsm.plan.distribution import Directions, by_estimate, decide

EXPECTED = expected_counts()
NAMES = sorted(EXPECTED, key=lambda s: int(s.rsplit("_", 1)[1]))


@pytest.fixture(scope="module")
def hprd_matcher(cluster, tmp_path_factory):
    m = distsm.Matcher(str(DATA), cluster=cluster, backend="numpy",
                       partitions=Partitioning(4, directory=tmp_path_factory.mktemp("parts") / "hprd-k4"))
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
    with distsm.Matcher(data, cluster=cluster, partitions=Partitioning(3, "random"), backend="numpy") as m:
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
    m = distsm.Matcher(str(DATA), cluster=client, partitions=Partitioning(2, directory=tmp_path / "p"), backend="numpy")
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
        plan = hprd_matcher.submit([q], strategy=strategy, distribute="sliced").results()[0]
        assert plan.ok and plan.count == EXPECTED["query_dense_16_2"] and plan.distribution == "sliced"
        slices = hprd_matcher._slices(Strategy(strategy))
        ranges = sorted({r for r, _ in slices}, key=lambda r: r.start)
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
            with distsm.Matcher(str(DATA), cluster=client, partitions=Partitioning(2, directory=tmp_path / "p"),
                                backend="numpy") as m:
                names = NAMES[:5]
                base = client.dashboard_link.rsplit("/", 1)[0]
                # Prometheus counters are per process: earlier tests' schedulers may have counted too.
                before = _metrics(f"{base}/metrics")
                results = m.submit([str(query_path(n)) for n in names], names=names, distribute="sliced").results()
                results += m.submit([str(query_path(n)) for n in names], names=names).results()  # whole, one worker
                matches = sum(r.count for r in results)
                # Workers report to the scheduler apart from returning results: give the reports a moment.
                deadline = time.monotonic() + 20
                while True:
                    status = json.loads(urllib.request.urlopen(f"{base}/distsm/status", timeout=10).read())
                    if status["totals"].get("queries") == 10 or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                after = _metrics(f"{base}/metrics")
                prefixes = set(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes)))
    finally:
        lc.close()
    assert status["totals"]["queries"] == 10 and status["totals"]["matches"] == matches
    assert [r.distribution for r in results] == ["sliced"] * 5 + ["whole"] * 5
    batch = status["batches"][-1]
    assert batch["queries"] == 5 and batch["done"] == 5 and not batch["in_flight"]
    assert set(batch["plans"]) == set(names) and all("strategy" in p for p in batch["plans"].values())
    assert after["distsm_queries_done_total"] - before.get("distsm_queries_done_total", 0) == 10
    assert after["distsm_matches_counted_total"] - before.get("distsm_matches_counted_total", 0) == matches
    assert after["distsm_adjacency_gathered_bytes_total"] > before.get("distsm_adjacency_gathered_bytes_total", 0)
    assert {"distsm-load", "distsm-intra", "distsm-inter", "distsm-merge", "distsm-wholes"} <= prefixes
    # The current batch's progress: every query done, none running any more.
    assert status["current"] == {"batch": batch["batch"], "queries": 5, "done": 5, "ended": {}, "in_flight": False,
                                 "running": 0, "slowest": None}
    # Gauges add up every live scheduler of this process (earlier tests' too): this one's batch added 5 and 5.
    for gauge in ("distsm_current_batch_queries", "distsm_current_batch_done"):
        assert after[gauge] - before.get(gauge, 0) == 5, gauge


def _metrics(url):
    import urllib.request

    out = {}
    for line in urllib.request.urlopen(url, timeout=10).read().decode().splitlines():
        if line.startswith("distsm_"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


# ---------------------------------------------------------------------------- cancellation that stops the work
@pytest.fixture(scope="module")
def heavy_matcher(cluster, tmp_path_factory):
    data, heavy, edge = heavy_case()
    m = distsm.Matcher(data, cluster=cluster, backend="numpy",
                       partitions=Partitioning(2, directory=tmp_path_factory.mktemp("heavy") / "k2"))
    yield m, data, heavy, edge
    m.close()


@pytest.mark.parametrize("semantics", ["plain", "unique", "homomorphism"])
def test_a_heavy_whole_query_is_split_by_its_worker(heavy_matcher, cluster, semantics):
    """A query sent whole whose counting plan shows it heavy is cut into slices by its worker, which runs them
    over the cluster: the count is exact (stars have closed forms) and the result says it was split; a light query
    of the same batch (an edge, whose trial join finishes within the allowance this test gives it) finishes
    whole."""
    m, data, _, edge = heavy_matcher
    star = distsm.Graph.from_networkx(nx.star_graph(3))
    d = data.degrees.astype(object)
    expected = {"plain": int((d * (d - 1) * (d - 2)).sum()), "unique": int((d * (d - 1) * (d - 2)).sum()) // 6,
                "homomorphism": int((d ** 3).sum())}[semantics]
    sem = {"unique": semantics == "unique", "homomorphism": semantics == "homomorphism"}
    # Stars count fast from set sizes: a split-work (and threshold) of 1 makes every query past its trial join
    # heavy.
    old = cluster.run(_set_split_work, 1.0)
    trials = cluster.run(_set_config, "distsm.engine.trial-entries", 1 << 20)
    try:
        light, heavy = m.submit([edge, star], names=["edge", "star"], timeout=120, semantics=Semantics(**sem)).results()
    finally:
        cluster.run(_set_split_work, next(iter(old.values())))
        cluster.run(_set_config, "distsm.engine.trial-entries", next(iter(trials.values())))
    assert light.ok and light.distribution == "whole" and "sent whole" in light.distribution_reason
    assert light.count == 2 * data.m // (2 if semantics == "unique" else 1)
    assert heavy.ok and heavy.count == expected
    assert heavy.distribution == "sliced" and "split into" in heavy.distribution_reason, heavy.distribution_reason
    assert heavy.intra is None and heavy.strategy is Strategy.GLOBAL


def _set_version(value):
    """Set this process's distsm version (run on the workers); returns the one it had."""
    import distsm._version

    old, distsm._version.__version__ = distsm._version.__version__, value
    return old


def test_a_worker_with_another_distsm_version_is_refused(cluster):
    """A cluster whose worker reports another distsm version is refused with one message naming the worker and
    both versions, before anything is partitioned or loaded."""
    g = distsm.Graph.from_edges([(0, 1), (1, 2)])
    [addr, *_] = sorted(cluster.scheduler_info()["workers"])
    old = cluster.run(_set_version, "9.9.9", workers=[addr])
    try:
        with pytest.raises(ClusterError) as info:
            distsm.Matcher(g, cluster=cluster, backend="numpy", partitions=1)
    finally:
        cluster.run(_set_version, old[addr], workers=[addr])
    message = str(info.value)
    assert f"worker {addr}: distsm 9.9.9 (here {distsm.__version__})" in message, message
    assert message.count("distsm 9.9.9") == 1 and "Install the same" in message
    with distsm.Matcher(g, cluster=cluster, backend="numpy", partitions=1) as m:  # restored: accepted again
        assert m.submit([g]).results()[0].count == 2


@pytest.mark.parametrize("unique", [False, True])
def test_a_heavy_depth_first_count_is_cut_into_ranges_of_its_tasks(heavy_matcher, cluster, unique):
    """A count that takes the depth-first search (here the host's, by distsm.engine.dfs-host) and whose estimated
    work passes split-work is cut by its worker into ranges of the search's tasks, counted over the cluster: the
    total is networkx's, and the result says how it was split."""
    m, data, _, _ = heavy_matcher
    diamond = distsm.Graph.from_edges([(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)])
    g = data.to_networkx()
    # A diamond is two triangles on one edge: each edge with c common neighbours holds c(c-1)/2 of them.
    per_edge = [len(set(g[u]) & set(g[v])) for u, v in g.edges]
    expected = sum(c * (c - 1) // 2 for c in per_edge) * (1 if unique else 4)
    old = cluster.run(_set_split_work, 1.0)
    host = cluster.run(_set_config, "distsm.engine.dfs-host", True)
    try:
        [r] = m.submit([diamond], names=["diamond"], timeout=120, semantics=Semantics(unique=unique)).results()
    finally:
        cluster.run(_set_split_work, next(iter(old.values())))
        cluster.run(_set_config, "distsm.engine.dfs-host", next(iter(host.values())))
    assert r.ok and r.count == expected
    assert r.distribution == "sliced" and "depth-first search" in r.distribution_reason, r.distribution_reason
    assert len(r.workers) == 2


@pytest.mark.parametrize("tail", [False, True])
def test_heavy_queries_with_counting_plans_are_split_while_other_tasks_wait(heavy_matcher, cluster, monkeypatch, tail):
    """Slices that share a heavy count's plan do its work once between them, so every heavy query with a counting
    plan is split, whether or not other tasks wait; every count is exact.  The scheduler (in this process) is made
    to report a free thread at every check at a batch's ``tail``, and none otherwise (a real tail may come at any
    check): at the tail a group hands its later queries to the cluster, each a group of its own, and those are split
    as well."""
    from distsm.cluster import tasks

    monkeypatch.setattr(tasks, "thread_load", lambda dask_scheduler: (0, int(tail)))
    m, data, _, _ = heavy_matcher
    star = distsm.Graph.from_networkx(nx.star_graph(3))
    d = data.degrees.astype(object)
    old = cluster.run(_set_split_work, 1.0)
    try:
        results = m.submit([star] * 8, names=[f"star{i}" for i in range(8)], timeout=120).results()
    finally:
        cluster.run(_set_split_work, next(iter(old.values())))
    assert all(r.ok and r.count == int((d * (d - 1) * (d - 2)).sum()) for r in results), [r.error for r in results]
    assert all(r.distribution == "sliced" and "sharing its counting plan" in r.distribution_reason
               for r in results), [r.distribution_reason for r in results]
    assert tail == any("handed by worker" in r.distribution_reason for r in results)


def test_a_count_below_the_split_threshold_goes_whole_however_far_past_split_work(heavy_matcher, cluster):
    """``split-threshold`` holds back what ``split-work`` alone would split: the same stars, past a split-work of 1
    but not past the threshold, are counted whole by their workers, exactly."""
    m, data, _, _ = heavy_matcher
    star = distsm.Graph.from_networkx(nx.star_graph(3))
    d = data.degrees.astype(object)
    old = cluster.run(_set_split_work, (1.0, 1e30))
    try:
        results = m.submit([star] * 4, names=[f"star{i}" for i in range(4)], timeout=120).results()
    finally:
        cluster.run(_set_split_work, next(iter(old.values())))
    assert all(r.ok and r.count == int((d * (d - 1) * (d - 2)).sum()) for r in results), [r.error for r in results]
    assert all(r.distribution == "whole" for r in results), [r.distribution_reason for r in results]


def test_a_heavy_general_count_is_counted_whole_while_other_tasks_wait(heavy_matcher, cluster, tmp_path):
    """A heavy count without a counting plan (its candidate-edge index fits no budget) would be split into slices
    of the global join that plan themselves and repeat part of each other's work: its worker splits it only when
    no other task waits for a thread, and counts it whole otherwise; every count stays exact."""
    _, data, _, _ = heavy_matcher
    path = distsm.Graph.from_networkx(nx.star_graph(2))
    d = data.degrees.astype(object)
    old = cluster.run(_set_split_work, 1.0)
    try:
        with distsm.Matcher(data, cluster=cluster, backend="numpy", memory_budget=1 << 20,
                            partitions=Partitioning(2, directory=tmp_path / "k2")) as m:
            results = m.submit([path] * 8, names=[f"path{i}" for i in range(8)], timeout=120).results()
    finally:
        cluster.run(_set_split_work, next(iter(old.values())))
    assert all(r.ok and r.count == int((d * (d - 1)).sum()) for r in results), [r.error for r in results]
    assert all("index would need" in r.distribution_reason for r in results), [r.distribution_reason for r in results]
    whole = [r for r in results if r.distribution == "whole"]
    assert whole and all("counted whole" in r.distribution_reason and "waited" in r.distribution_reason
                         for r in whole), [r.distribution_reason for r in results]
    assert all("each planning its slice" in r.distribution_reason for r in results if r.distribution == "sliced")


def _set_config(key, value):
    """Set the dask.config ``key`` in this process (run on the workers); returns the value it had."""
    import dask.config

    old = dask.config.get(key)
    dask.config.set({key: value})
    return old


def _set_split_work(value):
    """Set distsm.cluster.split-work and split-threshold in this process (run on the workers): both to ``value``, or
    to the pair ``value`` is; returns the pair they had."""
    import dask.config

    from distsm.config import cluster_options

    opts = cluster_options()
    old = (opts.split_work, opts.split_threshold)
    work, threshold = value if isinstance(value, (tuple, list)) else (value, value)
    dask.config.set({"distsm.cluster.split-work": work, "distsm.cluster.split-threshold": threshold})
    return old


def _busy(cluster):
    """Keys of tasks still running (or abandoned but still running) on any worker."""
    return cluster.run(lambda dask_worker: [str(ts.key) for ts in dask_worker.state.tasks.values()
                                            if ts.state in ("executing", "cancelled", "long-running")])


def _monitor_batch(cluster, batch_id, want):
    """The monitor's status of ``batch_id`` once ``want(status)`` holds (events arrive asynchronously)."""
    deadline = time.monotonic() + 20
    while True:
        status = cluster.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins["distsm-monitor"].status())
        batch = next((b for b in status["batches"] if b["batch"] == batch_id), None)
        if batch is not None and want(batch) or time.monotonic() > deadline:
            return batch
        time.sleep(0.1)


def test_timeout_stops_the_work_and_the_workers_are_free(heavy_matcher, cluster):
    m, data, heavy, edge = heavy_matcher
    t = time.monotonic()
    batch = m.submit([heavy], names=["heavy"], timeout=1)
    # nobody waits on the batch: its timeout still ends it, on the workers and in /distsm/status
    ended = _monitor_batch(cluster, batch.id, lambda b: not b["in_flight"])
    assert ended["ended"] == {"heavy": "timeout"} and not ended["in_flight"]
    assert time.monotonic() - t < 20
    [r] = batch.results()
    assert r.status == "timeout" and r.count is None and "1" in r.error
    t = time.monotonic()
    assert m.count(edge, timeout=60) == 2 * data.m  # not queued behind the abandoned join
    assert time.monotonic() - t < 20
    deadline = time.monotonic() + 20
    while any(_busy(cluster).values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_busy(cluster).values())
    with pytest.raises(TimeoutError, match="timeout=1"):
        m.count(heavy, timeout=1)


def test_cancel_stops_running_joins(heavy_matcher, cluster):
    m, data, heavy, edge = heavy_matcher
    batch = m.submit([heavy, heavy], names=["a", "b"])
    deadline = time.monotonic() + 20
    while not any(_busy(cluster).values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(_busy(cluster).values()), "the heavy joins never started"
    batch.cancel()
    assert [r.status for r in batch] == ["cancelled", "cancelled"]
    deadline = time.monotonic() + 20
    while any(_busy(cluster).values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_busy(cluster).values())
    assert m.count(edge) == 2 * data.m
    ended = _monitor_batch(cluster, batch.id, lambda b: not b["in_flight"])
    assert ended["ended"] == {"a": "cancelled", "b": "cancelled"}


def test_status_names_the_slowest_running_query(heavy_matcher, cluster):
    """While a batch runs, its status (the monitor's, read from the workers' heartbeats) says how many queries are
    done and which one has run longest; the light query of the batch is done meanwhile."""
    m, data, heavy, edge = heavy_matcher
    workers = {str(w["name"]) for w in cluster.scheduler_info()["workers"].values()}
    batch = m.submit([edge, heavy], names=["edge", "heavy"], timeout=60)
    try:
        deadline = time.monotonic() + 30
        while True:
            status = batch.status()
            slowest = status["slowest"] if status else None
            if status and status["done"] == 1 and slowest and slowest["seconds"] > 0.5 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert status["queries"] == 2 and status["done"] == 1 and status["in_flight"], status
        assert slowest["query"] == "heavy" and slowest["worker"] in workers and status["running"] == 1, status
        current = cluster.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins["distsm-monitor"].status())
        assert current["current"]["batch"] == batch.id and current["current"]["slowest"]["query"] == "heavy"
    finally:
        batch.cancel()
    assert [r.status for r in batch] == ["ok", "cancelled"]
    ended = _monitor_batch(cluster, batch.id, lambda b: not b["in_flight"])
    assert ended["slowest"] is None and ended["ended"] == {"heavy": "cancelled"}


# ---------------------------------------------------------------------------- Dask-native batches
def test_batch_is_a_sequence_of_query_results(hprd_matcher, cluster):
    names = NAMES[:6]
    batch = hprd_matcher.submit([str(query_path(n)) for n in names], names=names)
    assert len(batch) == 6
    assert batch[2].query == names[2] and batch[-1].query == names[-1]
    assert [r.query for r in batch] == names
    assert [r.count for r in batch] == [EXPECTED[n] for n in names]
    assert [r.query for r in batch[1:3]] == names[1:3]
    with pytest.raises(IndexError):
        batch[6]
    gathered = cluster.gather(batch.futures)
    assert all(isinstance(r, QueryResult) and r.ok for r in gathered)
    assert [r.count for r in gathered] == [r.count for r in batch]
    assert sorted(r.query for r in batch.as_completed()) == sorted(names)
    batch.progress(notebook=False)  # returns at once: every task is done


def test_errors_keep_their_exception_and_traceback(cluster):
    rng = np.random.default_rng(3)
    data = random_graph(rng, 40, 0.2, 1, 1, False)
    m = distsm.Matcher(data, cluster=cluster, partitions=2, backend="numpy")
    state = m._state
    m.close()  # tears the worker state down: a task that still runs finds none
    assert not any(state in names for names in cluster.run(lambda dask_worker: list(dask_worker.plugins)).values())
    m._state = state
    tri = distsm.Graph.from_networkx(nx.complete_graph(3))
    [r] = m.submit([tri]).results()
    m._state = None
    assert r.status == "error" and isinstance(r.exception, RuntimeError)
    assert "matcher was closed" in r.error and "Traceback" in r.traceback and "state_of" in r.traceback


# ---------------------------------------------------------------------------- one executor's answers
@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_in_process_and_cluster_results_are_identical(cluster, tmp_path, k):
    from distsm.kernels import get_backend
    from distsm.partitioned import PartitionedMatcher

    numpy = get_backend("numpy")
    rng = np.random.default_rng(k)
    hprd = NAMES[::40]
    cases = [(distsm.read_graph(DATA), [distsm.read_graph(query_path(n)) for n in hprd], "metis",
              {(distsm.Semantics(), i): EXPECTED[n] for i, n in enumerate(hprd)}),
             (random_graph(rng, 60, 0.15, 2, 1, False),
              [distsm.Graph.from_networkx(g) for g in [nx.complete_graph(3), nx.cycle_graph(4), nx.path_graph(4)]],
              "random", {})]
    # Every direction whose decision does not depend on how many sites there are (a count left to decide goes
    # whole to a site that measures it; a forced PBE plan or distribution is the caller's).
    plain = distsm.Semantics()
    runs = [(plain, None, "auto"), (plain, "pbe", "auto"), (plain, None, "sliced"), (plain, "global", "sliced"),
            (distsm.Semantics(induced=True), "pbe", "auto"), (distsm.Semantics(unique=True), "global", "whole"),
            (distsm.Semantics(unique=True), None, "auto"), (distsm.Semantics(homomorphism=True), None, "whole")]
    for c, (data, queries, method, oracle) in enumerate(cases):
        store = tmp_path / f"case{c}"
        how = Partitioning(k, method, directory=store)
        local = PartitionedMatcher(data, how, backend=numpy)
        with distsm.Matcher(data, cluster=cluster, partitions=how, backend="numpy") as m:
            for sem, strategy, distribute in runs:
                remote = m.submit(queries, strategy=strategy, distribute=distribute, semantics=sem).results()
                here = local.count_batch(queries, sem, 1 << 26, Directions(strategy, distribute))
                for i, (a, b, q) in enumerate(zip(remote, here, queries)):
                    assert a.ok and b.ok
                    assert (a.count, a.semantics, a.distribution, a.strategy, a.intra, a.inter, a.partitions) == \
                           (b.count, b.semantics, b.distribution, b.strategy, b.intra, b.inter, b.partitions), \
                           (k, c, sem, strategy, distribute)
                    if (sem, i) not in oracle:
                        oracle[sem, i] = distsm.count(data, q, backend="numpy", **sem.as_dict())
                    assert a.count == oracle[sem, i]
                    check_split(a, k)


# ---------------------------------------------------------------------------- secure defaults
def test_everything_a_default_matcher_starts_listens_on_loopback():
    import psutil

    rng = np.random.default_rng(1)
    data = random_graph(rng, 30, 0.2, 1, 1, False)
    with distsm.Matcher(data, cluster=distsm.LocalClusterSpec(gpus=None, workers=1), backend="numpy") as m:
        assert m.dashboard_link.startswith("http://127.0.0.1:")
        info = m.client.scheduler_info()
        ports = {int(m.dashboard_link.split(":")[2].split("/")[0]), int(info["address"].rsplit(":", 1)[1])}
        for addr, w in info["workers"].items():
            ports |= {int(addr.rsplit(":", 1)[1]), int(w["nanny"].rsplit(":", 1)[1])}
        me = psutil.Process()
        listening = {c.laddr for p in [me, *me.children(recursive=True)] for c in p.net_connections("inet")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port in ports}
        assert {a.port for a in listening} == ports, "a socket of the cluster was not found"
        assert {a.ip for a in listening} == {"127.0.0.1"}, listening


@pytest.mark.gpu
def test_close_returns_device_memory_to_baseline(tmp_path):
    """Every part, the whole graph's index and the candidate filters leave the GPU when the matcher closes,
    though the cluster (the user's) stays up.  The baseline is taken after the same query ran once in each
    worker process outside any matcher, so the backend's own per-process scratch (kernels, one-element
    placeholders) is part of it."""
    from distributed import Client

    from distsm.cluster import local

    name = NAMES[5]
    data, query, want = str(DATA), str(query_path(name)), EXPECTED[name]  # plain values travel to the workers

    def warm_up():
        import cupy

        import distsm

        assert distsm.count(data, query, backend="cupy") == want
        cupy.get_default_memory_pool().free_all_blocks()

    def pool_bytes():
        import gc

        import cupy

        gc.collect()
        pool = cupy.get_default_memory_pool()
        return pool.used_bytes(), pool.total_bytes()

    lc = local(gpus="all", dashboard_address=None)
    try:
        with Client(lc) as client:
            client.run(warm_up)
            before = client.run(pool_bytes)
            m = distsm.Matcher(data, cluster=client, partitions=Partitioning(2 * len(before), directory=tmp_path / "p"),
                               backend="cupy")
            assert m.count(query) == want
            during = client.run(pool_bytes)
            m.close()
            after = client.run(pool_bytes)
    finally:
        lc.close()
    assert all(during[w][0] > before[w][0] for w in before), (before, during)
    # in use: back to the baseline; held by the pool: no more than it (closing may free blocks the warm-up kept)
    assert all(after[w][0] == before[w][0] and after[w][1] <= before[w][1] for w in before), (before, during, after)


@pytest.mark.gpu
def test_gpu_workers_warm_their_process_when_they_load(tmp_path):
    """Each GPU worker runs the process warm-up once, with its first part (the heavy paths' plans whole and as
    slices, checked against each other), and then counts right."""
    from distributed import Client

    from distsm.cluster import local

    name = NAMES[5]
    lc = local(gpus="all", dashboard_address=None)
    try:
        with Client(lc) as client:
            workers = len(client.scheduler_info()["workers"])
            m = distsm.Matcher(str(DATA), cluster=client, backend="cupy",
                               partitions=Partitioning(2 * workers, directory=tmp_path / "p"))
            warmed = {}
            for r in m.load_report:
                warmed.setdefault(r["worker"], []).append(r["warm_seconds"])
            assert m.count(str(query_path(name))) == EXPECTED[name]
            m.close()
    finally:
        lc.close()
    # The first part a worker loads warms it; later parts find it warm and report the same seconds.
    assert len(warmed) == workers and all(len(set(s)) == 1 and s[0] > 0 for s in warmed.values()), warmed


@pytest.mark.gpu
def test_gpu_workers_peak_device_bytes_stay_within_their_budget(tmp_path):
    """Each worker's peak device bytes (all its process had in use in CuPy's pool: index, parts, filters, joins and
    the kernels' scratch) stay within its device budget, on a batch whose joins hold more than that budget when
    the workers have the whole device; the counts equal the CPU backend's either way."""
    from distributed import Client

    from distsm.cluster import local
    from distsm.kernels.index import build_index

    rng = np.random.default_rng(11)
    g = nx.gnm_random_graph(40000, 600000, seed=3)
    nx.set_node_attributes(g, {u: int(x) for u, x in zip(g, rng.integers(0, 4, g.number_of_nodes()))}, "label")
    data = distsm.Graph.from_networkx(g)
    queries = []
    for i, shape in enumerate([nx.path_graph(4), nx.cycle_graph(4), nx.star_graph(3), nx.complete_graph(3)]):
        nx.set_node_attributes(shape, {u: (u + i) % 4 for u in shape}, "label")
        queries.append(distsm.Graph.from_networkx(shape))
    want = [distsm.count(data, q, backend="numpy") for q in queries]
    assert min(want) > 0
    budget = build_index(data, np).nbytes // 3
    lc = local(gpus="all", dashboard_address=None)
    peaks = {}
    try:
        with Client(lc) as client:
            # The budgeted matcher first: its workers' processes hold nothing but the warm-up's kernels.
            for name, device_budget in (("budget", budget), ("whole device", None)):
                with distsm.Matcher(data, cluster=client, backend="cupy", device_budget=device_budget,
                                    partitions=Partitioning(directory=tmp_path / name)) as m:
                    results = m.submit(queries).results()
                    assert [r.count for r in results] == want, name
                    peaks[name] = {}
                    for r in results:
                        for w, b in r.peak_device_bytes.items():
                            peaks[name][w] = max(peaks[name].get(w, 0), b)
    finally:
        lc.close()
    assert peaks["budget"] and all(0 < b <= budget for b in peaks["budget"].values()), (budget, peaks)
    assert max(peaks["whole device"].values()) > budget, (budget, peaks)


def test_cpu_workers_skip_the_process_warm_up(hprd_matcher):
    assert all(r["warm_seconds"] == 0 for r in hprd_matcher.load_report)


# ---------------------------------------------------------------------------- memory per worker, planning, spreading
def _memory_case():
    """A labelled random graph dense enough that its whole index is many times its O(|V|) arrays, and queries
    whose counts the in-process engine and networkx give."""
    rng = np.random.default_rng(5)
    data = random_graph(rng, 220, 0.09, 2, 1, False)
    shapes = [nx.complete_graph(3), nx.cycle_graph(4), nx.path_graph(4), nx.star_graph(3)]
    queries = []
    for i, g in enumerate(shapes):
        nx.set_node_attributes(g, {u: (u + i) % 2 for u in g}, "label")
        queries.append(distsm.Graph.from_networkx(g))
    return data, queries


def _worker_indexes(cluster, state):
    """Per worker: ``(adjacency mode, entries of the whole graph's adjacency held in the worker's own memory)``;
    out of core that is none (the adjacency stays in the shared memory-mapped store)."""

    def probe(dask_worker):
        s = dask_worker.plugins[state]
        index = s.whole_graph()[0]
        private = 0 if isinstance(index.nbr, np.memmap) or isinstance(index.nbr.base, np.memmap) else index.nbr.size
        return s.mode, int(private)

    return cluster.run(probe)


def test_workers_build_the_refinement_runs_when_they_load(cluster, tmp_path):
    """Every worker builds its whole-graph index's (vertex, label) runs while the matcher loads, before any query:
    else the first heavy query on each worker builds them inside the first batch's time."""
    from distsm import caches

    def cached(dask_worker, state):
        index = dask_worker.plugins[state].whole_graph()[0]
        return caches.site("labelled runs").get(index) is not None

    with distsm.Matcher(str(DATA), cluster=cluster, backend="numpy",
                        partitions=Partitioning(2, directory=tmp_path / "p")) as m:
        built = cluster.run(cached, state=m._state)
        assert len(built) == 2 and all(built.values()), built


@pytest.mark.parametrize("adjacency", ["device", "host", "gather"])
def test_adjacency_modes_count_exactly_and_out_of_core_workers_hold_no_whole_index(cluster, tmp_path, adjacency):
    from distsm.kernels.index import build_index

    data, queries = _memory_case()
    oracle = [len(networkx_matches(data, q)) for q in queries]
    assert oracle == [distsm.count(data, q, backend="numpy") for q in queries] and min(oracle) > 0
    index_bytes = build_index(data, np).nbytes
    budget = None if adjacency == "device" else index_bytes // 3
    with distsm.Matcher(data, cluster=cluster, backend="numpy", device_budget=budget,
                        partitions=Partitioning(adjacency=adjacency, directory=tmp_path / "p")) as m:
        report = m.load_report
        assert {r["adjacency"] for r in report} == {adjacency}
        for distribute in ("whole", "sliced"):
            results = m.submit(queries, distribute=distribute).results()
            assert [r.count for r in results] == oracle, (adjacency, distribute)
            assert {r.distribution for r in results} == {distribute}
            for r in results:
                check_split(r, m.k)
                assert r.peak_device_bytes and all(b > 0 for b in r.peak_device_bytes.values())
                # Each result says where the graph lived while it ran, in its summary too.
                assert {c.mode for c in r.adjacency.values()} == {adjacency}, r.adjacency
                words = {"device": "in core", "host": "read in place from host memory", "gather": "gathered"}
                assert words[adjacency] in r.regime and r.summary()["regime"] == r.regime
                assert f"adjacency '{adjacency}' was asked for" in r.regime, r.regime
            for opts in (dict(induced=True), dict(unique=True)):
                got = [r.count for r in m.submit(queries, distribute=distribute, semantics=Semantics(**opts)).results()]
                assert got == [distsm.count(data, q, backend="numpy", **opts) for q in queries], opts
        modes = _worker_indexes(cluster, m._state)
        assert {mode for mode, _ in modes.values()} == {adjacency}
        if adjacency == "device":
            # A CPU worker's device is its own memory: it holds a private copy, not the store's shared mapping.
            assert m.k == 2
            assert all(private == data.nnz for _, private in modes.values()), (modes, data.nnz)
            return
        # The index is 3x the budget: more, smaller parts, and no worker holds the whole graph's adjacency.
        assert m.k > 2 and m.k % 2 == 0
        assert all(private == 0 for _, private in modes.values()), modes
        assert all(3 * r["adjacency_bytes"] < index_bytes for r in report)
        peaks = [b for r in results for b in r.peak_device_bytes.values()]
        assert max(peaks) < index_bytes, (peaks, index_bytes)
        # Parts that do not all fit their share are loaded again (and gather mode copies adjacency rows too);
        # host mode's zero-copy reads are not counted.
        moved = [r.bytes_h2d for r in m.submit(queries, distribute="sliced").results()]
        assert sum(moved) > 0, moved


def test_each_worker_plans_a_sliced_query_once(cluster, tmp_path):
    data, queries = _memory_case()
    with distsm.Matcher(data, cluster=cluster, partitions=Partitioning(2, directory=tmp_path / "p"), backend="numpy",
                        inter_slices=12) as m:
        planned = lambda: cluster.run(lambda dask_worker, s=m._state: dask_worker.plugins[s].plans.planned)  # noqa
        for strategy in ("global", "pbe"):
            before = planned()
            [r] = m.submit(queries[1], strategy=strategy, distribute="sliced").results()
            assert r.ok and r.count == distsm.count(data, queries[1], backend="numpy")
            assert r.distribution == "sliced"
            after = planned()
            searches = 1 if strategy == "global" else len(r.plan.groups)
            # 12 slices (more with split heavy rows) over two workers: each worker plans each search once
            assert len(m._slices(Strategy(strategy))) >= 12
            assert all(after[w] - before[w] <= searches for w in after), (before, after)
            assert sum(after[w] - before[w] for w in after) >= searches


def test_global_slices_range_over_the_start_candidates(cluster, tmp_path):
    from distsm.plan.search import start_candidates

    data, queries = _memory_case()
    numpy = distsm.kernels.get_backend("numpy")
    with distsm.Matcher(data, cluster=cluster, partitions=Partitioning(2, directory=tmp_path / "p"), backend="numpy",
                        inter_slices=6) as m:
        for q in queries:
            cands = numpy.candidates(m._index, q, homomorphism=False)
            starts, weights = start_candidates(numpy, m._index, q, distsm.Semantics(), cands)
            slices = m._slices(Strategy.GLOBAL, (starts, weights))
            ranges = sorted({r for r, _ in slices}, key=lambda r: r.start)
            assert ranges[0].start == 0 and ranges[-1].stop == data.n
            assert [r.start for r in ranges[1:]] == [r.stop for r in ranges[:-1]]
            # every slice starts at one of the candidates, so none is empty of start vertices
            assert all(r.start in set(starts.tolist()) for r in ranges[1:])
            [r] = m.submit(q, strategy="global", distribute="sliced").results()
            assert r.count == len(networkx_matches(data, q))


def test_cpu_workers_copy_the_index_only_where_a_copy_per_core_fits():
    from distsm.residency import private_copies_fit

    assert private_copies_fit(200 << 20, 64 << 30, 16)
    assert not private_copies_fit(10 << 30, 64 << 30, 16)  # 16 copies of 10 GiB: the workers share the mapping
    assert private_copies_fit(4 << 30, 64 << 30, 16) and not private_copies_fit((4 << 30) + 1, 64 << 30, 16)


def test_a_group_hands_its_later_queries_to_free_workers(hprd_matcher, cluster, monkeypatch):
    """While worker threads are free and no task is queued, a group task hands the queries it would still count
    alone after the next one to the cluster, each as a group of its own; every count stays exact.  The scheduler
    (in this process) is made to report a free thread at every check, and no query is light (no trial allowance),
    so every group of two or more queries hands some off."""
    from distsm.cluster import tasks

    monkeypatch.setattr(tasks, "thread_load", lambda dask_scheduler: (0, 1))
    names = NAMES[:24]
    trials = cluster.run(_set_config, "distsm.engine.trial-entries", 0)
    ratios = cluster.run(_set_config, "distsm.engine.trial-ratio-host", 0.0)
    try:
        batch = hprd_matcher.submit([str(query_path(n)) for n in names], names=names, distribute="whole").results()
    finally:
        cluster.run(_set_config, "distsm.engine.trial-entries", next(iter(trials.values())))
        cluster.run(_set_config, "distsm.engine.trial-ratio-host", next(iter(ratios.values())))
    assert {r.query: r.count for r in batch} == {n: EXPECTED[n] for n in names}
    handed = [r for r in batch if "handed by worker" in r.distribution_reason]
    assert handed and all(r.distribution == "whole" for r in handed)
    assert len(handed) < len(names)  # each group counts its first query itself


def test_the_scheduler_reports_free_threads_only_when_nothing_waits():
    from types import SimpleNamespace

    from distsm.cluster.tasks import thread_load

    def worker(nthreads, processing, long_running=0):
        return SimpleNamespace(nthreads=nthreads, processing=set(range(processing)),
                               long_running=set(range(long_running)))

    def scheduler(*workers, queued=0):
        return SimpleNamespace(workers=dict(enumerate(workers)), queued=list(range(queued)))

    assert thread_load(scheduler(worker(1, 1), worker(1, 0))) == (0, 1)
    assert thread_load(scheduler(worker(1, 2, long_running=1), worker(2, 0))) == (0, 2)  # seceded: no thread
    assert thread_load(scheduler(worker(1, 1), worker(1, 0), queued=3)) == (3, 0)
    assert thread_load(scheduler(worker(1, 3), worker(1, 0))) == (2, 0)  # sent past its threads: waiting


def test_many_small_queries_go_whole_and_a_heavy_one_is_sliced(hprd_matcher):
    names = NAMES[:40]
    batch = hprd_matcher.submit([str(query_path(n)) for n in names], names=names).results()
    assert {r.query: r.count for r in batch} == {n: EXPECTED[n] for n in names}
    assert all(r.distribution == "whole" and r.strategy is Strategy.GLOBAL and r.intra is None for r in batch)
    # Counts go whole, to be split by their worker if their trial join shows them heavy: these are light.
    assert all(len(r.workers) == 1 and "counting plan" in r.distribution_reason for r in batch)
    [one] = hprd_matcher.submit([str(query_path(names[0]))]).results()
    assert one.distribution == "whole" and one.count == EXPECTED[names[0]]
    # Induced queries have no trial: the client spreads them by its estimates, a lone one sliced.
    data = distsm.read_graph(DATA)
    batch = hprd_matcher.submit([str(query_path(n)) for n in names[:8]], names=names[:8],
                                semantics=Semantics(induced=True)).results()
    assert all("share of the batch" in r.distribution_reason or r.distribution == "sliced" for r in batch)
    assert [r.count for r in batch] == [distsm.count(data, str(query_path(n)), backend="numpy", induced=True)
                                        for n in names[:8]]
    [one] = hprd_matcher.submit([str(query_path(names[0]))], semantics=Semantics(induced=True)).results()
    assert one.distribution == "sliced"
    # one query whose estimate exceeds a worker's share of the batch is sliced, the light rest go whole
    m = hprd_matcher
    assert by_estimate(10.0, 12.0, 5, m.sites).how == "sliced"
    assert by_estimate(1.0, 12.0, 5, m.sites).how == "whole"
    pbe = decide(distsm.read_graph(query_path(names[0])), distsm.Semantics(induced=True), Directions(Strategy.PBE),
                 m.sites)
    assert pbe is not None and pbe.how == "sliced"
    with pytest.raises(ValueError, match="distribute"):
        m.submit([str(query_path(names[0]))], distribute="spread")


def test_longest_first_ranks_heaviest_highest():
    assert longest_first([]) == []
    assert longest_first([5, 9, 1, 9]) == [1, 3, 0, 2]  # ties keep submission order: the first 9 starts first
    rng = np.random.default_rng(3)
    estimates = rng.integers(0, 50, size=30).tolist()
    priority = longest_first(estimates)
    assert sorted(priority) == list(range(30))
    for i in range(30):
        for j in range(30):
            if estimates[i] > estimates[j]:
                assert priority[i] > priority[j]


def test_a_batch_starts_its_heaviest_queries_first(hprd_matcher, monkeypatch):
    names = NAMES[:6]
    graphs = [distsm.read_graph(query_path(n)) for n in names]
    seen = []
    submit = hprd_matcher.client.submit

    def recording(*args, **kwargs):
        seen.append((kwargs["key"], args[2], kwargs.get("priority")))
        return submit(*args, **kwargs)

    monkeypatch.setattr(hprd_matcher.client, "submit", recording)
    # Induced queries are planned on the client (no trial join to split them on a worker), so it ranks them.
    batch = hprd_matcher.submit([str(query_path(n)) for n in names], names=names,
                                semantics=Semantics(induced=True)).results()
    data = distsm.read_graph(DATA)
    assert [r.count for r in batch] == [distsm.count(data, g, backend="numpy", induced=True) for g in graphs]
    m = hprd_matcher
    scans = [scan_entries(m._plan_backend, m._index, m._plan_backend.candidates(m._index, q, homomorphism=False), q)
             for q in graphs]
    # The whole queries go in groups, each at its heaviest query's priority, heaviest groups first.
    priority = dict(zip(names, longest_first(scans)))
    groups = [([t.name for t in group], p) for key, group, p in seen if key.startswith("distsm-wholes-")]
    assert sorted(n for g, _ in groups for n in g) == sorted(names)
    assert all(p == max(priority[n] for n in g) for g, p in groups), (groups, scans)
    assert [p for _, p in groups] == sorted((p for _, p in groups), reverse=True)


def test_a_heavy_start_vertex_is_split_over_jobs(cluster, tmp_path):
    # A hub joined to every vertex of a sparse ring: the hub's row is most of the degree weight.
    g = nx.cycle_graph(120)
    g.add_edges_from((120, v) for v in range(120))
    g.add_edges_from((v, (v + 7) % 120) for v in range(0, 120, 3))
    data = distsm.Graph.from_networkx(g)
    tri = distsm.Graph.from_networkx(nx.complete_graph(3))
    with distsm.Matcher(data, cluster=cluster, partitions=Partitioning(2, directory=tmp_path / "p"), backend="numpy",
                        inter_slices=6) as m:
        slices = m._slices(Strategy.GLOBAL)
        hub = [second for start, second in slices if 120 in start]
        assert len(hub) > 1 and all(isinstance(s, range) for s in hub)
        assert [s.start for s in hub[1:]] == [s.stop for s in hub[:-1]] and hub[0].start == 0
        assert hub[-1].stop == data.n
        for strategy in ("global", "pbe"):
            [r] = m.submit(tri, strategy=strategy, distribute="sliced").results()
            assert r.count == len(networkx_matches(data, tri)), strategy


def test_killed_worker_loses_nothing_out_of_core(cluster, tmp_path):
    data, queries = _memory_case()
    want = [distsm.count(data, q, backend="numpy") for q in queries]
    budget = distsm.kernels.index.build_index(data, np).nbytes // 3
    with distsm.Matcher(data, cluster=cluster, backend="numpy", device_budget=budget,
                        partitions=Partitioning(adjacency="gather", directory=tmp_path / "p")) as m:
        batch = m.submit(queries * 6, names=[f"q{i}" for i in range(len(queries) * 6)], distribute="sliced")
        it = batch.as_completed()
        first = next(it)
        pids = cluster.run(os.getpid)
        os.kill(pids[sorted(pids)[-1]], signal.SIGKILL)
        results = [first, *it]
        assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
        assert {r.query: r.count for r in results} == {f"q{i}": want[i % len(queries)] for i in range(len(results))}
        cluster.wait_for_workers(2, timeout=60)


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="the mmap threshold is glibc's")
def test_workers_serve_join_temporaries_from_the_heap(hprd_matcher, cluster):
    """Dask's nanny setting (MALLOC_TRIM_THRESHOLD_) freezes glibc's mmap threshold at 128 KiB; every worker of a
    matcher raises it, so NumPy temporaries stop being mapped and faulted in afresh."""
    from distsm.cluster.allocator import M_MMAP_THRESHOLD, set_mmap_threshold

    assert all(r["heap_temporaries"] for r in hprd_matcher.load_report)
    env = cluster.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert M_MMAP_THRESHOLD == -3 and set(env.values()) <= {None, "65536"}
    with pytest.raises(ValueError, match="mmap threshold"):
        set_mmap_threshold(64 << 20)
    # The workers took the value already: taking it again changes nothing.
    assert all(cluster.run(set_mmap_threshold, 32 << 20).values())


def test_the_mmap_threshold_option_is_checked():
    with pytest.raises(ValueError, match="mmap-threshold"):
        with distsm.options({"cluster.mmap-threshold": 64 << 20}):
            pass
