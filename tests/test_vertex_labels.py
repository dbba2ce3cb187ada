"""Vertex labels beside an edge list (``read_graph(edges, vertex_labels=PATH)``, ``--vertex-labels``): the labels
against a line-by-line reading of the same files, counts against the sm form of the same graph, and an error
naming the file and line for every malformed label file."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import distsm
from distsm import GraphFormatError
from distsm.formats.vertex_labels import read_vertex_labels
from hypothesis_settings import scaled

TOKENS = st.text(alphabet=st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs")), min_size=1,
                 max_size=6).filter(lambda t: not t.startswith("#"))


def _write(path, text: str, encoding: str = "utf-8") -> str:
    path.write_bytes(text.encode(encoding))
    return str(path)


@scaled(30)
@given(labels=st.lists(st.one_of(TOKENS, st.integers(0, 10**6).map(str)), min_size=1, max_size=30),
       seps=st.lists(st.sampled_from([" ", "\t", "  ", " \t"]), min_size=1, max_size=4), crlf=st.booleans(),
       comments=st.booleans())
def test_labels_equal_a_line_by_line_reading(tmp_path_factory, labels, seps, crlf, comments):
    d = tmp_path_factory.mktemp("vl")
    ids = list(range(100, 100 + len(labels)))
    end = "\r\n" if crlf else "\n"
    lines = ["# vertex label"] if comments else []
    for i, (v, lab) in enumerate(zip(ids, labels)):
        lines.append(f"{v}{seps[i % len(seps)]}{lab}")
        if comments and i % 3 == 0:
            lines += ["", "# a comment"]
    path = _write(d / "labels.txt", end.join(lines) + end)
    got_ids, got, _ = read_vertex_labels(path)
    expected = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    assert got_ids.tolist() == [int(v) for v, _ in expected]
    if all(lab.isascii() and lab.isdigit() for _, lab in expected):
        assert got.tolist() == [int(lab) for _, lab in expected]
    else:
        assert got.tolist() == [lab for _, lab in expected]


def test_string_labels_count_by_value(tmp_path):
    edges = _write(tmp_path / "e.txt", "# edges\n10 20\n20 30\n30 10\n30 40\n")
    labels = _write(tmp_path / "l.txt", "10 C\n20\tC\n\n30 O\n40 N\n")
    g = distsm.read_graph(edges, vertex_labels=labels)
    assert g.node_ids.tolist() == [10, 20, 30, 40] and g.vocabulary.values("vertex") == ["C", "O", "N"]
    import networkx as nx

    q = nx.Graph([("x", "y")])
    nx.set_node_attributes(q, {"x": "C", "y": "O"}, "label")
    assert distsm.count(g, q, backend="numpy") == 2  # (20, 30) and (10, 30)


def test_integer_labels_count_as_the_sm_form_of_the_same_graph(tmp_path):
    rng = np.random.default_rng(3)
    n, m = 60, 300
    pairs = np.unique(np.sort(rng.integers(0, n, (m, 2)), axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    vlab = rng.integers(0, 3, n)
    used = np.unique(pairs)
    ids = used * 7 + 5  # the edge list's own ids, not positions
    edges = _write(tmp_path / "e.txt", "".join(f"{a * 7 + 5} {b * 7 + 5}\n" for a, b in pairs))
    labels = _write(tmp_path / "l.txt", "".join(f"{i} {vlab[v]}\n" for v, i in zip(used, ids)))
    g = distsm.read_graph(edges, vertex_labels=labels)
    positions = {v: k for k, v in enumerate(used)}
    h = distsm.Graph.from_edges([(positions[a], positions[b]) for a, b in pairs], n=used.size,
                                vertex_labels=vlab[used])
    distsm.write_graph(h, tmp_path / "g.graph", format="sm")
    sm = distsm.read_graph(tmp_path / "g.graph")
    for query in ([(0, 1), (1, 2)], [(0, 1), (1, 2), (0, 2)]):
        for labels_q in ([0, 1, 2], [1, 1, 0]):
            q = distsm.Graph.from_edges(query, vertex_labels=labels_q[:max(max(e) for e in query) + 1])
            assert distsm.count(g, q, backend="numpy") == distsm.count(sm, q, backend="numpy")


@pytest.mark.parametrize("text, line, problem", [
    ("10 C\n10 O\n", 2, "vertex 10 is labelled twice (first on line 1)"),
    ("10 C\n\n99 O\n", 3, "vertex 99 is not in the edge list"),
    ("10 C extra\n", 1, "expected 'vertex label' (2 fields), got 3"),
    ("# header\nx C\n", 2, "the vertex id must be a non-negative integer"),
    ("20 C\n-1 C\n", 2, "the vertex id must be a non-negative integer"),
    ("", 1, "empty file"),
])
def test_malformed_label_files_name_the_line(tmp_path, text, line, problem):
    edges = _write(tmp_path / "e.txt", "10 20\n20 30\n")
    with pytest.raises(GraphFormatError) as info:
        distsm.read_graph(edges, vertex_labels=_write(tmp_path / "l.txt", text))
    assert info.value.line == line and problem in info.value.problem, str(info.value)
    assert info.value.path.endswith("l.txt")


def test_missing_labels_are_an_error_unless_a_default_is_given(tmp_path):
    edges = _write(tmp_path / "e.txt", "10 20\n20 30\n")
    labels = _write(tmp_path / "l.txt", "20 hub\n")
    with pytest.raises(GraphFormatError, match="vertex 10 of the edge list has no label"):
        distsm.read_graph(edges, vertex_labels=labels)
    g = distsm.read_graph(edges, vertex_labels=labels, default_label="leaf")
    assert [g.vocabulary.values("vertex")[c] for c in g.vertex_labels] == ["leaf", "hub", "leaf"]


def test_labels_that_are_not_utf8_name_their_line(tmp_path):
    edges = _write(tmp_path / "e.txt", "10 20\n")
    path = tmp_path / "l.txt"
    path.write_bytes(b"10 ok\n20 \xff\xfe\n")
    with pytest.raises(GraphFormatError) as info:
        distsm.read_graph(edges, vertex_labels=path)
    assert info.value.line == 2 and "UTF-8" in info.value.problem


def test_only_edge_lists_take_a_label_file(tmp_path):
    g = distsm.Graph.from_edges([(0, 1)], vertex_labels=[0, 1])
    distsm.write_graph(g, tmp_path / "g.graph", format="sm")
    with pytest.raises(ValueError, match="carries its own vertex labels"):
        distsm.read_graph(tmp_path / "g.graph", vertex_labels=_write(tmp_path / "l.txt", "0 a\n"))


def test_the_cli_reads_vertex_labels(tmp_path):
    edges = _write(tmp_path / "e.txt", "10 20\n20 30\n30 10\n")
    labels = _write(tmp_path / "l.txt", "10 1\n20 1\n30 2\n")
    query = tmp_path / "q.graph"
    distsm.write_graph(distsm.Graph.from_edges([(0, 1)], vertex_labels=[1, 2]), query, format="sm")
    out = subprocess.run([sys.executable, "-m", "distsm", "count", edges, str(query), "--vertex-labels", labels,
                          "--backend", "numpy", "--in-process", "--json"], capture_output=True, text=True, check=True)
    assert '"count": 2' in out.stdout, out.stdout + out.stderr
    bad = subprocess.run([sys.executable, "-m", "distsm", "info", edges, "--vertex-labels",
                          _write(tmp_path / "b.txt", "10 1\n")], capture_output=True, text=True)
    assert bad.returncode != 0 and "vertex 20 of the edge list has no label" in bad.stderr


def test_sparse_ids_far_apart_are_found_by_search(tmp_path):
    big = 10**12
    edges = _write(tmp_path / "e.txt", f"{big} {big + 5}\n{big + 5} 7\n")
    g = distsm.read_graph(edges, vertex_labels=_write(tmp_path / "l.txt", f"7 x\n{big + 5} y\n{big} x\n"))
    assert [g.vocabulary.values("vertex")[c] for c in g.vertex_labels] == ["x", "y", "x"]
    with pytest.raises(GraphFormatError, match=f"vertex {big + 1} is not in the edge list"):
        distsm.read_graph(edges, vertex_labels=_write(tmp_path / "b.txt", f"{big + 1} x\n"))


LINE_PIECES = st.tuples(st.sampled_from(["5", "17", "+5", "-5", "05", "x", "9" * 19]),
                        st.sampled_from([" ", "\t", "  ", " \t"]),
                        st.sampled_from(["a", "+a", "a-b", "-", "12", "", "a b", "é", "#x", "a\tb"]),
                        st.sampled_from(["", " ", "\t"]))


@scaled(60)
@given(rows=st.lists(st.one_of(LINE_PIECES, st.sampled_from(["", "# c", "  "])), min_size=1, max_size=12),
       header=st.booleans(), crlf=st.booleans(), final=st.booleans())
def test_pyarrow_reads_a_label_file_as_the_lexer_does_or_not_at_all(rows, header, crlf, final):
    """The fast reader of string labels (pyarrow) either declines a file or reads exactly what the lexer reads,
    row by row and line by line; a file the lexer refuses is always declined, so its message names the line."""
    from distsm.formats.vertex_labels import _lexed, _token_table

    end = "\r\n" if crlf else "\n"
    lines = (["# vertex label"] if header else []) + ["".join(r) if isinstance(r, tuple) else r for r in rows]
    data = (end.join(lines) + (end if final else "")).encode()
    fast = _token_table(data, "l.txt")
    try:
        ids, labels, recs = _lexed(data, "l.txt")
    except GraphFormatError:
        assert fast is None
        return
    if fast is not None:
        assert fast[0].tolist() == ids.tolist() and fast[1].tolist() == labels.tolist()
        assert [fast[2].line_of(i) for i in range(ids.size)] == [recs.line_of(i) for i in range(ids.size)]


def test_string_labels_take_the_fast_reader_and_odd_files_the_lexer(tmp_path):
    from distsm.formats._fast import TableLines

    plain = _write(tmp_path / "a.txt", "# v l\n1\ttype-a\n2\ttype+b\n3\tcafé\n")
    ids, labels, lines = read_vertex_labels(plain)
    assert isinstance(lines, TableLines) and labels.tolist() == ["type-a", "type+b", "café"]
    signed = _write(tmp_path / "b.txt", "1\tx\n+2\ty\n")  # pyarrow would read +2; the lexer refuses it
    with pytest.raises(GraphFormatError, match="non-negative integer"):
        read_vertex_labels(signed)
