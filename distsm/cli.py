"""The ``distsm`` command: ``count``, ``match`` and ``info``.

Errors in the user's input (unreadable files, bad options, an unreachable cluster) are printed as one line on
stderr with exit code 2; nothing the user typed produces a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from distsm import example
from distsm._version import __version__
from distsm.api import count, explain, iter_batch, iter_matches
from distsm.arguments import parse_size
from distsm.errors import BackendUnavailableError, GraphError, GraphFormatError, elide
from distsm.formats import FORMATS, detect_format, read_graph, read_graphs
from distsm.graph import Graph
from distsm.kernels import engine
from distsm.npy_stream import NpyRowWriter
from distsm.progress import ProgressBar, Running
from distsm.semantics import Semantics
from distsm.vocabulary import ADJACENCY_MODES, BACKENDS, PARTITION_METHODS

def parse_bytes(text: str) -> int:
    """``"512MiB"`` -> 536870912; plain integers are bytes (the API's :func:`~distsm.arguments.parse_size`)."""
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _query_files(paths: list[str]) -> list[tuple[Path, bool]]:
    """Every query file named, directories expanded: ``(file, whether it was found in a directory)``."""
    files: list[tuple[Path, bool]] = []
    for p in map(Path, paths):
        if p.is_dir():
            inner = sorted((f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")),
                           key=lambda f: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", f.name)])
            if not inner:
                raise GraphFormatError(p, None, "directory holds no query files")
            files.extend((f, True) for f in inner)
        else:
            files.append((p, False))
    return files


def _load_queries(paths: list[str], reading: dict[str, Any]) -> list[tuple[str, Path, Graph]]:
    """``(name, file, graph)`` of every query.  A file in a directory that is not a graph file (a README, say)
    is skipped with a note; a query that cannot be matched (empty, disconnected) is an error naming its file."""
    out = []
    for f, listed in _query_files(paths):
        if listed:
            # A file whose first line fits no format is no graph in any format (whatever --format says).
            try:
                detect_format(f)
            except GraphFormatError as e:
                print(f"distsm: note: skipping {f}: not a graph file ({e.problem})", file=sys.stderr)
                continue
        graphs = read_graphs(f, **reading)
        names = [f.stem] if len(graphs) == 1 else [f"{f.stem}#{i}" for i in range(len(graphs))]
        for name, g in zip(names, graphs):
            _check_query(f, name, g, g)  # against itself: the query's own problems, before any cluster starts
            out.append((name, f, g))
    return out


def _check_query(path: Path, name: str, query: Graph, data: Graph) -> None:
    """Raise a GraphFormatError naming ``path`` when ``query`` cannot be matched against ``data``."""
    try:
        engine.check_pair(data, query)
    except ValueError as e:
        raise GraphFormatError(path, None, f"query {name}: {e}") from None


def _add_reading(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("reading graph files")
    g.add_argument("--format", default="auto", choices=["auto", *FORMATS],
                   help="graph file format (default: detected from the first line)")
    g.add_argument("--directed", action=argparse.BooleanOptionalAction, default=None,
                   help="read edges as arcs (default: the format's own; sm and snap undirected, gsi directed)")
    g.add_argument("--dedupe", action=argparse.BooleanOptionalAction, default=None,
                   help="merge repeated edges with equal labels (--no-dedupe: refuse them); default: the format's "
                        "own rule (SNAP and Parquet edge lists merge them with a warning, sm and gsi refuse them)")
    g.add_argument("--vertex-labels", default=None, metavar="FILE",
                   help="the data graph's vertex labels beside an edge list: 'vertex label' lines, ids as in the "
                        "edge list, labels any token")
    g.add_argument("--default-label", default=None, metavar="LABEL",
                   help="with --vertex-labels: the label of vertices the file leaves out (default: each needs one)")


def _reading(args: argparse.Namespace) -> dict[str, Any]:
    return {"format": args.format, "directed": args.directed, "dedupe": args.dedupe}


def _read_data(path: str, args: argparse.Namespace) -> Graph:
    """The data graph at ``path`` as the reading options say, with ``--vertex-labels`` beside an edge list."""
    return read_graph(path, **_reading(args), vertex_labels=args.vertex_labels, default_label=args.default_label)


def _add_semantics(p: argparse.ArgumentParser) -> None:
    p.add_argument("--induced", action="store_true", help="query non-edges must map to data non-edges")
    p.add_argument("--homomorphism", action="store_true", help="drop injectivity")
    p.add_argument("--unique", action="store_true", help="count each matched subgraph once")
    p.add_argument("--backend", default="auto", choices=BACKENDS)
    p.add_argument("--memory-budget", type=parse_bytes, default=None, metavar="BYTES",
                   help="bytes the join may hold at once (e.g. 2GiB); smaller runs in more chunks")
    p.add_argument("--partitions", type=_partitions_arg, default=None, metavar="K",
                   help="split the data graph into K parts and search intra- plus inter-partition matches; 'auto' "
                        "chooses K from the device budget: from --memory-budget in process (one part while the "
                        "graph's index fits it), one part per worker on a cluster")
    p.add_argument("--partition-method", default="metis", choices=PARTITION_METHODS)
    p.add_argument("--adjacency", default="device", choices=ADJACENCY_MODES,
                   help="with --partitions: where spanning searches read the whole graph's adjacency; 'host' and "
                        "'gather' are out of core (one part on the device at a time; on a cluster, as many of a "
                        "worker's parts as fit its device budget: the distsm.cluster.device-budget option, else the "
                        "free device memory)")


def _partitions_arg(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return _positive(int)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {elide(repr(text))}") from None


def _positive(kind: type) -> Any:
    """An argparse type: a positive ``kind`` (int or float)."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0 or value != value or value == float("inf"):
            noun = "integer" if kind is int else "number"
            raise argparse.ArgumentTypeError(f"expected a positive {noun}, got {elide(repr(text))}")
        return value

    return parse


def _gpus_arg(text: str) -> str | int:
    return text if text == "all" else _positive(int)(text)


def _add_jobqueue(sub: Any) -> None:
    """The ``jobqueue`` subcommand's arguments."""
    jq = sub.add_parser("jobqueue", help="start a Dask cluster on SLURM or PBS (dask-jobqueue) for --scheduler-file",
                        description="Start a scheduler here and submit JOBS batch jobs of workers (one dask-cuda "
                                    "worker per GPU a job books, or single-threaded CPU workers); the scheduler "
                                    "writes --scheduler-file for `distsm count --scheduler-file`.  Runs until "
                                    "interrupted, then cancels the jobs.  SYSTEM local runs the same job scripts "
                                    "as local processes (dask-jobqueue's test cluster).  Needs distsm[jobqueue].")
    jq.add_argument("system", choices=("slurm", "pbs", "local"))
    jq.add_argument("--jobs", type=_positive(int), required=True, help="batch jobs to submit (nodes)")
    jq.add_argument("--scheduler-file", required=True, metavar="FILE",
                    help="where the scheduler writes its address (on storage the client reads)")
    jq.add_argument("--gpus", type=int, default=0, help="GPUs each job books, one worker each (default 0: CPU)")
    jq.add_argument("--workers", type=_positive(int), default=1, help="CPU worker processes per job (with --gpus 0)")
    jq.add_argument("--cores", type=_positive(int), default=1, help="CPU cores each job books")
    jq.add_argument("--memory", default="4GiB", help="memory each job books, split among its workers")
    jq.add_argument("--queue", default=None, help="partition (SLURM) or queue (PBS)")
    jq.add_argument("--account", default=None)
    jq.add_argument("--walltime", default=None, metavar="HH:MM:SS")
    jq.add_argument("--host", default=None, help="address the scheduler listens on")
    jq.add_argument("--interface", default=None, help="network interface of scheduler and workers (e.g. ib0)")
    jq.add_argument("--dashboard-address", default=None, metavar="ADDR",
                    help="dashboard address (default 127.0.0.1:8787, loopback only)")
    jq.add_argument("--local-directory", default=None, metavar="DIR", help="workers' scratch directory")
    jq.add_argument("--log-directory", default=None, metavar="DIR", help="where jobs write their logs")
    jq.add_argument("--prologue", action="append", default=[], metavar="LINE",
                    help="a shell line each job runs first (repeatable), e.g. 'source /shared/venv/bin/activate'")
    jq.add_argument("--python", default=sys.executable, help="the Python the jobs run (default: this one)")
    jq.add_argument("--print-script", action="store_true", help="print one job's script and exit")
    jq.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                    help="give up when the workers have not all joined within this time")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but an error is one line: the reason, and where the usage is (its subcommands' parsers
    are of this class too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (usage: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="distsm", description="Exact subgraph matching on GPUs and CPUs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    c = sub.add_parser("count", help="count the matches of each query",
                       description="Count matches of each QUERY (files or directories of files) in DATA.")
    c.add_argument("data", nargs="?", help="data graph file (any supported format; .gz allowed)")
    c.add_argument("queries", nargs="*", help="query graph files or directories")
    c.add_argument("--example", action="store_true",
                   help="run on the bundled example (HPRD and 4 queries with known answers) and check them")
    c.add_argument("--json", action="store_true", help="one JSON object per line")
    c.add_argument("--explain", action="store_true",
                   help="after each count, print the plan: path, join order, estimated and actual partial matches "
                        "per level, seconds per stage (in process, without --partitions)")
    c.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr, advancing within each query (default: when stderr is a terminal)")
    _add_semantics(c)
    _add_reading(c)
    dask = c.add_argument_group("cluster", "run on a Dask cluster (any of these options, or --example)")
    dask.add_argument("--workers", type=_positive(int), default=None, metavar="N",
                      help="start a local cluster of N CPU workers")
    dask.add_argument("--gpus", type=_gpus_arg, default=None, metavar="all|N",
                      help="start a local cluster with one worker per GPU")
    dask.add_argument("--scheduler", default=None, metavar="ADDR", help="connect to a running scheduler")
    dask.add_argument("--scheduler-file", default=None, metavar="FILE", help="connect through a scheduler file")
    dask.add_argument("--partition-dir", default=None, metavar="DIR",
                      help="partition store directory (must be readable by every worker)")
    dask.add_argument("--connect-timeout", type=_positive(float), default=30.0, metavar="SECONDS",
                      help="how long to try reaching --scheduler / --scheduler-file (default 30)")
    dask.add_argument("--dashboard-address", default=None, metavar="HOST:PORT",
                      help="where the dashboard of a cluster distsm starts listens (default 127.0.0.1:8787, this "
                           "host only; ':8787' for every interface)")
    c.add_argument("--timeout", type=_positive(float), default=None, metavar="SECONDS",
                   help="stop queries not finished this long after they started (on a cluster: after submission) "
                        "and report them as timed out")
    dask.add_argument("--in-process", action="store_true", help="with --example: run without a cluster")
    dask.add_argument("--keep-dashboard", action=argparse.BooleanOptionalAction, default=None,
                      help="after the results, keep the cluster and its dashboard up until Enter is pressed "
                           "(default: with --example on a terminal)")

    m = sub.add_parser("match", help="list the matches of one query")
    m.add_argument("data")
    m.add_argument("query")
    m.add_argument("--limit", type=int, default=None,
                   help="stop after N matches (without --memory-budget, the join is sized for N rows)")
    m.add_argument("--output", "-o", default=None,
                   help="write rows to FILE (.npy for NumPy, else text) instead of stdout; streamed, so any number "
                        "of rows fits")
    m.add_argument("--timeout", type=_positive(float), default=None, metavar="SECONDS",
                   help="stop when the listing has not finished this long after it started (the rows written so "
                        "far stay; exit status 2)")
    _add_semantics(m)
    _add_reading(m)

    i = sub.add_parser("info", help="sizes, labels and degree statistics of a graph")
    i.add_argument("data")
    i.add_argument("--json", action="store_true")
    _add_reading(i)

    pa = sub.add_parser("partition", help="split a graph into k parts (METIS) and save the partition store",
                        description="Partition DATA into K parts; with --out, save the store there (a fresh store "
                                    "already in --out is reused instead of rebuilt).")
    pa.add_argument("data", help="data graph file")
    pa.add_argument("-k", "--parts", dest="k", type=int, required=True, metavar="K", help="number of parts")
    pa.add_argument("--out", default=None, metavar="DIR", help="partition store directory to reuse or write")
    pa.add_argument("--method", default="metis", choices=PARTITION_METHODS)
    pa.add_argument("--seed", type=int, default=0, help="seed for metis and random (default 0)")
    pa.add_argument("--json", action="store_true", help="one JSON object")
    _add_reading(pa)

    sq = sub.add_parser("sparql", help="answer a SPARQL basic-graph-pattern SELECT query over N-Triples data",
                        description="Evaluate the SELECT query in QUERY (a small SPARQL subset: PREFIX, SELECT "
                                    "[DISTINCT] vars|*, one basic graph pattern, LIMIT/OFFSET) over DATA (N-Triples, "
                                    ".gz allowed), with SPARQL's homomorphic bag semantics.")
    sq.add_argument("data", help="N-Triples file (.nt or .nt.gz)")
    sq.add_argument("query", help="file holding the SPARQL query (- for stdin)")
    sq.add_argument("--limit", type=int, default=None, help="print at most N solutions")
    sq.add_argument("--isomorphic", action="store_true", help="distinct variables must bind distinct terms")
    sq.add_argument("--fold-types", action="store_true",
                    help="fold rdf:type triples into per-entity type sets (type patterns need a constant class)")
    sq.add_argument("--json", action="store_true", help="one JSON object per solution ({variable: term})")

    _add_jobqueue(sub)

    w = sub.add_parser("warmup", help="compile the engine's GPU kernels into CuPy's kernel cache ahead of use",
                       description="Run a fixed set of small counts that take the engine's GPU paths, each checked "
                                   "against the CPU backend, so that CuPy's on-disk kernel cache holds their kernels "
                                   "and later processes do not pay the compile time.  Run once per machine or image.")
    w.add_argument("--backend", default="cupy", choices=BACKENDS)
    w.add_argument("--json", action="store_true", help="one JSON object")
    return parser


def _cmd_count(args: argparse.Namespace) -> int:
    expected: dict[str, int] = {}
    if args.example:
        if args.data or args.queries:
            raise _UsageError("--example takes no DATA or QUERY arguments")
        data_path, query_args = str(example.data_path()), [str(p) for p in example.query_paths()]
        expected = example.expected_counts()
    else:
        if not args.data or not args.queries:
            raise _UsageError("count needs DATA and at least one QUERY (or --example)")
        data_path, query_args = args.data, args.queries
    sem = Semantics(args.induced, args.homomorphism, args.unique)
    if args.explain and (_wants_cluster(args) or args.partitions is not None):
        raise _UsageError("--explain explains one in-process join: drop --partitions and the cluster options")
    if _wants_cluster(args):
        return _count_on_cluster(args, data_path, query_args, sem, expected)
    if args.keep_dashboard:
        raise _UsageError("--keep-dashboard needs a cluster (drop --in-process, or give --workers/--gpus/--scheduler)")
    t0 = time.perf_counter()
    data = _read_data(data_path, args)
    queries = _load_queries(query_args, _reading(args))
    for name, path, q in queries:
        _check_query(path, name, q, data)
    print(f"loaded {data_path}: {data.n} vertices, {data.m} edges; {len(queries)} queries "
          f"({time.perf_counter() - t0:.2f}s)", file=sys.stderr)
    outcomes: Counter[str] = Counter()
    running = Running()
    with ProgressBar(len(queries), "counting", enabled=args.progress, status=running) as bar:
        for record in _count_in_process(args, data, queries, sem, bar, running):
            outcomes[_report(args, record, expected, sem, bar)] += 1
    return 1 if _print_outcomes(outcomes) else 0


def _count_in_process(args: argparse.Namespace, data: Graph, queries: list[tuple[str, Any, Graph]],
                      sem: Semantics, bar: ProgressBar, running: Running) -> Iterator[dict[str, Any]]:
    """One report record per query.  With ``--partitions`` the queries run as one part-major batch (each part
    loaded once for all of them); ``--timeout`` bounds each query (the batch, with partitions).  Without
    partitions the bar also advances within a query, over the engine's first-level chunks.  ``running`` is told
    which query runs (with partitions: the next one to report, as the batch yields them in order)."""
    if args.partitions is None:
        within = bar.within if bar.enabled else None
        for name, _, q in queries:
            running.start(name)
            bar.refresh()
            t = time.perf_counter()
            try:
                if args.explain:
                    report = explain(data, q, induced=sem.induced, homomorphism=sem.homomorphism,
                                     unique=sem.unique, memory_budget=args.memory_budget, backend=args.backend)
                    n = report.count
                else:
                    n = count(data, q, induced=sem.induced, homomorphism=sem.homomorphism, unique=sem.unique,
                              memory_budget=args.memory_budget, backend=args.backend, timeout=args.timeout,
                              progress=within)
            except TimeoutError as e:
                yield {"query": name, "status": "timeout", "count": None, "error": str(e),
                       "semantics": sem.as_dict()}
                continue
            record = {"query": name, "status": "ok", "count": n, "seconds": round(time.perf_counter() - t, 6),
                      "semantics": sem.as_dict()}
            if args.explain:
                record["explain"] = report.as_dict() if args.json else str(report)
            yield record
        return
    results = iter_batch(data, [q for _, _, q in queries], partitions=args.partitions,
                         names=[n for n, _, _ in queries], induced=sem.induced, homomorphism=sem.homomorphism,
                         unique=sem.unique, memory_budget=args.memory_budget, backend=args.backend,
                         partition_method=args.partition_method, adjacency=args.adjacency, timeout=args.timeout)
    reported = 0
    running.start(queries[0][0])
    try:
        for r in results:
            reported += 1
            running.start(queries[reported][0] if reported < len(queries) else None)
            yield r.summary() | {"seconds": round(sum(r.seconds.values()), 6)}
    except TimeoutError:
        for name, _, _ in queries[reported:]:
            yield {"query": name, "status": "timeout", "count": None, "semantics": sem.as_dict(),
                   "error": f"not finished within {args.timeout}s"}


def _wants_cluster(args: argparse.Namespace) -> bool:
    chosen = any(x is not None for x in (args.workers, args.gpus, args.scheduler, args.scheduler_file))
    return chosen or (args.example and not args.in_process)


def _report(args: argparse.Namespace, record: dict[str, Any], expected: dict[str, int], sem: Semantics,
            bar: ProgressBar) -> str:
    """Print one query's line (or JSON); returns its outcome: ``"ok"``, ``"mismatch"`` (it disagrees with a
    known count) or the status of a query that did not finish (``"timeout"``, ``"error"``, ...)."""
    name, n = record["query"], record.get("count")
    ok = True
    status = ""
    if name in expected and n is not None and not (sem.induced or sem.homomorphism or sem.unique):
        record["expected"] = expected[name]
        ok = expected[name] == n
        status = "  ok" if ok else f"  MISMATCH (expected {expected[name]})"
    with bar.above():
        if args.json:
            print(json.dumps(record), flush=True)
        elif record.get("status", "ok") != "ok":
            print(f"{name}\t{record['status']}\t{record.get('error') or ''}", flush=True)
        else:
            print(f"{name}\t{n}\t{record['seconds']:.4f}s{status}", flush=True)
            if "explain" in record:
                print(record["explain"], flush=True)
        bar.advance()
    return record.get("status", "ok") if record.get("status", "ok") != "ok" else ("ok" if ok else "mismatch")


_OUTCOMES = {"mismatch": "disagree with their known counts", "timeout": "timed out", "error": "failed",
             "cancelled": "were cancelled"}


def _print_outcomes(outcomes: Counter[str]) -> int:
    """One stderr line for the queries that did not end well, by kind; returns how many there were."""
    bad = {k: v for k, v in outcomes.items() if k != "ok"}
    if bad:
        print("; ".join(f"{v} {'query' if v == 1 else 'queries'} {_OUTCOMES.get(k, k)}" for k, v in bad.items()),
              file=sys.stderr)
    return sum(bad.values())


def _count_on_cluster(args: argparse.Namespace, data_path: str, query_args: list[str], sem: Semantics,
                      expected: dict[str, int]) -> int:
    from distsm.cluster.start import ClusterError

    if args.scheduler and args.scheduler_file:
        raise _UsageError("give --scheduler or --scheduler-file, not both")
    if args.scheduler_file and not os.path.isfile(args.scheduler_file):
        raise _CommandError(f"{args.scheduler_file}: scheduler file not found")
    queries = _load_queries(query_args, _reading(args))
    reading_given = _reading(args) != {"format": "auto", "directed": None, "dedupe": None} or \
        args.vertex_labels is not None
    # With reading options the graph is read here; a plain path lets the Matcher keep its store beside the file.
    data: Any = _read_data(data_path, args) if reading_given else data_path
    try:
        return _run_on_cluster(args, data, queries, sem, expected)
    except ClusterError as e:
        raise _CommandError(f"cluster: {e}") from None


def _run_on_cluster(args: argparse.Namespace, data: Any, queries: list[tuple[str, Path, Graph]], sem: Semantics,
                    expected: dict[str, int]) -> int:
    from distsm.cluster.start import DEFAULT_DASHBOARD, LocalClusterSpec, connect
    from distsm.matcher import Matcher
    from distsm.partition import Partitioning

    gpus: str | int | None = "all"
    if args.gpus is not None:
        gpus = args.gpus
    elif args.workers is not None:
        gpus = None
    store = args.partition_dir
    if store is None and args.example:
        store = os.path.join(os.path.expanduser("~"), ".cache", "distsm", "example")  # not inside the package
    target = args.scheduler or args.scheduler_file
    client = None
    if target is not None:
        client, _ = connect(target, timeout=args.connect_timeout)
    local = LocalClusterSpec(gpus, args.workers, args.dashboard_address or DEFAULT_DASHBOARD)
    how = Partitioning(args.partitions or "auto", args.partition_method, adjacency=args.adjacency, directory=store)
    t0 = time.perf_counter()
    try:
        with Matcher(data, cluster=client or local, partitions=how, backend=args.backend,
                     memory_budget=args.memory_budget) as m:
            for name, path, q in queries:
                _check_query(path, name, q, m.data)
            print(f"cluster: {m.n_workers} workers, {m.k} partitions ({m.cross_edge_count} cross edges) "
                  f"ready in {time.perf_counter() - t0:.1f}s; dashboard: {m.dashboard_link}", file=sys.stderr)
            outcomes: Counter[str] = Counter()
            batch = m.submit([q for _, _, q in queries], names=[n for n, _, _ in queries], induced=sem.induced,
                             homomorphism=sem.homomorphism, unique=sem.unique, timeout=args.timeout)
            with ProgressBar(len(queries), "counting", enabled=args.progress, status=_slowest(batch)) as bar:
                for r in batch.as_completed():
                    record = r.summary() | {"seconds": round(sum(r.seconds.values()), 6)}
                    outcomes[_report(args, record, expected, sem, bar)] += 1
            _hold_dashboard(args, m.dashboard_link)
    finally:
        if client is not None:
            client.close()
    return 1 if _print_outcomes(outcomes) else 0


def _slowest(batch: Any) -> Callable[[], str | None]:
    """A progress bar's status for a cluster batch: its slowest running query, as the scheduler's monitor sees it
    (:meth:`distsm.cluster.Batch.status`)."""

    def status() -> str | None:
        slowest = (batch.status() or {}).get("slowest")
        if not slowest:
            return None
        return f"slowest running: {slowest['query']} {slowest['seconds']:.1f}s on worker {slowest['worker']}"

    return status


def _hold_dashboard(args: argparse.Namespace, link: str | None) -> None:
    """Keep the cluster (and its dashboard) up until Enter when asked, or by default for --example on a
    terminal: the link printed at the start would otherwise be dead by the time it is opened."""
    keep = args.keep_dashboard
    if keep is None:
        keep = args.example and sys.stdin.isatty() and sys.stderr.isatty()
    if not keep or not link:
        return
    print(f"the dashboard stays up at {link}; press Enter to stop the cluster", file=sys.stderr, flush=True)
    try:
        sys.stdin.readline()
    except (KeyboardInterrupt, OSError, ValueError):
        # Ctrl-C or no usable stdin: stop as Enter would.
        pass


def _cmd_match(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise _UsageError("--limit must be >= 0")
    data = _read_data(args.data, args)
    query = read_graph(args.query, **_reading(args))
    _check_query(Path(args.query), Path(args.query).stem, query, data)
    chunks = iter_matches(data, query, limit=args.limit, induced=args.induced, homomorphism=args.homomorphism,
                          unique=args.unique, memory_budget=args.memory_budget, backend=args.backend,
                          partitions=args.partitions, partition_method=args.partition_method,
                          adjacency=args.adjacency, timeout=args.timeout)
    written = [0]
    try:
        _write_rows(chunks, args.output, query.n, written)
    except TimeoutError:
        raise _CommandError(f"the listing did not finish within {args.timeout:g} s; {written[0]} matches were "
                            f"written before it stopped") from None
    print(f"{written[0]} matches", file=sys.stderr)
    return 0


def _write_rows(chunks: Iterator[np.ndarray], output: str | None, width: int, written: list[int]) -> None:
    """Rows to ``output`` (.npy, or text; stdout when None), counting them in ``written[0]`` as they go."""
    if output and output.endswith(".npy"):
        with NpyRowWriter(output, width) as out:
            for rows in chunks:
                out.write(rows)
                written[0] = out.rows
        return
    text = open(output, "w") if output else sys.stdout
    try:
        for rows in chunks:
            np.savetxt(text, rows, fmt="%d")
            written[0] += rows.shape[0]
    finally:
        if text is not sys.stdout:
            text.close()


def _cmd_info(args: argparse.Namespace) -> int:
    g = _read_data(args.data, args)
    info = {"file": args.data, **g.summary()}
    if args.json:
        print(json.dumps(info))
    else:
        for k, v in info.items():
            print(f"{k:14} {v:.2f}" if isinstance(v, float) else f"{k:14} {v}")
    return 0


def _cmd_sparql(args: argparse.Namespace) -> int:
    from distsm.rdf import evaluate, read_ntriples

    if args.limit is not None and args.limit < 0:
        raise _UsageError("--limit must be >= 0")
    from distsm.rdf.sparql import SparqlSyntaxError, parse_sparql

    source = "<stdin>" if args.query == "-" else args.query
    try:
        text = sys.stdin.read() if args.query == "-" else Path(args.query).read_bytes().decode("utf-8")
        query = parse_sparql(text)
    except UnicodeDecodeError as e:
        raise GraphFormatError(source, None, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except SparqlSyntaxError as e:
        raise GraphFormatError(source, e.line, e.problem, column=e.column) from None
    t0 = time.perf_counter()
    g = read_ntriples(args.data, fold_types=args.fold_types)
    t1 = time.perf_counter()
    res = evaluate(g, query, isomorphic=args.isomorphic, limit=args.limit)
    t2 = time.perf_counter()
    if args.json:
        for row in res.decoded():
            print(json.dumps(dict(zip(res.variables, row))))
    else:
        print("\t".join("?" + v for v in res.variables))
        for row in res.decoded():
            print("\t".join(row))
    print(f"{len(res)} solutions; read {g.m} triples in {t1 - t0:.2f}s, query {t2 - t1:.4f}s", file=sys.stderr)
    return 0


def _cmd_partition(args: argparse.Namespace) -> int:
    from distsm.partition import PartitionError, load_or_build

    if args.k < 1:
        raise _UsageError(f"-k must be >= 1, got {args.k}")
    t0 = time.perf_counter()
    g = _read_data(args.data, args)
    t1 = time.perf_counter()
    try:
        store = load_or_build(g, args.k, directory=args.out, method=args.method, seed=args.seed,
                              fallback=False)
    except PartitionError as e:
        print(f"distsm: error: {e}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - t1
    st = store.stats
    where = "in memory" if store.directory is None else ("reused " if store.reused else "saved ") + str(store.directory)
    info: dict[str, Any] = {
        "file": args.data, "vertices": g.n, "edges": g.m, "k": store.k, "method": store.method, "seed": store.seed,
        "edge_cut": st.edge_cut, "cross_edges": st.cross_edges, "cross_fraction": st.cross_edges / g.m if g.m else 0.0,
        "balance": st.balance, "part_vertices": list(st.part_vertices), "part_edges": list(st.part_edges),
        "partition_seconds": round(st.seconds, 6), "seconds": round(seconds, 6),
        "read_seconds": round(t1 - t0, 6), "store": where,
    }
    if args.json:
        print(json.dumps(info))
    else:
        for k, v in info.items():
            if isinstance(v, list):
                v = " ".join(map(str, v))
            print(f"{k:17} {v:.4f}" if isinstance(v, float) else f"{k:17} {v}")
    return 0


class _UsageError(Exception):
    """Options that do not go together: argparse's usage message, exit 2."""


class _CommandError(Exception):
    """A problem outside the user's files (an unreachable cluster, say): one line, exit 2."""


def _one_line(exc: BaseException) -> str:
    """The exception's message on one line, elided if huge (a message may quote the user's input)."""
    return elide(" ".join(str(exc).split()), 2000)


def _cmd_jobqueue(args: argparse.Namespace) -> int:
    import signal

    from distsm.cluster import jobqueue
    from distsm.cluster.start import DEFAULT_DASHBOARD

    try:
        spec = jobqueue.JobSpec(
            args.system, args.scheduler_file, gpus=args.gpus, workers=args.workers, cores=args.cores,
            memory=args.memory, queue=args.queue, account=args.account, walltime=args.walltime, host=args.host,
            interface=args.interface, dashboard_address=args.dashboard_address or DEFAULT_DASHBOARD,
            local_directory=args.local_directory, log_directory=args.log_directory, prologue=tuple(args.prologue),
            python=args.python)
    except ValueError as e:
        raise _UsageError(str(e)) from e
    if args.print_script:
        print(jobqueue.job_script(spec))
        return 0
    cluster = jobqueue.start(spec, args.jobs)
    # Ctrl-C, and the SIGTERM a batch system ends a job with, cancel the jobs (dask-jobqueue's import makes SIGINT a
    # bare exit).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        want = args.jobs * spec.processes
        print(f"scheduler {cluster.scheduler_address}, file {spec.scheduler_file}; submitted {args.jobs} "
              f"{args.system} jobs of {spec.processes} workers; dashboard {cluster.dashboard_link}", file=sys.stderr,
              flush=True)
        started, seen = time.monotonic(), -1
        while True:
            have = len(cluster.scheduler_info.get("workers", {}))
            if have != seen:
                print(f"workers {have}/{want}", file=sys.stderr, flush=True)
                seen = have
            if have >= want:
                break
            if args.timeout is not None and time.monotonic() - started > args.timeout:
                raise _CommandError(f"{want - have} of {want} workers did not join within {args.timeout:g} s "
                                    f"(job logs: {spec.log_directory or 'the batch system default'})")
            time.sleep(1.0)
        print("ready: run `distsm count ... --scheduler-file " + spec.scheduler_file + "`; Ctrl-C cancels the jobs",
              file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("distsm: cancelling the jobs", file=sys.stderr, flush=True)
        return 0
    finally:
        cluster.close()


def _cmd_warmup(args: argparse.Namespace) -> int:
    from distsm.compile_ahead import warmup

    report = warmup(args.backend, progress=lambda name: print(f"warmed {name}", file=sys.stderr, flush=True))
    print(json.dumps(dataclasses.asdict(report)) if args.json else report)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = {"count": _cmd_count, "match": _cmd_match, "info": _cmd_info, "partition": _cmd_partition,
               "sparql": _cmd_sparql, "warmup": _cmd_warmup, "jobqueue": _cmd_jobqueue}[args.command]
    try:
        return handler(args)
    except _UsageError as e:
        parser.error(str(e))
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        sys.stdout = open(os.devnull, "w")
        return 0
    except (GraphFormatError, GraphError, BackendUnavailableError, ValueError, OSError, _CommandError) as e:
        print(f"distsm: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("distsm: interrupted", file=sys.stderr)
        return 130
    return 0
