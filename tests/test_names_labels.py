"""Node names and labels of any hashable type, DataFrames, mappings and ``restrict``, against networkx's matcher."""

import pickle

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from oracles import oracle_mappings

import distsm
from distsm import Graph, GraphError, LabelVocabulary
from distsm.formats import read_graph, read_snap_with_ids

ATOMS = ["C", "N", ("ring", 1)]
BONDS = ["single", "double"]


def labelled_nx(rng, n, p, directed=False, prefix="v"):
    g = nx.gnp_random_graph(n, p, seed=int(rng.integers(1 << 30)), directed=directed)
    g = nx.relabel_nodes(g, {i: f"{prefix}{i}" for i in g})
    for v in g:
        g.nodes[v]["label"] = ATOMS[int(rng.integers(len(ATOMS)))]
    for e in g.edges:
        g.edges[e]["label"] = BONDS[int(rng.integers(len(BONDS)))]
    return g


def connected_query(rng, data_nx, size):
    """A connected induced piece of ``data_nx`` with fresh names (so matches exist)."""
    und = data_nx.to_undirected(as_view=True)
    start = list(data_nx)[int(rng.integers(data_nx.number_of_nodes()))]
    verts = [start]
    while len(verts) < size:
        frontier = sorted({w for v in verts for w in und[v]} - set(verts))
        if not frontier:
            break
        verts.append(frontier[int(rng.integers(len(frontier)))])
    q = data_nx.subgraph(verts).copy()
    return nx.relabel_nodes(q, {v: ("q", i) for i, v in enumerate(verts)})


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_mappings_in_user_names_agree_with_networkx(seed, directed):
    rng = np.random.default_rng(seed)
    dnx = labelled_nx(rng, 14, 0.3, directed)
    qnx = connected_query(rng, dnx, 4)
    data, query = Graph.from_networkx(dnx), Graph.from_networkx(qnx)
    got = {frozenset(m.items()) for m in distsm.iter_mappings(data, query, backend="numpy")}
    expected = oracle_mappings(dnx, qnx)
    assert got == expected and len(expected) > 0
    assert distsm.count(dnx, qnx, backend="numpy") == len(expected)  # networkx graphs accepted directly
    frame = distsm.match(data, query, as_frame=True, backend="numpy")
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(qnx)
    assert {frozenset(zip(frame.columns, row)) for row in frame.itertuples(index=False)} == expected


def test_query_and_data_with_their_own_vocabularies_match_by_value():
    data = nx.Graph([("a", "b", {"label": "double"}), ("b", "c", {"label": "single"})])
    nx.set_node_attributes(data, {"a": "O", "b": "C", "c": "N"}, "label")
    query = nx.Graph([(1, 2, {"label": "single"})])  # its labels appear in another order than in data
    nx.set_node_attributes(query, {1: "N", 2: "C"}, "label")
    d, q = Graph.from_networkx(data), Graph.from_networkx(query)
    assert d.vocabulary is not q.vocabulary and q.vertex_labels.tolist() == [0, 1]
    assert list(distsm.iter_mappings(d, q)) == [{1: "c", 2: "b"}]
    shared = LabelVocabulary()
    d2, q2 = Graph.from_networkx(data, labels=shared), Graph.from_networkx(query, labels=shared)
    assert d2.vocabulary is q2.vocabulary is shared
    assert list(distsm.iter_mappings(d2, q2)) == [{1: "c", 2: "b"}]
    # A label the data graph lacks means no candidates, not an error.
    nx.set_node_attributes(query, {1: "S"}, "label")
    assert distsm.count(d, query) == 0 and distsm.match(d, query, as_frame=True).shape == (0, 2)
    query.edges[1, 2]["label"] = "triple"
    nx.set_node_attributes(query, {1: "N"}, "label")
    assert distsm.count(d, query) == 0


def test_networkx_query_against_a_graph_read_from_a_file(tmp_path):
    path = tmp_path / "d.graph"
    path.write_text("t 4 3\nv 0 5 1\nv 1 7 2\nv 2 5 2\nv 3 9 1\ne 0 1 0\ne 1 2 0\ne 2 3 0\n")
    data = read_graph(path)
    q = nx.Graph([("x", "y")])
    nx.set_node_attributes(q, {"x": 5, "y": 7}, "label")
    assert sorted(map(sorted, (m.items() for m in distsm.iter_mappings(data, q)))) == \
        [[("x", 0), ("y", 1)], [("x", 2), ("y", 1)]]
    nx.set_node_attributes(q, {"x": "5"}, "label")  # the string "5" is not the label 5
    assert distsm.count(data, q) == 0


def test_default_label_and_unlabelled_graphs():
    g = nx.Graph([(0, 1), (1, 2)])
    g.nodes[0]["kind"] = "A"
    plain = Graph.from_networkx(g)
    assert plain.vocabulary is None and plain.node_ids is None and plain.vertex_labels.tolist() == [0, 0, 0]
    kinds = Graph.from_networkx(g, node_label="kind", edge_label=None, default_label="?")
    assert [kinds.vocabulary.value("vertex", c) for c in kinds.vertex_labels] == ["A", "?", "?"]
    q = nx.Graph([("u", "w")])
    nx.set_node_attributes(q, {"u": "A", "w": "?"}, "kind")
    assert distsm.count(kinds, Graph.from_networkx(q, node_label="kind", edge_label=None, default_label="?")) == 1
    with pytest.raises(TypeError, match="not hashable"):
        Graph.from_networkx(nx.Graph([(0, 1, {"label": ["unhashable"]})]))


def partly_labelled_nx(rng, n, p, directed):
    """A random networkx graph whose nodes and edges each carry a ``label`` attribute or not (label ``0`` among the
    values, so that missing and ``0`` must stay apart)."""
    g = nx.gnp_random_graph(n, p, seed=int(rng.integers(1 << 30)), directed=directed)
    share = rng.uniform(0.0, 1.0, size=2)
    for v in g:
        if rng.random() < share[0]:
            g.nodes[v]["label"] = int(rng.integers(2))
    for e in g.edges:
        if rng.random() < share[1]:
            g.edges[e]["label"] = int(rng.integers(2))
    return g


@pytest.mark.parametrize("seed", range(12))
def test_unlabelled_nodes_and_edges_match_as_networkx_matches_a_missing_attribute(seed):
    """A node or edge without the label is unlabelled, a value of its own (networkx's categorical matches take
    the missing attribute as None): data and query each fully, partly or not labelled, counts equal networkx's."""
    rng = np.random.default_rng(seed)
    directed = bool(seed % 3 == 0)
    data = partly_labelled_nx(rng, 10, 0.35, directed)
    query = connected_query(rng, data, int(rng.integers(2, 5)))
    for v in query:  # the query's own labelling: kept, dropped or partly dropped
        if rng.random() < 0.3:
            query.nodes[v].pop("label", None)
    for e in query.edges:
        if rng.random() < 0.3:
            query.edges[e].pop("label", None)
    assert distsm.count(data, query, backend="numpy") == len(oracle_mappings(data, query))


def test_a_missing_label_is_not_label_zero():
    data = nx.Graph([(0, 1, {"label": 0}), (1, 2)])
    unlabelled = nx.Graph([("a", "b")])
    assert distsm.count(data, unlabelled) == len(oracle_mappings(data, unlabelled)) == 2
    assert distsm.iter_mappings(data, unlabelled, backend="numpy").__next__() in ({"a": 1, "b": 2}, {"a": 2, "b": 1})
    assert distsm.count(data, nx.Graph([("a", "b", {"label": 0})])) == 2
    # A caller's default makes missing labels that value; a graph with no label at all matches the other graph's
    # unlabelled elements, or label 0 where it has none.
    assert distsm.count(Graph.from_networkx(data, default_label=1), unlabelled) == 0
    assert distsm.count(Graph.from_networkx(data, default_label=1), Graph.from_networkx(unlabelled, default_label=1)) \
        == 2
    assert distsm.count(Graph.from_networkx(data, default_label=0), unlabelled) == 4
    assert distsm.count(data, Graph.from_edges([(0, 1)], n=2)) == 2
    assert distsm.count(Graph.from_edges([(0, 1), (1, 2)], n=3), unlabelled) == 4


def test_round_trips_keep_names_and_label_values():
    rng = np.random.default_rng(7)
    g = labelled_nx(rng, 9, 0.4)
    graph = Graph.from_networkx(g)
    back = graph.to_networkx()
    assert dict(back.nodes(data="label")) == dict(g.nodes(data="label"))
    assert {frozenset((u, v)): d for u, v, d in back.edges(data="label")} == \
        {frozenset((u, v)): d for u, v, d in g.edges(data="label")}
    clone = pickle.loads(pickle.dumps(graph))
    assert clone == graph and clone.names() == graph.names()
    assert clone.vocabulary.values("vertex") == graph.vocabulary.values("vertex")


def test_node_ids_are_checked():
    with pytest.raises(GraphError, match="more than once"):
        Graph.from_edges([(0, 1)], node_ids=["a", "a"])
    with pytest.raises(GraphError, match="expected n = 2"):
        Graph.from_edges([(0, 1)], node_ids=["a"])
    with pytest.raises(GraphError, match="more than once"):
        Graph.from_edges([(0, 1)], node_ids=np.array([4, 4]))


def test_snap_ids_come_back_in_frames_and_mappings(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("# ids are sparse\n100 7\n7 42\n42 100\n42 9000000000\n")
    graph, ids = read_snap_with_ids(path)
    assert graph.node_ids.tolist() == ids.tolist() == [100, 7, 42, 9000000000]
    g_nx = nx.Graph([(100, 7), (7, 42), (42, 100), (42, 9000000000)])
    nx.set_node_attributes(g_nx, 0, "label")
    nx.set_edge_attributes(g_nx, 0, "label")
    tri = nx.complete_graph(3)
    nx.set_node_attributes(tri, 0, "label")
    nx.set_edge_attributes(tri, 0, "label")
    frame = distsm.match(str(path), tri, as_frame=True)
    assert list(frame.columns) == [0, 1, 2] and frame.dtypes.tolist() == [np.int64] * 3
    assert {frozenset(zip(frame.columns, r)) for r in frame.itertuples(index=False)} == oracle_mappings(g_nx, tri)
    assert distsm.count(str(path), tri, restrict={0: [9000000000, 42]}) == 2


@pytest.mark.parametrize("seed", range(5))
def test_restrict_agrees_with_the_oracle(seed):
    rng = np.random.default_rng(100 + seed)
    dnx = labelled_nx(rng, 16, 0.35)
    qnx = connected_query(rng, dnx, 3)
    nodes = list(dnx)
    restrict = {u: set(rng.choice(nodes, size=int(rng.integers(1, 9)), replace=False).tolist())
                for u in list(qnx)[:int(rng.integers(1, 3))]}
    expected = oracle_mappings(dnx, qnx, restrict)
    assert distsm.count(dnx, qnx, restrict=restrict) == len(expected)
    got = {frozenset(m.items()) for m in distsm.iter_mappings(dnx, qnx, restrict=restrict)}
    assert got == expected
    rows = distsm.match(dnx, qnx, restrict=restrict, induced=False)
    assert rows.shape == (len(expected), qnx.number_of_nodes())
    assert sum(r.shape[0] for r in distsm.iter_matches(dnx, qnx, restrict=restrict, memory_budget=4096)) == \
        len(expected)


def test_restrict_errors_name_the_culprit():
    data, query = nx.path_graph(["a", "b", "c"]), nx.path_graph(["x", "y"])
    with pytest.raises(GraphError, match="query node 'nope'"):
        distsm.count(data, query, restrict={"nope": ["a"]})
    with pytest.raises(GraphError, match="data node 'zz'"):
        distsm.count(data, query, restrict={"x": ["a", "zz"]})
    with pytest.raises(TypeError, match="collection of data nodes"):
        distsm.count(data, query, restrict={"x": "a"})
    with pytest.raises(ValueError, match="unique"):
        distsm.count(data, query, restrict={"x": ["a"]}, unique=True)
    with pytest.raises(ValueError, match="partitions"):
        distsm.count(data, query, restrict={"x": ["a"]}, partitions=2)
    assert distsm.count(data, query, restrict={"x": []}) == 0
    assert distsm.count(data, query, restrict={"x": ["b"]}) == 2


def test_cluster_matcher_reconciles_query_labels(tmp_path):
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(21)
    dnx = labelled_nx(rng, 30, 0.2)
    queries = [connected_query(rng, dnx, size) for size in (2, 3, 4)]
    expected = [len(oracle_mappings(dnx, q)) for q in queries]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as lc, \
            Client(lc) as client, \
            distsm.Matcher(dnx, cluster=client, partitions=distsm.Partitioning(2, "random"), backend="numpy") as m:
        # Each networkx query gets its own vocabulary; the matcher re-encodes it into the data graph's.
        assert [r.count for r in m.submit(queries).results()] == expected


@pytest.mark.gpu
def test_frames_on_the_gpu_backend():
    rng = np.random.default_rng(5)
    dnx = labelled_nx(rng, 20, 0.3)
    qnx = connected_query(rng, dnx, 3)
    qnx = nx.relabel_nodes(qnx, {v: f"u{v[1]}" for v in qnx})
    frame = distsm.match(dnx, qnx, as_frame=True, backend="cupy")
    try:
        import cudf
    except ImportError:
        assert isinstance(frame, pd.DataFrame)
    else:
        assert isinstance(frame, cudf.DataFrame)
        frame = frame.to_pandas()
    assert list(frame.columns) == list(qnx)
    assert {frozenset(zip(frame.columns, r)) for r in frame.itertuples(index=False)} == oracle_mappings(dnx, qnx)


def test_every_entry_point_refuses_a_conflict_in_the_same_words():
    """One table of parameter conflicts (distsm.request.CONFLICTS) and one wording, whichever call it reaches."""
    import networkx as nx

    g = nx.path_graph(3)
    calls = [lambda **kw: distsm.count(g, g, **kw), lambda **kw: distsm.match(g, g, **kw),
             lambda **kw: list(distsm.iter_matches(g, g, **kw)), lambda **kw: list(distsm.iter_mappings(g, g, **kw))]
    for kwargs, words in [({"restrict": {0: [0]}, "unique": True}, "restrict cannot be combined with unique: "),
                          ({"restrict": {0: [0]}, "partitions": 2}, "restrict cannot be combined with partitions: ")]:
        messages = set()
        for call in calls:
            with pytest.raises(ValueError) as info:
                call(**kwargs)
            messages.add(str(info.value))
        assert len(messages) == 1 and messages.pop().startswith(words)
    with pytest.raises(ValueError, match="progress cannot be combined with partitions: "):
        distsm.count(g, g, partitions=2, progress=lambda done, total: None)


def test_labels_equal_as_python_values_match_whatever_the_encoding():
    """``True``, ``1.0`` and ``1`` are one label, as they are one dict key and equal for networkx: a query labelled
    with any of them matches data labelled with another, whether the data graph is identity-coded (small integer
    labels) or carries a vocabulary."""
    import networkx as nx

    from oracles import oracle_mappings

    for data_labels in ({"a": 1, "b": 0}, {"a": 1, "b": "s"}):
        d = nx.Graph()
        d.add_nodes_from((n, {"label": lab}) for n, lab in data_labels.items())
        d.add_edge("a", "b", label=0)
        for value in (True, 1.0, np.int64(1), 1.5, "1"):
            q = nx.Graph()
            q.add_node(0, label=value)
            q.add_node(1, label=data_labels["b"])
            q.add_edge(0, 1, label=False)
            assert distsm.count(d, q) == len(oracle_mappings(d, q)), (data_labels, value)
