"""The peers benchmark: peers' printed outputs are read right, caps hold for distsm and the peers, counts are
judged against known answers, and the report renders the results.  No peer binary is needed: fake peers are
small scripts printing what the real ones print."""

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import distsm
from benchmarks import common
from benchmarks import peers as suite
from benchmarks.distsm_worker import DistsmWorker
from benchmarks.peer_runs import PEERS
from benchmarks.report import build

SAMPLES = Path(__file__).parent / "data" / "peers"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


# ------------------------------------------------------------------------------------------------ parsers
def test_gmatch_time_is_preparation_plus_processing_not_the_total_with_its_pool():
    out = PEERS["gmatch"].parse(sample("gmatch_dfs_patched.txt"))
    assert out.count == 1180167543
    # each phase the larger of host and CUDA-event readings; "Subgraph Matching Finished" (1530 ms) is not used
    assert out.seconds == pytest.approx((311.002 + 598.791) / 1e3)
    assert out.refused is None


def test_gmatch_whole_millisecond_timers_and_a_query_without_a_start():
    up = PEERS["gmatch"].parse(sample("gmatch_bfs_upstream.txt"))
    assert (up.count, up.seconds) == (6267, pytest.approx((96 + 2) / 1e3))
    empty = PEERS["gmatch"].parse(sample("gmatch_no_start.txt"))
    assert (empty.count, empty.seconds) == (0, pytest.approx(12.75 / 1e3))


def test_egsm_time_is_tries_filtering_and_join():
    out = PEERS["egsm"].parse(sample("egsm_patched.txt"))
    assert out.count == 80
    assert out.seconds == pytest.approx((4.530 + 2.301 + 1.281) / 1e3)
    refused = PEERS["egsm"].parse(sample("egsm_refused.txt"))
    assert refused.count is None and "at most 16 vertices and 32 edges" in refused.refused


def test_rapidmatch_and_subgraphmatching_read_their_final_count_and_time():
    rm = PEERS["rapidmatch"].parse(sample("rapidmatch_hprd_q2.txt"))
    assert (rm.count, rm.seconds) == (80, pytest.approx(0.000280))
    stopped = PEERS["rapidmatch"].parse(sample("rapidmatch_gmatch_q21_time_limit_1s.txt"))
    assert (stopped.count, stopped.seconds) == (527375700, pytest.approx(1.008355))  # partial: over its limit
    sm = PEERS["subgraphmatching"].parse(sample("subgraphmatching_hprd_q2.txt"))
    assert (sm.count, sm.seconds) == (80, pytest.approx(0.0005))


def test_truncated_output_has_no_time():
    text = sample("gmatch_dfs_patched.txt")
    cut = PEERS["gmatch"].parse(text[:text.index("# Preparation")])
    assert cut.count is None and cut.seconds is None


# ------------------------------------------------------------------------------------------------ fake peers
FAKE = """#!{python}
# A RapidMatch-like peer: answers from a JSON table {{query file stem: [count, seconds, sleep, exit code]}}.
import json, sys, time
q = sys.argv[sys.argv.index("-q") + 1].rsplit("/", 1)[-1].rsplit(".", 1)[0]
count, seconds, sleep, code = json.load(open({table!r}))[q]
if sleep:
    open({table!r} + ".pid", "w").write(str(__import__("os").getpid()))
time.sleep(sleep)
print("Load graphs time (seconds): 0.010000")
print("Spectrum Order 1 #Embeddings: 1")
print(f"Query time (seconds): {{seconds:.6f}}")
print(f"#Embeddings: {{count}}")
sys.exit(code)
"""


def fake_peer(tmp_path: Path, table: dict) -> str:
    (tmp_path / "table.json").write_text(json.dumps(table))
    exe = tmp_path / "fake_rapidmatch"
    exe.write_text(FAKE.format(python=sys.executable, table=str(tmp_path / "table.json")))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_peer_runs_are_capped_by_their_own_time_and_by_the_wall_clock(tmp_path):
    exe = fake_peer(tmp_path, {"a": [5, 0.25, 0, 0], "slow": [5, 3.0, 0, 0], "hang": [5, 0.1, 30, 0],
                               "crash": [5, 0.1, 0, 1]})
    q = {n: suite.Query(n, str(tmp_path / f"{n}.graph"), 4, 4) for n in ("a", "slow", "hang", "crash")}

    def run(name: str) -> dict:
        return suite.run_peer(PEERS["rapidmatch"], exe, "data.graph", q[name], cap=2.0, startup=0.5, extra=[])

    assert run("a") == {"status": "ok", "count": 5, "seconds": 0.25, "timers_ms": {"Query time": 250.0}}
    assert run("slow")["status"] == "capped"  # its own clock says it ran past the cap
    assert run("hang") == {"status": "capped"}  # killed at cap + startup
    crashed = run("crash")
    assert crashed["status"] == "error" and "exit code 1" in crashed["error"]
    big = suite.Query("big", "big.graph", 17, 20)
    assert suite.run_peer(PEERS["gmatch"], exe, "d", big, 2.0, 0.5, [])["status"] == "unsupported"
    assert suite.run_peer(PEERS["egsm"], exe, "d", suite.Query("e", "e.graph", 16, 33), 2.0, 0.5, [])[
        "reason"] == "egsm takes at most 32 query edges (33 given)"


def test_distsm_worker_kills_a_query_over_its_cap_and_goes_on(tmp_path):
    rng = np.random.default_rng(3)
    n = 60
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5])
    distsm.write_graph(distsm.Graph.from_edges(pairs, n=n), tmp_path / "data.graph")
    ring = distsm.Graph.from_edges([(i, (i + 1) % 12) for i in range(12)], n=12)  # ~1e14 matches: no finish
    distsm.write_graph(ring, tmp_path / "ring.graph")
    distsm.write_graph(distsm.Graph.from_edges([(0, 1), (1, 2), (0, 2)], n=3), tmp_path / "triangle.graph")
    data = distsm.read_graph(tmp_path / "data.graph")
    triangles = distsm.count(data, tmp_path / "triangle.graph", backend="numpy")
    with DistsmWorker(tmp_path / "data.graph", "numpy", grace=0.5) as worker:
        assert worker.run(str(tmp_path / "ring.graph"), cap=0.5).status == "capped"
        assert len(worker.starts) == 2  # restarted after the kill
        r = worker.run(str(tmp_path / "triangle.graph"), cap=60)
        assert (r.status, r.count) == ("ok", triangles) and r.seconds < 60
        listed = worker.run(str(tmp_path / "triangle.graph"), cap=60, mode="listing")
        assert (listed.status, listed.count) == ("ok", triangles)
        assert worker.run(str(tmp_path / "triangle.graph"), cap=0.0).status == "capped"  # its own time > cap


# ------------------------------------------------------------------------------------------------ judging
def test_generated_queries_take_the_reference_or_agreeing_peers():
    qs = [suite.Query(n, f"{n}.graph", 24, 40) for n in ("ref", "agree", "disagree", "none")]
    s = suite.Suite("hprd-dense-24", "HPRD.graph", qs, generated=True)

    def ok(c: int) -> dict:
        return {"status": "ok", "count": c, "seconds": 1.0}

    records = {"ref": {"distsm": ok(7), "rapidmatch": ok(8)},
               "agree": {"distsm": ok(5), "rapidmatch": ok(6), "subgraphmatching": ok(6)},
               "disagree": {"distsm": ok(5), "rapidmatch": ok(6), "subgraphmatching": ok(7)},
               "none": {"distsm": ok(5), "rapidmatch": {"status": "capped"}}}
    reference = {"ref": {"status": "ok", "count": 7}, "agree": {"status": "capped"}}
    suite.settle_expected(s, reference, records, "listing")
    assert [(q.expected, q.source) for q in qs] == [
        (7, "distsm-listing"), (6, "agreeing peers: rapidmatch, subgraphmatching"), (None, "peers disagree"),
        (None, None)]
    for n in ("ref", "disagree", "none"):
        records[n].setdefault("subgraphmatching", {"status": "unsupported"})
    summary, ratios = suite.judge(s, records, ["distsm", "rapidmatch", "subgraphmatching"])
    assert summary["systems"]["distsm"] == {"queries": 4, "solved": 4, "capped": 0, "unsupported": 0,
                                                  "error": 0, "exact": 1, "wrong": 1, "unchecked": 2}
    assert records["agree"]["distsm"]["exact"] is False and records["agree"]["rapidmatch"]["exact"] is True
    assert ratios["agree"] == {"rapidmatch": 1.0, "subgraphmatching": 1.0} and "none" not in ratios


def test_gmatch_test_directory_must_hold_one_count_per_query(tmp_path):
    (tmp_path / "query_graph").mkdir()
    for i in range(2):
        (tmp_path / "query_graph" / f"Q_{i}.graph").write_text("t 2 1\nv 0 0 1\nv 1 0 1\ne 0 1\n")
    (tmp_path / "expected_output.txt").write_text("4\n")
    with pytest.raises(SystemExit, match="2 query files and 1 counts"):
        suite.gmatch_test_suite(tmp_path, None)
    (tmp_path / "expected_output.txt").write_text("4\n6")  # no newline at the end, as gMatch's file
    s = suite.gmatch_test_suite(tmp_path, None)
    assert [(q.name, q.vertices, q.edges, q.expected) for q in s.queries] == [("Q_0", 2, 1, 4), ("Q_1", 2, 1, 6)]


# ------------------------------------------------------------------------------------------------ whole suite
@pytest.fixture(scope="module")
def hprd_run(tmp_path_factory):
    """distsm and a fake RapidMatch on the first three HPRD queries: right and fast, wrong, over the cap."""
    tmp = tmp_path_factory.mktemp("peers")
    expected = list(common.hprd_expected().items())[:3]
    (q1, c1), (q2, c2), (q3, c3) = expected
    exe = fake_peer(tmp, {q1: [c1, 0.5, 0, 0], q2: [c2 + 1, 0.25, 0, 0], q3: [c3, 9.0, 0, 0]})
    out = tmp / "results" / "peers.json"
    suite.main(["--suites", "hprd", "--limit", "3", "--max-seconds", "5", "--rapidmatch", exe,
                "--peer-commit", "rapidmatch=abc123", "--out", str(out)])
    return json.loads(out.read_text()), [q1, q2, q3], out


def test_suite_records_counts_exactness_caps_and_ratios(hprd_run):
    result, (q1, q2, q3), _ = hprd_run
    assert result["benchmark"] == "peers" and "machine" in result and result["command"]
    assert result["peers"]["rapidmatch"]["commit"] == "abc123"
    hprd = result["suites"]["hprd"]
    by = {q["name"]: q for q in hprd["queries"]}
    for q in by.values():
        assert q["systems"]["distsm"]["status"] == "ok" and q["systems"]["distsm"]["exact"] is True
        assert 0 < q["systems"]["distsm"]["seconds"] < 5
    assert by[q1]["systems"]["rapidmatch"] == {"status": "ok", "count": by[q1]["expected"], "seconds": 0.5,
                                                     "timers_ms": {"Query time": 500.0}, "exact": True}
    assert by[q2]["systems"]["rapidmatch"]["exact"] is False
    assert by[q3]["systems"]["rapidmatch"]["status"] == "capped" and by[q3]["systems"]["rapidmatch"]["exact"] is None
    d1 = by[q1]["systems"]["distsm"]["seconds"]
    assert by[q1]["ratio_distsm_over"]["rapidmatch"] == pytest.approx(d1 / 0.5, rel=1e-3)
    assert by[q3]["ratio_distsm_over"] == {}
    s = hprd["summary"]
    assert s["systems"]["rapidmatch"] == {"queries": 3, "solved": 2, "capped": 1, "unsupported": 0, "error": 0,
                                               "exact": 1, "wrong": 1, "unchecked": 0}
    assert s["systems"]["distsm"]["exact"] == 3
    assert s["common"]["queries"] == 2 and s["common"]["summed_seconds"]["rapidmatch"] == pytest.approx(0.75)
    vs = s["vs_distsm"]["rapidmatch"]
    d2 = by[q2]["systems"]["distsm"]["seconds"]
    assert vs["queries"] == 2 and vs["summed_ratio"] == pytest.approx((d1 + d2) / 0.75, rel=1e-3)
    assert vs["worst_ratio"] == pytest.approx(max(d1 / 0.5, d2 / 0.25), rel=1e-3)
    assert vs["peer_timer_seconds"] == {"Query time": pytest.approx(0.75)}


def test_repeated_rounds_report_each_query_median_and_refuse_disagreeing_rounds(tmp_path):
    """With --repeat every system goes over the suite again; a query's seconds are its rounds' median."""
    (q1, c1), = list(common.hprd_expected().items())[:1]
    exe = fake_peer(tmp_path, {q1: [c1, 0.5, 0, 0]})
    out = tmp_path / "peers.json"
    suite.main(["--suites", "hprd", "--limit", "1", "--max-seconds", "5", "--rapidmatch", exe, "--repeat", "3",
                "--out", str(out)])
    [q] = json.loads(out.read_text())["suites"]["hprd"]["queries"]
    ours, theirs = q["systems"]["distsm"], q["systems"]["rapidmatch"]
    assert ours["status"] == "ok" and ours["exact"] is True and len(ours["rounds_s"]) == 3
    assert ours["seconds"] == sorted(ours["rounds_s"])[1]
    assert theirs["rounds_s"] == [0.5, 0.5, 0.5] and theirs["seconds"] == 0.5 and theirs["exact"] is True
    first = suite.repeated(None, {"status": "ok", "count": 7, "seconds": 3.0})
    assert first == {"status": "ok", "count": 7, "seconds": 3.0}  # one round: the record as it was
    second = suite.repeated(first, {"status": "ok", "count": 7, "seconds": 1.0})
    assert second["rounds_s"] == [3.0, 1.0] and second["seconds"] == 2.0
    wrong = suite.repeated(second, {"status": "ok", "count": 8, "seconds": 1.0})
    assert wrong["status"] == "error" and wrong["seconds"] is None and "count 8" in wrong["error"]
    assert suite.repeated(None, {"status": "capped"}) == {"status": "capped"}


def test_report_renders_the_peers_table(hprd_run, tmp_path):
    result, _, out = hprd_run
    text = build(out.parent, tmp_path / "README.md").read_text()
    section = text[text.index("### distsm against its peers"):]
    s = result["suites"]["hprd"]["summary"]
    vs = s["vs_distsm"]["rapidmatch"]
    assert "- rapidmatch (cpu): source abc123" in section
    assert (f"| rapidmatch | 3 | 2 | 1 | 1 | 0 | 1 | 0 | 0 | {s['common']['summed_seconds']['rapidmatch']} | "
            f"{vs['summed_ratio']} | {vs['median_ratio']} | {vs['worst_ratio']} ({vs['worst_query']}) |") in section
    assert f"| distsm | 3 | 3 | 3 | 0 | 0 | 0 | 0 | 0 | {s['common']['summed_seconds']['distsm']} | - |" in section
    assert (f"rapidmatch's own timers over the 2 queries it and distsm finished: Query time 0.75 s (distsm "
            f"{vs['distsm_seconds']} s).") in section


def test_a_suite_cut_short_keeps_what_it_measured(tmp_path):
    saved = []
    args = suite.parse_args(["--suites", "hprd", "--limit", "2", "--max-seconds", "5"])
    done = suite.run_suite(suite.hprd_suite(2), args, {}, lambda r: saved.append(json.loads(json.dumps(r))),
                           every=0.0)  # a copy: as written to disk at that moment
    assert saved and all(not s["complete"] and "summary" not in s for s in saved)
    assert [q["systems"] for q in saved[0]["queries"]][1] == {}  # the second query had not run yet
    assert done["complete"] and done["summary"]["systems"]["distsm"]["exact"] == 2
    result = {"benchmark": "peers", "backend": "numpy", "max_seconds": 5, "peers": {}, "suites": {"hprd": saved[0]}}
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "peers.json").write_text(json.dumps(result))
    text = build(tmp_path / "results", tmp_path / "README.md").read_text()
    assert "**hprd**: cut short; no summary; each query's results so far" in text
    first = saved[0]["queries"][0]
    assert f"| {first['name']} | ok {first['systems']['distsm']['count']} " in text


def test_sigterm_saves_what_ran_and_leaves_no_process_behind(tmp_path):
    (q1, c1), (q2, c2) = list(common.hprd_expected().items())[:2]
    exe = fake_peer(tmp_path, {q1: [c1, 0.1, 0, 0], q2: [c2, 0.1, 60, 0]})
    out = tmp_path / "peers.json"
    run = subprocess.Popen([sys.executable, "-m", "benchmarks", "run", "peers", "--suites", "hprd", "--limit", "2",
                            "--max-seconds", "30", "--rapidmatch", exe, "--out", str(out)],
                           cwd=Path(__file__).parent.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid_file = tmp_path / "table.json.pid"
    deadline = time.time() + 60
    while not pid_file.exists() and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.2)
    run.send_signal(signal.SIGTERM)
    assert run.wait(30) == 143
    queries = json.loads(out.read_text())["suites"]["hprd"]
    assert queries["complete"] is False
    assert [q["systems"].get("rapidmatch", {}).get("status") for q in queries["queries"]] == ["ok", None]
    assert all(q["systems"]["distsm"]["status"] == "ok" for q in queries["queries"])
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):  # the hanging peer was killed with the run
        os.kill(int(pid_file.read_text()), 0)


def test_peer_binaries_must_be_executable(tmp_path):
    with pytest.raises(SystemExit, match="not an executable"):
        suite.peer_info(suite.parse_args(["--gmatch", str(tmp_path / "missing")]))


def test_dense_heavy_folders_are_suites_of_their_own_with_files_named_inside_them(tmp_path):
    """benchmarks.dense_heavy names its files relative to its folder, so a folder can move; several folders (one
    data graph each) become one suite each."""
    from benchmarks import dense_heavy

    data = tmp_path / "hprd.graph"
    complete = [(u, v) for u in range(7) for v in range(u + 1, 7)]  # dense queries of 4 vertices exist in K7
    distsm.write_graph(distsm.Graph.from_edges(complete, n=7, vertex_labels=[0, 1] * 3 + [0]), data)
    made = []
    for name, relabel in (("six", 2), ("eight", 1)):
        out = tmp_path / "made" / name
        dense_heavy.main(["--data", str(data), "--dir", str(out), "--sizes", "4", "--candidates", "2",
                          "--per-size", "1", "--min-count", "0", "--cap", "5", "--backend", "numpy", "--relabel",
                          str(relabel), "--out", str(tmp_path / f"{name}.json")])
        manifest = json.loads((out / dense_heavy.MANIFEST).read_text())
        assert manifest["data"] == "data.graph" and manifest["queries"]
        assert all(not Path(q["path"]).is_absolute() for q in manifest["queries"])
        moved = tmp_path / "moved" / name
        moved.parent.mkdir(exist_ok=True)
        (out).rename(moved)
        made.append(moved)
    args = suite.parse_args(["--suites", "dense-heavy", "--dense-heavy", *map(str, made)])
    assert args.suites == ["dense-heavy:six", "dense-heavy:eight"]
    for name, folder in zip(args.suites, made):
        loaded = suite.load(name, args)
        assert loaded.name == name and loaded.data == str(folder / "data.graph")
        assert all(Path(q.path).is_file() and Path(q.path).is_relative_to(folder) for q in loaded.queries)
    assert suite.parse_args(["--suites", "dense-heavy", "--dense-heavy", str(made[0])]).suites == ["dense-heavy"]


def test_gmatch_neighbor_variant_times_its_transfer_as_preparation():
    """The neighbor variant (``SubgraphMatching_labeled``) names its preparation timer after the data graph's transfer
    and also times its first partial matches, which the bitmap variant does not: lines as its main.cu and
    join_bfs_dfs.cu print them (8acf4e5, timers with 3 decimals)."""
    text = ("# Transfer time of the data graph, time (ms): 3.813(host), 3.765(kernel)\n"
            "# Generate the candidate sets for the first two vertices, time (ms): 0.512(host), 0.498(kernel)\n"
            "# Processing, time (ms): 20.125(host), 20.350(kernel)\nResult: 1208\n")
    out = PEERS["gmatch-neighbor"].parse(text)
    assert (out.count, out.seconds) == (1208, pytest.approx((3.813 + 20.350) / 1e3))
    assert PEERS["gmatch-neighbor"].parse(text.replace("Result: 1208\n", "")).seconds is None
