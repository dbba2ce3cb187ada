"""distsm against its peers (gMatch, EGSM, RapidMatch, SubgraphMatching) on the same queries, in one run.

    python -m benchmarks run peers [--backend numpy|cupy] [--max-seconds 60] [--suites hprd gmatch-test ...]
        [--gmatch BIN] [--egsm BIN] [--rapidmatch BIN] [--subgraphmatching BIN] [--gmatch-test DIR]
        [--peer-commit NAME=SHA --peer-patch NAME=PATCHES | --peer-source NAME=DIR] [--peer-args NAME="ARGS"]
        [--limit N] [--repeat N] [--out FILE]

Peers are given as paths to binaries the user built from the peers' public sources (none is vendored here);
peers not given are skipped.  For each suite distsm runs first: one child process reads and indexes the data graph
once and warms up, then counts every query under the cap (``benchmarks.distsm_worker``; a query over the cap
kills the child, which restarts outside timing).  Then each peer runs every query in its own process under the
same cap; its time is what it prints itself (``benchmarks.peer_runs`` says which timers), and a peer's own time
over the cap counts as capped.  A query a peer cannot take (too many vertices or edges) is "unsupported".
Results are saved as they grow; on SIGTERM (a time limit) the run saves what it has, kills distsm's child and the
running peer, and exits with 143.

Suites: ``hprd`` (the 200 HPRD queries, published counts), ``gmatch-test`` (gMatch's own test suite given as a
directory: data.graph, query_graph/Q_*.graph, expected_output.txt with one count per line for Q_0, Q_1, ... in
numeric order), ``hprd-dense-16``, ``hprd-dense-24`` and ``hprd-dense-32`` (``--dense-count`` dense random-walk
queries on HPRD from ``benchmarks.generators``; their counts are checked against a second path of distsm's
(``--reference``: the listing path, which enumerates every match, or the partitioned plan), or where that did not
finish in ``--reference-seconds``, against the peers that finished, if they agree), and ``dense-heavy`` (the queries
``benchmarks.dense_heavy`` chose for 1e9-1e11 embeddings, ``--dense-heavy DIR...``: one suite per folder; checked
the same way).

With ``--repeat N`` each system goes over a suite N times (distsm in the same child, each peer in a fresh
process per query and round) and a query's seconds are the median of its rounds, every round kept in ``rounds_s``.

JSON (``benchmarks/results/peers.json`` unless ``--out``): per suite and query, per system the status (ok,
capped, unsupported, error), count, exact (None where no answer is known) and seconds, plus the ratio
distsm/peer per query; per suite a summary: solved and exact counts per system, summed seconds over the queries
every system finished, and for each peer against distsm the summed, median and worst ratio over the queries
both finished.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import common, meta
from benchmarks.distsm_worker import DistsmWorker
from benchmarks.peer_runs import PEERS, Peer
from distsm.vocabulary import BACKENDS

SUITES = ("hprd", "gmatch-test", "hprd-dense-16", "hprd-dense-24", "hprd-dense-32", "dense-heavy")
HPRD_DATA = common.hprd_data_path()


@dataclass
class Query:
    """One query of a suite: its file, size, and known answer (``source`` says where the answer came from)."""

    name: str
    path: str
    vertices: int
    edges: int
    expected: int | None = None
    source: str | None = None


@dataclass
class Suite:
    """Queries on one data graph; ``generated`` suites have no published answers (see :func:`settle_expected`)."""

    name: str
    data: str
    queries: list[Query]
    generated: bool = False
    note: str = ""


def _header(path: Path) -> tuple[int, int]:
    """``(vertices, edges)`` from a ``t N M`` graph file's first line."""
    with open(path) as f:
        t, n, m = f.readline().split()[:3]
    if t != "t":
        raise SystemExit(f"{path}: expected a 't N M' header line")
    return int(n), int(m)


def hprd_suite(limit: int | None) -> Suite:
    queries = []
    for name, c in list(common.hprd_expected().items())[:limit]:
        path = common.hprd_query_path(name)
        queries.append(Query(name, str(path), *_header(path), expected=c, source="published"))
    return Suite("hprd", str(HPRD_DATA), queries, note="HPRD, 200 dense 16-vertex queries, published counts")


def gmatch_test_suite(directory: Path, limit: int | None) -> Suite:
    """gMatch's test suite; the counts file must hold exactly one count per query file, Q_0 .. Q_{n-1}."""
    files = sorted((directory / "query_graph").glob("Q_*.graph"), key=lambda p: int(p.stem.split("_")[1]))
    counts = [int(x) for x in (directory / "expected_output.txt").read_text().split()]
    names = [p.stem for p in files]
    if names != [f"Q_{i}" for i in range(len(files))] or len(counts) != len(files):
        raise SystemExit(f"{directory}: expected query_graph/Q_0..Q_{{n-1}}.graph and one count per query in "
                         f"expected_output.txt; found {len(files)} query files and {len(counts)} counts")
    queries = [Query(p.stem, str(p), *_header(p), expected=c, source="published")
               for p, c in list(zip(files, counts))[:limit]]
    return Suite("gmatch-test", str(directory / "data.graph"), queries,
                 note=f"gMatch's test suite ({len(files)} queries, counts up to {max(counts)})")


def dense_suite(size: int, count: int, seed: int, query_dir: Path, limit: int | None) -> Suite:
    """``count`` dense random-walk queries of ``size`` vertices on HPRD, written to ``query_dir``."""
    import distsm
    from benchmarks.generators import query_set

    data = distsm.read_graph(HPRD_DATA)
    out = query_dir / f"hprd-dense-{size}"
    out.mkdir(parents=True, exist_ok=True)
    queries = []
    made = [q for kind, q in query_set(data, count, size, seed + size, kinds=("dense",)) if kind == "dense"]
    for i, q in enumerate(made[:limit]):
        path = out / f"dense_{size}_{i}.graph"
        distsm.write_graph(q, path)
        queries.append(Query(path.stem, str(path), q.n, q.m))
    return Suite(f"hprd-dense-{size}", str(HPRD_DATA), queries, generated=True,
                 note=f"{len(made)} dense (average degree >= 3) random-walk queries of {size} vertices on HPRD, "
                      f"benchmarks.generators.query_set seed {seed + size}")


def _dense_heavy_names(args: argparse.Namespace) -> list[str]:
    """The suite names of the ``--dense-heavy`` folders: ``dense-heavy`` for one, ``dense-heavy:FOLDER`` each for
    several (a suite has one data graph; e.g. HPRD relabelled into 6 classes for 16 vertices, 8 for 24 and 32)."""
    dirs = args.dense_heavy or []
    return ["dense-heavy"] if len(dirs) == 1 else [f"dense-heavy:{d.name}" for d in dirs]


def dense_heavy_suite(directory: Path, limit: int | None, name: str = "dense-heavy") -> Suite:
    """The queries :mod:`benchmarks.dense_heavy` chose, from its ``manifest.json`` (their counts are checked by
    the reference path, not taken from the selection, which ran the timed path)."""
    import json

    from benchmarks.dense_heavy import MANIFEST

    manifest = json.loads((directory / MANIFEST).read_text())
    queries = [Query(q["name"], str(directory / q["path"]), q["size"], q["edges"]) for q in manifest["queries"][:limit]]
    sel = manifest["selection"]
    return Suite(name, str(directory / manifest["data"]), queries, generated=True,
                 note=f"{len(queries)} dense random-walk queries of {sel['sizes']} vertices chosen for "
                      f"{sel['min_count']:.0e}-{sel['max_count']:.0e} embeddings (benchmarks.dense_heavy, seed "
                      f"{sel['seed']})")


# ------------------------------------------------------------------------------------------------ running
def run_distsm(suite: Suite, args: argparse.Namespace, records: dict[str, dict[str, dict]],
               reference: dict[str, dict], checkpoint: Callable[[], None]) -> list[float]:
    """Timed counts of every query into ``records``, then (generated suites) the reference path into
    ``reference``; both capped.  Returns the seconds each start of distsm's child took."""
    with DistsmWorker(suite.data, args.backend, grace=args.grace) as worker:
        for q in _rounds(suite.queries, args.repeat, records, "distsm"):
            r = worker.run(q.path, args.max_seconds)
            records[q.name]["distsm"] = repeated(records[q.name].get("distsm"),
                                                 {k: v for k, v in asdict(r).items() if v is not None})
            _progress(suite, q, "distsm", records[q.name]["distsm"])
            checkpoint()
        if suite.generated and args.reference != "none":
            for q in suite.queries:
                r = worker.run(q.path, args.reference_seconds, mode=args.reference)
                reference[q.name] = {k: v for k, v in asdict(r).items() if v is not None}
                _progress(suite, q, f"distsm-{args.reference}", reference[q.name])
                checkpoint()
        return worker.starts


def _rounds(queries: list[Query], repeat: int, records: dict[str, dict[str, dict]], system: str
            ) -> Iterator[Query]:
    """The queries ``system`` runs in each of ``repeat`` rounds: all of them in the first, then those whose record
    is still ``ok`` (a capped or failed query is not run again)."""
    for round_ in range(repeat):
        for q in queries:
            if not round_ or records[q.name][system]["status"] == "ok":
                yield q


def repeated(before: dict[str, Any] | None, run: dict[str, Any]) -> dict[str, Any]:
    """One system's record of a query after another round (``--repeat``): the first round's record, its
    ``seconds`` the median of the rounds' (all of them in ``rounds_s`` from the second round on).  A round that is
    not ``ok`` or counts differently ends the record as an ``error``: the median of runs that disagree means
    nothing."""
    if before is None:
        return run
    if run.get("status") != "ok" or run.get("count") != before.get("count"):
        return {**before, "status": "error", "seconds": None,
                "error": f"a later round gave {run.get('status')} with count {run.get('count')}"}
    rounds = [*before.get("rounds_s", [before["seconds"]]), run["seconds"]]
    return {**before, "seconds": statistics.median(rounds), "rounds_s": rounds}


def run_peer(peer: Peer, binary: str, data: str, query: Query, cap: float, startup: float,
             extra: list[str]) -> dict[str, Any]:
    """One query in its own process under ``cap`` seconds of the peer's own time (killed at ``cap + startup``
    wall seconds: file parsing and setup are outside its timers)."""
    why = peer.unsupported(query.vertices, query.edges)
    if why:
        return {"status": "unsupported", "reason": why}
    argv = peer.argv(binary, data, query.path, cap) + extra
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=cap + startup)
    except subprocess.TimeoutExpired:
        return {"status": "capped"}
    out = peer.parse(p.stdout + p.stderr)
    if out.refused:
        return {"status": "unsupported", "reason": out.refused}
    rec: dict[str, Any] = {"count": out.count, "seconds": out.seconds,
                           "timers_ms": {k: round(v, 3) for k, v in out.timers.items()}}
    if p.returncode != 0 or out.count is None or out.seconds is None:
        tail = " | ".join((p.stdout + p.stderr).strip().splitlines()[-3:])
        return {"status": "error", "error": f"exit code {p.returncode}: {tail[-300:]}", **rec}
    return {"status": "capped" if out.seconds > cap else "ok", **rec}


def _progress(suite: Suite, q: Query, system: str, rec: dict) -> None:
    secs = f"{rec['seconds']:.4f} s" if rec.get("seconds") is not None else "-"
    print(f"{suite.name} {q.name} {system}: {rec['status']} {secs} count {rec.get('count')}", file=sys.stderr,
          flush=True)


# ------------------------------------------------------------------------------------------------ judging
def settle_expected(suite: Suite, reference: dict[str, dict], records: dict[str, dict[str, dict]],
                    mode: str) -> None:
    """Generated suites: the answer is distsm's reference path where it finished, else the count every peer that
    finished agrees on (none where they disagree or none finished)."""
    for q in suite.queries:
        ref = reference.get(q.name, {})
        if ref.get("status") == "ok":
            q.expected, q.source = ref["count"], f"distsm-{mode}"
            continue
        peers = {s: r["count"] for s, r in records[q.name].items() if s != "distsm" and r["status"] == "ok"}
        if len(set(peers.values())) == 1:
            q.expected, q.source = next(iter(peers.values())), "agreeing peers: " + ", ".join(sorted(peers))
        elif peers:
            q.source = "peers disagree"


def _sig(x: float) -> float:
    """``x`` to four significant digits (ratios span 1e-3 to 1e3)."""
    return float(f"{x:.4g}")


def judge(suite: Suite, records: dict[str, dict[str, dict]],
          systems: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """Mark every record exact or not; return the suite's summary and the ratios distsm/peer per query."""
    for q in suite.queries:
        for rec in records[q.name].values():
            rec["exact"] = None if q.expected is None or rec["status"] != "ok" else rec["count"] == q.expected
    per_system = {}
    for s in systems:
        recs = [records[q.name][s] for q in suite.queries]
        per_system[s] = {"queries": len(recs), "solved": sum(r["status"] == "ok" for r in recs),
                         **{k: sum(r["status"] == k for r in recs) for k in ("capped", "unsupported", "error")},
                         "exact": sum(r["exact"] is True for r in recs),
                         "wrong": sum(r["exact"] is False for r in recs),
                         "unchecked": sum(r["status"] == "ok" and r["exact"] is None for r in recs)}
    attempted = [s for s in systems if per_system[s]["unsupported"] < len(suite.queries)]
    common = [q.name for q in suite.queries if all(records[q.name][s]["status"] == "ok" for s in attempted)]
    summary: dict[str, Any] = {
        "systems": per_system,
        "common": {"systems": attempted, "queries": len(common),
                   "summed_seconds": {s: round(sum(records[n][s]["seconds"] for n in common), 6) for s in attempted}},
        "vs_distsm": {}}
    per_query: dict[str, dict[str, float]] = {}
    for peer in systems:
        if peer == "distsm":
            continue
        both = [q.name for q in suite.queries
                if records[q.name]["distsm"]["status"] == "ok" and records[q.name][peer]["status"] == "ok"]
        ratios = {}
        for n in both:
            if records[n][peer]["seconds"] > 0:  # a peer printing 0 at its timer's resolution has no ratio
                ratios[n] = records[n]["distsm"]["seconds"] / records[n][peer]["seconds"]
                per_query.setdefault(n, {})[peer] = _sig(ratios[n])
        ours, theirs = (sum(records[n][s]["seconds"] for n in both) for s in ("distsm", peer))
        worst = max(ratios, key=ratios.__getitem__) if ratios else None
        timers: dict[str, float] = {}  # the peer's own phases (e.g. gMatch's join alone is "Processing")
        for n in both:
            for k, ms in records[n][peer].get("timers_ms", {}).items():
                timers[k] = timers.get(k, 0.0) + ms / 1e3
        summary["vs_distsm"][peer] = {
            "queries": len(both), "distsm_seconds": round(ours, 6), "peer_seconds": round(theirs, 6),
            "peer_timer_seconds": {k: round(v, 6) for k, v in timers.items()},
            "summed_ratio": _sig(ours / theirs) if theirs > 0 else None,
            "median_ratio": _sig(statistics.median(ratios.values())) if ratios else None,
            "worst_ratio": _sig(ratios[worst]) if worst else None, "worst_query": worst}
    return summary, per_query


# ------------------------------------------------------------------------------------------------ metadata
def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in PEERS:
            raise SystemExit(f"{flag} takes NAME=VALUE with NAME one of {', '.join(PEERS)}; got {item!r}")
        out[name] = value
    return out


def _source_commit(directory: str) -> dict[str, Any]:
    """The commit a peer's source directory is at, and whether it carries local changes (patches)."""
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", directory, *a], capture_output=True, text=True, timeout=30).stdout

    commit = git("rev-parse", "HEAD").strip() or None
    return {"commit": commit, "source": directory,
            "patched": bool(git("status", "--porcelain", "--untracked-files=no").strip()) if commit else None}


def peer_info(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    commits, sources, extra, patches = (
        _pairs(args.peer_commit, "--peer-commit"), _pairs(args.peer_source, "--peer-source"),
        _pairs(args.peer_args, "--peer-args"), _pairs(args.peer_patch, "--peer-patch"))
    info = {}
    for name in PEERS:
        binary = getattr(args, name.replace("-", "_"))
        if not binary:
            continue
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"--{name} {binary}: not an executable file")
        entry: dict[str, Any] = {"binary": str(Path(binary).resolve()), "device": PEERS[name].device,
                                 "binary_sha256": hashlib.sha256(Path(binary).read_bytes()).hexdigest(),
                                 "extra_args": shlex.split(extra.get(name, ""))}
        if name in sources:
            entry.update(_source_commit(sources[name]))
        if name in commits:
            entry["commit"] = commits[name]
        if name in patches:
            entry["patched"] = patches[name]
        info[name] = entry
    return info


# ------------------------------------------------------------------------------------------------ main
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = common.parser(__doc__, "peers")
    p.add_argument("--suites", nargs="+", choices=SUITES, default=None,
                   help="default: hprd and the dense suites, plus gmatch-test when --gmatch-test is given")
    p.add_argument("--backend", choices=[b for b in BACKENDS if b != "auto"], default="numpy")
    p.add_argument("--max-seconds", type=float, default=60.0, help="cap per query and system")
    for name, peer in PEERS.items():
        p.add_argument(f"--{name}", metavar="BIN", help=f"{name} binary ({peer.device})")
    p.add_argument("--peer-commit", action="append", default=[], metavar="NAME=SHA")
    p.add_argument("--peer-source", action="append", default=[], metavar="NAME=DIR",
                   help="read the peer's commit (and whether it is patched) from its git source directory")
    p.add_argument("--peer-patch", action="append", default=[], metavar="NAME=PATCHES",
                   help="the patches the peer was built with (recorded as given)")
    p.add_argument("--peer-args", action="append", default=[], metavar='NAME="ARGS"',
                   help="extra command-line arguments for a peer")
    p.add_argument("--gmatch-test", type=Path, metavar="DIR", help="gMatch's test/ directory")
    p.add_argument("--dense-heavy", type=Path, nargs="+", metavar="DIR",
                   help="queries chosen by benchmarks.dense_heavy (several folders: one suite each, named "
                        "dense-heavy:FOLDER)")
    p.add_argument("--limit", type=int, default=None, help="run only the first N queries of each suite")
    p.add_argument("--dense-count", type=int, default=100)
    p.add_argument("--seed", type=int, default=0, help="dense suites use seed + query size")
    p.add_argument("--query-dir", type=Path, default=None, help="where generated queries are written")
    p.add_argument("--reference", choices=("listing", "partitioned", "none"), default="listing",
                   help="distsm's second path that checks the generated suites' counts")
    p.add_argument("--reference-seconds", type=float, default=None, help="cap of the reference path (default: "
                   "--max-seconds)")
    p.add_argument("--startup-seconds", type=float, default=30.0,
                   help="wall seconds a peer process may spend outside its own timers before it is killed")
    p.add_argument("--grace", type=float, default=5.0, help="seconds past the cap before distsm's child is killed")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="rounds over each suite per system; a query's seconds are the median of its rounds "
                        "(millisecond queries timed once move by up to 1.7x between runs)")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.suites is None:
        args.suites = [s for s in SUITES if (s != "gmatch-test" or args.gmatch_test)
                       and (s != "dense-heavy" or args.dense_heavy)]
    if "gmatch-test" in args.suites and not args.gmatch_test:
        p.error("the gmatch-test suite needs --gmatch-test DIR")
    if "dense-heavy" in args.suites and not args.dense_heavy:
        p.error("the dense-heavy suite needs --dense-heavy DIR (written by python -m benchmarks run dense-heavy)")
    if "dense-heavy" in args.suites:
        at = args.suites.index("dense-heavy")
        args.suites[at:at + 1] = _dense_heavy_names(args)
    args.reference_seconds = args.reference_seconds or args.max_seconds
    return args


def load(name: str, args: argparse.Namespace) -> Suite:
    if name == "hprd":
        return hprd_suite(args.limit)
    if name == "gmatch-test":
        return gmatch_test_suite(args.gmatch_test, args.limit)
    if name.startswith("dense-heavy"):
        return dense_heavy_suite(args.dense_heavy[_dense_heavy_names(args).index(name)], args.limit, name)
    query_dir = args.query_dir or Path(tempfile.mkdtemp(prefix="distsm-peers-"))
    args.query_dir = query_dir
    return dense_suite(int(name.rsplit("-", 1)[1]), args.dense_count, args.seed, query_dir, args.limit)


def run_suite(suite: Suite, args: argparse.Namespace, peers: dict[str, dict[str, Any]],
              save: Callable[[dict[str, Any]], None], every: float = 10.0) -> dict[str, Any]:
    """Run distsm, then every peer, over the suite; ``save`` gets the suite's record as it grows (at most every
    ``every`` seconds, marked incomplete) so a run cut short keeps what it measured."""
    records: dict[str, dict[str, dict]] = {q.name: {} for q in suite.queries}
    reference: dict[str, dict] = {}
    last = [time.perf_counter()]

    def record(complete: bool, **extra: Any) -> dict[str, Any]:
        ratios = extra.pop("ratios", {})
        return {"data": suite.data, "note": suite.note, "complete": complete, **extra,
                "queries": [{**asdict(q), "systems": records[q.name], "ratio_distsm_over": ratios.get(q.name, {}),
                             "reference": reference.get(q.name)} for q in suite.queries]}

    def checkpoint() -> None:
        if time.perf_counter() - last[0] > every:
            save(record(False))
            last[0] = time.perf_counter()

    try:
        starts = run_distsm(suite, args, records, reference, checkpoint)
        for name, entry in peers.items():
            for q in _rounds(suite.queries, args.repeat, records, name):
                rec = run_peer(PEERS[name], entry["binary"], suite.data, q, args.max_seconds, args.startup_seconds,
                               entry["extra_args"])
                records[q.name][name] = repeated(records[q.name].get(name), rec)
                _progress(suite, q, name, records[q.name][name])
                checkpoint()
    except BaseException:  # stopped (SIGTERM from a time limit, Ctrl-C): keep what was measured
        save(record(False))
        raise
    if suite.generated:
        settle_expected(suite, reference, records, args.reference)
    summary, ratios = judge(suite, records, ["distsm", *peers])
    return record(True, distsm_worker_starts_s=starts, summary=summary, ratios=ratios)


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds: distsm's child and a running peer are killed, results saved


def main(argv: list[str] | None = None) -> Path:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    peers = peer_info(args)
    load_start = os.getloadavg()
    result: dict[str, Any] = {"backend": args.backend, "max_seconds": args.max_seconds, "peers": peers,
                              "reference": args.reference, "reference_seconds": args.reference_seconds,
                              "load_average_start": [round(x, 2) for x in load_start], "suites": {}}
    machine = meta.machine()
    path = None

    def save(name: str, suite_record: dict[str, Any]) -> Path:
        result["suites"][name] = suite_record
        result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        result["query_dir"] = str(args.query_dir) if args.query_dir else None
        return meta.write("peers", result, args.out, machine_info=machine)

    for name in args.suites:
        t = time.perf_counter()
        suite = load(name, args)
        done = run_suite(suite, args, peers, lambda partial, name=name: save(name, partial))
        done["wall_s"] = round(time.perf_counter() - t, 2)
        path = save(name, done)
        _print_summary(name, done["summary"])
    print(f"wrote {path}")
    return path


def _print_summary(name: str, summary: dict[str, Any]) -> None:
    print(f"{name}: {'system':18} {'solved':>6} {'exact':>6} {'capped':>6} {'unsup':>6} {'error':>6}")
    for s, e in summary["systems"].items():
        print(f"{' ' * len(name)}  {s:18} {e['solved']:6d} {e['exact']:6d} {e['capped']:6d} {e['unsupported']:6d} "
              f"{e['error']:6d}")
    c = summary["common"]
    print(f"  summed seconds over the {c['queries']} queries all finished: {c['summed_seconds']}")
    for peer, v in summary["vs_distsm"].items():
        print(f"  distsm/{peer} over {v['queries']} queries: summed {v['summed_ratio']}, median {v['median_ratio']}, "
              f"worst {v['worst_ratio']} ({v['worst_query']})")


if __name__ == "__main__":
    main()
