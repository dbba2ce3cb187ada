"""Where a GPU backend's candidate filter should run: each light query's whole count with the filter on the host
twin and on the device, and the limit on label-pool vertices that follows from them.

    python -m benchmarks run filter-placement [--hprd] [--gmatch-test DIR] [--dense-count N]
        [--dense-heavy DIR ...] [--repeat 5] [--max-seconds 0.05] [--backend cupy]

On the CuPy backend (``--backend``: one without a host twin runs both settings alike) each query is counted with
``distsm.engine.host-filter-vertices`` at its largest (the filter on the host) and at 0 (on the device): one
warm-up count each, then ``--repeat`` rounds that alternate the two, and each side's median kept.  The whole count
is timed, not the filter alone: where the candidates are made decides which side copies them to the other (a host
trial reads host candidates, a device join device ones).  A query's label pools (the data vertices its filter
tests, :func:`~distsm.kernels.placement.pool_vertices`) are what the setting compares.  Queries whose count takes
over ``--max-seconds`` on either side are listed and not fitted: the filter is a small part of them, and their
run-to-run spread would decide the sum.

The fit (:func:`fit`): the limit on pool vertices that minimises the summed time of the queries fitted, each taking
its host time where its pools are at most the limit and its device time above, with the geometric mean of each
query's time under the rule over its faster side's; over every suite and each alone, so that a limit that suits
one graph only shows.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from benchmarks import meta, peers, suite_args
from benchmarks.common import parser

#: The setting that keeps every filter on the host.
ALWAYS_HOST = 1 << 62


def measure(suite: peers.Suite, repeat: int, max_seconds: float, backend: str = "cupy") -> list[dict[str, Any]]:
    """Per query of ``suite``: its pool vertices and its count's median seconds with the filter on each side."""
    import distsm
    from distsm.kernels import get_backend
    from distsm.kernels.placement import pool_vertices

    data = distsm.read_graph(suite.data)
    host_index = get_backend("numpy").index(data)
    sides = {"host": ALWAYS_HOST, "device": 0}
    rows = []
    for q in suite.queries:
        query = distsm.read_graph(q.path)
        seconds: dict[str, list[float]] = {side: [] for side in sides}
        counts = set()
        for r in range(repeat + 1):
            for side, limit in sides.items():
                with distsm.options({"engine.host-filter-vertices": limit}):
                    t = time.perf_counter()
                    counts.add(distsm.count(data, query, backend=backend))
                    if r:
                        seconds[side].append(time.perf_counter() - t)
        if len(counts) != 1:
            raise SystemExit(f"{suite.name} {q.name}: the two placements disagree ({sorted(counts)})")
        row = {"suite": suite.name, "query": q.name, "n": query.n, "pools": pool_vertices(host_index, query),
               "count": counts.pop(), **{side: statistics.median(v) for side, v in seconds.items()}}
        row["kept"] = max(row["host"], row["device"]) <= max_seconds
        rows.append(row)
        print(f"{suite.name} {q.name}: {row['pools']} pool vertices, host {1e3 * row['host']:.3f} ms, "
              f"device {1e3 * row['device']:.3f} ms" + ("" if row["kept"] else " (not fitted)"), flush=True)
    return rows


def judge(kept: list[dict[str, Any]], limit: float) -> dict[str, float]:
    """Summed seconds of the rule with this pool limit, of the faster side per query and of either side alone, and
    the geometric mean of each query's time under the rule over its faster side's."""
    took = [r["host"] if r["pools"] <= limit else r["device"] for r in kept]
    best = [min(r["host"], r["device"]) for r in kept]
    return {"rule_s": sum(took), "best_s": sum(best), "host_s": sum(r["host"] for r in kept),
            "device_s": sum(r["device"] for r in kept),
            "geomean_over_best": float(np.exp(np.mean(np.log(np.array(took) / np.array(best)))))}


def fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The pool limit that minimises the summed time of the kept ``rows`` (the smallest of equals), and its
    :func:`judge`; with fewer than three kept queries, a note instead."""
    kept = [r for r in rows if r["kept"]]
    if len(kept) < 3:
        return {"queries": len(kept), "note": "fewer than 3 queries were fitted"}
    limits = sorted({0} | {r["pools"] for r in kept})
    best = min(limits, key=lambda limit: (judge(kept, limit)["rule_s"], limit))
    return {"queries": len(kept), "host_filter_vertices": best, "rule": judge(kept, best)}


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "filter_placement")
    suite_args.add_arguments(p, "/tmp/distsm-filter-placement")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=0.05,
                   help="a query whose count takes longer on either side is not fitted")
    p.add_argument("--backend", default="cupy")
    args = p.parse_args(argv)
    rows = [row for suite in suite_args.selected(args)
            for row in measure(suite, args.repeat, args.max_seconds, args.backend)]
    result = {"fit": fit(rows), "queries": rows}
    for suite in sorted({r["suite"] for r in rows}):
        result[f"fit:{suite}"] = fit([r for r in rows if r["suite"] == suite])
    print({k: v for k, v in result.items() if k.startswith("fit")})
    print(f"wrote {meta.write('filter_placement', result, args.out)}")


if __name__ == "__main__":
    main()
