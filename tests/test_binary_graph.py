"""save_graph / load_graph: round trips of names and labels, and every kind of damage refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled

import distsm
from distsm import Graph, GraphFormatError

NAMES = st.one_of(st.integers(-5, 10**12), st.text(max_size=4), st.tuples(st.text(max_size=2), st.integers(0, 3)))
LABELS = st.one_of(st.integers(0, 4), st.sampled_from(["C", "O", ("x", 1), None, 2.5, True]))


@st.composite
def labelled_nx(draw):
    nodes = draw(st.lists(NAMES, min_size=1, max_size=10, unique=True))
    g = nx.DiGraph() if draw(st.booleans()) else nx.Graph()
    for v in nodes:
        g.add_node(v, label=draw(LABELS))
    for _ in range(draw(st.integers(0, 20))):
        u, v = draw(st.sampled_from(nodes)), draw(st.sampled_from(nodes))
        if u != v:
            g.add_edge(u, v, label=draw(LABELS))
    return g


@given(labelled_nx())
@scaled(60)
def test_round_trip_keeps_graph_names_and_labels(tmp_path_factory, g):
    data = Graph.from_networkx(g)
    path = tmp_path_factory.mktemp("bin") / "g.distsm"
    distsm.save_graph(data, path)
    back = distsm.load_graph(path)
    assert back == data and back.m == data.m
    assert back.names() == data.names()
    assert [type(x) for x in back.names()] == [type(x) for x in data.names()]
    assert nx.utils.graphs_equal(back.to_networkx(), data.to_networkx())
    assert (back.vocabulary is None) == (data.vocabulary is None)
    assert distsm.read_graph(path) == data  # read_graph loads a saved directory too
    if data.is_connected():
        assert distsm.count(back, data) == distsm.count(data, data)


def test_snap_ids_round_trip_memory_mapped(tmp_path):
    src = tmp_path / "e.txt"
    src.write_text("10 20\n20 30\n30 10\n")
    g = distsm.read_graph(src)
    distsm.save_graph(g, tmp_path / "g")
    back = distsm.load_graph(tmp_path / "g", verify=True)
    assert isinstance(back.neighbors.base, np.memmap) or isinstance(back.neighbors, np.memmap)
    assert back.node_ids.tolist() == [10, 20, 30] and back == g
    distsm.save_graph(Graph.from_edges([(0, 1)]), tmp_path / "g")  # replaces a saved graph
    assert distsm.load_graph(tmp_path / "g").m == 1


def test_save_refuses_other_directories_and_unsaveable_names(tmp_path):
    (tmp_path / "docs").mkdir()
    with pytest.raises(FileExistsError):
        distsm.save_graph(Graph.from_edges([(0, 1)]), tmp_path / "docs")
    with pytest.raises(TypeError, match="cannot save the name"):
        distsm.save_graph(Graph.from_edges([(0, 1)], node_ids=[frozenset({1}), 2]), tmp_path / "g")
    assert not (tmp_path / "g").exists()


def _saved(tmp_path: Path) -> Path:
    path = tmp_path / "g"
    distsm.save_graph(Graph.from_edges([(0, 1), (1, 2)], node_ids=["a", "b", "c"]), path)
    return path


def _edit(path: Path, change) -> None:
    man = json.loads((path / "manifest.json").read_text())
    change(man)
    (path / "manifest.json").write_text(json.dumps(man))


DAMAGE = [
    ("no manifest", lambda p: (p / "manifest.json").unlink(), "manifest.json", "no manifest"),
    ("not json", lambda p: (p / "manifest.json").write_text("{oops"), "manifest.json", "not valid JSON"),
    ("foreign", lambda p: (p / "manifest.json").write_text('{"format": "distsm-partition"}'), "manifest.json",
     "not a distsm-graph manifest"),
    ("version", lambda p: _edit(p, lambda m: m.update(version=99)), "manifest.json", "version 99 is not supported"),
    ("bad n", lambda p: _edit(p, lambda m: m.update(n="3")), "manifest.json", "'n' must be a non-negative"),
    ("shape", lambda p: _edit(p, lambda m: m.update(m=5)), "manifest.json", "array 'edge_src' must be <i4"),
    ("names", lambda p: _edit(p, lambda m: m.update(names=["a"])), "manifest.json", "'names' must be"),
    ("missing array", lambda p: (p / "neighbors.npy").unlink(), "neighbors.npy", "file missing"),
    ("truncated", lambda p: (p / "neighbors.npy").write_bytes((p / "neighbors.npy").read_bytes()[:-4]),
     "neighbors.npy", "truncated"),
    ("changed", lambda p: (p / "edge_dst.npy").write_bytes((p / "edge_dst.npy").read_bytes()[:-1] + b"\x07"),
     "edge_dst.npy", "checksum mismatch"),
    ("escape", lambda p: _edit(p, lambda m: m["arrays"]["indptr"].update(file="../x.npy")), "x.npy",
     "file missing"),
]


@pytest.mark.parametrize(("damage", "file", "problem"), [c[1:] for c in DAMAGE], ids=[c[0] for c in DAMAGE])
def test_damaged_graphs_are_named_errors(tmp_path, damage, file, problem):
    path = _saved(tmp_path)
    damage(path)
    with pytest.raises(GraphFormatError, match=problem) as info:
        distsm.load_graph(path)
    assert Path(info.value.path).name == file


def test_wrong_npy_content_is_refused(tmp_path):
    path = _saved(tmp_path)
    np.save(path / "indptr.npy", np.zeros(4, np.int32))  # right length, wrong dtype; manifest patched to match
    size = (path / "indptr.npy").stat().st_size
    _edit(path, lambda m: m["arrays"]["indptr"].update(bytes=size, sha256=None))
    with pytest.raises(GraphFormatError, match=r"indptr.*checksum|holds <i4"):
        distsm.load_graph(path)
