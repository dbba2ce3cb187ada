"""What a new user ran into (issue 53's list): a directory read as a graph, sizes the CLI takes but the API refused,
range errors buried under the usage, `distsm match` without a timeout, and lazy names missing from dir(distsm)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import distsm
from distsm import GraphFormatError, example
from distsm.arguments import check_size, parse_size


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "distsm", *argv], capture_output=True, text=True, timeout=300)


def test_a_directory_that_is_no_saved_graph_is_a_format_error(tmp_path):
    with pytest.raises(GraphFormatError, match="a directory, not a graph file") as info:
        distsm.read_graph(tmp_path)
    assert info.value.path == str(tmp_path)
    with pytest.raises(GraphFormatError, match="a directory"):
        distsm.read_graphs(tmp_path, format="snap")
    run = _cli("info", str(tmp_path))
    assert run.returncode == 2 and "a directory, not a graph file" in run.stderr and "Traceback" not in run.stderr


def test_the_api_takes_the_sizes_the_cli_takes():
    data, query = str(example.data_path()), str(example.query_paths()[0])
    expected = example.expected_counts()[example.query_paths()[0].stem]
    assert distsm.count(data, query, memory_budget="64MiB", backend="numpy") == expected
    assert distsm.count(data, query, memory_budget=64 << 20, backend="numpy") == expected
    assert parse_size("1GB") == 10**9 and parse_size("512MiB") == 512 << 20 and check_size("b", None) is None
    with pytest.raises(ValueError, match="memory_budget: not a size: '1XB'"):
        distsm.count(data, query, memory_budget="1XB", backend="numpy")
    with pytest.raises(ValueError, match="size must be positive"):
        check_size("memory_budget", "0GB")
    with pytest.raises(TypeError, match="or a size such as"):
        check_size("memory_budget", 2.5)
    with pytest.raises(ValueError, match="device_budget: not a size"):
        distsm.Matcher(data, device_budget="lots")  # refused before any cluster starts


def test_a_range_error_is_one_line_with_its_reason():
    run = _cli("count", "--memory-budget", "-5", "a", "b")
    assert run.returncode == 2
    assert run.stderr.splitlines() == ["distsm count: error: argument --memory-budget: not a size: '-5' (examples: "
                                       "100000000, 512MiB, 2GB) (usage: distsm count --help)"]


def test_match_stops_at_its_timeout_and_says_what_it_wrote(tmp_path):
    data, query = str(example.data_path()), str(example.query_paths()[1])
    out = tmp_path / "rows.txt"
    done = _cli("match", data, query, "--backend", "numpy", "--timeout", "300", "-o", str(out))
    rows = len(out.read_text().splitlines())
    assert done.returncode == 0 and rows == example.expected_counts()[example.query_paths()[1].stem]
    assert done.stderr.strip().endswith(f"{rows} matches")
    stopped = _cli("match", data, query, "--backend", "numpy", "--timeout", "1e-9", "-o", str(out))
    assert stopped.returncode == 2 and "did not finish within 1e-09 s" in stopped.stderr
    assert "matches were written before it stopped" in stopped.stderr


def test_the_lazy_names_are_listed():
    names = dir(distsm)
    assert {"Matcher", "LocalClusterSpec", "warmup", "count", "read_graph"} <= set(names)
    assert set(distsm.__all__) <= set(names)
