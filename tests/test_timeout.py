"""In-process timeouts: a search past its ``timeout=`` stops within a chunk and raises ``TimeoutError``."""

import json
import time

import pytest
from oracles import heavy_case

import distsm
from distsm.cli import main

DATA, HEAVY, EDGE = heavy_case()
#: Generous "does not hang" bound for a 1-second timeout (the join stops at its next chunk).
STOPS_WITHIN = 20


@pytest.mark.parametrize("partitions", [None, 2])
def test_count_past_its_timeout_raises_and_stops(partitions):
    t = time.monotonic()
    with pytest.raises(TimeoutError, match="timeout=1"):
        distsm.count(DATA, HEAVY, backend="numpy", timeout=1, partitions=partitions)
    assert time.monotonic() - t < STOPS_WITHIN
    # the next query is not held up by the abandoned one
    assert distsm.count(DATA, EDGE, backend="numpy", timeout=60, partitions=partitions) == 2 * DATA.m


@pytest.mark.parametrize("partitions", [None, 2])
def test_listing_past_its_timeout_raises(partitions):
    t = time.monotonic()
    with pytest.raises(TimeoutError):
        for _ in distsm.iter_matches(DATA, HEAVY, backend="numpy", timeout=1, partitions=partitions):
            pass
    assert time.monotonic() - t < STOPS_WITHIN
    with pytest.raises(TimeoutError):
        distsm.match(DATA, HEAVY, backend="numpy", timeout=1)


def test_a_query_within_its_timeout_is_unaffected():
    rows = distsm.match(DATA, EDGE, backend="numpy", timeout=60)
    assert rows.shape == (2 * DATA.m, 2)
    with pytest.raises(ValueError, match="timeout"):
        distsm.count(DATA, EDGE, backend="numpy", timeout=0)


@pytest.mark.parametrize("partitions", [[], ["--partitions", "2"]])
def test_cli_reports_timed_out_queries(tmp_path, capsys, partitions):
    data, heavy, edge = tmp_path / "data.graph", tmp_path / "heavy.graph", tmp_path / "edge.graph"
    distsm.write_graph(DATA, data)
    distsm.write_graph(HEAVY, heavy)
    distsm.write_graph(EDGE, edge)
    t = time.monotonic()
    code = main(["count", str(data), str(heavy), str(edge), "--backend", "numpy", "--json", "--timeout", "1",
                 *partitions])
    assert time.monotonic() - t < 2 * STOPS_WITHIN
    records = {r["query"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert code == 1 and records["heavy"]["status"] == "timeout" and records["heavy"]["count"] is None
    if not partitions:  # each query has its own timeout in process; a partitioned batch shares one
        assert records["edge"]["status"] == "ok" and records["edge"]["count"] == 2 * DATA.m


def test_cli_cluster_timeout_ends_quietly(tmp_path, capfd):
    """A timed-out query on a cluster the CLI started: the heavy join stops, and closing the cluster waits for
    it, so the workers print no cancellation warnings or lost-scheduler tracebacks (their stderr is the user's
    terminal)."""
    data, heavy, edge = tmp_path / "data.graph", tmp_path / "heavy.graph", tmp_path / "edge.graph"
    distsm.write_graph(DATA, data)
    distsm.write_graph(HEAVY, heavy)
    distsm.write_graph(EDGE, edge)
    code = main(["count", str(data), str(heavy), str(edge), "--workers", "2", "--partitions", "2", "--json",
                 "--timeout", "2", "--no-progress", "--partition-dir", str(tmp_path / "parts")])
    out, err = capfd.readouterr()
    records = {r["query"]: r for r in map(json.loads, out.splitlines())}
    assert code == 1 and records["heavy"]["status"] == "timeout"
    assert "Traceback" not in err and "CancelledError" not in err, err
