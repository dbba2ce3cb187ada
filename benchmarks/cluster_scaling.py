"""Scaling of the Dask layer over 1, 2, 4 ... GPUs, its memory per worker, and its overhead against one process.

    python -m benchmarks.cluster_scaling --gpus 1 2 [--scale 22 --edges 50000000 --labels 256 --queries 40
        --size 8 12 --small-queries 200 --small-size 4 6 --method metis --out-of-core gather]

On an R-MAT power-law graph (Zipf vertex labels) with random-walk queries, for each GPU count: start a
``LocalCUDACluster`` through distsm (``--share-gpu``: that many CPU-process workers all on GPU 0, a functional check
on one GPU), partition the graph into one part per worker, and count two batches: the *heavy* batch (``--queries``
queries of ``--size`` vertices, a range spread evenly; ``--heavy-seconds LOW HIGH`` keeps only pool queries whose
in-process count takes that long) and the *small* batch (``--small-queries`` HPRD-style queries
of ``--small-size`` vertices, many cheap ones).  Each run records per batch the wall time, how the planner spread the
queries (whole or sliced), task seconds, the bytes moved host to device and each worker's peak device bytes, and
per worker its adjacency mode and device budget.  The same batches are counted by ``distsm.count`` in this process
on one device (no Dask), so the cluster's overhead is visible beside its 1-GPU time.  ``--out-of-core`` adds a run on
the largest worker count with each worker's device budget at a third of the graph's index, its adjacency read in
place from the shared host copy (``host``) or gathered per chunk (``gather``), with its time against the in-core run
of the same count.  ``--budget-shares 0.6 0.33`` adds such a run per share, each worker's budget that share of the
index: the graph fits the GPUs together but not one, or neither; each records its time over the in-core run on as
many GPUs (``over_in_core``) and whether every worker's peak device bytes stayed within its budget
(``within_budget``).  Counts must agree between all
runs and the in-process baseline; speedup and efficiency are relative to the smallest count, per batch, on the
queries that finished within ``--timeout`` in every run.  ``--cpu`` runs everything on CPU workers (a dry run).
``--report-dir DIR`` keeps, per run and batch, Dask's performance report (``{N}w-{budget}-{batch}.html``) and its
task stream (``...-tasks.json``: every task's key, worker and start/stop times), to see what a batch waits on.

The CPU-worker scaling run (issue 29) on the 16-core device machine: 1, 2, 4, 8 and 16 workers, a heavy batch of
16 queries that take 1 to 10 s each in process (selected from a pool of 16 per query wanted, 16 timed at a time:
a pool of 8 per query gave only 13 of 128 in that window) and the small batch of 200, each batch counted twice in
process and on each worker count alike, the best kept (a batch on fresh workers pays their first allocations and
kernel loads):

    python -m benchmarks.cluster_scaling --cpu --gpus 1 2 4 8 16 --scale 18 --edges 4000000 --labels 64
        --queries 16 --size 8 12 --heavy-seconds 1 10 --heavy-pool 16 --select-processes 16 --small-queries 200
        --small-size 4 6 --timeout 120 --method metis --repeat 2 --store-dir /tmp/distsm-scaling-stores
        --report-dir benchmarks/results/cluster_scaling_cpu16 --out benchmarks/results/cluster_scaling_cpu16.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from benchmarks import meta
from benchmarks.common import add_rmat_options, hprd_data_path, hprd_suite, parser, rmat_from
from benchmarks.generators import query_set
from distsm.vocabulary import ADJACENCY_MODES, DISTRIBUTIONS, PARTITION_METHODS


def hprd_check(n: int, args: argparse.Namespace) -> None:
    """All 200 HPRD queries on an ``n``-worker cluster, one partition per worker, against the known answers."""
    import distsm
    from distributed import Client

    _, queries, expected = hprd_suite()
    cluster, backend = _cluster(n, args)
    try:
        with Client(cluster) as client, distsm.Matcher(str(hprd_data_path()), cluster=client,
                                                       partitions=distsm.Partitioning(
                                                           n, directory="/tmp/distsm-hprd-parts"),
                                                       backend=backend) as m:
            devices = client.run(_visible_device)
            walls, results = {}, []
            for distribute in ("auto", "sliced"):  # auto sends these small queries whole to the workers
                t = time.perf_counter()
                results += m.submit(list(queries.values()), names=list(queries), distribute=distribute).results()
                walls[distribute] = round(time.perf_counter() - t, 2)
            placement = {r["part"]: (r["worker"], r["bytes"]) for r in m.load_report}
    finally:
        cluster.close()
    wrong = [r.query for r in results if not r.ok or r.count != expected[r.query]]
    print(f"HPRD on {n} workers: {len(results) - len(wrong)}/{len(results)} right (auto, then sliced) in {walls} s; "
          f"placement {placement}; worker devices {devices}", file=sys.stderr, flush=True)
    if wrong:
        raise SystemExit(f"HPRD check failed on {wrong[:5]}")


def _visible_device() -> str:
    import os

    return os.environ.get("CUDA_VISIBLE_DEVICES", "")


def _cluster(n: int, args: argparse.Namespace):
    """``(cluster, backend)`` with ``n`` workers: GPUs, CPU workers on GPU 0 (``--share-gpu``), or CPU only."""
    from distsm.cluster import local

    if args.cpu:
        return local(gpus=None, workers=n, dashboard_address=None), "numpy"
    if args.share_gpu:
        return local(gpus=None, workers=n, dashboard_address=None), "cupy"
    return local(gpus=n, dashboard_address="127.0.0.1:0"), "cupy"


def _batch(m, graphs: list, names: list[str], timeout: float, distribute: str, report: str | None = None,
           repeat: int = 1) -> dict:
    """Count one batch on matcher ``m`` (``repeat`` times: ``batch_wall_s`` is the best wall time, ``walls_s`` all of
    them, ``earlier_seconds`` the stage seconds per query of every count before the last, the rest describes the
    last count): wall time, spread, stage seconds, bytes moved, device peaks and the
    workers' CPU seconds in user and kernel mode (summed over workers; on the CPU, kernel time is mostly the
    zeroing of freshly faulted pages).  With ``report`` (a path without suffix), Dask's performance report is saved
    at ``report.html``, the batch's task stream at ``report-tasks.json``, and ``task_compute_s`` says how many
    seconds its tasks computed (summed over tasks; beside the wall time on one worker it leaves the scheduling,
    transfer and gathering overhead)."""
    walls, earlier = [], []
    for _ in range(repeat - 1):
        t = time.perf_counter()
        done = m.submit(graphs, names=names, timeout=timeout, distribute=distribute).results()
        walls.append(round(time.perf_counter() - t, 4))
        earlier.append({r.query: {k: round(v, 5) for k, v in r.seconds.items()} for r in done})
    cpu = m.client.run(_cpu_seconds)
    with _recorded(m.client, report) as stream:
        t = time.perf_counter()
        results = m.submit(graphs, names=names, timeout=timeout, distribute=distribute).results()
        walls.append(round(time.perf_counter() - t, 4))
    wall = min(walls)
    after = m.client.run(_cpu_seconds)
    used = {mode: round(sum(after[w][mode] - cpu[w][mode] for w in after if w in cpu), 3) for mode in ("user", "sys")}
    ok = [r for r in results if r.ok]
    peaks: dict[str, int] = {}
    for r in ok:
        for w, b in r.peak_device_bytes.items():
            peaks[w] = max(peaks.get(w, 0), b)
    computed = None if stream is None else sum(s["stop"] - s["start"] for task in stream.data
                                               for s in task["startstops"] if s["action"] == "compute")
    return {"batch_wall_s": round(wall, 4), "walls_s": walls, "earlier_seconds": earlier, "finished": len(ok),
            "worker_cpu_s": used,
            "task_compute_s": None if computed is None else round(computed, 4),
            "distribution": {d: sum(r.distribution == d for r in ok) for d in ("whole", "sliced")},
            "intra_s": round(sum(r.seconds.get("intra", 0) for r in ok), 4),
            "inter_s": round(sum(r.seconds.get("inter", 0) for r in ok), 4),
            "bytes_h2d": sum(r.bytes_h2d for r in ok), "peak_device_bytes": peaks,
            "queries": {r.query: {"status": r.status, "count": r.count, "strategy": r.strategy,
                                  "distribution": r.distribution, "distribution_reason": r.distribution_reason,
                                  "gathered_bytes": r.gathered_bytes,
                                  "bytes_h2d": r.bytes_h2d,
                                  "seconds": {k: round(v, 5) for k, v in r.seconds.items()}}
                        for r in results}}


def _cpu_seconds() -> dict[str, float]:
    """This process's CPU seconds so far, in user and kernel mode (run on every worker through ``client.run``)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"user": usage.ru_utime, "sys": usage.ru_stime}


@contextmanager
def _recorded(client, report: str | None) -> Iterator:
    """Keep Dask's performance report (HTML) and the task stream (JSON: one record per task, its key, worker and
    start/stop times) of the block at ``report.html`` and ``report-tasks.json``; nothing without ``report``.  Yields
    the task stream (its ``data`` complete once the block ends), or None without ``report``."""
    if report is None:
        yield None
        return
    from distributed import get_task_stream, performance_report

    os.makedirs(os.path.dirname(report) or ".", exist_ok=True)
    with performance_report(filename=f"{report}.html"), get_task_stream(client) as stream:
        yield stream
    with open(f"{report}-tasks.json", "w") as f:
        json.dump(stream.data, f, default=str)


def one_run(data, batches: dict[str, tuple[list, list[str]]], n: int, args: argparse.Namespace,
            device_budget: int | None, adjacency: str) -> dict:
    """Count every batch on an ``n``-worker cluster with one part per worker (more when the budget asks)."""
    import distsm
    from distributed import Client

    cluster, backend = _cluster(n, args)
    try:
        with Client(cluster) as client:
            t = time.perf_counter()
            store = None if args.store_dir is None else f"{args.store_dir}/{args.method}-{n}w-{device_budget}"
            m = distsm.Matcher(data, cluster=client, backend=backend, device_budget=device_budget,
                               partitions=distsm.Partitioning(method=args.method, adjacency=adjacency,
                                                              directory=store))
            setup_s = time.perf_counter() - t
            placed = {r["part"]: r["worker"] for r in m.load_report}
            workers = {r["worker"]: {k: r[k] for k in ("adjacency", "device_budget", "adjacency_bytes",
                                                       "shared_host_bytes")} for r in m.load_report}
            first = next(iter(batches.values()))[0][0]
            m.count(first)  # warm-up: kernels compiled, adjacency loaded on every worker
            runs = {name: _batch(m, graphs, names, args.timeout, args.distribute if name == "heavy" else "auto",
                                 None if args.report_dir is None else
                                 os.path.join(args.report_dir, f"{n}w-{device_budget or 'default'}-{name}"),
                                 args.repeat)
                    for name, (graphs, names) in batches.items()}
            m.close()
    finally:
        try:
            cluster.close(timeout=60)
        except Exception as e:  # a kernel still running past the batch timeout keeps its worker from closing
            print(f"closing the {n}-worker cluster: {e!r} (ignored)", file=sys.stderr, flush=True)
    return {"gpus": n, "workers": m.n_workers, "partitions": m.k, "placement": placed, "worker_memory": workers,
            "device_budget": device_budget, "distinct_workers": len(set(placed.values())),
            "setup_s": round(setup_s, 3), "partition_s": round(m.partition_seconds, 3),
            "load_s": [round(r["seconds"], 3) for r in m.load_report], "cross_edges": m.cross_edge_count,
            "batches": runs}


def in_process(data, batches: dict[str, tuple[list, list[str]]], args: argparse.Namespace,
               known: dict[str, dict] | None = None) -> dict:
    """The same batches counted by ``distsm.count`` in this process on one device (no Dask, no partitions);
    ``known`` batches (``{"batch_wall_s", "counts"}``, measured already: the heavy batch's selection) are not
    counted again."""
    import distsm
    from distsm.kernels import get_backend
    from distsm.plan.execute import release_device_memory

    backend = "numpy" if args.cpu else "cupy"
    distsm.count(data, next(iter(batches.values()))[0][0], backend=backend)  # warm-up, index built
    out = dict(known or {})
    for name, (graphs, names) in batches.items():
        if name in out:
            continue
        walls = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            counts = {q: distsm.count(data, g, backend=backend) for q, g in zip(names, graphs)}
            walls.append(round(time.perf_counter() - t, 4))
        out[name] = {"batch_wall_s": min(walls), "walls_s": walls, "counts": counts}
    # The workers may share this device: give the index and the pool back before they start.
    be = get_backend(backend)
    be.release(data)
    release_device_memory(be)
    return out


def summarize(runs: list[dict], names: list[str], batch: str, baseline: dict | None = None
              ) -> tuple[list[dict], list[str], bool]:
    """Per run on ``batch``: speedup and efficiency relative to the first run, the spread, the bytes moved and
    device peaks on the queries every run finished; whether their counts agree (with ``baseline``, the in-process
    counts, too)."""
    rows = [r["batches"][batch] for r in runs]
    common = [q for q in names if all(b["queries"][q]["status"] == "ok" for b in rows)]
    agree = all(len({b["queries"][q]["count"] for b in rows}
                    | ({baseline["counts"][q]} if baseline else set())) == 1 for q in common)
    base = rows[0]
    summary = []
    in_core = {r["gpus"]: b["batch_wall_s"] for r, b in zip(runs, rows) if r.get("budget_share") is None}
    for r, b in zip(runs, rows):
        speedup = base["batch_wall_s"] / b["batch_wall_s"] if b["batch_wall_s"] else None
        peak = max(b["peak_device_bytes"].values(), default=0)
        same = in_core.get(r["gpus"])
        stage = {s: round(sum(b["queries"][q]["seconds"].get(s, 0) for q in common), 4) for s in ("intra", "inter")}
        summary.append({"gpus": r["gpus"], "device_budget": r["device_budget"], "partitions": r["partitions"],
                        "batch_wall_s": b["batch_wall_s"], "finished": b["finished"],
                        "in_process_1gpu_s": baseline["batch_wall_s"] if baseline else None,
                        "speedup": round(speedup, 3) if speedup else None,
                        "efficiency": round(speedup * runs[0]["gpus"] / r["gpus"], 3) if speedup else None,
                        "distribution": b["distribution"], "intra_s": stage["intra"], "inter_s": stage["inter"],
                        "adjacency_read_gb": round(sum(b["queries"][q]["gathered_bytes"] for q in common) / 2**30, 3),
                        "bytes_h2d": b["bytes_h2d"], "peak_device_mb": peak / 2**20,
                        "budget_share": r.get("budget_share"),
                        "over_in_core": round(b["batch_wall_s"] / same, 3) if same else None,
                        "within_budget": None if r["device_budget"] is None else peak <= r["device_budget"],
                        "adjacency": sorted({w["adjacency"] for w in r["worker_memory"].values()}),
                        "slowest_slice_s": max((b["queries"][q]["seconds"].get("inter_slice_max", 0)
                                                for q in common), default=0)})
    return summary, common, agree


def scaling_queries(data, count: int, sizes: list[int], seed: int, kinds: tuple[str, ...], prefix: str
                    ) -> tuple[list, list[str]]:
    """``count`` queries spread evenly over the sizes ``sizes[0]..sizes[-1]``, with names."""
    lo, hi = sizes[0], sizes[-1]
    graphs, names = [], []
    span = list(range(lo, hi + 1))
    for j, size in enumerate(span):
        share = count // len(span) + (j < count % len(span))
        for kind, q in query_set(data, share, size, seed + size, kinds=kinds):
            names.append(f"{prefix}{len(names)}-{kind}{size}")
            graphs.append(q)
    return graphs, names


def select_heavy(data, graphs: list, names: list[str], want: int, low: float, high: float, cpu: bool,
                 processes: int = 1) -> tuple[list, list[str], dict, dict | None]:
    """The first ``want`` queries of a pool whose in-process count on one device takes between ``low`` and
    ``high`` seconds (a count still running at ``high`` is stopped): random-walk queries of 8 to 12 vertices on
    a Zipf-labelled graph are mostly answered in milliseconds, and a batch of those measures the cluster's
    per-query overhead, not how it spreads heavy work.  With ``processes > 1`` (CPU only) the pool is timed that
    many queries at a time in as many processes (the first ``want`` in pool order are kept, as one at a time).
    Returns the kept queries, their names, what each pool query timed took (``None``: stopped) and, timed one at
    a time, the kept queries' in-process baseline (``{"batch_wall_s", "counts"}``: their summed seconds and their
    counts, so they need not be counted again; None when timed side by side, where the seconds are not one
    process's alone)."""
    import multiprocessing

    backend = "numpy" if cpu else "cupy"
    seconds: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    kept: list[int] = []
    parallel = processes > 1 and cpu
    with (multiprocessing.get_context("spawn").Pool(processes, _timer_init, (data, backend)) if parallel
          else nullcontext()) as pool:
        if pool is None:
            _timer_init(data, backend)
        timed = pool.imap(_timed_count, [(g, high) for g in graphs]) if pool is not None else \
            map(_timed_count, [(g, high) for g in graphs])
        for i, (took, n) in enumerate(timed):
            seconds[names[i]] = took
            if took is not None and took >= low:
                kept.append(i)
                counts[names[i]] = n
                if len(kept) == want:
                    break
    print(f"heavy queries: {len(kept)} of {len(seconds)} pool queries took {low}..{high} s in process"
          + (f" ({processes} at a time)" if parallel else ""), file=sys.stderr, flush=True)
    baseline = None if parallel else {"batch_wall_s": round(sum(seconds[names[i]] or 0 for i in kept), 4),
                                      "counts": counts}
    return [graphs[i] for i in kept], [names[i] for i in kept], seconds, baseline


_TIMER: dict = {}


def _timer_init(data, backend: str) -> None:
    """Keep the data graph in this (pool) process and build its index before any query is timed."""
    import distsm

    _TIMER.update(data=data, backend=backend)
    distsm.count(data, distsm.Graph.from_edges([(0, 1)], vertex_labels=[0, 0]), backend=backend)


def _timed_count(job: tuple) -> tuple[float | None, int | None]:
    """``(seconds, count)`` of one query counted in this process, ``(None, None)`` when stopped at ``job[1]`` s."""
    import distsm

    query, high = job
    t = time.perf_counter()
    try:
        n = distsm.count(_TIMER["data"], query, backend=_TIMER["backend"], timeout=high)
    except TimeoutError:
        return None, None
    return round(time.perf_counter() - t, 4), n


def contention(data, graphs: list, processes: list[int], cpu: bool) -> dict[str, dict]:
    """What the machine itself does to a process's speed with others busy: for each count ``p`` in ``processes``,
    ``p`` processes (no Dask) each count all of ``graphs`` one at a time at once; per ``p`` their walls and their
    mean over the one-process wall.  Memory bandwidth and shared caches make a busy machine slower per process, an
    efficiency ceiling no scheduling removes."""
    import multiprocessing

    backend = "numpy" if cpu else "cupy"
    out: dict[str, dict] = {}
    for p in processes:
        with multiprocessing.get_context("spawn").Pool(p, _timer_init, (data, backend)) as pool:
            walls = pool.map(_timed_batch, [graphs] * p)
        out[str(p)] = {"walls_s": walls, "mean_s": round(sum(walls) / p, 3)}
        out[str(p)]["slowdown"] = round(out[str(p)]["mean_s"] / out[str(processes[0])]["mean_s"], 3)
        print(f"contention: {p} processes counting the batch each: mean {out[str(p)]['mean_s']} s "
              f"({out[str(p)]['slowdown']}x)", file=sys.stderr, flush=True)
    return out


def _timed_batch(graphs: list) -> float:
    """Seconds this (pool) process takes to count ``graphs`` one at a time."""
    import distsm

    t = time.perf_counter()
    for g in graphs:
        distsm.count(_TIMER["data"], g, backend=_TIMER["backend"])
    return round(time.perf_counter() - t, 3)


def main(argv=None):
    from distsm.kernels.index import estimate_index_bytes

    p = parser(__doc__, "cluster_scaling")
    add_rmat_options(p, scale=20, edges=8_000_000, labels=32, seed=7)
    p.add_argument("--gpus", type=int, nargs="+", default=[1, 2])
    p.add_argument("--queries", type=int, default=40, help="queries of the heavy batch")
    p.add_argument("--size", type=int, nargs="+", default=[8], help="heavy query size, or a range LO HI")
    p.add_argument("--heavy-seconds", type=float, nargs=2, default=None, metavar=("LOW", "HIGH"),
                   help="make the heavy batch of pool queries (--heavy-pool times --queries, sparse, core and "
                        "dense) whose in-process count takes LOW to HIGH seconds")
    p.add_argument("--heavy-pool", type=int, default=8, help="pool size per heavy query wanted (with --heavy-seconds)")
    p.add_argument("--select-processes", type=int, default=1,
                   help="with --cpu and --heavy-seconds: time this many pool queries at a time, one process each "
                        "(the heavy batch's in-process baseline is then counted again, one query at a time)")
    p.add_argument("--small-queries", type=int, default=0, help="queries of the HPRD-style small batch (0: none)")
    p.add_argument("--small-size", type=int, nargs="+", default=[4, 6])
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per batch")
    p.add_argument("--repeat", type=int, default=1,
                   help="count every batch (in process and on each worker count) this many times and "
                        "keep the best wall time (run-to-run noise on the CPU machine reached tens of percent)")
    p.add_argument("--method", default="random", choices=PARTITION_METHODS)
    p.add_argument("--adjacency", default="auto", choices=ADJACENCY_MODES)
    p.add_argument("--device-budget", type=int, default=None, help="bytes per worker (default: the device's)")
    p.add_argument("--out-of-core", choices=["host", "gather"], default=None,
                   help="add a run on the most workers with a device budget of a third of the graph's index, "
                        "reading the adjacency this way")
    p.add_argument("--budget-shares", type=float, nargs="+", default=[], metavar="S",
                   help="add a run on the most workers per share S, each worker's device budget S times the "
                        "graph's index (0.6: the graph fits the GPUs together, not one; 0.33: it fits neither), "
                        "the adjacency read as --out-of-core says (default: as the site decides)")
    p.add_argument("--store-dir", default=None,
                   help="keep the partition stores here and reuse them across runs (default: temporary)")
    p.add_argument("--no-in-process", action="store_true", help="skip the in-process 1-device baseline")
    p.add_argument("--distribute", default="auto", choices=DISTRIBUTIONS,
                   help="how the heavy batch's queries spread over the workers (the small batch's: auto)")
    p.add_argument("--share-gpu", action="store_true", help="all workers on GPU 0 (a functional check on 1 GPU)")
    p.add_argument("--cpu", action="store_true", help="CPU workers instead of GPUs (for a dry run)")
    p.add_argument("--report-dir", default=None, metavar="DIR",
                   help="save Dask's performance report (N-workers-BATCH.html) and task stream (...-tasks.json) of "
                        "every batch of every run here")
    p.add_argument("--contention", type=int, nargs="+", default=None, metavar="P",
                   help="first time P processes (no Dask) each counting the heavy batch at once, for each P (the "
                        "first is the reference): the machine's own slowdown per busy process")
    p.add_argument("--hprd", action="store_true",
                   help="first check the 200 HPRD known answers on the largest cluster")
    args = p.parse_args(argv)

    if args.hprd:
        hprd_check(max(args.gpus), args)
    data, graph = rmat_from(args)
    selection: dict = {}
    known: dict[str, dict] = {}
    if args.heavy_seconds:
        pool = scaling_queries(data, args.queries * args.heavy_pool, args.size, args.seed, ("sparse", "core", "dense"),
                               "q")
        graphs, names, seconds, timed = select_heavy(data, *pool, args.queries, *args.heavy_seconds, args.cpu,
                                                     args.select_processes)
        if timed is not None:
            known["heavy"] = timed
        if not graphs:
            raise SystemExit(f"no pool query took {args.heavy_seconds[0]} to {args.heavy_seconds[1]} s in process")
        selection = {"seconds": list(args.heavy_seconds), "pool": len(pool[0]), "pool_seconds": seconds}
        batches = {"heavy": (graphs, names)}
    else:
        batches = {"heavy": scaling_queries(data, args.queries, args.size, args.seed, ("core", "dense"), "q")}
    if args.small_queries:
        batches["small"] = scaling_queries(data, args.small_queries, args.small_size, args.seed + 1000,
                                           ("sparse", "dense"), "s")
    batches = {name: batch for name, batch in batches.items() if batch[0]}  # --queries 0: the small batch alone
    if not batches:
        raise SystemExit("no queries to run: --queries and --small-queries are both 0")
    if args.contention and "heavy" not in batches:
        raise SystemExit("--contention times the heavy batch: give --queries")
    index_bytes = estimate_index_bytes(data.n, data.nnz, data.num_effective_labels > 1)
    print(f"graph {data.n} vertices {data.m} edges (index ~{index_bytes / 2**20:.0f} MiB) in "
          f"{graph['generate_s']:.1f}s; "
          + "; ".join(f"{name}: {len(g)} queries" for name, (g, _) in batches.items()), file=sys.stderr, flush=True)
    graph["index_bytes_estimate"] = index_bytes
    machine_contention = None if not args.contention else contention(data, batches["heavy"][0], args.contention,
                                                                     args.cpu)
    baseline: dict = {}
    if not args.no_in_process:
        baseline = in_process(data, batches, args, known)
        print("in process, 1 device: " + ", ".join(f"{k} {v['batch_wall_s']:.2f}s" for k, v in baseline.items()),
              file=sys.stderr, flush=True)
    plan: list[tuple[int, int | None, float | None, str]] = [(n, args.device_budget, None, args.adjacency)
                                                              for n in args.gpus]
    shares = args.budget_shares or ([1 / 3] if args.out_of_core else [])
    plan += [(max(args.gpus), None, share, args.out_of_core or "auto") for share in shares]
    runs: list[dict] = []
    for n, budget, share, adjacency in plan:
        if share is not None:
            # A share of the index the in-core runs loaded (the estimate, an upper bound, when none did).
            loaded = [w["adjacency_bytes"] for r in runs for w in r["worker_memory"].values()
                      if w["adjacency"] == "device"]
            budget = max(int(max(loaded, default=index_bytes) * share), 1)
        runs.append(one_run(data, batches, n, args, budget, adjacency))
        runs[-1]["budget_share"] = share
        r = runs[-1]
        print(f"{n} worker(s), budget {budget}: {r['partitions']} parts, setup {r['setup_s']:.1f} s (partition "
              f"{r['partition_s']:.1f} s, loads {r['load_s']}); " + "; ".join(
            f"{k} {b['finished']}/{len(batches[k][0])} in {b['batch_wall_s']:.2f}s {b['distribution']}, "
            f"worker CPU s {b['worker_cpu_s']}, tasks computed {b['task_compute_s']} s"
            for k, b in r["batches"].items()), file=sys.stderr, flush=True)
        # Written after every run: a later run that times out or crashes must not lose the earlier ones.
        scaling = [x for x in runs if x["device_budget"] == args.device_budget]
        out_of_core = [x for x in runs if x["device_budget"] != args.device_budget]
        report = {}
        for name, (_, names) in batches.items():
            summary, common, agree = summarize(scaling + out_of_core, names, name, baseline.get(name))
            report[name] = {"summary": summary, "common_queries": len(common), "counts_agree": agree}
        path = meta.write("cluster_scaling", {"graph": graph, "query_size": args.size,
                                              "small_size": args.small_size, "adjacency": args.adjacency,
                                              "heavy_distribute": args.distribute,
                                              "heavy_selection": selection, "contention": machine_contention,
                                              "batches": report, "complete": len(runs) == len(plan),
                                              "in_process": baseline, "runs": runs}, args.out)
    print(f"{'batch':>6} {'gpus':>4} {'budget':>10} {'fin':>4} {'wall s':>8} {'1proc s':>8} {'speedup':>7} "
          f"{'eff':>5} {'whole':>5} {'sliced':>6} {'h2d MB':>8} {'peak MB':>8} {'adjacency':>10} {'slice s':>8} "
          f"{'/in core':>8} {'in budget':>9}")
    for name, rep in report.items():
        for s in rep["summary"]:
            print(f"{name:>6} {s['gpus']:4d} {s['device_budget'] or 0:10d} {s['finished']:4d} {s['batch_wall_s']:8.2f} "
                  f"{s['in_process_1gpu_s'] or 0:8.2f} {s['speedup'] or 0:7.2f} {s['efficiency'] or 0:5.2f} "
                  f"{s['distribution']['whole']:5d} {s['distribution']['sliced']:6d} {s['bytes_h2d'] / 2**20:8.1f} "
                  f"{s['peak_device_mb']:8.1f} {','.join(s['adjacency']):>10} {s['slowest_slice_s']:8.2f} "
                  f"{s['over_in_core'] or 0:8.2f} {str(s['within_budget']):>9}")
    ok = all(rep["common_queries"] and rep["counts_agree"] for rep in report.values())
    print(f"counts agree across runs and the in-process baseline: {ok}; wrote {path}")
    if not ok or any(r["distinct_workers"] != min(r["partitions"], r["workers"]) for r in runs):
        raise SystemExit("scaling check failed: no common query, counts disagree, or parts not spread out")


if __name__ == "__main__":
    main()
