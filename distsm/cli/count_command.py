"""``distsm count``: counts in this process or on a cluster, each checked against a known answer where the
query has one, with progress and a report."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


from distsm import example
from distsm.api import count, explain, iter_batch
from distsm.cli.errors import CommandError, UsageError
from distsm.cli.inputs import check_query, load_queries, read_data
from distsm.cli.parser import reading_options
from distsm.graph import Graph
from distsm.progress import ProgressBar, Running, logged_steps
from distsm.semantics import Semantics


def run_count(args: argparse.Namespace) -> int:
    expected: dict[str, int] = {}
    if args.example:
        if args.data or args.queries:
            raise UsageError("--example takes no DATA or QUERY arguments")
        data_path, query_args = str(example.data_path()), [str(p) for p in example.query_paths()]
        expected = example.expected_counts()
    else:
        if not args.data or not args.queries:
            raise UsageError("count needs DATA and at least one QUERY (or --example)")
        data_path, query_args = args.data, args.queries
    sem = Semantics.of(args.induced, args.homomorphism, args.unique)
    if args.explain and (_wants_cluster(args) or args.partitions is not None):
        raise UsageError("--explain explains one in-process join: drop --partitions and the cluster options")
    if _wants_cluster(args):
        return _count_on_cluster(args, data_path, query_args, sem, expected)
    if args.keep_dashboard:
        raise UsageError("--keep-dashboard needs a cluster (drop --in-process, or give --workers/--gpus/--scheduler)")
    t0 = time.perf_counter()
    data = read_data(data_path, args)
    queries = load_queries(query_args, reading_options(args))
    for name, path, q in queries:
        check_query(path, name, q, data)
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
        raise UsageError("give --scheduler or --scheduler-file, not both")
    if args.scheduler_file and not os.path.isfile(args.scheduler_file):
        raise CommandError(f"{args.scheduler_file}: scheduler file not found")
    queries = load_queries(query_args, reading_options(args))
    reading_given = reading_options(args) != {"format": "auto", "directed": None, "dedupe": None} or \
        args.vertex_labels is not None
    # With reading options the graph is read here; a plain path lets the Matcher keep its store beside the file.
    data: Any = read_data(data_path, args) if reading_given else data_path
    try:
        return _run_on_cluster(args, data, queries, sem, expected)
    except ClusterError as e:
        raise CommandError(f"cluster: {e}") from None


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
        with logged_steps("distsm.matcher", enabled=args.progress):
            m = Matcher(data, cluster=client or local, partitions=how, backend=args.backend,
                        memory_budget=args.memory_budget)
        with m:
            for name, path, q in queries:
                check_query(path, name, q, m.data)
            print(f"cluster: {m.n_workers} workers, {m.k} partitions ({m.cross_edge_count} cross edges) "
                  f"ready in {time.perf_counter() - t0:.1f}s; dashboard: {m.dashboard_link}", file=sys.stderr)
            outcomes: Counter[str] = Counter()
            batch = m.submit([q for _, _, q in queries], names=[n for n, _, _ in queries], semantics=sem,
                             timeout=args.timeout)
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
