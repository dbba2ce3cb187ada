"""The ``distsm`` command line's options: one sub-parser per command, the options several share, and their checks."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn


from distsm._version import __version__
from distsm.arguments import parse_size
from distsm.errors import elide
from distsm.formats import FORMATS
from distsm.vocabulary import ADJACENCY_MODES, BACKENDS, PARTITION_METHODS


def parse_bytes(text: str) -> int:
    """``"512MiB"`` -> 536870912; plain integers are bytes (the API's :func:`~distsm.arguments.parse_size`)."""
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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


def reading_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"format": args.format, "directed": args.directed, "dedupe": args.dedupe}


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
    for add in (_add_count, _add_match, _add_info, _add_partition, _add_sparql, _add_jobqueue, _add_warmup):
        add(sub)
    return parser


def _add_count(sub: Any) -> None:
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


def _add_match(sub: Any) -> None:
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


def _add_info(sub: Any) -> None:
    i = sub.add_parser("info", help="sizes, labels and degree statistics of a graph")
    i.add_argument("data")
    i.add_argument("--json", action="store_true")
    _add_reading(i)


def _add_partition(sub: Any) -> None:
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


def _add_sparql(sub: Any) -> None:
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


def _add_warmup(sub: Any) -> None:
    w = sub.add_parser("warmup", help="compile the engine's GPU kernels into CuPy's kernel cache ahead of use",
                       description="Run a fixed set of small counts that take the engine's GPU paths, each checked "
                                   "against the CPU backend, so that CuPy's on-disk kernel cache holds their kernels "
                                   "and later processes do not pay the compile time.  Run once per machine or image.")
    w.add_argument("--backend", default="cupy", choices=BACKENDS)
    w.add_argument("--json", action="store_true", help="one JSON object")
