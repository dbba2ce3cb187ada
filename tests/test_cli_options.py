"""Reading options, streamed .npy output, progress within a query, limit-aware budgets and the dashboard hold."""

import io
import json
import warnings

import networkx as nx
import numpy as np
import pytest
from hprd import DATA, expected_counts, query_path

import distsm
from distsm import api
from distsm.cli import build_parser, count_command
from distsm.npy_stream import NpyRowWriter
from distsm.cli import main
from distsm.kernels import engine
from distsm.kernels.budget import MIN_LISTING_BUDGET, BudgetPlan
from distsm.progress import ProgressBar

# A directed SNAP list with reciprocal arcs: 1<->2, 2<->3, 3->1.
RECIPROCAL = "# FromNodeId\tToNodeId\n1\t2\n2\t1\n2\t3\n3\t2\n3\t1\n"


def test_directed_and_dedupe_read_reciprocal_snap_lists(tmp_path, capsys):
    data = tmp_path / "arcs.txt"
    data.write_text(RECIPROCAL)
    triangle = tmp_path / "tri.txt"
    triangle.write_text("0 1\n1 2\n2 0\n")
    assert main(["count", str(data), str(triangle), "--no-dedupe"]) == 2
    assert "--dedupe" in capsys.readouterr().err
    # Merged by default, with a warning naming the file and the first repeat's line; silently when asked.
    with pytest.warns(UserWarning, match=r"arcs\.txt: merged 2 repeated edge\(s\).*line 3"):
        assert main(["count", str(data), str(triangle), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 6  # the undirected triangle, 3! maps
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["count", str(data), str(triangle), "--dedupe", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 6
    arc = tmp_path / "arc.txt"
    arc.write_text("5 6\n")
    assert main(["count", str(data), str(arc), "--directed", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 5  # one per arc
    assert main(["info", str(data), "--directed", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["directed"] and info["edges"] == 5 and info["degree_min"] == 3


def test_format_option_overrides_detection(tmp_path, capsys):
    # Two integers per line read as SNAP by default; "--format sm" insists on the t/v/e format.
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n")
    assert main(["info", str(path), "--format", "snap", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["edges"] == 2
    assert main(["info", str(path), "--format", "sm"]) == 2
    assert f"{path}:1:" in capsys.readouterr().err


def test_info_reports_the_real_minimum_degree(tmp_path, capsys):
    path = tmp_path / "path.txt"
    path.write_text("0 1\n1 2\n")
    assert main(["info", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["degree_min"] == 1


def test_npy_output_is_streamed_and_complete(tmp_path, capsys, monkeypatch):
    out = tmp_path / "rows.npy"
    q = query_path("query_dense_16_2")
    seen = []
    real = NpyRowWriter.write

    def spy(self, rows):
        seen.append(rows.shape[0])
        real(self, rows)

    monkeypatch.setattr(NpyRowWriter, "write", spy)
    assert main(["match", str(DATA), str(q), "-o", str(out), "--memory-budget", "64KiB"]) == 0
    rows = np.load(out)
    assert rows.shape == (expected_counts()["query_dense_16_2"], 16)
    assert len(seen) > 1  # written chunk by chunk, never concatenated
    reference = distsm.match(str(DATA), str(q))
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, reference.tolist()))
    assert f"{rows.shape[0]} matches" in capsys.readouterr().err
    empty = tmp_path / "none.npy"
    assert main(["match", str(DATA), str(q), "-o", str(empty), "--limit", "0"]) == 0
    assert np.load(empty).shape == (0, 16)


@pytest.mark.parametrize("shape", ["4-path", "4-cycle"])
def test_count_reports_progress_within_a_query(shape):
    # A 4-path's join reports per chunk; a 4-cycle's closed form (its wedges) per chunk of tasks, here one.
    data = distsm.Graph.from_networkx(nx.gnp_random_graph(60, 0.2, seed=3))
    query = nx.path_graph(4) if shape == "4-path" else nx.cycle_graph(4)
    calls = []
    n = distsm.count(data, query, progress=lambda done, total: calls.append((done, total)))
    assert n == distsm.count(data, query)
    assert len(calls) >= (2 if shape == "4-path" else 1)
    totals = {t for _, t in calls}
    assert len(totals) == 1 and calls[-1][0] == calls[-1][1]
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_progress_bar_shows_the_current_query():
    stream = io.StringIO()
    with ProgressBar(2, "counting", stream=stream, enabled=True) as bar:
        bar.within(50, 100)
        bar._draw(force=True)
        assert "50% of the current" in stream.getvalue()
        bar.advance()
        bar._draw(force=True)
        assert stream.getvalue().rsplit("\r", 1)[-1].count("#") == 15  # one of two queries done, no fraction


def test_cli_wires_engine_progress_into_the_bar(monkeypatch, capsys):
    fractions = []
    monkeypatch.setattr(ProgressBar, "within", lambda self, done, total: fractions.append(done / total))
    assert main(["count", str(DATA), str(query_path("query_dense_16_1")), "--progress"]) == 0
    assert fractions and fractions[-1] == 1.0


def test_listing_budget_follows_the_limit(monkeypatch):
    default = BudgetPlan.of(4 << 30)
    assert default.listing(10, 16) == MIN_LISTING_BUDGET
    assert default.listing(10**9, 16) == default.total
    assert BudgetPlan.of(1 << 20).listing(10, 16) == 1 << 20  # never above the default
    budgets = []
    real = engine.iter_matches

    def spy(*args, **kw):
        budgets.append(kw["budget"])
        return real(*args, **kw)

    monkeypatch.setattr(api.engine, "iter_matches", spy)
    q = str(query_path("query_dense_16_2"))
    limited = distsm.match(str(DATA), q, limit=10)
    distsm.match(str(DATA), q, limit=10, memory_budget=1 << 30)
    assert budgets == [min(MIN_LISTING_BUDGET, budgets[0]), 1 << 30]
    full = distsm.match(str(DATA), q)
    assert limited.shape == (10, 16) and set(map(tuple, limited.tolist())) <= set(map(tuple, full.tolist()))


def test_dashboard_is_held_until_enter(monkeypatch, capsys):
    args = build_parser().parse_args(["count", "--example", "--keep-dashboard"])
    stdin = io.StringIO("\nleft over\n")
    monkeypatch.setattr("sys.stdin", stdin)
    count_command._hold_dashboard(args, "http://127.0.0.1:8787/status")
    assert "press Enter" in capsys.readouterr().err and stdin.read() == "left over\n"
    args = build_parser().parse_args(["count", "--example"])  # not a terminal: do not wait
    stdin = io.StringIO("\n")
    monkeypatch.setattr("sys.stdin", stdin)
    count_command._hold_dashboard(args, "http://127.0.0.1:8787/status")
    assert stdin.read() == "\n"
    args = build_parser().parse_args(["count", "--example", "--no-keep-dashboard"])
    stdin = io.StringIO("\n")
    monkeypatch.setattr("sys.stdin", stdin)
    monkeypatch.setattr(stdin, "isatty", lambda: True)
    count_command._hold_dashboard(args, "http://127.0.0.1:8787/status")
    assert stdin.read() == "\n"


def test_non_graph_files_are_skipped_whatever_the_format(tmp_path, capsys):
    data = tmp_path / "data.txt"
    data.write_text("0 1\n1 2\n2 0\n")
    queries = tmp_path / "queries"
    queries.mkdir()
    (queries / "NOTES.md").write_text("# notes\n")
    (queries / "edge.txt").write_text("7 8\n")
    assert main(["count", str(data), str(queries), "--format", "snap", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["count"] == 6 and "skipping" in captured.err and "NOTES.md" in captured.err
