"""Out-of-core partitioned matching: adjacency gathered from host memory gives the resident answers."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from hprd import DATA, expected_counts, query_path
from oracles import check_split, make_case
from test_partitioned import rows_as_set

import distsm
from distsm import caches
from distsm import Graph, Semantics
from distsm.kernels import get_backend
from distsm.kernels.gather import HostAdjacency, step_columns
from distsm.kernels.index import build_index, estimate_core_bytes, estimate_index_bytes
from distsm.partition import Partitioning
from distsm.partitioned import PartitionedMatcher
from distsm.plan.distribution import Directions

NUMPY = get_backend("numpy")


@scaled(150)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 30), p=st.floats(0.08, 0.5), vl=st.integers(1, 3),
       el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(2, 5), sampled=st.booleans(),
       k=st.sampled_from([1, 2, 3, 5]), semantics=st.sampled_from(["plain", "induced", "homomorphism", "unique"]),
       strategy=st.sampled_from([None, "pbe", "global"]), budget=st.sampled_from([1 << 24, 2000, 400]),
       adjacency=st.sampled_from(["host", "gather"]), distribute=st.sampled_from(["auto", "whole", "sliced"]))
def test_host_adjacency_equals_unpartitioned(seed, n, p, vl, el, directed, qsize, sampled, k, semantics, strategy,
                                             budget, adjacency, distribute):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    sem = Semantics(induced=semantics == "induced", homomorphism=semantics == "homomorphism",
                    unique=semantics == "unique")
    expected_rows = rows_as_set(distsm.match(data, query, backend="numpy", **sem.as_dict()))
    matcher = PartitionedMatcher(data, Partitioning(k, "random", seed % 1000, adjacency), backend=NUMPY)
    directions = Directions(strategy, distribute)
    result = matcher.count(query, sem, budget, directions)
    assert result.count == len(expected_rows)
    check_split(result, k)
    assert result.bytes_h2d > 0 or result.intra is None  # the parts' indexes at least, when parts are searched
    listed = [r for chunk in matcher.iter_matches(query, sem, budget, directions=directions) for r in chunk]
    assert rows_as_set(listed) == expected_rows


@pytest.mark.parametrize("room", ["every part", "one part"])
def test_parts_stay_resident_within_their_share_and_are_released(room):
    """Out of core the parts searched stay on the device while they fit in their share of the budget (least
    recently used out first), and :meth:`release` drops them; the whole graph's index is never built."""
    data = distsm.read_graph(DATA)
    matcher = PartitionedMatcher(data, Partitioning(4, adjacency="gather"), backend=NUMPY)
    parts = [matcher.store.part(i).graph for i in range(4)]
    sizes = [int(NUMPY.index(g).nbytes) for g in parts]
    for g in parts:
        NUMPY.release(g)
    # A budget whose parts' share (three eighths of what the per-vertex arrays leave) holds all four, or the
    # largest alone.
    part_share = sum(sizes) if room == "every part" else max(sizes)
    budget = estimate_core_bytes(data.n) + part_share * 8 // 3 + 8
    names = sorted(expected_counts())[:3]
    for name in names:
        r = matcher.count(distsm.read_graph(query_path(name)), Semantics(), budget, Directions("pbe"))
        assert r.count == expected_counts()[name] and r.intra is not None
    indexes = caches.site("indexes")
    held = [i for i in range(4) if indexes.get(matcher.store.part(i).graph, NUMPY.name) is not None]
    assert matcher.residency.peak_part_bytes <= part_share
    assert len(held) == (4 if room == "every part" else 1)
    assert matcher.residency.part_bytes_h2d == sum(sizes) * (1 if room == "every part" else len(names))
    matcher.release()
    assert all(indexes.get(matcher.store.part(i).graph, NUMPY.name) is None for i in range(4))
    assert indexes.get(data, NUMPY.name) is None, "the whole graph's index must never be built out of core"


@pytest.mark.parametrize("adjacency", ["host", "gather"])
def test_hprd_out_of_core_with_budget_chosen_k(adjacency):
    """All 200 HPRD queries under a budget far below the graph's index; k comes from the budget."""
    data = distsm.read_graph(DATA)
    graph_bytes = estimate_index_bytes(data.n, data.nnz, data.num_effective_labels > 1)
    budget = graph_bytes // 2
    matcher = PartitionedMatcher(data, Partitioning("auto", adjacency=adjacency), backend=NUMPY, budget=budget)
    assert matcher.k >= 4
    rest = budget - estimate_core_bytes(data.n)  # the per-vertex arrays come off the budget first
    st = matcher.store.stats
    assert max(estimate_index_bytes(v, 2 * e, False) for v, e in zip(st.part_vertices, st.part_edges)) <= rest * 3 // 8
    wrong, moved, inter = {}, 0, 0
    for name, expected in sorted(expected_counts().items()):
        r = matcher.count(distsm.read_graph(query_path(name)), Semantics(), budget, Directions(distribute="sliced"))
        moved += r.bytes_h2d
        inter += r.inter or 0
        if r.count != expected:
            wrong[name] = (r.count, expected)
    assert not wrong and inter > 0 and moved > 0
    if adjacency == "gather":
        assert matcher.host.stats.peak_piece_bytes <= rest // 4 or matcher.host.stats.splits == 0


def test_budget_below_the_per_vertex_arrays_is_refused():
    data = distsm.read_graph(DATA)
    with pytest.raises(ValueError, match="per-vertex arrays .* raise it above"):
        PartitionedMatcher(data, Partitioning("auto", adjacency="host"), backend=NUMPY,
                           budget=estimate_core_bytes(data.n))


@pytest.mark.parametrize("cache", [0, 60_000])
def test_pieces_split_to_the_limit_and_cover_every_row(cache):
    data = distsm.read_graph(DATA)
    host = build_index(data, np)
    q = distsm.read_graph(query_path(sorted(expected_counts())[5]))
    from distsm.kernels import engine
    from distsm.kernels.query_plan import MatchOptions

    prepared = engine.prepare(NUMPY, data, q, MatchOptions())
    step = prepared.plan.steps[0]
    table = np.arange(data.n, dtype=np.int32)[:, None]  # every vertex as a level-0 row
    adj = HostAdjacency(NUMPY, host, limit=2000, cache=cache)
    assert (adj.cache_rows > 0) == (cache > 0)
    pieces = list(adj.pieces(table, step))
    assert adj.stats.splits > 0 and len(pieces) > 1
    covered = np.concatenate([p for p, _ in pieces])
    # only rows without adjacency may be dropped
    dropped = np.setdiff1d(table[:, 0], covered[:, 0])
    assert (np.asarray(host.degrees)[dropped] == 0).all()
    if cache == 0:
        assert adj.stats.entries == int(np.asarray(host.degrees).sum())
    cols = step_columns(step)
    for piece, idx in pieces:
        for v in np.unique(piece[:, cols]):
            full = host.nbr[host.indptr[v]:host.indptr[v + 1]]
            assert np.array_equal(idx.nbr[idx.indptr[v]:idx.indptr[v + 1]], full)
        # the keys the CPU backend searches stay globally sorted
        assert (np.diff(idx.entry_keys) > 0).all()
        assert idx.run_keys is None or (np.diff(idx.run_keys) > 0).all()


def test_bad_adjacency_mode():
    g = Graph.from_edges([(0, 1)], n=2)
    with pytest.raises(ValueError, match="adjacency"):
        PartitionedMatcher(g, Partitioning(1, adjacency="disk"), backend=NUMPY)


def test_api_partitions_auto_out_of_core():
    data = distsm.read_graph(DATA)
    names = sorted(expected_counts())[:20]
    budget = estimate_index_bytes(data.n, data.nnz, False) // 3
    for name in names:
        got = distsm.count(data, query_path(name), backend="numpy", partitions="auto", adjacency="host",
                           memory_budget=budget)
        assert got == expected_counts()[name]
    # On the device (the budget holds the whole index) one part is enough, as one per worker on a cluster.
    matcher = PartitionedMatcher(data, Partitioning("auto", adjacency="device"), backend=NUMPY, budget=1 << 30)
    assert matcher.k == 1 and matcher.count(distsm.read_graph(query_path(names[0])), Semantics(), 1 << 30).count == \
        expected_counts()[names[0]]
    with pytest.raises(ValueError, match="adjacency must be"):
        distsm.count(data, query_path(names[0]), backend="numpy", partitions=2, adjacency="disk")


def test_cli_out_of_core(capsys):
    import json

    from distsm.cli import main

    names = sorted(expected_counts())[:5]
    args = ["count", str(DATA), *map(str, map(query_path, names)), "--json", "--backend", "numpy",
            "--partitions", "auto", "--adjacency", "gather", "--memory-budget", "1MiB"]
    assert main(args) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert {r["query"]: r["count"] for r in lines} == {n: expected_counts()[n] for n in names}
    with pytest.raises(SystemExit) as bad:
        main(["count", str(DATA), str(query_path(names[0])), "--partitions", "many"])
    assert bad.value.code == 2 and "positive integer or 'auto'" in capsys.readouterr().err
    # On a cluster the workers read the adjacency out of core too
    assert main(["count", str(DATA), *map(str, map(query_path, names)), "--json", "--backend", "numpy",
                 "--partitions", "3", "--adjacency", "gather", "--workers", "2"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert {r["query"]: r["count"] for r in lines} == {n: expected_counts()[n] for n in names}


def test_a_batch_loads_each_part_once():
    data = distsm.read_graph(DATA)
    names = sorted(expected_counts())[:8]
    queries = [distsm.read_graph(query_path(n)) for n in names]
    matcher = PartitionedMatcher(data, Partitioning(4, adjacency="gather"), backend=NUMPY)
    matcher.count(queries[0], Semantics(), 1 << 26, Directions("pbe"))
    one_query = matcher.residency.part_bytes_h2d
    assert one_query > 0
    matcher.release()
    results = matcher.count_batch(queries, Semantics(), 1 << 26, Directions("pbe"), names=names)
    assert {r.query: r.count for r in results} == {n: expected_counts()[n] for n in names}
    assert matcher.residency.part_bytes_h2d == 2 * one_query  # every part once for all eight queries


def test_count_batch_api():
    names = sorted(expected_counts())[:5]
    results = distsm.count_batch(DATA, [query_path(n) for n in names], partitions=3, adjacency="host",
                                 backend="numpy", names=names)
    assert [r.query for r in results] == names
    assert [r.count for r in results] == [expected_counts()[n] for n in names]
    for r in results:
        check_split(r, 3)
        assert r.semantics == Semantics() and r.ok
    assert distsm.count_batch(DATA, [], partitions=3) == []


def test_a_result_says_its_regime_and_why():
    from distsm.plan.results import AdjacencyChoice, QueryResult
    from distsm.residency import adjacency_reason, resolve_adjacency

    for budget, mode in ((4000, "device"), (1000, "host")):
        assert resolve_adjacency("auto", budget, 2000, 10) == mode
    assert adjacency_reason("auto", "device", 4000, 2000) == \
        "the whole graph's index (2000 bytes) fits in half the device budget (4000 bytes)"
    assert adjacency_reason("auto", "host", 1000, 2000) == \
        "the whole graph's index (2000 bytes) is more than half the device budget (1000 bytes)"
    assert adjacency_reason("auto", "device", None, 2000).startswith("no device budget")
    assert adjacency_reason("gather", "gather", 1000, 0) == "adjacency 'gather' was asked for"
    r = QueryResult("q", adjacency={"a": AdjacencyChoice("host", "why a"), "b": AdjacencyChoice("host", "why b")})
    assert r.regime == ("out of core: each device holds the per-vertex arrays and the parts it searches, the "
                        "adjacency read in place from host memory (why a; why b)")
    assert QueryResult("q").regime is None
    assert QueryResult("q", adjacency={"a": AdjacencyChoice("device")}).regime == \
        "in core: the whole graph's index on each device"
