"""How much slower each of k plain processes runs the same work at once than one process alone: the ceiling a
machine puts on any parallel efficiency over k worker processes, before Dask or distsm's scheduling add anything:

    python -m benchmarks run contention --processes 1 2 4 8 16 --workloads loop gather small

Workloads, each started in all k processes at one barrier:

* ``loop``: a pure Python loop (no memory traffic: the cores' own speed);
* ``gather``: random reads of a 256 MiB array (memory latency and bandwidth);
* ``small``: the CPU scaling benchmark's small batch (``cluster_scaling``'s 200 queries of 4-6 vertices on its
  2^18-vertex R-MAT graph, or the one ``--scale --edges --labels`` give, generated in each process), counted one
  query at a time on NumPy, as a worker would; with ``--backend cupy`` on the GPUs instead, process ``i`` alone on
  GPU ``i`` (modulo the GPUs there are) after a warm count of every query, as GPU workers are: there a small
  query's time is mostly its host's, so this shows what k busy host processes cost a multi-GPU batch.

A batch spread evenly over k workers finishes with its slowest worker, so ``one / max`` over the k processes bounds
the efficiency a k-worker batch can reach on this machine.  Every process's counts must agree.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import sys
import time
from typing import Any

import numpy as np

from benchmarks import meta
from benchmarks.common import add_rmat_options, parser, rmat_from

WORKLOADS = ("loop", "gather", "small")
#: The small workload's default graph: the CPU scaling benchmark's.
GRAPH: dict[str, Any] = {"scale": 18, "edges": 4_000_000, "labels": 64, "seed": 7}


def _workload(kind: str, backend: str, graph: list[str]) -> Any:
    """``kind``'s work as a function of no arguments returning something to compare across processes (``graph``:
    the R-MAT options of the small workload's data graph)."""
    if kind == "loop":
        return lambda: sum(range(100_000_000))
    if kind == "gather":
        a = np.arange(64 << 20, dtype=np.int32)
        idx = np.random.default_rng(0).integers(0, a.size, 8 << 20)
        return lambda: [int(a[idx].sum()) for _ in range(12)]
    import distsm
    from benchmarks.cluster_scaling import scaling_queries

    args = _graph_parser().parse_args(graph)
    data, _ = rmat_from(args)
    graphs, _ = scaling_queries(data, 200, [4, 6], args.seed + 1000, ("sparse", "dense"), "s")
    # Outside the timing: the index built, and on a GPU every query's kernels loaded and the memory pool grown, as
    # in a warm worker.
    for g in graphs if backend == "cupy" else graphs[:1]:
        distsm.count(data, g, backend=backend)
    return lambda: [distsm.count(data, g, backend=backend) for g in graphs]


def _graph_parser() -> argparse.ArgumentParser:
    """The small workload's graph options (defaults :data:`GRAPH`)."""
    p = argparse.ArgumentParser(add_help=False)
    add_rmat_options(p, **GRAPH)
    return p


def _child(kind: str, backend: str, graph: list[str], slot: int, gpus: int, barrier: Any, out: Any) -> None:
    if backend == "cupy":
        os.environ["CUDA_VISIBLE_DEVICES"] = str(slot % gpus)  # before CUDA starts in this process
    run = _workload(kind, backend, graph)
    barrier.wait()
    r0, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    answer = run()
    wall, r1 = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF)
    out.put({"wall_s": round(wall, 4), "user_s": round(r1.ru_utime - r0.ru_utime, 4), "answer": answer,
             "involuntary_switches": r1.ru_nivcsw - r0.ru_nivcsw, "pid": os.getpid()})


def measure(kind: str, k: int, backend: str = "numpy", gpus: int = 1, graph: list[str] | None = None
            ) -> list[dict[str, Any]]:
    """Each of ``k`` fresh processes' record of one ``kind`` workload run at once (spawned: nothing shared; on
    ``backend`` ``"cupy"`` process ``i`` on GPU ``i % gpus``; ``graph``: R-MAT options of the small workload)."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(k), ctx.Queue()
    procs = [ctx.Process(target=_child, args=(kind, backend, graph or [], i, gpus, barrier, out)) for i in range(k)]
    for p in procs:
        p.start()
    records = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return records


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "contention")
    add_rmat_options(p, **GRAPH)
    p.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    p.add_argument("--backend", choices=("numpy", "cupy"), default="numpy",
                   help="the small workload's backend (cupy: one GPU per process)")
    args = p.parse_args(argv)
    if args.processes[0] != 1:
        raise SystemExit("--processes must start at 1 (the baseline)")
    gpus = 1
    if args.backend == "cupy":
        from distsm.kernels import cuda_device_count

        gpus = cuda_device_count()
        if gpus == 0:
            raise SystemExit("--backend cupy needs a CUDA device")
    results: dict[str, list[dict[str, Any]]] = {}
    host = meta.machine()
    rmat = {k: getattr(args, k) for k in ("scale", "edges", "labels", "rmat_a", "seed")}
    graph = [f"--{k.replace('_', '-')}={v}" for k, v in rmat.items()]  # the children's options, as given here
    extra = {"cpus": os.cpu_count(), "backend": args.backend, "gpus": gpus if args.backend == "cupy" else 0,
             "graph": rmat}
    for kind in args.workloads:
        answers = None
        for k in args.processes:
            records = measure(kind, k, args.backend, gpus, graph)
            for r in records:
                answer = r.pop("answer")
                if answers is None:
                    answers = answer
                elif answer != answers:
                    raise SystemExit(f"{kind}: process {r['pid']} of {k} answered differently")
            walls = [r["wall_s"] for r in records]
            one = results[kind][0]["mean_s"] if kind in results else walls[0]
            row = {"processes": k, "mean_s": round(sum(walls) / k, 4), "max_s": max(walls), "min_s": min(walls),
                   "mean_over_one": round(sum(walls) / k / one, 3), "max_over_one": round(max(walls) / one, 3),
                   "efficiency_bound": round(one / max(walls), 3), "records": records}
            results.setdefault(kind, []).append(row)
            print(f"{kind} x{k}: mean {row['mean_s']:.2f} s ({row['mean_over_one']:.2f}x one), slowest "
                  f"{row['max_s']:.2f} s ({row['max_over_one']:.2f}x): efficiency at most {row['efficiency_bound']}",
                  flush=True)
            # Written after every row: a run cut short by a time limit keeps what it measured.
            path = meta.write("contention", {"workloads": results, **extra}, args.out, host)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
