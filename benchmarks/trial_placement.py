"""Where a light count's general join should run: its time on a GPU backend's host twin and on the device, per query,
and the allowance of the host's first trial that follows from them.

    python -m benchmarks run trial-placement [--hprd] [--gmatch-test DIR] [--dense-count N]
        [--dense-heavy DIR ...] [--repeat 3] [--max-entries 2e7]

On the CuPy backend, each query's general join is forced onto the host (a first trial on the host with an allowance
of ``--max-entries``) and onto the device (no trial on the host), each explained ``--repeat`` times after one
warm-up; a query is kept where both ran the join to its end (the device's trial allowance stops heavy ones, which
are planned instead) and read at most ``--max-entries`` adjacency entries.  The fit, over every query kept:

* the allowance per query vertex of the host's first trial, and the most candidates in all (the filter's, known
  before any trial) of a query the host tries first, that together minimise the summed time of every query kept: a
  query tried first on the host takes its host join's time where that reads at most the allowance, else the share
  of it up to the allowance plus its device join; any other query its device join (:func:`judge`); with the
  geometric mean of each query's time over its faster side's, and the same on each suite alone, so that a value
  that suits one graph only shows;
* for reference, a cost model: the host reads ``R_h`` entries per second, the device's join takes ``c + a * n + E
  / R_d`` seconds for ``n`` query vertices and ``E`` entries (least squares), and the host is the faster below
  about ``R_h * (c + a * n)`` entries.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from benchmarks import meta, peers, suite_args
from benchmarks.common import parser

def _join(data: Any, query: Any, settings: dict[str, Any], repeat: int) -> dict[str, Any] | None:
    """Median seconds of the general join under ``settings``, with its runner and entries; None where the count did
    not end on the general join."""
    import distsm

    with distsm.options(settings):
        distsm.explain(data, query, backend="cupy")
        runs = [distsm.explain(data, query, backend="cupy") for _ in range(repeat)]
    last = runs[-1]
    if last.path != "general" or not last.join_runner or "join" not in last.seconds:
        return None
    return {"runner": last.join_runner, "entries": last.join_entries, "count": last.count,
            "candidates": sum(last.candidates), "seconds": statistics.median(r.seconds["join"] for r in runs)}


def measure(suite: peers.Suite, repeat: int, max_entries: float) -> list[dict[str, Any]]:
    """Host and device join times of each query of ``suite`` (see the module docstring)."""
    import distsm

    data = distsm.read_graph(suite.data)
    rows = []
    for q in suite.queries:
        query = distsm.read_graph(q.path)
        per_vertex = int(max_entries) // query.n + 1  # past it the host's trial stops and the device counts
        host = _join(data, query, {"engine.trial-entries": per_vertex, "engine.trial-host-entries": per_vertex,
                                   "engine.trial-host-candidates": 1 << 62}, repeat)
        device = _join(data, query, {"engine.trial-host-entries": 0}, repeat)
        row = {"suite": suite.name, "query": q.name, "n": query.n, "edges": query.m, "host": host, "device": device,
               "candidates": (device or host or {}).get("candidates")}
        kept = (host is not None and device is not None and host["runner"] == "numpy" and device["runner"] == "cupy"
                and host["entries"] <= max_entries)
        if kept:
            assert host["count"] == device["count"], (suite.name, q.name, host["count"], device["count"])
        row["kept"] = kept
        rows.append(row)
        print(f"{suite.name} {q.name}: " + ("kept" if kept else "not kept") + "".join(
            f", {side} {r['entries']} entries {1e3 * r['seconds']:.2f} ms"
            for side, r in (("host", host), ("device", device)) if r), flush=True)
    return rows


def fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The best allowance per query vertex over ``rows`` and the cost model (see the module docstring)."""
    kept = [r for r in rows if r["kept"]]
    if len(kept) < 3:
        return {"queries": len(kept), "note": "fewer than 3 queries ran the join on both sides"}
    allowances = sorted({0} | {-(-r["host"]["entries"] // r["n"]) for r in kept})
    # Runs before the candidate limit recorded no candidates: every query then passes it.
    limits = sorted({_candidates(r) for r in kept})
    best, limit = min(((pv, c) for pv in allowances for c in limits), key=lambda pc: (judge(kept, *pc)["rule_s"], pc))
    rates = [r["host"]["entries"] / r["host"]["seconds"] for r in kept if r["host"]["seconds"] >= 1e-3]
    terms = np.array([[1.0, r["n"], r["device"]["entries"]] for r in kept])
    (const, per_vertex, per_entry), *_ = np.linalg.lstsq(terms, np.array([r["device"]["seconds"] for r in kept]),
                                                         rcond=None)
    return {"queries": len(kept), "trial_host_entries": best, "trial_host_candidates": limit,
            "rule": judge(kept, best, limit),
            "host_entries_per_s": statistics.median(rates) if rates else None, "device_s": float(const),
            "device_s_per_vertex": float(per_vertex), "device_s_per_entry": float(per_entry)}


def _candidates(row: dict[str, Any]) -> int:
    return row.get("candidates") or 0


def judge(kept: list[dict[str, Any]], per_vertex_entries: float,
          most_candidates: float = float("inf")) -> dict[str, float]:
    """Summed seconds of the rule with this allowance per query vertex (0: no trial on the host) for queries with
    at most ``most_candidates`` candidates (the others go to the device at once), of the faster side per query and
    of either side alone, and the geometric mean of each query's time under the rule over its faster side's."""
    rule, logs = 0.0, 0.0
    for r in kept:
        h, d = r["host"], r["device"]
        allowance = per_vertex_entries * r["n"] if _candidates(r) <= most_candidates else 0
        took = h["seconds"] if h["entries"] <= allowance else h["seconds"] * allowance / h["entries"] + d["seconds"]
        rule += took
        logs += float(np.log(took / min(h["seconds"], d["seconds"])))
    return {"rule_s": rule, "best_s": sum(min(r["host"]["seconds"], r["device"]["seconds"]) for r in kept),
            "host_s": sum(r["host"]["seconds"] for r in kept), "device_s": sum(r["device"]["seconds"] for r in kept),
            "geomean_over_best": float(np.exp(logs / len(kept)))}


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "trial_placement")
    suite_args.add_arguments(p, "/tmp/distsm-trial-placement")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--max-entries", type=float, default=2e7, help="entries a kept query's host join reads at most")
    args = p.parse_args(argv)
    rows = [row for suite in suite_args.selected(args) for row in measure(suite, args.repeat, args.max_entries)]
    result = {"fit": fit(rows), "queries": rows}
    for suite in sorted({r["suite"] for r in rows}):
        result[f"fit:{suite}"] = fit([r for r in rows if r["suite"] == suite])
    print({k: v for k, v in result.items() if k.startswith("fit")})
    print(f"wrote {meta.write('trial_placement', result, args.out)}")
