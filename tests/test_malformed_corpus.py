"""A corpus of malformed inputs, through the API and the command line.

Every case asserts the error class, the file and line where there is one, and (CLI) exit code 2 with one error
line and no traceback, all within a generous time bound (a hang, or a checksum of /dev/zero, fails it).
"""

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import pytest

import distsm
from distsm import GraphError, GraphFormatError
from distsm.cli import main
from distsm.formats import read_graph
from distsm.partition import PartitionStore, load_or_build
from distsm.partition.store import StalePartitionError
from distsm.rdf import read_ntriples
from distsm.rdf.sparql import SparqlSyntaxError, parse_sparql

BOUND = 30.0  # seconds: "does not hang", never a performance claim
HUGE = "9" * (10 << 20)  # a 10 MB token

SM_OK = "t 3 2\nv 0 0 1\nv 1 0 2\nv 2 0 1\ne 0 1 0\ne 1 2 0\n"
EDGE_QUERY = "t 2 1\nv 0 0 1\nv 1 0 1\ne 0 1 0\n"

# (case id, file name, content, line named in the error (None: no line), text the message must contain)
GRAPH_FILES = [
    ("sm-not-integer", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\ne 0 x\n", 4, "not an integer"),
    ("sm-field-count", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\ne 0\n", 4, "wrong field count"),
    ("sm-vertex-order", "a.graph", "t 2 1\nv 1 0 1\nv 0 0 1\ne 0 1\n", 2, "out of order"),
    ("sm-vertex-range", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\nv 2 0 0\ne 0 1\n", 4, "out of range"),
    ("sm-undeclared-endpoint", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\ne 0 5\n", 4, "not declared"),
    ("sm-self-loop", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\ne 1 1\n", 4, "self loop"),
    ("sm-duplicate", "a.graph", "t 2 2\nv 0 0 1\nv 1 0 1\ne 0 1\ne 1 0\n", 5, "duplicate edge"),
    ("sm-negative-label", "a.graph", "t 2 1\nv 0 -3 1\nv 1 0 1\ne 0 1\n", 2, "negative"),
    ("sm-unknown-record", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\nx 0 1\n", 4, "unknown record type"),
    ("sm-too-large", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\ne 0 1 " + "9" * 25 + "\n", 4, "too large"),
    ("sm-two-graphs", "a.graph", EDGE_QUERY + EDGE_QUERY, 5, "2 graphs"),
    ("sm-header-short", "a.graph", "t 2\nv 0 0 1\nv 1 0 1\ne 0 1\n", 1, None),
    ("sm-edge-count", "a.graph", "t 2 3\nv 0 0 1\nv 1 0 1\ne 0 1\n", 1, None),
    ("sm-degree", "a.graph", "t 2 1\nv 0 0 7\nv 1 0 1\ne 0 1\n", 2, "degree"),
    ("sm-huge-token", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\ne 0 " + HUGE + "\n", 4, "..."),
    ("sm-huge-record-type", "a.graph", "t 2 1\nv 0 0 1\nv 1 0 1\n" + HUGE + "x 0 1\n", 4, "unknown record type"),
    ("gsi-graph-number", "a.g", "t # x\n2 1 0 0\nv 0 0\nv 1 0\ne 0 1 0\n", 1, "t # k"),
    ("gsi-unknown-record", "a.g", "t # 0\n2 1 0 0\nv 0 0\nv 1 0\nq 0 1 0\n", 5, "unknown record type"),
    ("gsi-vertex-range", "a.g", "t # 0\n2 1 0 0\nv 0 0\nv 1 0\nv 2 0\ne 0 1 0\n", 5, None),
    ("gsi-label-over-max", "a.g", "t # 0\n2 1 0 0\nv 0 3\nv 1 0\ne 0 1 0\n", 3, None),
    ("gsi-edge-count", "a.g", "t # 0\n2 2 0 0\nv 0 0\nv 1 0\ne 0 1 0\n", 2, None),
    ("gsi-duplicate-arc", "a.g", "t # 0\n2 2 0 0\nv 0 0\nv 1 0\ne 0 1 0\ne 0 1 0\n", 6, "duplicate"),
    ("snap-columns", "a.txt", "1 2\n2 3 0\n", 2, "wrong field count"),
    ("snap-not-integer", "a.txt", "# c\n1 2\n2 three\n", 3, "not an integer"),
    ("snap-negative", "a.txt", "1 2\n2 -3\n", 2, "negative"),
    ("snap-four-columns", "a.txt", "1 2 0 0\n", 1, "cannot detect"),
    ("snap-four-columns-later", "a.txt", "1 2\n3 4 0 0\n", 2, "wrong field count"),
    ("snap-conflicting-repeat", "a.txt", "1 2 0\n2 1 1\n", 2, "repeated with a different label"),
    ("only-comments", "a.txt", "# nothing here\n\n# at all\n", 3, "empty file"),
    ("undetectable", "a.txt", "hello world, this is prose\n", 1, "cannot detect"),
    ("binary", "a.bin", "\x00\x01\x02\x03 \xff\xfe\n", 1, "cannot detect"),
]

GZ_FILES = [
    ("gz-not-gzip", "a.graph.gz", b"t 2 1\nnot compressed at all\n", "decompress"),
    ("gz-truncated", "a.graph.gz", gzip.compress(SM_OK.encode())[:25], "decompress"),
    ("gz-corrupt-body", "a.graph.gz", (lambda b: b[:12] + bytes(x ^ 0x5A for x in b[12:-8]) + b[-8:])(
        gzip.compress(SM_OK.encode() * 50)), "decompress"),
]

NT_FILES = [
    ("nt-malformed", "d.nt", b'<http://a> <http://p> <http://b> .\n<http://a> <http://p> .\n', 2, "N-Triples"),
    ("nt-bad-escape", "d.nt", b'<http://a> <http://p> "x\\q" .\n', 1, "escape"),
    ("nt-not-utf8", "d.nt", b'<http://a> <http://p> "\xff\xfe" .\n', 1, "UTF-8"),
    ("nt-huge-token", "d.nt", b'<http://a> <http://p> ' + b"x" * (10 << 20) + b' .\n', 1, "..."),
    ("nt-gz-corrupt", "d.nt.gz", (lambda b: b[:12] + bytes(x ^ 0x5A for x in b[12:-8]) + b[-8:])(
        gzip.compress(b'<http://a> <http://p> <http://b> .\n' * 200)), None, "cannot read"),
    ("nt-gz-truncated", "d.nt.gz", gzip.compress(b'<http://a> <http://p> <http://b> .\n' * 200)[:30], None,
     "cannot read"),
]

SPARQL_QUERIES = [
    ("sparql-filter", "SELECT ?x WHERE {\n  ?x <http://p> ?y .\n  FILTER(!bound(?y))\n}", 3, 3, "FILTER"),
    ("sparql-optional", "SELECT ?x WHERE {\n ?x <http://p> ?y . OPTIONAL { ?x <http://q> ?z } }", 2, 21,
     "OPTIONAL"),
    ("sparql-union", "SELECT ?x WHERE { { ?x <http://p> ?y } UNION { ?x <http://q> ?y } }", 1, 19, None),
    ("sparql-path", "SELECT ?x WHERE { ?x <http://p>/<http://q> ?y }", 1, 32, "property paths"),
    ("sparql-order", "SELECT ?x WHERE { ?x <http://p> ?y }\nORDER BY ?x", 2, 1, "ORDER BY"),
    ("sparql-ask", "ASK { ?x <http://p> ?y }", 1, 1, "ASK"),
    ("sparql-prefix", "SELECT ?x WHERE { ?x ub:p ?y }", 1, 22, "undeclared prefix"),
    ("sparql-unterminated", "SELECT ?x WHERE {\n ?x <http://p> ?y", 2, 18, "end of the query"),
    ("sparql-variable-predicate", "SELECT ?x WHERE { ?x ?p ?y }", 1, 22, "variable predicate"),
]


def run_cli(argv, capsys):
    """Run the CLI in this process; return (exit code, stderr) after the common checks."""
    t0 = time.monotonic()
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse's own usage errors
        rc = e.code
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    assert elapsed < BOUND, f"took {elapsed:.1f}s"
    assert "Traceback" not in err
    assert len(err) < 5000, "an error line quoted a huge input"
    return rc, err


def expect_cli_error(argv, capsys, *needles):
    rc, err = run_cli(argv, capsys)
    assert rc == 2, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("latin1"))
    return path


@pytest.mark.parametrize("case,name,content,line,needle", GRAPH_FILES, ids=[c[0] for c in GRAPH_FILES])
def test_malformed_graph_files(tmp_path, capsys, case, name, content, line, needle):
    path = write(tmp_path, name, content)
    t0 = time.monotonic()
    with pytest.raises(GraphFormatError) as info:
        read_graph(path)
    assert time.monotonic() - t0 < BOUND
    e = info.value
    assert e.path == str(path) and e.line == line
    assert len(str(e)) < 1000
    if needle:
        assert needle in str(e), str(e)
    where = f"{path}:{line}:" if line is not None else f"{path}:"
    expect_cli_error(["info", path], capsys, where, *([needle] if needle else []))


@pytest.mark.parametrize("case,name,content,needle", GZ_FILES, ids=[c[0] for c in GZ_FILES])
def test_corrupt_compression(tmp_path, capsys, case, name, content, needle):
    path = write(tmp_path, name, content)
    with pytest.raises(GraphFormatError) as info:
        read_graph(path, format="sm")
    assert info.value.path == str(path) and needle in str(info.value)
    expect_cli_error(["info", path], capsys, str(path), needle)


@pytest.mark.parametrize("case,name,content,line,needle", NT_FILES, ids=[c[0] for c in NT_FILES])
def test_malformed_ntriples(tmp_path, capsys, case, name, content, line, needle):
    path = write(tmp_path, name, content)
    with pytest.raises(GraphFormatError) as info:
        read_ntriples(path)
    assert info.value.path == str(path) and info.value.line == line and needle in str(info.value)
    assert len(str(info.value)) < 1000
    query = write(tmp_path, "q.rq", "SELECT ?x WHERE { ?x <http://p> ?y }")
    expect_cli_error(["sparql", path, query], capsys, str(path), needle)


@pytest.mark.parametrize("case,text,line,column,needle", SPARQL_QUERIES, ids=[c[0] for c in SPARQL_QUERIES])
def test_sparql_errors_give_line_column_and_feature(tmp_path, capsys, case, text, line, column, needle):
    with pytest.raises(SparqlSyntaxError) as info:
        parse_sparql(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert needle is None or needle in str(info.value)
    data = write(tmp_path, "d.nt", b"<http://a> <http://p> <http://b> .\n")
    query = write(tmp_path, "q.rq", text)
    expect_cli_error(["sparql", data, query], capsys, f"{query}:{line}:{column}:", *([needle] if needle else []))


def test_sparql_query_file_not_utf8(tmp_path, capsys):
    data = write(tmp_path, "d.nt", b"<http://a> <http://p> <http://b> .\n")
    query = write(tmp_path, "q.rq", b"SELECT ?x WHERE { ?x <http://p> \xff }")
    expect_cli_error(["sparql", data, query], capsys, str(query), "UTF-8")


def test_byte_order_marks_are_tolerated(tmp_path, capsys):
    bom = b"\xef\xbb\xbf"
    sm = write(tmp_path, "bom.graph", bom + SM_OK.encode())
    snap = write(tmp_path, "bom.txt", bom + b"1 2\n2 3\n")
    assert read_graph(sm).m == 2 and read_graph(snap).node_ids.tolist() == [1, 2, 3]
    nt = write(tmp_path, "bom.nt", bom + b"<http://a> <http://p> <http://b> .\n")
    query = write(tmp_path, "q.rq", bom + b"SELECT ?x WHERE { ?x <http://p> ?y }")
    rc, _ = run_cli(["sparql", nt, query], capsys)
    assert rc == 0


# ---------------------------------------------------------------------------------------------- directories
def test_query_directory_names_the_bad_query(tmp_path, capsys):
    data = write(tmp_path, "data.graph", SM_OK)
    queries = tmp_path / "queries"
    queries.mkdir()
    write(queries, "q1.graph", EDGE_QUERY)
    write(queries, "q2.graph", "t 4 2\nv 0 0 1\nv 1 0 1\nv 2 0 1\nv 3 0 1\ne 0 1 0\ne 2 3 0\n")
    expect_cli_error(["count", data, queries, "--in-process"], capsys, str(queries / "q2.graph"), "not connected")


def test_query_directory_names_a_directed_query(tmp_path, capsys):
    data = write(tmp_path, "data.graph", SM_OK)
    queries = tmp_path / "queries"
    queries.mkdir()
    write(queries, "arc.g", "t # 0\n2 1 0 0\nv 0 0\nv 1 0\ne 0 1 0\n")
    expect_cli_error(["count", data, queries], capsys, str(queries / "arc.g"), "directed")


def test_query_directory_skips_non_graph_files_with_a_note(tmp_path, capsys):
    data = write(tmp_path, "data.graph", SM_OK)
    queries = tmp_path / "queries"
    queries.mkdir()
    write(queries, "README.md", "# Queries\nThese are my queries.\n")
    write(queries, "edge.graph", EDGE_QUERY)
    rc, err = run_cli(["count", data, queries, "--json"], capsys[0] if isinstance(capsys, tuple) else capsys)
    assert rc == 0 and "skipping" in err and "README.md" in err


def test_empty_query_directory(tmp_path, capsys):
    data = write(tmp_path, "data.graph", SM_OK)
    (tmp_path / "empty").mkdir()
    expect_cli_error(["count", data, tmp_path / "empty"], capsys, "no query files")


def test_missing_and_directory_data(tmp_path, capsys):
    query = write(tmp_path, "q.graph", EDGE_QUERY)
    expect_cli_error(["count", tmp_path / "nope.graph", query], capsys, "nope.graph")
    expect_cli_error(["info", tmp_path], capsys, str(tmp_path))


# ---------------------------------------------------------------------------------------------- CLI arguments
CLI_ARGUMENTS = [
    ("budget-unit", ["--memory-budget", "1XB"], "not a size"),
    ("budget-zero", ["--memory-budget", "0"], "positive"),
    ("partitions-zero", ["--partitions", "0"], "positive integer or 'auto'"),
    ("partitions-word", ["--partitions", "many"], "positive integer or 'auto'"),
    ("timeout-negative", ["--timeout", "-5", "--workers", "1"], "positive number"),
    ("timeout-nan", ["--timeout", "nan", "--workers", "1"], "positive number"),
    ("workers-zero", ["--workers", "0"], "positive integer"),
    ("gpus-negative", ["--gpus", "-1"], "positive integer"),
    ("format-unknown", ["--format", "csv"], "invalid choice"),
    ("backend-unknown", ["--backend", "tpu"], "invalid choice"),
    ("scheduler-not-an-address", ["--scheduler", "notanaddress"], "notanaddress"),
    ("scheduler-file-missing", ["--scheduler-file", "/nonexistent/scheduler.json"], "scheduler file not found"),
    ("scheduler-and-file", ["--scheduler", "tcp://127.0.0.1:1", "--scheduler-file", "x.json"], "not both"),
    ("keep-dashboard-in-process", ["--keep-dashboard", "--in-process"], "needs a cluster"),
]


@pytest.mark.parametrize("case,extra,needle", CLI_ARGUMENTS, ids=[c[0] for c in CLI_ARGUMENTS])
def test_bad_count_arguments(tmp_path, capsys, case, extra, needle):
    data = write(tmp_path, "data.graph", SM_OK)
    query = write(tmp_path, "q.graph", EDGE_QUERY)
    expect_cli_error(["count", data, query, *extra], capsys, needle)


def test_unreachable_scheduler_is_one_line(tmp_path, capsys):
    data = write(tmp_path, "data.graph", SM_OK)
    query = write(tmp_path, "q.graph", EDGE_QUERY)
    expect_cli_error(["count", data, query, "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "1"], capsys,
                     "cannot reach the Dask scheduler", "tcp://127.0.0.1:1")


def test_other_bad_command_arguments(tmp_path, capsys):
    data = write(tmp_path, "data.graph", SM_OK)
    query = write(tmp_path, "q.graph", EDGE_QUERY)
    expect_cli_error(["match", data, query, "--limit", "-1"], capsys, "--limit")
    expect_cli_error(["count", data], capsys, "at least one QUERY")
    expect_cli_error(["partition", data, "-k", "0"], capsys, "-k")
    expect_cli_error(["count", "--example", data], capsys, "no DATA")


def test_cli_errors_in_a_real_process(tmp_path):
    """The same guarantees outside pytest's process: one line, exit 2, no traceback, for a few cases."""
    bad = write(tmp_path, "bad.graph", "t 2 1\nv 0 0 1\nv 1 0 1\ne 0 x\n")
    query = write(tmp_path, "q.graph", EDGE_QUERY)
    for argv, needle in [(["info", bad], f"{bad}:4:"), (["count", bad, query, "--scheduler", "notanaddress"],
                                                       "notanaddress"),
                         (["count", write(tmp_path, "d.graph", SM_OK), query, "--scheduler-file", tmp_path / "s.json"],
                          "scheduler file not found")]:
        proc = subprocess.run([sys.executable, "-m", "distsm", *map(str, argv)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and needle in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------------------------- API arguments
API_CASES = [
    ("budget-not-a-size", dict(memory_budget="lots"), ValueError, "memory_budget: not a size: 'lots'"),
    ("budget-float", dict(memory_budget=2.5), TypeError, "memory_budget must be an integer"),
    ("budget-negative", dict(memory_budget=-5), ValueError, "memory_budget must be positive"),
    ("budget-bool", dict(memory_budget=True), TypeError, "memory_budget"),
    ("backend-unknown", dict(backend="tpu"), ValueError, "unknown backend"),
    ("backend-list", dict(backend=["numpy"]), ValueError, "unknown backend"),
    ("induced-string", dict(induced="no"), TypeError, "induced must be True or False"),
    ("restrict-list", dict(restrict=[1, 2]), TypeError, "restrict must be a dict"),
    ("restrict-query-name", dict(restrict={"nope": [0]}), GraphError, "query node 'nope'"),
    ("restrict-data-name", dict(restrict={0: [99]}), GraphError, "data node 99"),
]


@pytest.mark.parametrize("case,kwargs,error,needle", API_CASES, ids=[c[0] for c in API_CASES])
def test_bad_api_arguments(case, kwargs, error, needle):
    data, query = nx.path_graph(4), nx.path_graph(2)
    with pytest.raises(error, match=needle):
        distsm.count(data, query, **kwargs)


def test_bad_listing_arguments():
    data, query = nx.path_graph(4), nx.path_graph(2)
    with pytest.raises(TypeError, match="limit must be an integer"):
        distsm.match(data, query, limit=2.5)
    with pytest.raises(ValueError, match="limit must be >= 0"):
        distsm.match(data, query, limit=-1)
    with pytest.raises(TypeError, match="as_frame"):
        distsm.match(data, query, as_frame="yes")
    with pytest.raises(TypeError, match="a distsm.Graph, a path or a networkx graph"):
        distsm.count(data, 42)


@pytest.mark.parametrize("kwargs,error", [(dict(memory_budget=-5), ValueError), (dict(partitions=0), ValueError),
                                          (dict(memory_budget="lots"), ValueError), (dict(backend="tpu"), ValueError)])
def test_matcher_arguments_are_checked_before_any_cluster(kwargs, error):
    from distsm.matcher import Matcher

    # "notanaddress" would fail with a ClusterError if the Matcher tried to connect first.
    t0 = time.monotonic()
    with pytest.raises(error):
        Matcher(nx.path_graph(3), cluster="notanaddress", **kwargs)
    assert time.monotonic() - t0 < BOUND


# ---------------------------------------------------------------------------------------------- partition stores
def saved_store(tmp_path):
    graph = distsm.Graph.from_networkx(nx.cycle_graph(12))
    load_or_build(graph, 2, directory=tmp_path / "store", method="contiguous", fallback=False)
    return graph, tmp_path / "store"


def rewrite_manifest(store, rename):
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["files"] = {rename.get(k, k): v for k, v in manifest["files"].items()}
    (store / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("name", ["adjacency/../../../../dev/zero", "/dev/zero", "../outside.npy", "parts//x.npy",
                                  "parts/./00000/src.npy", "a\\..\\b.npy"])
def test_crafted_manifest_names_are_refused_before_any_read(tmp_path, name):
    graph, store = saved_store(tmp_path)
    rewrite_manifest(store, {"assignment.npy": name})
    t0 = time.monotonic()
    with pytest.raises(StalePartitionError, match="manifest file name"):
        PartitionStore.open(store, graph=graph)
    assert time.monotonic() - t0 < BOUND
    # load_or_build treats the store as stale and rebuilds a good one in its place.
    rebuilt = load_or_build(graph, 2, directory=store, method="contiguous", fallback=False)
    assert not rebuilt.reused and rebuilt.assignment.shape == (12,)


@pytest.mark.parametrize("target", ["/dev/zero", "outside"])
def test_symlinked_store_files_are_refused(tmp_path, target):
    graph, store = saved_store(tmp_path)
    outside = tmp_path / "outside.npy"
    outside.write_bytes((store / "assignment.npy").read_bytes())
    link = store / "assignment.npy"
    link.unlink()
    link.symlink_to("/dev/zero" if target == "/dev/zero" else outside)
    with pytest.raises(StalePartitionError, match="outside the store|not a regular file"):
        PartitionStore.open(store, graph=graph)


def test_symlink_swapped_in_after_open_is_refused(tmp_path):
    graph, store = saved_store(tmp_path)
    opened = PartitionStore.open(store, graph=graph)
    link = store / "parts" / "00000" / "src.npy"
    link.unlink()
    link.symlink_to("/dev/zero")
    t0 = time.monotonic()
    with pytest.raises(StalePartitionError):
        opened.part(0)
    assert time.monotonic() - t0 < BOUND


def test_stores_are_created_with_the_users_umask(tmp_path):
    old = os.umask(0o022)
    try:
        _, store = saved_store(tmp_path)
    finally:
        os.umask(old)
    assert Path(store).stat().st_mode & 0o777 == 0o755
    assert (store / "parts").stat().st_mode & 0o777 == 0o755
    assert (store / "manifest.json").stat().st_mode & 0o777 == 0o644
