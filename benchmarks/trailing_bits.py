"""The fused trailing count by walked runs and by bit rows, side by side: words read against run entries, and time.

    python -m benchmarks run trailing-bits [--gmatch-test DIR] [--dense-heavy DIR ...] [--hprd] [--repeat 5]

Each query of the suites is explained on the CuPy backend under ``distsm.gpu.trailing-bits`` ``never`` (runs only)
and ``auto`` (bit rows where they read fewer words), one warm-up each, then ``--repeat`` rounds that alternate the
two.  Kept: the queries that take the trailing path.  Per query: the count (equal under both, checked), the run
entries walked and the bit-row words read, and the medians of the trailing count's stage and of the whole count.
"""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks import meta, suite_args
from benchmarks.common import parser

MODES = ("never", "auto")


def measure(data: Any, query: Any, repeat: int) -> dict[str, Any] | None:
    """Both modes' explained runs of one query (see the module docstring); None off the trailing path."""
    import distsm

    runs: dict[str, list[Any]] = {m: [] for m in MODES}
    for round_ in range(repeat + 1):
        for mode in MODES:
            with distsm.options({"gpu.trailing-bits": mode}):
                report = distsm.explain(data, query, backend="cupy")
            if report.path != "trailing":
                return None
            if round_:
                runs[mode].append(report)
    counts = {m: r[-1].count for m, r in runs.items()}
    assert len(set(counts.values())) == 1, counts
    out: dict[str, Any] = {"count": counts["never"]}
    for mode, reports in runs.items():
        out[mode] = {"entries": reports[-1].trailing_entries, "words": reports[-1].trailing_words,
                     "trailing_s": statistics.median(r.seconds.get("trailing count", 0.0) for r in reports),
                     "count_s": statistics.median(sum(r.seconds.values()) for r in reports)}
    return out


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "trailing_bits")
    suite_args.add_arguments(p, "/tmp/distsm-trailing-bits")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    import distsm

    rows = []
    for suite in suite_args.selected(args):
        data = distsm.read_graph(suite.data)
        for q in suite.queries:
            found = measure(data, distsm.read_graph(q.path), args.repeat)
            if found is None:
                continue
            rows.append({"suite": suite.name, "query": q.name, **found})
            runs, bits = found["never"], found["auto"]
            print(f"{suite.name} {q.name}: {found['count']}; runs {runs['entries']} entries "
                  f"{1e3 * runs['trailing_s']:.2f} ms; auto {bits['entries']} entries {bits['words']} words "
                  f"{1e3 * bits['trailing_s']:.2f} ms", flush=True)
    summary = {mode: {"trailing_s": sum(r[mode]["trailing_s"] for r in rows),
                      "count_s": sum(r[mode]["count_s"] for r in rows)} for mode in MODES}
    print(summary)
    print(f"wrote {meta.write('trailing_bits', {'queries': rows, 'summary': summary}, args.out)}")


if __name__ == "__main__":
    main()
