"""Small unlabelled motifs on a large R-MAT graph: distsm's unique counts against G2Miner's (one and several GPUs).

    python -m benchmarks run motifs [--scale 22] [--edges 16000000] [--labels 1] [--seed 0]
        [--patterns triangle 4-clique 5-clique 4-cycle diamond tailed-triangle 5-path] [--repeat 3]
        [--g2miner DIR] [--gpus 1 2] [--timeout 300] [--backend auto|numpy|cupy] [--csr-dir DIR]
        [--no-warmup] [--out FILE]

The data graph is ``rmat_graph(scale, edges, vertex_labels=labels, edge_labels=1, seed, a=0.57, b=0.19, c=0.19)``
(undirected, simple).  Every query vertex has label 0; with ``--labels L > 1`` that is the most frequent Zipf
label.  distsm counts each pattern with ``unique=True`` (each subgraph once, edge-induced: the semantics of
G2Miner's counts): the data graph is loaded on the device by a first count of an edge query (timed apart), then
each pattern is counted ``--repeat`` times (a device synchronise before and after each, ``time.perf_counter``;
every time kept, the median and the first reported), past ``--timeout`` seconds a count is "capped"; then
``distsm.explain`` once records the path and its reason (its count is checked too).  ``distsm.warmup`` runs first
on a device backend (``--no-warmup`` skips it).

G2Miner (github chenxuhao/GraphMiner at 2a76e3f6, built by the user from its public source with the patches and make
variables the project's shared notes give for CUDA 13 and sm_90; no peer code, patch or build recipe lives in this
repository; ``--g2miner DIR`` holds the binaries ``tc_gpu_base``, ``tc_multigpu``, ``clique_gpu_base``,
``clique_multigpu``, ``sgl_gpu_base`` and ``sgl_multigpu``), read from its source:

* Input (``include/graph.h``, ``src/common/graph.cc``): a path prefix ``P``; ``P.meta.txt`` is whitespace-separated
  ``n nnz vid_size eid_size vlabel_size elabel_size max_degree feat_len num_vertex_classes num_edge_classes``
  (read with ``>>``; vid_size must be 4, eid_size 8, vlabel_size 1; elabel_size is not checked, 2 written here;
  ``assert(0 < max_degree < n)``); ``P.vertex.bin`` is ``int64[n+1]`` row offsets; ``P.edge.bin`` is ``int32[nnz]``
  column ids, raw little-endian, no header.  The CSR must hold both directions of every edge (nnz = 2m), no self
  loops, no repeats, each row sorted by id (the kernels break out of sorted rows and intersect them; the triangle
  app says it assumes sorted rows).  ``max_degree`` sizes per-warp buffers, so it must be exact or larger.  Vertex
  labels would be ``P.vlabel.bin`` (uint8[n]), but triangle, clique and sgl construct the graph without labels:
  none of these apps matches labels.  With ``--labels > 1`` G2Miner gets the subgraph induced by the query's label
  (label 0, renumbered): a pattern whose every vertex has label 0 occurs there exactly as in the labelled graph, so
  the counts compare as they are; writing that subgraph is not timed on either side.
* Binaries and arguments: ``tc_gpu_base P`` / ``tc_multigpu P NGPU`` (triangle); ``clique_gpu_base P K`` /
  ``clique_multigpu P K NGPU`` (k-clique, k = 4..8); ``sgl_gpu_base P NAME`` / ``sgl_multigpu P NAME NGPU`` with
  NAME ``rectangle`` (4-cycle) or ``diamond`` (the multi-GPU diamond only after patch 0002; upstream it prints 0).
  The GPU count is that argument (devices 0..NGPU-1); with fewer devices present the binary prints ``Only N GPUs
  available`` and runs on N, which is caught here.  sgl's GPU kernels are rectangle, diamond, house and pentagon
  only, and any other name silently runs the diamond kernel; tailed triangle and 5-path (``tailedtriangle``,
  ``5path``: 5 vertices, 4 edges) exist only in the CPU ``sgl_omp_base``, so they have no G2Miner GPU column.
* Output: the count line ``total_num_triangles = N``, ``num_K-cliques = N`` or ``total_num = N``; one GPU prints
  its kernel time (a host timer around the launch and its synchronise, the graph already on the device) as
  ``runtime [gpu_base] = S sec`` (triangle), ``runtime [gpu] = S sec`` (clique), ``runtime [cuda_base] = S sec``
  (sgl); several GPUs print
  ``runtime[gpuI] = S sec`` per GPU and ``runtime = S sec`` (sgl: ``Time on GPU execution, runtime = S sec``),
  host time around all GPUs' kernels, after the copies.  The wall time of the whole process (graph read,
  orientation, copies) is recorded too.  Each G2Miner configuration runs ``--repeat`` times, in a fresh process.

The graph is written in that format (:func:`write_g2miner_csr`, from the distsm Graph's ``indptr`` and ``neighbors``,
checked symmetric, sorted and simple first) to a temporary folder, or ``--csr-dir``.  distsm runs every pattern
first, then hands its device memory back, then G2Miner runs.  Check: wherever both finished, distsm's count must
equal every G2Miner run's count (``agree``; a disagreement is printed loudly and listed under ``disagreements``).
JSON (``benchmarks/results/motifs.json`` unless ``--out``, written after each stage): the graph, per pattern the
count, distsm's times, path and reason, G2Miner's runs per GPU count, and ``distsm_over_g2miner_1gpu_kernel`` (distsm's
median over G2Miner's median one-GPU kernel time).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common, meta
from benchmarks.generators import rmat_graph
from distsm.semantics import Semantics
from distsm.vocabulary import BACKENDS

RESULT = "motifs"
G2MINER_COMMIT = "2a76e3f6"
#: Pattern name -> (vertices, edges); names as on the command line.
PATTERNS: dict[str, tuple[int, list[tuple[int, int]]]] = {
    "triangle": (3, [(0, 1), (1, 2), (0, 2)]),
    "4-clique": (4, [(i, j) for i in range(4) for j in range(i + 1, 4)]),
    "5-clique": (5, [(i, j) for i in range(5) for j in range(i + 1, 5)]),
    "4-cycle": (4, [(0, 1), (1, 2), (2, 3), (0, 3)]),
    "diamond": (4, [(0, 1), (1, 2), (2, 3), (0, 3), (0, 2)]),
    "tailed-triangle": (4, [(0, 1), (1, 2), (0, 2), (0, 3)]),
    "5-path": (5, [(0, 1), (1, 2), (2, 3), (3, 4)]),
}
#: Pattern -> (one-GPU argv after the prefix, multi-GPU binary and argv after the prefix before NGPU).
G2MINER: dict[str, tuple[str, list[str], str, list[str]]] = {
    "triangle": ("tc_gpu_base", [], "tc_multigpu", []),
    "4-clique": ("clique_gpu_base", ["4"], "clique_multigpu", ["4"]),
    "5-clique": ("clique_gpu_base", ["5"], "clique_multigpu", ["5"]),
    "4-cycle": ("sgl_gpu_base", ["rectangle"], "sgl_multigpu", ["rectangle"]),
    "diamond": ("sgl_gpu_base", ["diamond"], "sgl_multigpu", ["diamond"]),
}
UNSUPPORTED = ("G2Miner's sgl GPU kernels are rectangle, diamond, house and pentagon only (any other name runs the "
               "diamond kernel); this pattern is in its CPU sgl_omp_base only")

_NUM = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
_COUNT = re.compile(r"^(?:total_num_triangles|num_\d+-cliques|total_num) = (\d+)\s*$", re.MULTILINE)
_KERNEL_ONE = re.compile(r"runtime \[(\w+)\] = " + _NUM + r" sec")
_KERNEL_MANY = re.compile(r"(?<![\w\]])runtime = " + _NUM + r" sec")
_PER_GPU = re.compile(r"runtime\[gpu(\d+)\] = " + _NUM + r" sec")
_FEWER = re.compile(r"Only (\d+) GPUs available")


def pattern_graph(name: str) -> Any:
    """The pattern ``name`` as a distsm Graph, every vertex and edge label 0."""
    import distsm

    n, edges = PATTERNS[name]
    return distsm.Graph.from_edges(np.asarray(edges, np.int64), n=n, vertex_labels=np.zeros(n, np.int64))


def data_graph(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The R-MAT data graph and its description for the JSON."""
    t = time.perf_counter()
    data = rmat_graph(args.scale, args.edges, vertex_labels=args.labels, edge_labels=1, seed=args.seed,
                      a=0.57, b=0.19, c=0.19)
    seconds = time.perf_counter() - t
    labels = np.asarray(data.vertex_labels)
    info = {"generator": "rmat", "scale": args.scale, "edges_requested": args.edges, "vertices": data.n,
            "edges": data.m, "max_degree": int(data.degrees.max()) if data.n else 0, "labels": args.labels,
            "rmat_abc": [0.57, 0.19, 0.19], "seed": args.seed, "generate_s": round(seconds, 3),
            "query_vertex_label": 0, "label_0_share": round(float(np.mean(labels == 0)), 4) if data.n else None}
    print(f"graph: n={data.n} m={data.m} max degree {info['max_degree']}, generated in {seconds:.2f} s"
          + (f"; query label 0 covers {info['label_0_share']:.1%} of vertices" if args.labels > 1 else ""),
          flush=True)
    return data, info


# ---------------------------------------------------------------------------------------------------- G2Miner input
def check_csr(graph: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr int64, neighbors int32)`` of ``graph`` once it is shown to be what G2Miner assumes: undirected with
    both directions stored, rows strictly increasing (sorted, no repeats), no self loops.  distsm sorts rows by
    (edge label, id), so more than one edge label would break the order; the check catches that."""
    if graph.directed:
        raise SystemExit("G2Miner's apps take undirected graphs only")
    ptr = np.ascontiguousarray(graph.indptr, dtype=np.int64)
    nbr = np.ascontiguousarray(graph.neighbors, dtype=np.int32)
    nnz = nbr.shape[0]
    if nnz != 2 * graph.m or ptr[-1] != nnz:
        raise SystemExit(f"CSR holds {nnz} entries, expected both directions of {graph.m} edges")
    rising = np.diff(nbr.astype(np.int64)) > 0
    starts = ptr[1:-1]
    starts = starts[(starts > 0) & (starts < nnz)]
    rising[starts - 1] = True  # the step from one row's last entry to the next row's first is not compared
    if not rising.all():
        raise SystemExit("a CSR row is not strictly increasing (unsorted, repeated, or several edge labels)")
    rows = np.repeat(np.arange(graph.n, dtype=np.int32), np.diff(ptr))
    if np.any(rows == nbr):
        raise SystemExit("the graph has a self loop")
    return ptr, nbr


def write_g2miner_csr(graph: Any, prefix: str | Path) -> dict[str, Any]:
    """Write ``graph`` as G2Miner's binary CSR at ``prefix`` (``prefix.meta.txt``, ``.vertex.bin``, ``.edge.bin``;
    format in the module docstring); returns the files, nnz, max degree and seconds."""
    t = time.perf_counter()
    ptr, nbr = check_csr(graph)
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    max_degree = int(np.diff(ptr).max()) if graph.n else 0
    if not 0 < max_degree < graph.n:
        raise SystemExit(f"G2Miner asserts 0 < max_degree < n; here max_degree={max_degree}, n={graph.n}")
    ptr.astype("<i8", copy=False).tofile(f"{prefix}.vertex.bin")
    nbr.astype("<i4", copy=False).tofile(f"{prefix}.edge.bin")
    # n, nnz, sizeof vid/eid/vlabel/elabel, max degree, feature length, vertex classes, edge classes (0: none).
    Path(f"{prefix}.meta.txt").write_text(f"{graph.n}\n{nbr.shape[0]}\n4 8 1 2\n{max_degree}\n0\n0\n0\n")
    return {"prefix": str(prefix), "nnz": int(nbr.shape[0]), "max_degree": max_degree,
            "write_s": round(time.perf_counter() - t, 3)}


def query_label_subgraph(data: Any) -> Any:
    """The subgraph of ``data`` induced by its vertices of label 0 (the label of every query vertex), renumbered
    0..n0-1 in id order, unlabelled: what G2Miner counts in place of the labelled graph."""
    import distsm

    keep = np.asarray(data.vertex_labels) == 0
    new_id = np.cumsum(keep) - 1
    src, dst = np.asarray(data.edge_src), np.asarray(data.edge_dst)
    both = keep[src] & keep[dst]
    return distsm.Graph.from_edge_arrays(new_id[src[both]], new_id[dst[both]], n=int(keep.sum()))


# ---------------------------------------------------------------------------------------------------------- distsm
def warm(args: argparse.Namespace, be: Any) -> float | None:
    """``distsm.warmup`` on a device backend (kernels compiled into the cache before any timing); its seconds."""
    import distsm

    if args.no_warmup or not be.on_device or not hasattr(distsm, "warmup"):
        return None
    t = time.perf_counter()
    distsm.warmup(be.name)
    return round(time.perf_counter() - t, 3)


def load(data: Any, be: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Index ``data`` on the backend by counting an edge query once (with one label, its count must be m)."""
    import distsm

    be.synchronize()
    t = time.perf_counter()
    got = distsm.count(data, distsm.Graph.from_edges([(0, 1)], n=2), unique=True, backend=be.name)
    be.synchronize()
    seconds = time.perf_counter() - t
    if args.labels == 1 and got != data.m:
        raise SystemExit(f"edge query counted {got}, the graph has {data.m} edges")
    print(f"distsm ({be.name}): graph loaded by an edge count ({got}) in {seconds:.3f} s", flush=True)
    return {"edge_count": int(got), "seconds": round(seconds, 4)}


def time_distsm(data: Any, name: str, be: Any, args: argparse.Namespace) -> dict[str, Any]:
    """``--repeat`` timed unique counts of pattern ``name`` and one explain; status ok, capped or unstable."""
    import distsm

    query = pattern_graph(name)
    times: list[float] = []
    counts: list[int] = []
    for _ in range(args.repeat):
        be.synchronize()  # nothing queued from before may land in this count's time
        t = time.perf_counter()
        try:
            counts.append(int(distsm.count(data, query, unique=True, backend=be.name, timeout=args.timeout)))
        except TimeoutError:
            return {"status": "capped", "cap_s": args.timeout, "times_s": times, "counts": counts}
        be.synchronize()
        times.append(time.perf_counter() - t)
    found = {"count": counts[0], "counts": counts, "times_s": [round(s, 5) for s in times],
             "median_s": round(statistics.median(times), 5), "first_s": round(times[0], 5)}
    stable = len(set(counts)) == 1
    if not args.no_explain:
        ex = distsm.explain(data, query, unique=True, backend=be.name)
        stable = stable and ex.count == counts[0]
        found.update(path=ex.path, reason=ex.reason, explain_count=ex.count)
    return {"status": "ok" if stable else "unstable", **found}


def distsm_side(data: Any, args: argparse.Namespace, record: dict[str, Any], save: Any) -> None:
    """Warm up, load the graph, then count every pattern (checkpointing the JSON after each)."""
    from distsm.kernels import get_backend

    be = get_backend(args.backend)
    record["distsm"] = {"backend": be.name, "warmup_s": warm(args, be), "gpus_used": 1 if be.on_device else 0}
    record["distsm"]["load"] = load(data, be, args)
    for name in args.patterns:
        res = time_distsm(data, name, be, args)
        record["patterns"][name]["distsm"] = res
        print(f"distsm {name}: {res['status']} count {res.get('count')} median {res.get('median_s')} s "
              f"(first {res.get('first_s')} s) path {res.get('path')}", flush=True)
        save(False)
    if be.on_device:  # hand the device back so G2Miner's processes find the memory free
        be.release(data)
        be.release_memory()
        record["distsm"]["device_free_bytes_after_release"] = be.available_bytes()


def cluster_side(data: Any, args: argparse.Namespace, record: dict[str, Any], save: Any) -> None:
    """distsm on a local cluster of each GPU count in ``--gpus`` above one (one worker per GPU, each holding the
    whole graph: one part, no METIS): setup seconds (partition store, loading, an edge count), then each pattern
    ``--repeat`` times as one-query batches, with the distribution the cluster chose (a heavy search is cut into
    ranges of its tasks over the workers)."""
    from distributed import Client

    import distsm
    from distsm.cluster import local

    for n in [g for g in args.gpus if g > 1]:
        t = time.perf_counter()
        with local(gpus=n, dashboard_address=None) as cluster, Client(cluster) as client:
            started = time.perf_counter()
            with distsm.Matcher(data, cluster=client, backend=args.backend, partitions=distsm.Partitioning(1)) as m:
                ready = time.perf_counter()
                [edge] = m.submit([distsm.Graph.from_edges([(0, 1)], n=2)], semantics=UNIQUE,
                                  timeout=args.timeout).results()
                setup = {"seconds": round(time.perf_counter() - t, 3), "edge_count": edge.count, "workers": n,
                         "cluster_start_s": round(started - t, 3), "store_s": round(m.partition_seconds, 3),
                         "matcher_s": round(ready - started, 3),
                         "load_s": [round(r["seconds"], 3) for r in m.load_report],
                         "first_count_s": round(time.perf_counter() - ready, 3)}
                record.setdefault("distsm_cluster", {})[str(n)] = setup
                print(f"distsm on {n} GPUs: ready in {setup['seconds']} s ({setup})", flush=True)
                default = m.inter_slices
                for slices in [None, *args.inter_slices]:
                    # Matcher(inter_slices=...) for this many slices of each heavy search, on the same cluster.
                    m.inter_slices = default if slices is None else slices
                    key = str(n) if slices is None else f"{n}, {slices} slices"
                    for name in args.patterns:
                        record["patterns"][name].setdefault("distsm_cluster", {})[key] = res = \
                            _cluster_pattern(m, name, args)
                        res["inter_slices"] = m.inter_slices
                        print(f"distsm {name} on {key} GPUs: {res['status']} count {res.get('count')} median "
                              f"{res.get('median_s')} s ({res.get('distribution')})", flush=True)
                        save(False)


#: Every subgraph counted once (the patterns' automorphic maps not apart), as G2Miner counts.
UNIQUE = Semantics(unique=True)


def _cluster_pattern(m: Any, name: str, args: argparse.Namespace) -> dict[str, Any]:
    """``--repeat`` timed one-query batches of pattern ``name`` on matcher ``m`` (each query's first time apart)."""
    times, counts, last = [], [], None
    for _ in range(args.repeat + 1):  # the first also loads the search's kernels on every worker
        t = time.perf_counter()
        [last] = m.submit([pattern_graph(name)], semantics=UNIQUE, timeout=args.timeout).results()
        if not last.ok:
            return {"status": last.status, "error": str(last.error)}
        times.append(time.perf_counter() - t)
        counts.append(int(last.count))
    return {"status": "ok" if len(set(counts)) == 1 else "unstable", "count": counts[0], "counts": counts,
            "first_s": round(times[0], 5), "times_s": [round(x, 5) for x in times[1:]],
            "median_s": round(statistics.median(times[1:]), 5), "distribution": last.distribution,
            "reason": last.distribution_reason, "workers": last.workers}


# --------------------------------------------------------------------------------------------------------- G2Miner
def g2miner_argv(bin_dir: Path, name: str, prefix: str, gpus: int) -> list[str] | None:
    """The command line of pattern ``name`` on ``gpus`` GPUs (``*_gpu_base`` for one, ``*_multigpu`` for more)."""
    if name not in G2MINER:
        return None
    one, one_args, many, many_args = G2MINER[name]
    if gpus == 1:
        return [str(bin_dir / one), prefix, *one_args]
    return [str(bin_dir / many), prefix, *many_args, str(gpus)]


def _text(out: str | bytes | None) -> str:
    # TimeoutExpired carries bytes even when the run asked for text.
    return out.decode(errors="replace") if isinstance(out, bytes) else (out or "")


def parse_g2miner(text: str, gpus: int) -> dict[str, Any]:
    """Count, kernel seconds and per-GPU seconds from one run's stdout."""
    counts = _COUNT.findall(text)
    if gpus == 1:
        kernel = _KERNEL_ONE.findall(text)
        kernel_s = float(kernel[-1][1]) if kernel else None
    else:
        kernel = _KERNEL_MANY.findall(text)
        kernel_s = float(kernel[-1]) if kernel else None
    per_gpu = {int(i): float(s) for i, s in _PER_GPU.findall(text)}
    fewer = _FEWER.search(text)
    return {"count": int(counts[-1]) if counts else None, "kernel_s": kernel_s,
            "per_gpu_s": [per_gpu[i] for i in sorted(per_gpu)] or None,
            "fewer_gpus": int(fewer.group(1)) if fewer else None}


def run_g2miner(argv: list[str], gpus: int, timeout: float) -> dict[str, Any]:
    """One G2Miner process: status (ok, timeout, error, fewer-gpus), count, kernel and wall seconds."""
    t = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return {"status": "timeout", "wall_s": timeout, "tail": _text(e.stdout)[-2000:]}
    wall = time.perf_counter() - t
    out = parse_g2miner(p.stdout, gpus)
    status = "ok"
    if out["fewer_gpus"] is not None:
        status = "fewer-gpus"  # it ran on fewer devices than asked: not a time for this GPU count
    elif p.returncode != 0 or out["count"] is None or out["kernel_s"] is None:
        status = "error"
    elif gpus > 1 and len(out["per_gpu_s"] or []) != gpus:
        status = "fewer-gpus"
    rec = {"status": status, "returncode": p.returncode, "wall_s": round(wall, 4), **out}
    if status != "ok":
        rec["tail"] = (p.stdout[-3000:] + "\n--- stderr ---\n" + p.stderr[-2000:])
    return rec


def g2miner_config(bin_dir: Path, name: str, prefix: str, gpus: int, args: argparse.Namespace,
                   available: int) -> dict[str, Any]:
    """``--repeat`` runs of one pattern on ``gpus`` GPUs, summarised (stops at the first failed run)."""
    argv = g2miner_argv(bin_dir, name, prefix, gpus)
    if argv is None:
        return {"status": "unsupported", "why": UNSUPPORTED}
    if not Path(argv[0]).is_file():
        return {"status": "missing", "binary": argv[0]}
    if gpus > available:
        return {"status": "skipped", "why": f"{available} GPUs present", "argv": argv}
    runs = []
    for _ in range(args.repeat):
        runs.append(run_g2miner(argv, gpus, args.timeout))
        if runs[-1]["status"] != "ok":
            break
    ok = [r for r in runs if r["status"] == "ok"]
    summary: dict[str, Any] = {"argv": argv, "runs": runs, "status": runs[-1]["status"]}
    if ok and len(ok) == len(runs):
        counts = {r["count"] for r in ok}
        summary.update(status="ok" if len(counts) == 1 else "unstable", count=ok[0]["count"],
                       kernel_median_s=statistics.median(r["kernel_s"] for r in ok),
                       wall_median_s=round(statistics.median(r["wall_s"] for r in ok), 4))
    return summary


def g2miner_side(data: Any, args: argparse.Namespace, record: dict[str, Any], save: Any) -> None:
    """Write the CSR, then run every supported pattern on every GPU count in ``--gpus``."""
    from distsm.kernels import cuda_device_count

    info = record["g2miner"]
    if args.labels > 1:
        data = query_label_subgraph(data)
        info["input"] = (f"the subgraph induced by label 0 ({data.n} vertices, {data.m} edges): G2Miner's apps read "
                         "no vertex labels")
    bin_dir = Path(args.g2miner)
    build = bin_dir / "BUILD_INFO.txt"
    info.update(dir=str(bin_dir.resolve()), build=build.read_text() if build.is_file() else None,
                gpus_present=cuda_device_count())
    with tempfile.TemporaryDirectory(prefix="g2miner-csr-") as tmp:
        folder = Path(args.csr_dir) if args.csr_dir else Path(tmp)
        info["csr"] = write_g2miner_csr(data, folder / "graph")
        print(f"G2Miner CSR written in {info['csr']['write_s']} s to {info['csr']['prefix']}", flush=True)
        for name in args.patterns:
            per = record["patterns"][name]["g2miner"] = {}
            for gpus in args.gpus:
                res = per[str(gpus)] = g2miner_config(bin_dir, name, info["csr"]["prefix"], gpus, args,
                                                      info["gpus_present"])
                print(f"G2Miner {name} on {gpus} GPU(s): {res['status']} count {res.get('count')} kernel "
                      f"{res.get('kernel_median_s')} s wall {res.get('wall_median_s')} s", flush=True)
                save(False)


# ----------------------------------------------------------------------------------------------------- check/report
def judge(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Per pattern: ``agree`` (None where there is nothing to compare) and the distsm/G2Miner ratio; returns the
    disagreements, each printed loudly."""
    bad = []
    for name, rec in record["patterns"].items():
        mine = rec.get("distsm", {})
        for n, res in rec.get("distsm_cluster", {}).items():
            if res.get("status") == "ok" and mine.get("status") == "ok":
                if res["count"] != mine["count"]:
                    bad.append({"pattern": name, "distsm": mine["count"], f"distsm_{n}gpus": res["count"]})
                    print(f"!!! DISAGREEMENT on {name}: distsm {mine['count']}, on {n} GPUs {res['count']} !!!")
                res["speedup"] = round(mine["median_s"] / res["median_s"], 3)
        theirs = {g: r for g, r in rec.get("g2miner", {}).items() if r.get("status") in ("ok", "unstable")}
        rec["count"] = mine.get("count") if mine.get("status") == "ok" else None
        rec["count_source"] = "distsm" if rec["count"] is not None else None
        if rec["count"] is None or not theirs:
            rec["agree"] = None
            found = {c.get("count") for c in theirs.values() if c.get("status") == "ok"}
            if rec["count"] is None and len(found) == 1:  # distsm did not finish: G2Miner's count, unchecked
                rec["count"], rec["count_source"] = found.pop(), "g2miner (unchecked)"
            continue
        # Every finished run counts, not only the summary: an unstable peer disagrees with itself somewhere.
        other = {g: sorted({r["count"] for r in c["runs"] if r["status"] == "ok"}) for g, c in theirs.items()}
        rec["agree"] = all(v == [rec["count"]] for v in other.values())
        if not rec["agree"]:
            bad.append({"pattern": name, "distsm": rec["count"], "g2miner": other})
            print(f"!!! DISAGREEMENT on {name}: distsm {rec['count']}, G2Miner {other} !!!", flush=True)
        one = theirs.get("1")
        if rec["agree"] and one and one.get("kernel_median_s"):
            rec["distsm_over_g2miner_1gpu_kernel"] = round(mine["median_s"] / one["kernel_median_s"], 4)
            rec["distsm_over_g2miner_1gpu_wall"] = round(mine["median_s"] / one["wall_median_s"], 4)
    return bad


def print_table(record: dict[str, Any], gpus: list[int]) -> None:
    """One line per pattern: count, distsm median, G2Miner kernel median per GPU count, ratio, agreement."""
    head = f"{'pattern':16s} {'count':>20s} {'distsm s':>10s} " + " ".join(f"{f'g2m {g}gpu s':>11s}" for g in gpus)
    print(head + f" {'ratio':>8s}  agree")
    for name, rec in record["patterns"].items():
        cells = []
        for g in gpus:
            r = rec.get("g2miner", {}).get(str(g), {})
            cells.append(f"{r['kernel_median_s']:11.4f}" if r.get("kernel_median_s") is not None
                         else f"{r.get('status', '-'):>11s}")
        d = rec.get("distsm", {})
        med = f"{d['median_s']:10.4f}" if d.get("median_s") is not None else f"{d.get('status', '-'):>10s}"
        ratio = rec.get("distsm_over_g2miner_1gpu_kernel")
        spread = " ".join(f"{n} GPUs {r.get('median_s')} s ({r.get('speedup')}x)"
                          for n, r in rec.get("distsm_cluster", {}).items())
        print(f"{name:16s} {str(rec.get('count')):>20s} {med} " + " ".join(cells)
              + f" {ratio if ratio is not None else '-':>8}  {rec.get('agree')}  {spread}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = common.parser(__doc__, RESULT)
    p.add_argument("--scale", type=int, default=22, help="2**SCALE vertices (default 22)")
    p.add_argument("--edges", type=int, default=16_000_000, help="distinct edges (default 16000000)")
    p.add_argument("--labels", type=int, default=1, help="Zipf vertex labels (default 1: unlabelled)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--patterns", nargs="+", default=list(PATTERNS), choices=list(PATTERNS))
    p.add_argument("--repeat", type=int, default=3, help="timed counts per pattern, and runs per G2Miner config")
    p.add_argument("--g2miner", metavar="DIR", help="folder of G2Miner's binaries (built by the user)")
    p.add_argument("--gpus", type=int, nargs="+", default=[1], help="G2Miner GPU counts (default 1)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per count and per G2Miner run")
    p.add_argument("--backend", default="auto", choices=BACKENDS, help="distsm backend (default auto)")
    p.add_argument("--csr-dir", help="write (and keep) G2Miner's CSR here instead of a temporary folder")
    p.add_argument("--no-warmup", action="store_true", help="skip distsm.warmup")
    p.add_argument("--no-explain", action="store_true", help="skip the explained count of each pattern")
    p.add_argument("--cluster", action="store_true",
                   help="also count on a local cluster of each GPU count in --gpus above one (distsm.Matcher)")
    p.add_argument("--inter-slices", type=int, nargs="*", default=[],
                   help="with --cluster, also count with each of these numbers of slices per heavy search (the "
                        "matcher's inter_slices; default: its own, four per worker)")
    args = p.parse_args(argv)
    if args.repeat < 1 or any(g < 1 for g in args.gpus):
        p.error("--repeat and --gpus take positive numbers")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    data, graph_info = data_graph(args)
    record: dict[str, Any] = {
        "graph": graph_info, "semantics": "unique=True: each edge-induced subgraph once (G2Miner's counts)",
        "patterns": {name: {"vertices": PATTERNS[name][0], "edges": len(PATTERNS[name][1])}
                     for name in args.patterns},
        "g2miner": {"commit": G2MINER_COMMIT, "given": bool(args.g2miner)}, "complete": False}
    machine = meta.machine()

    def save(complete: bool) -> Path:
        record["complete"] = complete
        return meta.write(RESULT, record, args.out, machine_info=machine)

    distsm_side(data, args, record, save)
    if args.cluster:
        cluster_side(data, args, record, save)
    if args.g2miner:
        g2miner_side(data, args, record, save)
    record["disagreements"] = judge(record)
    path = save(True)
    print_table(record, args.gpus if args.g2miner and args.labels == 1 else [])
    compared = [n for n, r in record["patterns"].items() if r.get("agree") is not None]
    if record["disagreements"]:
        print(f"COUNTS DISAGREE on {[d['pattern'] for d in record['disagreements']]}; wrote {path}")
        raise SystemExit(1)  # the JSON and table are out; a script running the suite must still see the failure
    print(f"counts agree on {len(compared)} of {len(record['patterns'])} patterns (the others had nothing to "
          f"compare); wrote {path}" if compared else f"no count compared with G2Miner; wrote {path}")
