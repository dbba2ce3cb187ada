"""Every entry point gives networkx's answer on the same generated graphs.

Hypothesis draws small networkx graphs (undirected and directed) whose node names and vertex and edge labels are
hashables of several types (strings, tuples, frozensets, small and large integers, mixes of them); queries are
connected (2-4 nodes), copied from the data graph or drawn at random, and some of their labels are absent from the
data graph.  Queries are built apart from the data graph, as a user's are, so a query with labels other than small
non-negative integers carries a label vocabulary of its own, whose codes differ from the data graph's.
``oracles.oracle_mappings`` (networkx VF2 monomorphisms) is the answer that each of these must give:

* :func:`distsm.count`, with and without ``partitions``;
* :func:`distsm.count_batch` with one and two parts (one batch of all the case's queries);
* :func:`distsm.iter_mappings` (the set of mappings in node names), with and without ``partitions``;
* the ``distsm count`` and ``distsm match`` commands on files written through one shared
  :class:`distsm.LabelVocabulary` (files hold integer codes only);
* :class:`distsm.Matcher` on a CPU cluster, ``distribute="whole"`` and ``"sliced"``.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from contextlib import redirect_stderr, redirect_stdout

import networkx as nx
import numpy as np
from hypothesis import example, given, note
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import oracle_mappings

import distsm
from distsm import Graph, LabelVocabulary
from distsm.cli import main

#: Label values a data graph draws from (one pool for its vertices, one for its edges): strings, tuples, small
#: integers (identity codes, no vocabulary), integers that are no plain label, and a mix of types.
POOLS = [
    ["A", "B", "C"],
    [("x", 1), ("x", 2), ("y", 1)],
    [0, 1, 2],
    [3, 9, 2**40, -1],
    ["A", ("x", 1), 3, frozenset({"f"})],
]
#: Values no data graph carries; queries draw them now and then.
ABSENT = ["Z", ("z", 0), 77, frozenset({"g"})]
#: Node name schemes: positions (no node ids kept), integers, strings, tuples, a mix.
NAME_ELEMENTS = {
    "ints": st.integers(-10**12, 10**12),
    "str": st.text(max_size=3),
    "tuple": st.tuples(st.sampled_from("ab"), st.integers(0, 20)),
    "mixed": st.one_of(st.integers(-5, 30), st.text(max_size=2), st.tuples(st.integers(0, 3), st.text(max_size=1))),
}


def _names(draw, n: int) -> list:
    kind = draw(st.sampled_from(["range", *NAME_ELEMENTS]))
    if kind == "range":
        return list(range(n))
    return draw(st.lists(NAME_ELEMENTS[kind], min_size=n, max_size=n, unique=True))


def _weakly_connected(g) -> bool:
    return g.number_of_nodes() > 0 and nx.is_connected(g.to_undirected(as_view=True))


def _copied_query(draw, data, names: list, absent: tuple):
    """A connected piece of ``data`` under fresh names (so matches exist), now and then with one label spoiled by
    a value ``data`` lacks; None when ``data`` has no edge."""
    und = data.to_undirected(as_view=True)
    starts = [v for v in data if und.degree[v] > 0]
    if not starts:
        return None
    verts = [draw(st.sampled_from(starts))]
    while len(verts) < len(names):
        frontier = list(dict.fromkeys(w for v in verts for w in und[v] if w not in verts))
        if not frontier:
            break
        verts.append(draw(st.sampled_from(frontier)))
    rename = dict(zip(verts, names))
    arcs = list(data.subgraph(verts).edges(data="label"))
    kept = [a for a in arcs if draw(st.booleans())]
    q = data.__class__()
    q.add_nodes_from((rename[v], {"label": data.nodes[v]["label"]}) for v in verts)
    q.add_edges_from((rename[u], rename[v], {"label": lab}) for u, v, lab in kept)
    for u, v, lab in arcs:  # back until connected
        if _weakly_connected(q):
            break
        q.add_edge(rename[u], rename[v], label=lab)
    spoil = draw(st.sampled_from([None, None, None, "vertex", "edge"]))
    if spoil == "vertex":
        q.nodes[draw(st.sampled_from(list(q)))]["label"] = absent[0]
    elif spoil == "edge":
        q.edges[draw(st.sampled_from(list(q.edges)))]["label"] = absent[1]
    return q


def _random_query(draw, directed: bool, names: list, vlabels: list, elabels: list):
    """A random connected query: a random tree plus random extra edges (arcs both ways, for directed graphs)."""
    q = nx.DiGraph() if directed else nx.Graph()
    q.add_nodes_from((v, {"label": draw(st.sampled_from(vlabels))}) for v in names)
    for i in range(1, len(names)):
        u, v = names[draw(st.integers(0, i - 1))], names[i]
        if directed and draw(st.booleans()):
            u, v = v, u
        q.add_edge(u, v, label=draw(st.sampled_from(elabels)))
    for u in names:
        for v in names:
            if u != v and not q.has_edge(u, v) and draw(st.integers(0, 3)) == 0:
                q.add_edge(u, v, label=draw(st.sampled_from(elabels)))
    return q


@st.composite
def cases(draw, max_queries: int = 3):
    """``(data, queries)``: a labelled networkx graph of up to 12 nodes and 1 to ``max_queries`` connected
    queries of 2-4 nodes, all undirected or all directed."""
    directed = draw(st.booleans())
    n = draw(st.integers(1, 12))
    names = _names(draw, n)
    vpool, epool = draw(st.sampled_from(POOLS)), draw(st.sampled_from(POOLS))
    data = nx.DiGraph() if directed else nx.Graph()
    data.add_nodes_from((v, {"label": draw(st.sampled_from(vpool))}) for v in names)
    if n > 1:
        for u, step in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, n - 1)), max_size=3 * n)):
            data.add_edge(names[u], names[(u + step) % n], label=draw(st.sampled_from(epool)))
    queries = []
    for _ in range(draw(st.integers(1, max_queries))):
        qnames = _names(draw, draw(st.integers(2, 4)))
        absent = (draw(st.sampled_from(ABSENT)), draw(st.sampled_from(ABSENT)))
        q = _copied_query(draw, data, qnames, absent) if draw(st.booleans()) else None
        if q is None:
            q = _random_query(draw, directed, qnames, [*vpool, absent[0]], [*epool, absent[1]])
        queries.append(q)
    return data, queries


def user_report():
    """The reported case: count_batch answered 2 and 2 where the counts are 1 and 2 (query labels never put in
    the data graph's codes)."""
    d = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    nx.set_node_attributes(d, {"a": "X", "b": "Y", "c": "Y", "d": "Z"}, "label")
    q1 = nx.Graph([(0, 1)])
    nx.set_node_attributes(q1, {0: "Y", 1: "Z"}, "label")
    q2 = nx.Graph([(0, 1)])
    nx.set_node_attributes(q2, {0: "X", 1: "Y"}, "label")
    return d, [q1, q2]


def _describe(data, queries) -> str:
    """The case's nodes and edges with their labels, for a failing example's report."""
    def one(g):
        kind = "DiGraph" if g.is_directed() else "Graph"
        return f"{kind}: nodes={list(g.nodes(data='label'))!r} edges={list(g.edges(data='label'))!r}"

    return "\n".join([f"data {one(data)}", *(f"query{i} {one(q)}" for i, q in enumerate(queries))])


def _mappings(found) -> set[frozenset]:
    found = [frozenset(m.items()) for m in found]
    assert len(found) == len(set(found)), "a mapping was given more than once"
    return set(found)


def _rows_as_mappings(data: Graph, query: Graph, rows: np.ndarray) -> set[frozenset]:
    """Rows of data positions as mappings in node names."""
    dnames, qnames = data.names(), query.names()
    found = [frozenset(zip(qnames, (dnames[v] for v in row))) for row in np.asarray(rows).tolist()]
    assert len(found) == len(set(found)), "a row was given more than once"
    return set(found)


# ---------------------------------------------------------------------------------------------------- in process
#: Partitioners for generated cases: METIS runs in a child process (about half a second a call), so only the user's
#: case uses it.
FAST_METHODS = st.sampled_from(["random", "contiguous"])


@scaled(60)
@given(case=cases(), method=FAST_METHODS)
@example(case=user_report(), method="metis")
def test_in_process_entry_points_agree_with_networkx(case, method):
    data, queries = case
    note(_describe(data, queries))
    expected = [oracle_mappings(data, q) for q in queries]
    parts = {"partitions": 2, "partition_method": method}
    for q, want in zip(queries, expected):
        assert distsm.count(data, q, backend="numpy") == len(want)
        assert distsm.count(data, q, backend="numpy", **parts) == len(want)
        assert _mappings(distsm.iter_mappings(data, q, backend="numpy")) == want
        assert _mappings(distsm.iter_mappings(data, q, backend="numpy", **parts)) == want
    for k in (1, 2):
        results = distsm.count_batch(data, queries, partitions=k, partition_method=method, backend="numpy")
        assert [r.count for r in results] == [len(w) for w in expected], f"count_batch, partitions={k}"


# ---------------------------------------------------------------------------------------------------- command line
def _cli(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    assert rc == 0, err.getvalue()
    return out.getvalue()


@scaled(20)
@given(case=cases(), method=FAST_METHODS)
@example(case=user_report(), method="metis")
def test_command_line_agrees_with_networkx(case, method):
    data, queries = case
    note(_describe(data, queries))
    expected = [oracle_mappings(data, q) for q in queries]
    # Files hold integer codes: one vocabulary shared by the data graph and its queries keeps the labels' values.
    vocab = LabelVocabulary()
    d = Graph.from_networkx(data, labels=vocab)
    qs = [Graph.from_networkx(q, labels=vocab) for q in queries]
    fmt = "gsi" if d.directed else "sm"
    with tempfile.TemporaryDirectory() as tmp:
        dpath = os.path.join(tmp, "data.graph")
        distsm.write_graph(d, dpath, format=fmt)
        qpaths = []
        for i, q in enumerate(qs):
            qpaths.append(os.path.join(tmp, f"q{i}.graph"))
            distsm.write_graph(q, qpaths[-1], format=fmt)
        want = {f"q{i}": len(w) for i, w in enumerate(expected)}
        for extra in ([], ["--partitions", "2", "--partition-method", method]):
            lines = _cli("count", dpath, *qpaths, "--json", "--no-progress", "--backend", "numpy", *extra)
            records = [json.loads(line) for line in lines.splitlines()]
            assert {r["query"]: r["count"] for r in records} == want, extra
            rows = os.path.join(tmp, "rows.npy")
            _cli("match", dpath, qpaths[0], "-o", rows, "--backend", "numpy", *extra)
            assert _rows_as_mappings(d, qs[0], np.load(rows)) == expected[0], extra


# ---------------------------------------------------------------------------------------------------- cluster
def _check_matcher(cluster, data, queries, method: str = "metis") -> None:
    expected = [oracle_mappings(data, q) for q in queries]
    with distsm.Matcher(data, cluster=cluster, partitions=distsm.Partitioning(2, method), backend="numpy") as m:
        for how in ("whole", "sliced"):
            results = m.submit(queries, distribute=how).results()
            assert all(r.ok for r in results), [r.error for r in results]
            assert [r.count for r in results] == [len(w) for w in expected], how
        listed = m.submit(queries, distribute="sliced", listing=True).results()
        for r, q, want in zip(listed, queries, expected):
            assert _rows_as_mappings(m.data, Graph.from_networkx(q), r.rows) == want


def test_user_report_count_batch_and_matcher(cluster):
    data, queries = user_report()
    assert [distsm.count(data, q) for q in queries] == [1, 2]
    assert [r.count for r in distsm.count_batch(data, queries, partitions=2)] == [1, 2]
    _check_matcher(cluster, data, queries)


@scaled(5)
@given(case=cases(max_queries=4), method=FAST_METHODS)
def test_cluster_matcher_agrees_with_networkx(cluster, case, method):
    note(_describe(*case))
    _check_matcher(cluster, *case, method=method)
