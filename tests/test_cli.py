"""The command line: the bundled example, JSON output, listing, info, and clean errors."""

import json
import subprocess
import sys

import numpy as np
from hprd import DATA, expected_counts, query_path

from distsm.cli import main


def test_example_runs_and_checks_itself(capsys):
    assert main(["count", "--example"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 4 and all(line.endswith("ok") for line in lines)


def test_count_json_lines(capsys):
    names = ["query_dense_16_1", "query_dense_16_7"]
    assert main(["count", str(DATA), *map(str, map(query_path, names)), "--json", "--backend", "numpy"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["query"] for r in records] == names
    assert [r["count"] for r in records] == [expected_counts()[n] for n in names]
    assert all(r["semantics"] == {"induced": False, "homomorphism": False, "unique": False} for r in records)
    assert all(r["seconds"] >= 0 for r in records)


def test_count_accepts_a_directory_of_queries(tmp_path, capsys):
    for name in ["query_dense_16_3", "query_dense_16_4"]:
        (tmp_path / f"{name}.graph").write_text(query_path(name).read_text())
    assert main(["count", str(DATA), str(tmp_path), "--json"]) == 0
    counts = [json.loads(line)["count"] for line in capsys.readouterr().out.splitlines()]
    assert counts == [expected_counts()["query_dense_16_3"], expected_counts()["query_dense_16_4"]]


def test_match_writes_rows(tmp_path, capsys):
    out = tmp_path / "rows.npy"
    q = query_path("query_dense_16_2")
    assert main(["match", str(DATA), str(q), "--limit", "5", "--output", str(out)]) == 0
    assert np.load(out).shape == (5, 16)
    assert main(["match", str(DATA), str(q)]) == 0
    text = capsys.readouterr().out.strip().splitlines()
    assert len(text) == expected_counts()["query_dense_16_2"]


def test_info_json(capsys):
    assert main(["info", str(DATA), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["vertices"], info["edges"], info["vertex_labels"]) == (9460, 34998, 307)


def test_bad_file_is_one_clean_line(tmp_path, capsys):
    bad = tmp_path / "bad.graph"
    bad.write_text("t 2 1\nv 0 0 1\nv 1 0 1\ne 0 x\n")
    assert main(["count", str(bad), str(query_path("query_dense_16_1"))]) == 2
    err = capsys.readouterr().err
    assert "bad.graph:4:" in err and "Traceback" not in err


def test_missing_file_is_a_clean_error(capsys):
    assert main(["info", "/nonexistent/graph.txt"]) == 2
    assert "nonexistent" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    done = subprocess.run([sys.executable, "-m", "distsm", "count", "--example", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 4


def test_count_with_partitions(capsys):
    names = ["query_dense_16_5", "query_dense_16_6"]
    args = ["count", str(DATA), *map(str, map(query_path, names)), "--json", "--partitions", "4",
            "--partition-method", "random"]
    assert main(args) == 0
    counts = [json.loads(line)["count"] for line in capsys.readouterr().out.splitlines()]
    assert counts == [expected_counts()[n] for n in names]
