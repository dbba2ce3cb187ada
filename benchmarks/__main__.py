"""``python -m benchmarks run SUITE [args]`` and ``python -m benchmarks report``.

Suites (each checks its answers before it reports a time, and writes its JSON to ``--out FILE``, by default
``benchmarks/results/<result>.json``; see benchmarks/common.py):

    hprd        NumPy engine vs igraph and networkx VF2 on the 200 HPRD queries   (benchmarks.hprd_cpu)
    gpu         GPU engine vs NumPy: HPRD batch, R-MAT queries, memory budget      (benchmarks.gpu_engine)
    synthetic   time per query size 4-32, dense and sparse, GPU and NumPy           (benchmarks.synthetic)
    symmetric   shared execution vs one search per edge, intra/inter split          (benchmarks.pbe_shared)
    scaling     Dask layer over 1/2/4 GPUs (--cpu for CPU workers)                  (benchmarks.cluster_scaling)
    dashboard   headless Chromium screenshot of the dashboard during a batch        (benchmarks.dashboard_screenshot)
    rdf         SPARQL BGPs on LUBM data against rdflib                              (benchmarks.rdf_lubm)
    outofcore   graph several times the device budget: out-of-core vs in-core/UM  (benchmarks.outofcore)
    balance     entry-parallel vs tiered (warp/block/split-row) GPU join kernels    (benchmarks.load_balance)
    peers       distsm vs gMatch, EGSM, RapidMatch, SubgraphMatching (given binaries)  (benchmarks.peers)
    profile     cProfile of the HPRD batch on one backend (GPU by default)          (benchmarks.profile_hprd_gpu)
    allocator   NumPy counts under glibc's default, Dask's nanny setting, and distsm's  (benchmarks.allocator)
    loading     SNAP text, binary reload and DataFrame vs pandas/pyarrow CSV readers (benchmarks.loading)
    dense-heavy dense 16/24/32-vertex queries chosen for 1e9-1e11 embeddings (then: peers) (benchmarks.dense_heavy)
    dense-suites  dense queries per decade of answers on generated graphs (then: peers) (benchmarks.dense_suites)
    trial-placement  light joins on the host and on the device: the host trial's allowance (benchmarks.trial_placement)
    filter-placement  light counts, the filter on the host or the device: its pool limit (benchmarks.filter_placement)
    trailing-bits  the trailing count by walked runs and by bit rows: words, entries, time (benchmarks.trailing_bits)
    batch       HPRD's 200 queries: one at a time vs the batched light stage, count_batch (benchmarks.batch_gpu)
    stages      median time of each explained stage of a count, per query            (benchmarks.explain_stages)
    slices      a heavy count whole and as 8 / 32 shared-plan slices in one process  (benchmarks.slice_overhead)
    index-memory  NumPy counts over the index in process memory vs memory-mapped     (benchmarks.index_memory)
    one-worker  one Dask worker vs in process on the scaling batches, interleaved     (benchmarks.one_worker)
    first-use   a fresh process's first heavy counts, with and without the process warm-up (benchmarks.first_use)
    contention  k plain processes running the same work at once against one alone   (benchmarks.contention)
    plan-share  the planner's sampling share for device plans, gMatch's and dense suites (benchmarks.plan_share)
    motifs      triangle, 4/5-clique, 4-cycle, diamond, ... on R-MAT: distsm vs G2Miner, 1/2 GPUs (benchmarks.motifs)

Arguments after SUITE go to the suite's script (``python -m benchmarks run symmetric --ks 4``).
"""

from __future__ import annotations

import importlib
import sys

SUITES = {
    "hprd": "benchmarks.hprd_cpu",
    "gpu": "benchmarks.gpu_engine",
    "synthetic": "benchmarks.synthetic",
    "symmetric": "benchmarks.pbe_shared",
    "scaling": "benchmarks.cluster_scaling",
    "dashboard": "benchmarks.dashboard_screenshot",
    "rdf": "benchmarks.rdf_lubm",
    "outofcore": "benchmarks.outofcore",
    "balance": "benchmarks.load_balance",
    "peers": "benchmarks.peers",
    "profile": "benchmarks.profile_hprd_gpu",
    "allocator": "benchmarks.allocator",
    "loading": "benchmarks.loading",
    "dense-heavy": "benchmarks.dense_heavy",
    "dense-suites": "benchmarks.dense_suites",
    "trial-placement": "benchmarks.trial_placement",
    "filter-placement": "benchmarks.filter_placement",
    "trailing-bits": "benchmarks.trailing_bits",
    "batch": "benchmarks.batch_gpu",
    "stages": "benchmarks.explain_stages",
    "slices": "benchmarks.slice_overhead",
    "index-memory": "benchmarks.index_memory",
    "one-worker": "benchmarks.one_worker",
    "first-use": "benchmarks.first_use",
    "contention": "benchmarks.contention",
    "plan-share": "benchmarks.plan_share",
    "motifs": "benchmarks.motifs",
    "paired": "benchmarks.paired",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv[0] == "report":
        from benchmarks.report import build

        print(f"wrote {build()}")
        return 0
    if argv[0] == "run" and len(argv) >= 2 and argv[1] in SUITES:
        module = importlib.import_module(SUITES[argv[1]])
        sys.argv = [f"benchmarks run {argv[1]}", *argv[2:]]
        module.main(argv[2:])
        return 0
    print(f"usage: python -m benchmarks run {{{','.join(SUITES)}}} [args] | report", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
