"""Partitioning (METIS in a child process, random, contiguous), the partition store and the mmap graph store."""

import json
import shutil
import warnings

import numpy as np
import pytest
from hprd import DATA

import distsm
from distsm import caches
from distsm.cli import main
from distsm.graph import Graph
from distsm.kernels.array_backend import NumpyBackend
from distsm.kernels.index import build_index
from distsm.partition import (
    PARTITION_METHODS,
    LocalPart,
    PartitionError,
    PartitionStore,
    StalePartitionError,
    graph_fingerprint,
    load_index,
    load_or_build,
    partition_vertices,
    save_index,
)
from distsm.partition import metis as metis_mod
from distsm.partition.simple import contiguous_parts, random_parts

KS = [1, 2, 3, 4, 8, 16]


def random_graph(n, m, *, directed, seed, vlabels=4, elabels=3, isolated=5):
    """A random labelled graph; the last ``isolated`` vertices have no edges; directed ones have reciprocal arcs."""
    rng = np.random.default_rng(seed)
    k = n - isolated
    e = rng.integers(0, k, size=(m, 2))
    if directed:
        e = np.concatenate([e, e[: m // 5, ::-1]])
    e = e[e[:, 0] != e[:, 1]]
    if not directed:
        e = np.sort(e, axis=1)
    e = np.unique(e, axis=0)
    return Graph.from_edges(e, n=n, edge_labels=rng.integers(0, elabels, e.shape[0]),
                            vertex_labels=rng.integers(0, vlabels, n), directed=directed)


@pytest.fixture(scope="module")
def hprd():
    return distsm.read_graph(DATA)


@pytest.fixture(scope="module")
def graphs(hprd):
    return {
        "undirected": random_graph(150, 500, directed=False, seed=1),
        "directed": random_graph(120, 450, directed=True, seed=2),
        "hprd": hprd,
    }


def edge_keys(src, dst, labels, n):
    """Sorted int64 keys (src, dst, label) of an edge list, for exact multiset comparison."""
    src, dst, labels = (np.asarray(a, dtype=np.int64) for a in (src, dst, labels))
    return np.sort((src * n + dst) * 64 + labels)


def check_store(g, store):
    """Every invariant of a partition store of ``g``."""
    k = store.k
    a = store.assignment
    assert a.dtype == np.int32 and a.shape == (g.n,)
    assert a.size == 0 or (a.min() >= 0 and a.max() < k)
    seen = np.zeros(g.n, np.int64)
    srcs, dsts, labs = [], [], []
    for i in range(k):
        p = store.part(i)
        assert isinstance(p, LocalPart) and p.index == i
        gids = p.global_ids
        assert gids.dtype == np.int64 and np.all(np.diff(gids) > 0)
        np.testing.assert_array_equal(gids, np.flatnonzero(a == i))
        seen[gids] += 1
        lg = p.graph
        assert lg.n == gids.size and lg.directed == g.directed
        np.testing.assert_array_equal(lg.vertex_labels, g.vertex_labels[gids])
        srcs.append(gids[lg.edge_src])
        dsts.append(gids[lg.edge_dst])
        labs.append(lg.edge_labels)
        assert lg.m == store.stats.part_edges[i] and lg.n == store.stats.part_vertices[i]
    assert np.all(seen == 1)
    cs, cd, cl = store.cross_edges()
    assert np.all(a[cs] != a[cd])
    if not g.directed:
        assert np.all(cs < cd)
    assert np.all(np.diff(cs * max(g.n, 1) + cd) > 0)  # sorted by (src, dst), no repeats
    assert store.stats.cross_edges == store.stats.edge_cut == cs.size
    got = edge_keys(np.concatenate([*srcs, cs]), np.concatenate([*dsts, cd]), np.concatenate([*labs, cl]), g.n)
    np.testing.assert_array_equal(got, edge_keys(g.edge_src, g.edge_dst, g.edge_labels, g.n))
    assert sum(store.stats.part_edges) + store.stats.cross_edges == g.m
    assert sum(store.stats.part_vertices) == g.n


# ---------------------------------------------------------------------------------------------- assignments
@pytest.mark.parametrize("name", ["undirected", "directed", "hprd"])
@pytest.mark.parametrize("method", PARTITION_METHODS)
def test_every_edge_is_inside_one_part_or_crosses(graphs, name, method):
    g = graphs[name]
    for k in KS:
        store = PartitionStore.build(g, k, method=method, seed=7)
        check_store(g, store)
        if k <= g.n:
            assert min(store.stats.part_vertices) > 0
        if k == 1:
            assert store.stats.cross_edges == 0 and store.part(0).graph == g


def test_metis_is_reproducible_and_balanced(hprd):
    a = metis_mod.metis_parts(hprd, 8, seed=3)
    b = metis_mod.metis_parts(hprd, 8, seed=3)
    np.testing.assert_array_equal(a, b)
    sizes = np.bincount(a, minlength=8)
    assert sizes.min() > 0 and sizes.max() / sizes.mean() < 1.1
    # METIS cuts far fewer edges than a random split.
    cut = lambda p: int(np.sum(p[hprd.edge_src] != p[hprd.edge_dst]))  # noqa: E731
    assert cut(a) < 0.6 * cut(random_parts(hprd, 8, seed=3))


def test_metis_on_directed_graph_uses_undirected_version(graphs):
    g = graphs["directed"]
    xadj, adjncy, w = metis_mod.symmetric_csr(g)
    rows = np.repeat(np.arange(g.n), np.diff(xadj))
    pairs = set(zip(rows.tolist(), adjncy.tolist()))
    assert pairs == {(u, v) for u, v in pairs if (v, u) in pairs}  # symmetric
    assert len(pairs) == adjncy.size and all(u != v for u, v in pairs)
    assert w is not None and set(np.unique(w).tolist()) == {1, 2}  # reciprocal arcs weigh 2
    a = metis_mod.metis_parts(g, 4, seed=1)
    np.testing.assert_array_equal(a, metis_mod.metis_parts(g, 4, seed=1))


def test_special_cases_need_no_metis(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("METIS should not run")

    monkeypatch.setattr(metis_mod, "_run_child", boom)
    g = random_graph(10, 20, directed=False, seed=3, isolated=0)
    np.testing.assert_array_equal(metis_mod.metis_parts(g, 1), np.zeros(10))
    np.testing.assert_array_equal(metis_mod.metis_parts(g, 16), np.arange(10))  # k > n: one vertex per part
    store = PartitionStore.build(g, 16)
    check_store(g, store)
    assert store.stats.part_vertices == (1,) * 10 + (0,) * 6 and store.part(12).graph.n == 0
    empty = Graph.from_edges(np.zeros((0, 2)), n=7)
    np.testing.assert_array_equal(metis_mod.metis_parts(empty, 3), [0, 0, 0, 1, 1, 2, 2])
    none = Graph.from_edges(np.zeros((0, 2)), n=0)
    assert metis_mod.metis_parts(none, 4).shape == (0,)
    check_store(none, PartitionStore.build(none, 4))


def test_bad_arguments():
    g = random_graph(20, 40, directed=False, seed=4)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="k must be >= 1"):
            partition_vertices(g, bad)
    for bad in (2.5, "4", True, None):
        with pytest.raises(TypeError, match="k must be an integer"):
            partition_vertices(g, bad)
    with pytest.raises(ValueError, match="metis, random, contiguous"):
        partition_vertices(g, 2, method="kahip")
    with pytest.raises(TypeError, match="seed"):
        metis_mod.metis_parts(g, 2, seed=1.5)
    assert partition_vertices(g, np.int64(2), method="contiguous").tolist() == [0] * 10 + [1] * 10


def test_simple_methods():
    g = random_graph(103, 200, directed=True, seed=5)
    for k in (1, 2, 7, 103):
        for p in (contiguous_parts(g, k), random_parts(g, k, seed=9)):
            sizes = np.bincount(p, minlength=k)
            assert p.dtype == np.int32 and sizes.min() >= 1 and sizes.max() - sizes.min() <= 1
    assert np.all(np.diff(contiguous_parts(g, 5)) >= 0)
    np.testing.assert_array_equal(random_parts(g, 5, seed=1), random_parts(g, 5, seed=1))
    assert not np.array_equal(random_parts(g, 5, seed=1), random_parts(g, 5, seed=2))


# ---------------------------------------------------------------------------------------------- child process
def test_child_crash_becomes_an_exception(monkeypatch, hprd):
    monkeypatch.setattr(metis_mod, "_CHILD_CODE", "import os; os._exit(139)")
    with pytest.raises(PartitionError, match="status 139"):
        metis_mod.metis_parts(hprd, 4)


def test_real_segfault_in_metis_becomes_an_exception():
    # An out-of-range neighbour id makes METIS segfault; only the child dies.
    xadj = np.array([0, 1, 2, 3, 4])
    with pytest.raises(PartitionError, match="SIGSEGV"):
        metis_mod._run_child(xadj, np.array([1, 0, 10**12, 2]), None, 2, 0, None)
    with pytest.raises(PartitionError, match="RuntimeError"):  # METIS input error, reported from the child
        metis_mod._run_child(xadj, np.array([1, 0, 3, 2]), None, 0, 0, None)


def test_child_timeout(monkeypatch, hprd):
    monkeypatch.setattr(metis_mod, "_CHILD_CODE", "import time; time.sleep(60)")
    with pytest.raises(PartitionError, match="timeout"):
        metis_mod.metis_parts(hprd, 4, timeout=1)


# ---------------------------------------------------------------------------------------------- the store on disk
@pytest.mark.parametrize("name", ["directed", "hprd"])
def test_save_open_round_trip(graphs, name, tmp_path):
    g = graphs[name]
    store = PartitionStore.build(g, 4, method="random", seed=11)
    d = store.save(tmp_path / "store")
    manifest = json.loads((d / "manifest.json").read_text())
    assert manifest["k"] == 4 and manifest["method"] == "random" and manifest["seed"] == 11
    assert manifest["fingerprint"] == graph_fingerprint(g) and manifest["version"] == 1
    assert all(len(e["sha256"]) == 64 for e in manifest["files"].values())
    back = PartitionStore.open(d, graph=g, k=4)
    assert back.directory == d and back.stats == store.stats
    assert (back.k, back.method, back.seed, back.n, back.m, back.directed) == (4, "random", 11, g.n, g.m, g.directed)
    np.testing.assert_array_equal(back.assignment, store.assignment)
    for i in range(4):
        assert back.part(i).graph == store.part(i).graph
        np.testing.assert_array_equal(back.part(i).global_ids, store.part(i).global_ids)
    for x, y in zip(back.cross_edges(), store.cross_edges()):
        np.testing.assert_array_equal(x, y)
    src, dst, _ = store.cross_edges()
    incident = np.flatnonzero(np.bincount(np.concatenate([src, dst]), minlength=g.n))
    np.testing.assert_array_equal(store.cross_vertices(), incident)
    np.testing.assert_array_equal(back.cross_vertices(), incident)
    assert "cross_vertices.npy" in manifest["files"]
    check_store(g, back)
    # Without the graph the parts are still readable: each part directory is self-contained.
    blind = PartitionStore.open(d)
    assert blind.graph is None and blind.part(2).graph == store.part(2).graph
    back.verify()


def test_store_without_cross_vertices_file_derives_them(graphs, tmp_path):
    """Stores written before ``cross_vertices.npy`` existed still serve the cross vertices."""
    g = graphs["hprd"]
    store = PartitionStore.build(g, 4, method="random", seed=3)
    d = store.save(tmp_path / "old")
    manifest = json.loads((d / "manifest.json").read_text())
    del manifest["files"]["cross_vertices.npy"]
    (d / "manifest.json").write_text(json.dumps(manifest))
    (d / "cross_vertices.npy").unlink()
    np.testing.assert_array_equal(PartitionStore.open(d).cross_vertices(), store.cross_vertices())


def test_open_is_lazy(graphs, tmp_path):
    g = graphs["undirected"]
    d = PartitionStore.build(g, 3, method="contiguous").save(tmp_path / "s")
    shutil.rmtree(d / "parts" / "00001")
    (d / "assignment.npy").unlink()
    store = PartitionStore.open(d, graph=g, k=3)  # reads only manifest.json
    assert store.stats.part_vertices == (50, 50, 50)
    assert store.part(0).graph.n == 50 and store.part(2).global_ids[0] == 100
    with pytest.raises(StalePartitionError, match="cannot read"):
        store.part(1)
    with pytest.raises(StalePartitionError):
        _ = store.assignment
    with pytest.raises(StalePartitionError, match="missing"):
        store.verify(deep=False)


def test_stale_stores_are_detected(graphs, tmp_path):
    g, other = graphs["undirected"], graphs["directed"]
    d = PartitionStore.build(g, 4, method="random").save(tmp_path / "s")
    with pytest.raises(StalePartitionError, match="another graph"):
        PartitionStore.open(d, graph=other)
    relabelled = Graph.from_edges(np.stack([g.edge_src, g.edge_dst], 1), n=g.n, edge_labels=g.edge_labels,
                                  vertex_labels=(g.vertex_labels + 1) % 4)
    with pytest.raises(StalePartitionError, match="another graph"):
        PartitionStore.open(d, graph=relabelled)
    with pytest.raises(StalePartitionError, match="into 4 parts, not 8"):
        PartitionStore.open(d, graph=g, k=8)
    # A corrupted array: same size, one byte flipped near the end (in the data, not the header).
    f = d / "parts" / "00002" / "global_ids.npy"
    raw = bytearray(f.read_bytes())
    raw[-3] ^= 0xFF
    f.write_bytes(bytes(raw))
    store = PartitionStore.open(d, graph=g, k=4)
    store.part(1)
    with pytest.raises(StalePartitionError, match="checksum"):
        store.part(2)
    with pytest.raises(StalePartitionError, match="checksum"):
        store.verify()
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["version"] = 99
    (d / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StalePartitionError, match="version 99"):
        PartitionStore.open(d)
    (d / "manifest.json").write_text("{not json")
    with pytest.raises(StalePartitionError):
        PartitionStore.open(d)
    assert issubclass(StalePartitionError, ValueError)
    with pytest.raises(FileNotFoundError):
        PartitionStore.open(tmp_path / "nowhere")


def test_fingerprint_ignores_edge_order_and_is_cached(graphs):
    g = graphs["directed"]
    perm = np.random.default_rng(0).permutation(g.m)
    h = Graph.from_edges(np.stack([g.edge_src, g.edge_dst], 1)[perm], n=g.n, edge_labels=g.edge_labels[perm],
                         vertex_labels=g.vertex_labels, directed=True)
    assert graph_fingerprint(g) == graph_fingerprint(h) and graph_fingerprint(g).startswith("sha256:")
    assert caches.site("graph facts").get(g, "fingerprint") == graph_fingerprint(g)
    u = graphs["undirected"]
    as_directed = Graph.from_edges(np.stack([u.edge_src, u.edge_dst], 1), n=u.n, edge_labels=u.edge_labels,
                                   vertex_labels=u.vertex_labels, directed=True)
    assert graph_fingerprint(as_directed) != graph_fingerprint(u)
    one_less = Graph.from_edges(np.stack([u.edge_src, u.edge_dst], 1)[1:], n=u.n, edge_labels=u.edge_labels[1:],
                                vertex_labels=u.vertex_labels)
    assert graph_fingerprint(one_less) != graph_fingerprint(u)


def test_load_or_build(graphs, tmp_path):
    g = graphs["undirected"]
    d = tmp_path / "cache"
    first = load_or_build(g, 4, directory=d, method="random", seed=1)
    assert not first.reused and first.directory == d.absolute() and (d / "manifest.json").exists()
    again = load_or_build(g, 4, directory=d, method="random", seed=1)
    assert again.reused
    np.testing.assert_array_equal(again.assignment, first.assignment)
    for k, method, seed in [(3, "random", 1), (3, "random", 2), (3, "contiguous", 0)]:
        s = load_or_build(g, k, directory=d, method=method, seed=seed)
        assert not s.reused and (s.k, s.method, s.seed) == (k, method, seed)
        assert PartitionStore.open(d).k == k
    assert load_or_build(g, 3, directory=d, method="contiguous", seed=5).reused  # seed is moot for contiguous
    other = graphs["directed"]
    s = load_or_build(other, 3, directory=d, method="contiguous")
    assert not s.reused and PartitionStore.open(d).fingerprint == graph_fingerprint(other)
    # Missing files: rebuilt.
    shutil.rmtree(d / "parts" / "00000")
    assert not load_or_build(other, 3, directory=d, method="contiguous").reused
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]  # no temporary directories left behind
    # Unwritable: a path below a regular file; and a directory that is not a store.
    (tmp_path / "file").write_text("x")
    (tmp_path / "notastore").mkdir()
    (tmp_path / "notastore" / "keep.txt").write_text("mine")
    for bad in (tmp_path / "file" / "sub", tmp_path / "notastore"):
        with pytest.warns(RuntimeWarning, match="in memory"):
            s = load_or_build(g, 2, directory=bad, method="random")
        assert s.in_memory and s.k == 2
        with pytest.raises(OSError):
            load_or_build(g, 2, directory=bad, method="random", fallback=False)
    assert (tmp_path / "notastore" / "keep.txt").read_text() == "mine"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_or_build(g, 2, method="random").in_memory


def test_local_part_id_maps(graphs):
    g = graphs["undirected"]
    p = PartitionStore.build(g, 3, method="random").part(1)
    local = np.arange(p.graph.n)
    np.testing.assert_array_equal(p.to_local(p.to_global(local)), local)
    outside = np.setdiff1d(np.arange(g.n), p.global_ids)
    assert np.all(p.to_local(outside) == -1)
    assert p.to_local(np.array([[g.n + 5]])).shape == (1, 1)


# ---------------------------------------------------------------------------------------------- mmap graph store
def _same_index(a, b):
    assert (a.n, a.num_labels, a.nbytes, a.label_entries) == (b.n, b.num_labels, b.nbytes, b.label_entries)
    for f in ("vertex_labels", "degrees", "nbr", "indptr", "run_keys", "run_start", "run_end", "entry_keys",
              "pair_keys", "sig"):
        x, y = getattr(a, f), getattr(b, f)
        assert (x is None) == (y is None), f
        if x is not None:
            assert x.dtype == y.dtype, f
            np.testing.assert_array_equal(x, y, err_msg=f)
    assert a.vertices_by_label.keys() == b.vertices_by_label.keys()
    for lab in a.vertices_by_label:
        np.testing.assert_array_equal(a.vertices_by_label[lab], b.vertices_by_label[lab])


@pytest.mark.parametrize("name", ["directed", "hprd"])
def test_mmap_index_answers_like_the_original(graphs, name, tmp_path):
    g = graphs[name]
    idx = build_index(g, np)
    save_index(idx, tmp_path / "adj")
    mm = load_index(tmp_path / "adj", mmap=True, verify=True)
    assert isinstance(mm.nbr, np.memmap) and not mm.nbr.flags.writeable
    _same_index(idx, mm)
    _same_index(idx, load_index(tmp_path / "adj", mmap=False))
    if idx.num_labels == 1:
        assert mm.pair_keys is mm.entry_keys
    be = NumpyBackend()
    rng = np.random.default_rng(0)
    x = rng.integers(0, g.n, 5000)
    y = rng.integers(0, g.n, 5000)
    h = min(1000, g.m)
    x[:h], y[:h] = g.edge_src[:h], g.edge_dst[:h]  # plenty of hits
    hits = 0
    for label in range(idx.num_labels + 1):
        a, b = be.has_edge(idx, x, label, y), be.has_edge(mm, x, label, y)
        np.testing.assert_array_equal(a, b)
        hits += int(a.sum())
        for u, v in zip(be.run_bounds(idx, x, label), be.run_bounds(mm, x, label)):
            np.testing.assert_array_equal(u, v)
    assert hits >= h


def test_store_adjacency_index(graphs, tmp_path):
    g = graphs["directed"]
    store = PartitionStore.build(g, 2, method="random")
    mem = store.adjacency_index()
    assert not isinstance(mem.nbr, np.memmap)
    d = store.save(tmp_path / "s")
    disk = PartitionStore.open(d, graph=g).adjacency_index()
    assert isinstance(disk.entry_keys, np.memmap)
    _same_index(mem, disk)
    (d / "adjacency" / "nbr.npy").write_bytes((d / "adjacency" / "nbr.npy").read_bytes()[:-4] + b"\0\0\0\7")
    with pytest.raises(StalePartitionError, match="checksum"):
        PartitionStore.open(d).adjacency_index()
    d2 = store.save(tmp_path / "noadj", adjacency=False)
    with pytest.raises(StalePartitionError, match="without its adjacency"):
        PartitionStore.open(d2).adjacency_index()


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_partition(tmp_path, capsys):
    out = tmp_path / "hprd.parts"
    assert main(["partition", str(DATA), "-k", "4", "--out", str(out), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["k"] == 4 and rec["method"] == "metis" and len(rec["part_vertices"]) == 4
    assert rec["edge_cut"] == rec["cross_edges"] > 0 and 1.0 <= rec["balance"] < 1.1
    assert sum(rec["part_edges"]) + rec["cross_edges"] == rec["edges"] == 34998
    assert rec["store"].startswith("saved") and (out / "manifest.json").exists()
    assert main(["partition", str(DATA), "-k", "4", "--out", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["store"].startswith("reused") and again["part_vertices"] == rec["part_vertices"]
    assert main(["partition", str(DATA), "-k", "3", "--method", "contiguous"]) == 0
    text = capsys.readouterr().out
    assert "cross_edges" in text and "balance" in text and "in memory" in text
    assert main(["partition", str(DATA), "-k", "2", "--out", str(DATA)]) == 2
    assert "not a partition store" in capsys.readouterr().err
    assert main(["partition", str(tmp_path / "missing.graph"), "-k", "2"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["partition", str(DATA), "-k", "0"])
    assert e.value.code == 2


@pytest.mark.parametrize("name", ["undirected", "directed", "hprd"])
def test_a_one_part_store_is_the_whole_graph_without_a_second_index(graphs, name, tmp_path):
    """A graph held whole (one part, as every worker of a replicated cluster holds it): part 0 is the graph with
    its ids, its adjacency taken from the whole graph's (saved or in memory) rather than sorted again, and a
    residency counts on it through the index it holds for the whole graph, not a second one."""
    from distsm.residency import Residency

    g = graphs[name]
    store = PartitionStore.build(g, 1)
    assert store.cross_edges()[0].shape == (0,) and np.array_equal(store.assignment, np.zeros(g.n))
    d = store.save(tmp_path / "s")
    saved = PartitionStore.open(d)
    for s in (store, saved):
        part = s.part(0)
        assert np.array_equal(part.global_ids, np.arange(g.n))
        for attr in ("indptr", "neighbors", "neighbor_labels", "vertex_labels"):
            assert np.array_equal(getattr(part.graph, attr), getattr(g, attr)), attr
        assert graph_fingerprint(part.graph) == graph_fingerprint(g)
        backend = NumpyBackend()
        site = Residency(backend, s, "device", None)
        local = site.part(0)
        assert caches.site("indexes").get(local.graph, backend.name) is site.whole_graph()[0]
        query = Graph.from_edges([(0, 1), (1, 2), (0, 2)], vertex_labels=[int(x) for x in g.vertex_labels[:3]],
                                 directed=g.directed)
        assert distsm.count(local.graph, query, backend="numpy") == distsm.count(g, query, backend="numpy")
    # Saved without the whole graph's adjacency, part 0 is sorted from its edges: the same graph.
    bare = PartitionStore.open(store.save(tmp_path / "bare", adjacency=False)).part(0).graph
    assert np.array_equal(bare.neighbors, g.neighbors) and np.array_equal(bare.neighbor_labels, g.neighbor_labels)


def test_a_store_this_process_wrote_is_not_hashed_again_but_others_check_it(graphs, tmp_path, monkeypatch):
    from distsm.partition import store as store_module

    hashed = []
    real = store_module.sha256_file
    monkeypatch.setattr(store_module, "sha256_file", lambda path: hashed.append(path) or real(path))
    store = load_or_build(graphs["undirected"], 2, directory=tmp_path / "s", method="random")
    hashed.clear()  # the checksums of what it wrote
    store.adjacency_index()  # verified: the sizes only, since this process computed the checksums as it wrote
    store.verify(deep=True)
    assert hashed == []
    reopened = PartitionStore.open(tmp_path / "s")
    reopened.adjacency_index()
    assert hashed
    (tmp_path / "s" / "adjacency" / "nbr.npy").write_bytes(
        (tmp_path / "s" / "adjacency" / "nbr.npy").read_bytes()[:-4] + b"\0\0\0\7")
    with pytest.raises(StalePartitionError, match="checksum"):
        PartitionStore.open(tmp_path / "s").verify(deep=True)
