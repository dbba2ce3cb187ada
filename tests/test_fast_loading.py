"""The fast SNAP reader against the format's own lexer (the slow path) and networkx's read_edgelist."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled

import distsm
from distsm import GraphFormatError
from distsm.formats import _fast, snap

SEPARATORS = [" ", "\t", "  ", " \t", "\t\t"]
ENDS = ["\n", "\r\n", " \n", "\t\n"]


@st.composite
def snap_texts(draw):
    """Edge-list text, mostly well formed, sometimes with a flaw the fast path must not read differently."""
    m = draw(st.integers(0, 25))
    hi = draw(st.sampled_from([5, 50, 10**6, 10**17]))
    labelled = draw(st.booleans())
    lines = [draw(st.sampled_from(["# c", "# Nodes: 3", ""])) for _ in range(draw(st.integers(0, 2)))]
    for _ in range(m):
        fields = [str(draw(st.integers(0, hi))) for _ in range(3 if labelled else 2)]
        sep = draw(st.sampled_from(SEPARATORS[:1] * 4 + SEPARATORS))
        lines.append(sep.join(fields))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "  ", "# mid comment"])))
    flaw = draw(st.sampled_from([None] * 6 + ["+1", "-0", "007", "0" * 19 + "1", "1" * 19, "1.0", "x", "1 2 3 4",
                                             "3", "\r", "1e3", "\x0b"]))
    if flaw is not None and lines:
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = f"{lines[i]} {flaw}" if draw(st.booleans()) else flaw
    end = draw(st.sampled_from(ENDS))
    text = end.join(lines) + (end if draw(st.booleans()) else "")
    return text


def _read(path: Path, fast: bool, **kw):
    """``(graph, ids, names)`` or the error message, and the warnings, with the fast path or without it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if fast:
                g, ids = snap.read_snap_with_ids(path, **kw)
            else:
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(snap, "int_table", lambda data, path: None)
                    g, ids = snap.read_snap_with_ids(path, **kw)
        except GraphFormatError as e:
            return str(e), [str(w.message) for w in caught]
    return (g, ids.tolist(), g.node_ids.tolist()), [str(w.message) for w in caught]


@given(snap_texts(), st.booleans(), st.sampled_from([None, True, False]))
@scaled(200)
def test_fast_path_reads_what_the_lexer_reads(tmp_path_factory, text, directed, dedupe):
    path = tmp_path_factory.mktemp("fast") / "e.txt"
    path.write_bytes(text.encode())
    fast, fast_warnings = _read(path, True, directed=directed, dedupe=dedupe)
    slow, slow_warnings = _read(path, False, directed=directed, dedupe=dedupe)
    assert fast == slow
    assert fast_warnings == slow_warnings


@pytest.mark.parametrize("text", [b"# h\n1\t2\n3\t4\n\n5\t60\n", b"1 2 7\r\n3 4 8\r\n", b"1 2\n3\t4\n",
                                  b"4000000000 1\n2 3\n"])
def test_pandas_reads_what_pyarrow_reads(monkeypatch, text):
    # Without pyarrow (an optional dependency) pandas' C parser reads the same columns and lines.
    arrow = _fast.int_table(text, "a")

    def no_pyarrow(*args):
        raise ImportError("no pyarrow")

    monkeypatch.setattr(_fast, "_arrow_columns", no_pyarrow)
    plain = _fast.int_table(text, "a")
    assert arrow is not None and plain is not None
    assert [c.tolist() for c in arrow[0]] == [c.tolist() for c in plain[0]]
    rows = len(plain[0][0])
    assert [arrow[1].line_of(i) for i in range(rows)] == [plain[1].line_of(i) for i in range(rows)]


def test_fast_path_is_taken_on_plain_files_only():
    assert _fast.int_table(b"# h\n1\t2\n3\t4\n", "a") is not None
    assert _fast.int_table(b"1 2\r\n3 4\r\n", "a") is not None
    for text in (b"1 2\n# later\n3 4\n", b"1 2\n+3 4\n", b"1 2\n3\r4\n", b"0000000000000000001 2\n",
                 b"1\t2\n-0\t3\n", b"1\t2\n1\t3\x0b\n",
                 b"1 2\n3 4 5\n", b""):
        assert _fast.int_table(text, "a") is None, text


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=60), st.booleans())
@scaled(100)
def test_snap_matches_networkx_read_edgelist(tmp_path_factory, pairs, gz):
    path = tmp_path_factory.mktemp("nx") / ("e.txt.gz" if gz else "e.txt")
    text = "".join(f"{u}\t{v}\n" for u, v in pairs)
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    expected = nx.read_edgelist(path, nodetype=int)
    expected.remove_edges_from(list(nx.selfloop_edges(expected)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = distsm.read_graph(path)
    ours = g.to_networkx()
    assert list(ours.nodes) == list(expected.nodes)  # first-appearance order, as networkx adds them
    assert {frozenset(e) for e in ours.edges} == {frozenset(e) for e in expected.edges}


def test_bad_line_named_after_a_large_clean_prefix(tmp_path):
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 1000, (5000, 2))
    text = "".join(f"{u} {v}\n" for u, v in rows) + "12 x\n"
    path = tmp_path / "big.txt"
    path.write_text(text)
    with pytest.raises(GraphFormatError, match=r"big\.txt:5001: target vertex 'x' is not an integer"):
        distsm.read_graph(path)
