"""DataFrames, Arrow tables, Parquet files, cuDF (through a stand-in), SciPy sparse arrays and igraph graphs
against networkx's readers of the same edges."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled

import distsm
from distsm import Graph, GraphError, GraphFormatError

NAMES = st.one_of(st.integers(0, 8), st.sampled_from(["a", "b", "c", "d", "e"]))


@st.composite
def frames(draw):
    rows = draw(st.lists(st.tuples(NAMES, NAMES, st.sampled_from(["x", "y", 3])), min_size=1, max_size=25))
    rows = [r for r in rows if r[0] != r[1]] or [("a", "b", "x")]
    seen: dict = {}
    rows = [r for r in rows if seen.setdefault(frozenset(r[:2]), r[2]) == r[2]]  # no conflicting repeats
    return pd.DataFrame(rows, columns=["source", "target", "kind"])


def _expected(df: pd.DataFrame) -> nx.Graph:
    return nx.from_pandas_edgelist(df, "source", "target", edge_attr="kind")


def _same(g: Graph, expected: nx.Graph) -> None:
    ours = g.to_networkx()
    assert list(ours.nodes) == list(expected.nodes)
    assert {frozenset(e): d["label"] for *e, d in ours.edges(data=True)} == \
        {frozenset(e): d["kind"] for *e, d in expected.edges(data=True)}


@given(frames())
@scaled(60)
def test_dataframe_arrow_parquet_cudf_agree_with_networkx(tmp_path_factory, df):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    expected = _expected(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(Graph.from_pandas_edgelist(df, edge_label="kind"), expected)
        _same(Graph.from_cudf_edgelist(FakeCudf(df), edge_label="kind"), expected)
        if df["source"].map(type).nunique() == 1 and df["target"].map(type).nunique() == 1 and \
                df["kind"].map(type).nunique() == 1:  # Arrow columns hold one type
            table = pa.Table.from_pandas(df, preserve_index=False)
            _same(Graph.from_arrow(table, edge_label="kind"), expected)
            path = tmp_path_factory.mktemp("pq") / "e.parquet"
            pq.write_table(table.rename_columns(["source", "target", "label"]), path)
            _same(distsm.read_graph(path), expected)


class FakeCudf:
    """The part of a cuDF DataFrame distsm uses (cuDF needs a GPU to install)."""

    def __init__(self, df: pd.DataFrame):
        self._df = df

    def to_pandas(self) -> pd.DataFrame:
        return self._df.copy()


def test_node_labels_repeats_and_missing_names():
    df = pd.DataFrame({"source": ["c1", "c2", "c2"], "target": ["c2", "o1", "c1"]})
    with pytest.warns(UserWarning, match=r"DataFrame: merged 1 repeated edge.*the first at row 2"):
        g = Graph.from_pandas_edgelist(df, node_labels={"c1": "C", "c2": "C", "o1": "O", "h": "H"})
    assert g.names() == ["c1", "c2", "o1", "h"] and g.m == 2
    assert [g.vocabulary.value("vertex", x) for x in g.vertex_labels] == ["C", "C", "O", "H"]
    with pytest.raises(GraphError, match="duplicate edge") as e:
        Graph.from_pandas_edgelist(df, dedupe=False)
    assert e.value.edge_index == 2
    with pytest.raises(GraphError, match="source of edge 1 is missing"):
        Graph.from_pandas_edgelist(pd.DataFrame({"source": ["a", None], "target": ["b", "c"]}))
    with pytest.raises(KeyError, match="no column 'from'"):
        Graph.from_pandas_edgelist(df, source="from")
    carbonyl = nx.Graph([("x", "y")])
    nx.set_node_attributes(carbonyl, {"x": "C", "y": "O"}, "label")
    assert distsm.count(g, carbonyl) == 1


def test_bad_parquet_is_a_format_error(tmp_path):
    bad = tmp_path / "e.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(GraphFormatError, match=r"e\.parquet: not a readable Parquet file"):
        distsm.read_graph(bad)
    assert distsm.formats.detect_format(bad) == "parquet"


@given(st.integers(1, 8), st.data(), st.booleans())
@scaled(40)
def test_scipy_sparse_matches_networkx(n, data, directed):
    sp = pytest.importorskip("scipy.sparse")
    dense = np.array(data.draw(st.lists(st.lists(st.integers(0, 2), min_size=n, max_size=n), min_size=n,
                                        max_size=n)))
    np.fill_diagonal(dense, 0)
    if not directed:
        dense = np.maximum(dense, dense.T)
    a = sp.csr_array(dense)
    expected = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph if directed else nx.Graph)
    g = Graph.from_scipy_sparse_array(a, directed=directed, edge_labels=True)
    ours = g.to_networkx()
    assert list(ours.nodes) == list(expected.nodes)
    key = (lambda e: tuple(e)) if directed else frozenset
    assert {key(e[:2]): e[2]["label"] for e in ours.edges(data=True)} == \
        {key(e[:2]): e[2]["weight"] for e in expected.edges(data=True)}


def test_igraph_names_labels_and_multi_edges():
    igraph = pytest.importorskip("igraph")
    ig = igraph.Graph([(0, 1), (1, 2), (2, 1), (2, 2)], directed=False)
    ig.vs["name"] = ["x", "y", "z"]
    ig.vs["label"] = ["C", None, "O"]
    with pytest.warns(UserWarning):
        g = Graph.from_igraph(ig)
    assert g.names() == ["x", "y", "z"] and g.m == 2
    assert [g.vocabulary.value("vertex", x) for x in g.vertex_labels] == ["C", 0, "O"]
    expected = nx.Graph([("x", "y"), ("y", "z")])
    assert {frozenset(e) for e in g.to_networkx().edges} == {frozenset(e) for e in expected.edges}


def test_missing_extra_is_named(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # what an install without pyarrow sees
    with pytest.raises(ImportError, match=r"distsm\[io\]"):
        distsm.formats.parquet.read_parquet("x.parquet")
