"""Two (or more) trees of distsm timed side by side, query by query: a before/after that the machine's moods do not
decide.

    python -m benchmarks run paired --tree base=/path/to/base-site --tree new=/path/to/new-site[:NAME=VALUE,...] \
        [--tree base2=/path/to/base-site] --hprd tests/data/hprd --gmatch-test DIR [--dense-heavy DIR ...] \
        --rounds 20 --backend cupy [--processes 3] [--stages] [--cpus 2]

Each tree runs in ``--processes`` child processes of its own (its site folder first on ``PYTHONPATH``, its
``NAME=VALUE`` environment variables set), each holding the suite's data graph; the driver, which imports no
distsm, sends every query to every child in turn, in an order of trees that rotates from query to query, so that
the trees' counts of one query are back to back (milliseconds apart) and a slow spell of the machine (whole rounds
of a suite ran 20-60% slow on the GPU machine) falls on all of them alike.  A child reads the query file, then times
``distsm.count`` alone, as the peer benchmark's worker does.  After one warm-up pass, ``--rounds`` timed passes.  A
tree's time for a query in a round is the mean over its processes: three processes of one tree, run one after
another on the GPU machine, averaged 0.88, 1.24 and 1.32 ms a light HPRD count, a spread that one process per tree
would read as a difference between trees.  ``--cpus`` pins every child (and the driver) to the CPUs given, so that
no tree is timed on a faster core than another's: one tree's light HPRD counts took 731-1368 us (median) by core in
one call on the GPU machine.  With ``--stages`` every child also times the count's stages
(:mod:`benchmarks.paired_child`), and each stage's paired difference is reported: where a tree's extra time goes.

Per suite and tree against the first: each query's ratio is the median over rounds of its paired ratios (the two
counts of one round), and the ratio of least times; summed least times; how many queries are over ``--bound``.  A
third tree that is the first again (``base2``) shows what the measurement resolves: its queries over the bound
are noise.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks import meta

#: The child's program (benchmarks/paired_child.py), run with ``-c`` so that nothing of this folder shadows a module.
_CHILD = (Path(__file__).resolve().parent / "paired_child.py").read_text()


class Child:
    """One tree's process, counting the queries it is sent on one data graph (``stages``: timing each stage)."""

    def __init__(self, site: str, env: dict[str, str], data: str, backend: str, stages: bool = False,
                 cpus: frozenset[int] | None = None):
        path = os.pathsep.join([site, os.environ.get("PAIRED_DEPS", "")]).rstrip(os.pathsep)
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD, data, backend, *(["--stages"] if stages else [])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/",
                                     env={**os.environ, **env, "PYTHONPATH": path},
                                     preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        if self.stdout.readline().strip() != "ready":
            raise SystemExit(f"a child for {site} did not start")

    def count(self, query: str) -> dict[str, Any]:
        """``{"seconds", "count", "stages"}`` of one count of the query file ``query``."""
        self.stdin.write(query + "\n")
        self.stdin.flush()
        line = self.stdout.readline()
        if not line:
            raise SystemExit(f"a child stopped on {query}")
        return json.loads(line)

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(timeout=60)


def suites(args: Any) -> dict[str, tuple[str, list[str]]]:
    """Suite name -> (data graph file, query files)."""
    out = {}
    if args.hprd:
        d = Path(args.hprd).resolve()
        names = sorted((d / "query_graph").glob("*.graph"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
        out["hprd"] = (str(d / "data_graph" / "HPRD.graph"), [str(p) for p in names][:args.limit])
    if args.gmatch_test:
        d = Path(args.gmatch_test).resolve()
        names = sorted((d / "query_graph").glob("Q_*.graph"), key=lambda p: int(p.stem.split("_")[1]))
        out["gmatch-test"] = (str(d / "data.graph"), [str(p) for p in names][:args.limit])
    for d in map(Path, args.dense_heavy or ()):
        manifest = json.loads((d / "manifest.json").read_text())
        out[f"dense-{d.resolve().name}"] = (str((d / manifest["data"]).resolve()),
                                           [str((d / q["path"]).resolve()) for q in manifest["queries"]][:args.limit])
    return out


def measure(trees: dict[str, tuple[str, dict[str, str]]], data: str, queries: list[str], backend: str,
            rounds: int, processes: int = 1, stages: bool = False,
            cpus: frozenset[int] | None = None) -> tuple[dict, dict]:
    """Tree -> query file -> its seconds in each round, the mean over the tree's ``processes`` children (the
    warm-up pass not kept), and with ``stages`` tree -> query file -> stage -> its seconds in each round (likewise);
    every count must agree."""
    children = {name: [Child(site, env, data, backend, stages, cpus) for _ in range(processes)]
                for name, (site, env) in trees.items()}
    names = list(children)
    seconds: dict[str, dict[str, list[float]]] = {name: {q: [] for q in queries} for name in names}
    staged: dict[str, dict[str, dict[str, list[float]]]] = {name: {q: {} for q in queries} for name in names}
    try:
        for r in range(rounds + 1):
            for i, q in enumerate(queries):
                turn = (r + i) % len(names)
                counts = set()
                for name in names[turn:] + names[:turn]:
                    done = [child.count(q) for child in children[name]]
                    counts |= {d["count"] for d in done}
                    if r:
                        seconds[name][q].append(statistics.fmean(d["seconds"] for d in done))
                        for stage in {k for d in done for k in d["stages"]}:
                            staged[name][q].setdefault(stage, []).append(
                                statistics.fmean(d["stages"].get(stage, 0.0) for d in done))
                if len(counts) != 1:
                    raise SystemExit(f"{q}: the trees disagree ({sorted(counts)})")
    finally:
        for group in children.values():
            for child in group:
                child.close()
    return seconds, staged


def stage_diffs(seconds: dict[str, dict[str, list[float]]], staged: dict) -> dict[str, dict[str, list[float]]]:
    """Every tree after the first against the first, per stage (and ``count``, the whole): ``[first's mean us, this
    tree's, mean over queries of the median over rounds of the paired difference]``.  A stage one tree lacks counts
    0 there."""
    names = list(seconds)
    first = names[0]
    queries = list(seconds[first])

    def rounds(name: str, q: str, stage: str) -> list[float]:
        if stage == "count":
            return seconds[name][q]
        return staged[name][q].get(stage, [0.0] * len(seconds[name][q]))

    out = {}
    for name in names[1:]:
        keys = ["count"] + sorted({k for n in (first, name) for q in queries for k in staged[n][q]})
        out[name] = {k: [round(1e6 * statistics.fmean(statistics.median(rounds(n, q, k)) for q in queries), 1)
                         for n in (first, name)] + [
                         round(1e6 * statistics.fmean(statistics.median(b - a for a, b in zip(rounds(first, q, k),
                                                                                            rounds(name, q, k)))
                                                      for q in queries), 1)]
                     for k in keys}
    return out


def query_stages(seconds: dict[str, dict[str, list[float]]], staged: dict) -> dict[str, dict[str, dict[str, float]]]:
    """Tree -> query (file stem) -> stage (and ``count``, the whole) -> its median microseconds over the rounds: what
    share of each query a stage takes (a planning stage against its count, say)."""
    return {name: {Path(q).stem: {"count": round(1e6 * statistics.median(seconds[name][q]), 1),
                                  **{k: round(1e6 * statistics.median(v), 1) for k, v in staged[name][q].items()}}
                   for q in seconds[name]}
            for name in seconds}


def summarize(seconds: dict[str, dict[str, list[float]]], bound: float) -> dict[str, Any]:
    """Every tree after the first against the first (see the module docstring)."""
    names = list(seconds)
    first = seconds[names[0]]
    out = {}
    for name in names[1:]:
        other = seconds[name]
        paired = {q: statistics.median(b / a for a, b in zip(first[q], other[q])) for q in first}
        least = {q: min(other[q]) / min(first[q]) for q in first}
        worst = sorted(paired.items(), key=lambda kv: -kv[1])[:8]
        out[name] = {"queries": len(first), "rounds": len(first[next(iter(first))]),
                     "summed_least_s": [round(sum(min(v) for v in first.values()), 6),
                                        round(sum(min(v) for v in other.values()), 6)],
                     "summed_least_ratio": round(sum(min(v) for v in other.values()) /
                                                 sum(min(v) for v in first.values()), 4),
                     "median_paired_ratio": round(statistics.median(paired.values()), 4),
                     "over_bound_paired": sum(r > bound for r in paired.values()),
                     "over_bound_least": sum(r > bound for r in least.values()),
                     "worst_paired": [[Path(q).stem, round(r, 4)] for q, r in worst]}
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=meta.RESULTS / "paired.json", metavar="FILE",
                   help="result JSON (default: benchmarks/results/paired.json)")
    p.add_argument("--tree", action="append", required=True, metavar="NAME=SITE[:VAR=VALUE,...]",
                   help="a tree: its name, the folder it is installed in, environment variables for it")
    p.add_argument("--hprd", help="HPRD's folder (data_graph/, query_graph/)")
    p.add_argument("--gmatch-test", help="gMatch's test suite folder (data.graph, query_graph/)")
    p.add_argument("--dense-heavy", nargs="+", metavar="DIR",
                   help="folders of benchmarks.dense_suites (a data graph and its manifest each)")
    p.add_argument("--limit", type=int, default=None, help="the first N queries of each suite")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--processes", type=int, default=3, help="child processes per tree (default 3)")
    p.add_argument("--stages", action="store_true",
                   help="also time the count's stages in every child (benchmarks/paired_child.py) and report each "
                        "stage's paired difference")
    p.add_argument("--backend", default="auto")
    p.add_argument("--cpus", type=lambda s: frozenset(map(int, s.split(","))), default=None, metavar="N[,N...]",
                   help="pin the driver and every child to these CPUs (default: unpinned)")
    p.add_argument("--bound", type=float, default=1.05, help="the per-query slowdown reported against")
    args = p.parse_args(argv)
    trees = {}
    for spec in args.tree:
        name, _, rest = spec.partition("=")
        site, _, env = rest.partition(":")
        trees[name] = (site, dict(kv.split("=", 1) for kv in env.split(",") if kv))
    if len(trees) < 2:
        p.error("give two trees or more")
    if args.cpus:
        os.sched_setaffinity(0, args.cpus)
    results = {}
    for suite, (data, queries) in suites(args).items():
        seconds, staged = measure(trees, data, queries, args.backend, args.rounds, args.processes, args.stages,
                                  args.cpus)
        results[suite] = {"summary": summarize(seconds, args.bound),
                          "seconds": {name: {Path(q).stem: v for q, v in s.items()} for name, s in seconds.items()}}
        for name, s in results[suite]["summary"].items():
            print(f"{suite} {name}: summed least {s['summed_least_ratio']}x, median paired "
                  f"{s['median_paired_ratio']}x, over {args.bound}x: {s['over_bound_paired']} paired / "
                  f"{s['over_bound_least']} by least, worst {s['worst_paired'][:3]}", flush=True)
        if args.stages:
            results[suite]["stages_us"] = stage_diffs(seconds, staged)
            results[suite]["query_stages_us"] = query_stages(seconds, staged)
            for name, rows in results[suite]["stages_us"].items():
                print(f"{suite} {name}, us a count (first tree, this tree, paired difference):")
                for stage, (a, b, d) in rows.items():
                    print(f"  {stage:36s} {a:9.1f} {b:9.1f} {d:+8.1f}", flush=True)
    meta.write("paired", {"trees": {name: {"site": site, "env": env} for name, (site, env) in trees.items()},
                          "backend": args.backend, "rounds": args.rounds, "processes": args.processes,
                          "cpus": sorted(args.cpus or ()),
                          "bound": args.bound, "suites": results},
               args.out)


if __name__ == "__main__":
    main()
