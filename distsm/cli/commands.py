"""The ``distsm`` commands other than ``count``: ``match``, ``info``, ``sparql``, ``partition``, ``jobqueue`` and
``warmup``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from distsm.api import iter_matches
from distsm.cli.errors import CommandError, UsageError
from distsm.cli.inputs import check_query, read_data
from distsm.cli.parser import reading_options
from distsm.errors import GraphFormatError
from distsm.formats import read_graph
from distsm.npy_stream import NpyRowWriter


def run_match(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be >= 0")
    data = read_data(args.data, args)
    query = read_graph(args.query, **reading_options(args))
    check_query(Path(args.query), Path(args.query).stem, query, data)
    chunks = iter_matches(data, query, limit=args.limit, induced=args.induced, homomorphism=args.homomorphism,
                          unique=args.unique, memory_budget=args.memory_budget, backend=args.backend,
                          partitions=args.partitions, partition_method=args.partition_method,
                          adjacency=args.adjacency, timeout=args.timeout)
    written = [0]
    try:
        _write_rows(chunks, args.output, query.n, written)
    except TimeoutError:
        raise CommandError(f"the listing did not finish within {args.timeout:g} s; {written[0]} matches were "
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


def run_info(args: argparse.Namespace) -> int:
    g = read_data(args.data, args)
    info = {"file": args.data, **g.summary()}
    if args.json:
        print(json.dumps(info))
    else:
        for k, v in info.items():
            print(f"{k:14} {v:.2f}" if isinstance(v, float) else f"{k:14} {v}")
    return 0


def run_sparql(args: argparse.Namespace) -> int:
    from distsm.rdf import evaluate, read_ntriples

    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be >= 0")
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


def run_partition(args: argparse.Namespace) -> int:
    from distsm.partition import PartitionError, load_or_build

    if args.k < 1:
        raise UsageError(f"-k must be >= 1, got {args.k}")
    t0 = time.perf_counter()
    g = read_data(args.data, args)
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


def run_jobqueue(args: argparse.Namespace) -> int:
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
        raise UsageError(str(e)) from e
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
                raise CommandError(f"{want - have} of {want} workers did not join within {args.timeout:g} s "
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


def run_warmup(args: argparse.Namespace) -> int:
    from distsm.compile_ahead import warmup

    report = warmup(args.backend, progress=lambda name: print(f"warmed {name}", file=sys.stderr, flush=True))
    print(json.dumps(dataclasses.asdict(report)) if args.json else report)
    return 0
