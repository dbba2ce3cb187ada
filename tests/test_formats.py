"""Tests of distsm.formats: readers, writers, detection and, above all, the error messages."""

from __future__ import annotations

import gzip
import itertools
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from distsm.errors import GraphFormatError
from distsm.formats import (
    FORMATS,
    detect_format,
    read_graph,
    read_graphs,
    read_snap_with_ids,
    write_graph,
    write_graphs,
)
from distsm.formats._common import ABSENT, BIG, NEG, NOTINT, OK, WIDTH, lex
from distsm.graph import Graph

_HERE = Path(__file__).resolve().parent
_HPRD_CANDIDATES = [_HERE / "data" / "hprd" / "data_graph" / "HPRD.graph",
                    Path("/work/shared/data/hprd/data_graph/HPRD.graph")]
HPRD = next((p for p in _HPRD_CANDIDATES if p.exists()), None)


def put(tmp_path: Path, text: str, name: str = "bad.graph") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def random_graph(rng: np.random.Generator, n: int, m: int, *, directed: bool, vlabels: int = 5,
                 elabels: int = 1, isolated: bool = True) -> Graph:
    """A random simple graph; with ``isolated=False`` every vertex gets at least one edge."""
    pairs: set[tuple[int, int]] = set()
    if not isolated:
        perm = rng.permutation(n)
        for a, b in itertools.pairwise(perm):
            pairs.add((int(a), int(b)) if directed else (int(min(a, b)), int(max(a, b))))
    while len(pairs) < m:
        u, v = (int(x) for x in rng.integers(0, n, 2))
        if u == v:
            continue
        pairs.add((u, v) if directed else (min(u, v), max(u, v)))
    edges = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    edges = edges[rng.permutation(len(edges))]
    return Graph.from_edges(edges, n=n, edge_labels=rng.integers(0, elabels, len(edges)),
                            vertex_labels=rng.integers(0, vlabels, n), directed=directed)


# ---------------------------------------------------------------------------------------------------- HPRD
@pytest.mark.skipif(HPRD is None, reason="HPRD data graph not available")
def test_read_hprd() -> None:
    t0 = time.perf_counter()
    g = read_graph(HPRD)
    elapsed = time.perf_counter() - t0
    assert (g.n, g.m, g.directed) == (9460, 34998, False)
    assert len(g.vertex_label_counts()) == 307
    assert elapsed < 0.5, f"reading HPRD took {elapsed:.3f} s"
    assert detect_format(HPRD) == "sm"
    # Agrees with a plain line-by-line reading of the file.
    labels, edges = [], []
    for line in HPRD.read_text().splitlines():
        f = line.split()
        if f[0] == "v":
            labels.append(int(f[2]))
        elif f[0] == "e":
            edges.append((int(f[1]), int(f[2])))
    assert g == Graph.from_edges(edges, vertex_labels=labels)


@pytest.mark.skipif(HPRD is None, reason="HPRD data graph not available")
def test_read_hprd_queries() -> None:
    qdir = HPRD.parent.parent / "query_graph"
    files = sorted(qdir.glob("*.graph"))[:20]
    if not files:
        pytest.skip("no query graphs")
    for f in files:
        q = read_graph(f)
        assert q.n > 0 and q.m > 0 and not q.directed


# ---------------------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("elabels", [1, 3])
def test_sm_round_trip(tmp_path: Path, seed: int, elabels: int) -> None:
    rng = np.random.default_rng(seed)
    g = random_graph(rng, 40, 90, directed=False, elabels=elabels)
    p = tmp_path / "g.graph"
    write_graph(g, p, "sm")
    text = p.read_text().splitlines()
    assert text[0] == f"t {g.n} {g.m}"
    e_fields = {len(x.split()) for x in text if x.startswith("e ")}
    assert e_fields == ({3} if elabels == 1 else {4})  # label column only when some label != 0
    assert read_graph(p) == g
    assert read_graph(str(p), "sm") == g


@pytest.mark.parametrize("seed", range(4))
def test_gsi_round_trip(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = random_graph(rng, 30, 100, directed=True, vlabels=7, elabels=4)
    p = tmp_path / "g.gsi"
    write_graph(g, p, "gsi")
    lines = p.read_text().splitlines()
    assert lines[0] == "t # 0" and lines[-1] == "t # -1"
    assert lines[1] == f"{g.n} {g.m} {int(g.vertex_labels.max())} {int(g.edge_labels.max())}"
    h = read_graph(p)
    assert h.directed and h == g


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("elabels", [1, 3])
def test_snap_round_trip(tmp_path: Path, directed: bool, elabels: int) -> None:
    rng = np.random.default_rng(7)
    g = random_graph(rng, 50, 120, directed=directed, vlabels=1, elabels=elabels, isolated=False)
    p = tmp_path / "g.txt"
    write_graph(g, p, "snap")
    assert p.read_text().startswith(f"# distsm edge list: n={g.n} m={g.m} directed={directed}\n")
    h, ids = read_snap_with_ids(p, directed=directed)
    assert sorted(ids.tolist()) == list(range(g.n))
    rank = np.empty(g.n, np.int64)
    rank[ids] = np.arange(g.n)
    expect = Graph.from_edges(np.column_stack((rank[g.edge_src], rank[g.edge_dst])), n=g.n,
                              edge_labels=g.edge_labels, directed=directed)
    assert h == expect
    assert read_graph(p, directed=directed) == expect


def test_snap_loses_isolated_vertices_and_labels(tmp_path: Path) -> None:
    g = Graph.from_edges([(0, 2), (2, 3)], n=5, vertex_labels=[1, 0, 0, 0, 0])
    p = tmp_path / "g.txt"
    with pytest.warns(UserWarning, match="vertex labels"):
        write_graph(g, p, "snap")
    h, ids = read_snap_with_ids(p)
    assert h.n == 3 and ids.tolist() == [0, 2, 3]
    assert not h.vertex_labels.any()


def test_snap_arbitrary_ids(tmp_path: Path) -> None:
    p = put(tmp_path, "# Nodes: 4 Edges: 3\n# FromNodeId\tToNodeId\n30\t1412\n30\t7\n\n1412 99999999999\n",
            "wiki.txt")
    g, ids = read_snap_with_ids(p)
    assert ids.dtype == np.int64 and ids.tolist() == [30, 1412, 7, 99999999999]
    assert g == Graph.from_edges([(0, 1), (0, 2), (1, 3)], n=4)


def test_snap_ids_survive_a_write_read_round_trip(tmp_path: Path) -> None:
    p = put(tmp_path, "30 1412\n30 7\n1412 99999999999\n", "wiki.txt")
    g = read_graph(p)
    out = tmp_path / "again.txt"
    write_graph(g, out, "snap")
    h = read_graph(out)
    assert h == g and h.node_ids.tolist() == g.node_ids.tolist() == [30, 1412, 7, 99999999999]
    named = Graph.from_edges([(0, 1)], node_ids=["a", "b"])  # names that are not SNAP ids: positions
    write_graph(named, out, "snap")
    assert read_graph(out).node_ids.tolist() == [0, 1]


def test_snap_sparse_huge_ids(tmp_path: Path) -> None:
    p = put(tmp_path, "5 123456789012345\n123456789012345 3\n3 5\n", "s.txt")
    g, ids = read_snap_with_ids(p)
    assert ids.tolist() == [5, 123456789012345, 3]
    assert g == Graph.from_edges([(0, 1), (1, 2), (0, 2)], n=3)


def test_sm_empty_graph_and_isolated(tmp_path: Path) -> None:
    for g in (Graph.from_edges(np.zeros((0, 2), np.int64), n=0),
              Graph.from_edges(np.zeros((0, 2), np.int64), n=3, vertex_labels=[4, 5, 6])):
        p = tmp_path / "g.graph"
        write_graph(g, p)
        assert read_graph(p) == g


def test_sm_optional_fields_and_comments(tmp_path: Path) -> None:
    p = put(tmp_path, "# a comment\n\nt 3 2\r\nv 0 1\nv 1 2 2\n  v 2 3 1\n# mid\ne 0 1 5\ne\t1 2\n")
    g = read_graph(p)
    assert g == Graph.from_edges([(0, 1), (1, 2)], edge_labels=[5, 0], vertex_labels=[1, 2, 3])


def test_sm_directed(tmp_path: Path) -> None:
    p = put(tmp_path, "t 2 2\nv 0 0 2\nv 1 0 2\ne 0 1\ne 1 0\n")
    g = read_graph(p, directed=True)
    assert g.directed and g.m == 2
    with pytest.raises(GraphFormatError, match=r"bad\.graph:5: duplicate edge .*first given on line 4"):
        read_graph(p)


def test_gsi_undirected_read(tmp_path: Path) -> None:
    p = put(tmp_path, "t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 1 1\nt # -1\n")
    g = read_graph(p, directed=False)
    assert not g.directed and g.m == 1
    assert read_graph(p).directed


def test_gsi_end_marker_optional(tmp_path: Path) -> None:
    p = put(tmp_path, "t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 1 1\n")
    assert read_graph(p).m == 1


# ---------------------------------------------------------------------------------------------------- gzip
@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "parquet"])  # Parquet compresses inside
def test_gzip(tmp_path: Path, fmt: str) -> None:
    rng = np.random.default_rng(3)
    g = random_graph(rng, 20, 40, directed=fmt == "gsi", vlabels=1 if fmt == "snap" else 4, isolated=False)
    p = tmp_path / f"g.{fmt}.gz"
    write_graph(g, p, fmt)
    with gzip.open(p, "rb") as f:
        assert f.read(1)  # really gzip
    assert detect_format(p) == fmt
    h = read_graph(p)
    assert (h.n, h.m, h.directed) == (g.n, g.m, g.directed)
    if fmt != "snap":
        assert h == g


def test_bad_gzip(tmp_path: Path) -> None:
    p = tmp_path / "bad.graph.gz"
    p.write_bytes(b"t 1 0\nv 0 0\n")
    with pytest.raises(GraphFormatError, match=r"bad\.graph\.gz: cannot decompress"):
        read_graph(p, "sm")


# ---------------------------------------------------------------------------------------------------- multi-graph
@pytest.mark.parametrize("fmt", ["sm", "gsi"])
def test_multi_graph(tmp_path: Path, fmt: str) -> None:
    rng = np.random.default_rng(11)
    gs = [random_graph(rng, n, m, directed=fmt == "gsi", elabels=2) for n, m in ((5, 4), (8, 12), (1, 0))]
    p = tmp_path / "many.graph"
    write_graphs(gs, p, fmt)
    assert read_graphs(p) == gs
    assert read_graphs(p, fmt) == gs
    second = 1 + (1 + gs[0].n + gs[0].m) + (fmt == "gsi")  # line of the second graph's start
    with pytest.raises(GraphFormatError, match=rf"many\.graph:{second}: the file holds 3 graphs.*read_graphs"):
        read_graph(p)


def test_multi_graph_sm_by_hand(tmp_path: Path) -> None:
    p = put(tmp_path, "t 2 1\nv 0 0\nv 1 0\ne 0 1\nt 1 0\nv 0 7\n")
    a, b = read_graphs(p)
    assert (a.n, a.m, b.n, b.m) == (2, 1, 1, 0) and b.vertex_labels.tolist() == [7]


def test_multi_graph_gsi_by_hand(tmp_path: Path) -> None:
    p = put(tmp_path, "t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 1 1\nt # 1\n1 0 3 0\nv 0 3\nt # -1\n")
    a, b = read_graphs(p)
    assert (a.m, b.n, b.vertex_labels.tolist()) == (1, 1, [3])


def test_snap_read_graphs(tmp_path: Path) -> None:
    p = put(tmp_path, "0 1\n1 2\n", "e.txt")
    [g] = read_graphs(p)
    assert g.m == 2


# ---------------------------------------------------------------------------------------------------- detection
@pytest.mark.parametrize(("text", "fmt"), [
    ("t 2 1\nv 0 0\nv 1 0\ne 0 1\n", "sm"),
    ("# c\n\n   t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 1 1\nt # -1\n", "gsi"),
    ("# SNAP\n# x y\n1\t2\n2\t3\n", "snap"),
    ("1 2 7\n2 3 7\n", "snap"),
])
def test_detect(tmp_path: Path, text: str, fmt: str) -> None:
    p = put(tmp_path, text, "x.graph")
    assert detect_format(p) == fmt
    assert detect_format(str(p)) == fmt
    read_graph(p)  # and the whole file reads under that format


@pytest.mark.parametrize(("text", "line"), [
    ("# c\n\nhello world\n", 3),
    ("t 2\nv 0 0\n", 1),
    ("1 2 3 4\n", 1),
    ("\n\np 2 3\n", 3),
])
def test_detect_unrecognised(tmp_path: Path, text: str, line: int) -> None:
    p = put(tmp_path, text)
    with pytest.raises(GraphFormatError, match=rf"bad\.graph:{line}: cannot detect the graph format"):
        detect_format(p)
    with pytest.raises(GraphFormatError, match=rf"bad\.graph:{line}: "):
        read_graph(p)


def test_detect_empty(tmp_path: Path) -> None:
    for text in ("", "# only\n\n# comments\n"):
        p = put(tmp_path, text)
        with pytest.raises(GraphFormatError, match=r"bad\.graph:\d+: empty file"):
            detect_format(p)


# ---------------------------------------------------------------------------------------------------- writer errors
def test_writer_refusals(tmp_path: Path) -> None:
    und = Graph.from_edges([(0, 1)])
    dig = Graph.from_edges([(0, 1)], directed=True)
    with pytest.raises(ValueError, match="sm format holds undirected graphs only"):
        write_graph(dig, tmp_path / "a.graph", "sm")
    with pytest.raises(ValueError, match="GSI format holds directed graphs only"):
        write_graph(und, tmp_path / "a.gsi", "gsi")
    with pytest.raises(ValueError, match="unknown graph format"):
        write_graph(und, tmp_path / "a.x", "xml")
    with pytest.raises(ValueError, match="SNAP edge list holds one graph"):
        write_graphs([und], tmp_path / "a.txt", "snap")
    with pytest.raises(ValueError, match="unknown graph format"):
        read_graph(tmp_path / "a.x", "xml")
    assert not (tmp_path / "a.graph").exists() and not (tmp_path / "a.gsi").exists()


# ---------------------------------------------------------------------------------------------------- error cases
SM_ERRORS = [
    # (id, text, line, message fragment)
    ("unknown-record", "t 2 1\nv 0 0\nx 1 2\n", 3, "unknown record type 'x'"),
    ("unknown-record-word", "t 1 0\nvertex 0 0\n", 2, "unknown record type 'vertex'"),
    ("t-too-few", "t 2\nv 0 0\nv 1 0\n", 1, "wrong field count.*t N M"),
    ("v-too-many", "t 2 0\nv 0 0 0 9\nv 1 0\n", 2, "wrong field count.*found 4"),
    ("e-too-few", "t 2 1\nv 0 0\nv 1 0\ne 0\n", 4, "wrong field count"),
    ("e-too-many", "t 2 1\nv 0 0\nv 1 0\ne 0 1 0 0\n", 4, "wrong field count"),
    ("non-integer-label", "t 2 0\nv 0 0\nv 1 A\n", 3, "vertex label 'A' is not an integer"),
    ("non-integer-header", "t 2 x\n", 1, "edge count 'x' is not an integer"),
    ("float-id", "t 2 1\nv 0 0\nv 1 0\ne 0 1.0\n", 4, "target vertex '1.0' is not an integer"),
    ("negative-id", "t 2 1\nv 0 0\nv 1 0\ne -1 0\n", 4, "source vertex -1 is negative"),
    ("negative-label", "t 2 0\nv 0 0\nv 1 -3\n", 3, "vertex label -3 is negative"),
    ("negative-edge-label", "t 2 1\nv 0 0\nv 1 0\ne 0 1 -2\n", 4, "edge label -2 is negative"),
    ("huge-number", "t 2 0\nv 0 0\nv 1 12345678901234567890123\n", 3, "is too large"),
    ("label-over-int32", "t 1 0\nv 0 2147483648\n", 2, "vertex label 2147483648 is too large"),
    ("edge-label-too-large", "t 2 1\nv 0 0\nv 1 0\ne 0 1 2000000000\n", 4, "edge label 2000000000 is too large"),
    ("id-out-of-range", "t 2 0\nv 0 0\nv 2 0\n", 3, "vertex id 2 is out of range.*line 1 declares 2"),
    ("too-many-v", "t 2 0\nv 0 0\nv 1 0\nv 2 0\n", 4, "vertex id 2 is out of range"),
    ("id-repeated", "t 3 0\nv 0 0\nv 0 0\nv 2 0\n", 3, r"vertex id 0 is repeated \(first given on line 2\)"),
    ("id-out-of-order", "t 3 0\nv 0 0\nv 2 0\nv 1 0\n", 3, "vertex id 2 is out of order: expected vertex 1"),
    ("n-mismatch", "t 3 0\nv 0 0\nv 1 0\n", 1, "declares 3 vertices but 2 'v' records follow"),
    ("m-mismatch", "# hdr\nt 2 2\nv 0 0\nv 1 0\ne 0 1\n", 2, "declares 2 edges but 1 'e' records follow"),
    ("degree-mismatch", "t 3 2\nv 0 0 1\nv 1 0 1\nv 2 0 1\ne 0 1\ne 1 2\n", 3,
     "vertex 1 declares degree 1 but .* give it 2"),
    ("undeclared-vertex", "t 2 1\nv 0 0\nv 1 0\ne 0 5\n", 4, "names vertex 5, which is not declared"),
    ("self-loop", "t 2 2\nv 0 0\nv 1 0\ne 0 1\ne 1 1\n", 5, "self loop on vertex 1"),
    ("duplicate", "t 3 3\nv 0 0\nv 1 0\nv 2 0\ne 0 1\ne 1 2\ne 1 0\n", 7,
     r"duplicate edge 0-1 .*dedupe=True.*first given on line 5"),
    ("empty", "", 1, "empty file"),
    ("only-comments", "# nothing\n\n", 1, "empty file"),
    ("v-after-e", "t 2 1\nv 0 0\ne 0 1\nv 1 0\n", 4, "'v' record after 'e' records"),
    ("before-header", "v 0 0\nt 1 0\n", 1, "'v' record before the first 't N M' header"),
    ("second-graph-bad", "t 1 0\nv 0 0\nt 2 0\nv 0 0\n", 3, "declares 2 vertices but 1"),
]


@pytest.mark.parametrize(("text", "line", "problem"), [c[1:] for c in SM_ERRORS], ids=[c[0] for c in SM_ERRORS])
def test_sm_errors(tmp_path: Path, text: str, line: int, problem: str) -> None:
    p = put(tmp_path, text)
    with pytest.raises(GraphFormatError, match=rf"bad\.graph:{line}: .*{problem}") as info:
        read_graphs(p, "sm")
    assert info.value.line == line and info.value.path == str(p)
    assert str(info.value).startswith(f"{p}:{line}: ")


def test_sm_dedupe(tmp_path: Path) -> None:
    p = put(tmp_path, "t 2 2\nv 0 0 1\nv 1 0 1\ne 0 1 3\ne 1 0 3\n")
    g = read_graph(p, dedupe=True)
    assert g.m == 1 and g.edge_labels.tolist() == [3]
    # The header and degrees may also count the merged edges.
    p2 = put(tmp_path, "t 2 1\nv 0 0 1\nv 1 0 1\ne 0 1\ne 0 1\n", "d.graph")
    assert read_graph(p2, dedupe=True).m == 1
    with pytest.raises(GraphFormatError, match=r"d\.graph:1: .*declares 1 edges but 2"):
        read_graph(p2)


def test_sm_conflicting_repeat_always_errors(tmp_path: Path) -> None:
    p = put(tmp_path, "t 2 2\nv 0 0\nv 1 0\ne 0 1 3\ne 1 0 4\n")
    for dedupe in (False, True):
        with pytest.raises(GraphFormatError, match=r"bad\.graph:5: "):
            read_graph(p, dedupe=dedupe)
    with pytest.raises(GraphFormatError, match=r"bad\.graph:5: edge 0-1 is repeated with a different label"):
        read_graph(p, dedupe=True)


GSI_ERRORS = [
    ("unknown-record", "t # 0\n2 1 1 1\nv 0 1\nv 1 1\nx 0 1 1\nt # -1\n", 5, "unknown record type 'x'"),
    ("bad-marker", "t # 0\n1 0 1 1\nv 0 1\nt 0\n", 4, "malformed graph marker"),
    ("bad-marker-number", "t # x\n", 1, "graph number 'x'"),
    ("bad-marker-negative", "t # -2\n", 1, "graph number '-2'"),
    ("first-not-marker", "2 1 1 1\n", 1, "expected 't # 0' to start the first graph"),
    ("starts-with-end", "t # -1\n", 1, "expected 't # 0' to start the first graph"),
    ("missing-header", "t # 0\nv 0 1\n", 2, "expected the header"),
    ("missing-header-eof", "\nt # 0\n", 2, "expected the header"),
    ("header-fields", "t # 0\n2 1 1\nv 0 1\n", 2, "wrong field count.*numVertex numEdge"),
    ("header-non-integer", "t # 0\n2 1 1 z\n", 2, "maximum edge label 'z' is not an integer"),
    ("header-negative", "t # 0\n2 -1 1 1\n", 2, "edge count -1 is negative"),
    ("stray-header", "t # 0\n2 1 1 1\nv 0 1\n5 5 5 5\n", 4, "unexpected line '5 5 5 5'"),
    ("v-fields", "t # 0\n1 0 1 1\nv 0 1 1\n", 3, "wrong field count.*v id label"),
    ("e-missing-label", "t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 1\n", 5, "wrong field count.*e from to label"),
    ("non-integer", "t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 one 1\n", 5, "target vertex 'one' is not an integer"),
    ("negative-label", "t # 0\n2 0 1 1\nv 0 1\nv 1 -1\n", 4, "vertex label -1 is negative"),
    ("id-out-of-order", "t # 0\n2 0 1 1\nv 1 1\nv 0 1\n", 3, "vertex id 1 is out of order"),
    ("id-repeated", "t # 0\n2 0 1 1\nv 0 1\nv 0 1\n", 4, "vertex id 0 is repeated"),
    ("id-out-of-range", "t # 0\n2 0 1 1\nv 0 1\nv 1 1\nv 2 1\n", 5, "vertex id 2 is out of range.*line 2"),
    ("vertex-count", "t # 0\n3 0 1 1\nv 0 1\nv 1 1\n", 2, "declares 3 vertices but 2"),
    ("edge-count", "t # 0\n2 2 1 1\nv 0 1\nv 1 1\ne 0 1 1\nt # -1\n", 2, "declares 2 edges but 1"),
    ("vertex-label-over-max", "t # 0\n2 0 3 1\nv 0 1\nv 1 4\n", 4,
     "vertex label 4 exceeds the maximum vertex label 3 declared by the header on line 2"),
    ("edge-label-over-max", "t # 0\n2 1 3 1\nv 0 1\nv 1 1\ne 0 1 2\n", 5,
     "edge label 2 exceeds the maximum edge label 1"),
    ("undeclared-vertex", "t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 2 1\n", 5, "names vertex 2, which is not declared"),
    ("self-loop", "t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 1 1 1\n", 5, "self loop on vertex 1"),
    ("duplicate", "t # 0\n2 3 1 1\nv 0 1\nv 1 1\ne 0 1 1\ne 1 0 1\ne 0 1 1\n", 7,
     "duplicate edge 0-1.*first given on line 5"),
    ("after-end", "t # 0\n1 0 1 1\nv 0 1\nt # -1\nv 1 1\n", 5, "record after the end marker 't # -1' on line 4"),
    ("empty", "\n\n", 1, "empty file"),
    ("v-after-e", "t # 0\n2 1 1 1\nv 0 1\ne 0 1 1\nv 1 1\n", 5, "'v' record after 'e' records"),
]


@pytest.mark.parametrize(("text", "line", "problem"), [c[1:] for c in GSI_ERRORS], ids=[c[0] for c in GSI_ERRORS])
def test_gsi_errors(tmp_path: Path, text: str, line: int, problem: str) -> None:
    p = put(tmp_path, text)
    with pytest.raises(GraphFormatError, match=rf"bad\.graph:{line}: .*{problem}") as info:
        read_graphs(p, "gsi")
    assert info.value.line == line


def test_gsi_dedupe(tmp_path: Path) -> None:
    p = put(tmp_path, "t # 0\n2 3 1 2\nv 0 1\nv 1 1\ne 0 1 1\ne 1 0 1\ne 0 1 1\nt # -1\n")
    g = read_graph(p, dedupe=True)
    assert g.m == 2
    p2 = put(tmp_path, "t # 0\n2 2 1 2\nv 0 1\nv 1 1\ne 0 1 1\ne 0 1 2\n", "c.graph")
    with pytest.raises(GraphFormatError, match=r"c\.graph:6: .*different label"):
        read_graph(p2, dedupe=True)


SNAP_ERRORS = [
    ("too-many-fields", "1 2\n2 3 4 5\n", 2, "wrong field count.*u v \\[label\\].*found 4"),
    ("too-few-fields", "# c\n1 2\n3\n", 3, "wrong field count"),
    ("non-integer", "1 2\nfoo bar\n", 2, "source vertex 'foo' is not an integer"),
    ("non-integer-label", "1 2 x\n", 1, "edge label 'x' is not an integer"),
    ("negative-id", "1 2\n-3 4\n", 2, "source vertex -3 is negative"),
    ("mixed-columns", "1 2\n2 3 1\n", 2, r"this line has 3 fields but the first edge line \(1\) has 2"),
    ("conflicting-labels", "1 2 0\n2 1 5\n", 2, "edge 0-1 is repeated with a different label"),
    ("empty", "", 1, "empty file"),
    ("only-comments", "# Nodes: 0\n", 1, "empty file"),
    ("huge-id", "1 2\n3 99999999999999999999\n", 2, "target vertex 99999999999999999999 is too large"),
]


@pytest.mark.parametrize(("text", "line", "problem"), [c[1:] for c in SNAP_ERRORS],
                         ids=[c[0] for c in SNAP_ERRORS])
def test_snap_errors(tmp_path: Path, text: str, line: int, problem: str) -> None:
    p = put(tmp_path, text, "bad.txt")
    with pytest.raises(GraphFormatError, match=rf"bad\.txt:{line}: .*{problem}") as info:
        read_graph(p, "snap")
    assert info.value.line == line


def test_snap_directed_and_dedupe(tmp_path: Path) -> None:
    p = put(tmp_path, "1 2\n2 1\n1 2\n", "d.txt")
    with pytest.raises(GraphFormatError, match=r"d\.txt:3: duplicate edge"):
        read_graph(p, directed=True, dedupe=False)
    with pytest.raises(GraphFormatError, match=r"d\.txt:2: duplicate edge .*first given on line 1"):
        read_graph(p, dedupe=False)
    with pytest.warns(UserWarning, match=r"d\.txt: merged 1 repeated edge\(s\), the first on line 3"):
        assert read_graph(p, directed=True).m == 2
    with pytest.warns(UserWarning, match=r"d\.txt: merged 2 repeated edge\(s\) \('u v' and 'v u' are one "
                                         r"undirected edge\), the first on line 2"):
        assert read_graph(p).m == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked for: no warning
        assert read_graph(p, directed=True, dedupe=True).m == 2
        assert read_graph(p, dedupe=True).m == 1
    p2 = put(tmp_path, "1 2 1\n2 1 2\n", "c.txt")
    for dedupe in (None, True):
        with pytest.raises(GraphFormatError, match=r"c\.txt:2: edge 0-1 is repeated with a different label"):
            read_graph(p2, dedupe=dedupe)
    assert read_graph(p2, directed=True).m == 2


def test_snap_self_loops_dropped_with_warning(tmp_path: Path) -> None:
    p = put(tmp_path, "# web\n0 0\n0 1\n5 5\n1 2\n", "loops.txt")
    with pytest.warns(UserWarning, match=r"loops\.txt: dropped 2 self loop\(s\) \(the first on line 2\)"):
        g, ids = read_snap_with_ids(p)
    assert ids.tolist() == [0, 1, 5, 2]  # a vertex seen only in a self loop is kept, isolated
    assert g == Graph.from_edges([(0, 1), (1, 3)], n=4)


def test_snap_line_numbers_after_dropped_loops(tmp_path: Path) -> None:
    p = put(tmp_path, "3 3\n1 2\n4 4\n2 1\n", "l.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(GraphFormatError, match=r"l\.txt:4: duplicate edge .*first given on line 2"):
            read_graph(p, dedupe=False)


def test_crlf_and_tabs(tmp_path: Path) -> None:
    p = put(tmp_path, "t 2 1\r\nv\t0\t3\r\nv 1 4 1\r\ne 0 1\r\n")
    p.write_bytes(p.read_text().encode())
    g = read_graph(p)
    assert g.vertex_labels.tolist() == [3, 4] and g.m == 1


def test_path_types(tmp_path: Path) -> None:
    g = Graph.from_edges([(0, 1), (1, 2)], vertex_labels=[1, 2, 3])
    p = tmp_path / "g.graph"
    write_graph(g, str(p))
    assert read_graph(p) == read_graph(str(p)) == g


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_graph(tmp_path / "nope.graph", "sm")


def test_read_graphs_rejects_unknown_kwargs(tmp_path: Path) -> None:
    p = put(tmp_path, "0 1\n", "x.txt")
    with pytest.raises(TypeError, match="bogus"):
        read_graphs(p, bogus=1)


# ---------------------------------------------------------------------------------------------------- the lexer
def _reference_lex(data: bytes) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Slow, obvious version of ``lex``: (line, nfields, [(status, value)] * WIDTH) per record."""
    out = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        toks = line.split()
        if not toks or toks[0].startswith(b"#"):
            continue
        fields = []
        for tok in toks[:WIDTH]:
            digits = tok[1:] if tok[:1] == b"-" and len(tok) > 1 else tok
            if len(tok) > 19:  # never a valid field; the lexer leaves the details to the diagnosis
                fields.append((NOTINT, None))
            elif digits.isdigit() and digits.isascii():
                if len(digits) > 18:
                    fields.append((BIG, None))
                else:
                    fields.append((NEG if digits is not tok else OK, int(tok)))
            else:
                fields.append((NOTINT, None))
        fields += [(ABSENT, None)] * (WIDTH - len(fields))
        out.append((lineno, len(toks), fields))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_lexer_matches_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pieces = [b"0", b"7", b"42", b"-5", b"-", b"--1", b"1-2", b"v", b"e", b"t", b"#", b"#x", b"abc", b"3.5",
              b"999999999999999999", b"1000000000000000000", b"-999999999999999999", b"00012", b"\xff",
              b"12345678901234567890123"]
    seps = [b" ", b"\t", b"  ", b" \r", b"\x0b", b"\x0c"]
    lines = []
    for _ in range(rng.integers(0, 60)):
        k = int(rng.integers(0, 7))
        toks = [pieces[int(i)] for i in rng.integers(0, len(pieces), k)]
        line = b"".join(seps[int(rng.integers(0, len(seps)))] + t for t in toks)
        if rng.random() < 0.5:
            line = line.lstrip()
        lines.append(line + (b" \r" if rng.random() < 0.2 else b""))
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
    recs = lex(data, "x")
    ref = _reference_lex(data)
    assert len(recs) == len(ref)
    for i, (lineno, nf, fields) in enumerate(ref):
        assert recs.line_of(i) == lineno
        assert int(recs.nfields[i]) == nf
        for j, (st, val) in enumerate(fields):
            assert int(recs.status[i, j]) == st, (data, lineno, j)
            if st in (OK, NEG):
                assert int(recs.values[i, j]) == val


def test_lexer_many_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    from distsm.formats import _common

    monkeypatch.setattr(_common, "_CHUNK", 64)
    rng = np.random.default_rng(0)
    nums = rng.integers(0, 10**9, (500, 3))
    data = "".join(f"e {a} {b}\n" if i % 7 else f"# c {a}\n\n" for i, (a, b, _) in enumerate(nums)).encode()
    recs = lex(data, "x")
    ref = _reference_lex(data)
    assert len(recs) == len(ref)
    assert [recs.line_of(i) for i in range(len(recs))] == [r[0] for r in ref]
    assert recs.values[:, 1].tolist() == [r[2][1][1] for r in ref]
    assert re.fullmatch(rb"e \d+ \d+", recs.text_of(0))


def test_sm_edges_are_written_in_order_so_file_order_readers_get_sorted_neighbours(tmp_path):
    """EGSM lays each vertex's neighbours out in the file's edge order and intersects them as sorted lists: an
    edge list written in another order made it count 0 matches on every generated dense suite."""
    rng = np.random.default_rng(5)
    pairs = {tuple(sorted(map(int, rng.choice(40, 2, replace=False)))) for _ in range(150)}
    edges = list(pairs)
    rng.shuffle(edges)
    g = Graph.from_edges(edges, n=40, edge_labels=rng.integers(0, 3, len(edges)))
    path = tmp_path / "g.graph"
    write_graph(g, path)
    rows = [tuple(map(int, line.split()[1:3])) for line in path.read_text().splitlines() if line.startswith("e ")]
    assert rows == sorted(rows) and all(u < v for u, v in rows)
    neighbours: dict[int, list[int]] = {}
    for u, v in rows:  # as EGSM's reader fills them
        neighbours.setdefault(u, []).append(v)
        neighbours.setdefault(v, []).append(u)
    assert all(ns == sorted(ns) for ns in neighbours.values())
    back = read_graph(path)
    assert sorted(zip(back.edge_src.tolist(), back.edge_dst.tolist(), back.edge_labels.tolist())) == \
        sorted(zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_labels.tolist()))
