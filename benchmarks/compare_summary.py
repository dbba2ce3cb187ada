"""Per-query before/after from a ``device_compare.sh`` result, with the resolution the run itself shows.

    python -m benchmarks.compare_summary results/compare.json      # prints, and adds "summary" to the file

Each query's time for a tree is the least of every time that tree measured for it (every round of every run:
``rounds_s`` where the benchmark kept them, else the run's ``seconds``): the least is the time with the least
interference from the machine, which is what a before/after of the code compares.  For each suite: the summed
least times of both trees, the median and worst per-query ratio (new / base), and how many queries are slower by
more than :data:`BOUND`.  The same tree against itself gives the run's resolution: its samples split by round
parity (odd rounds against even ones), the queries whose two halves differ by more than :data:`BOUND` are what
noise alone produces at this number of samples.  Only the standard library: the script runs it outside either
tree's installation.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

#: The per-query slowdown a before/after reports against (issue 53: no query slower by more than 5%).
BOUND = 1.05


def samples(runs: list[dict[str, Any]], tree: str, suite: str, parity: int | None = None
            ) -> dict[str, list[float]]:
    """Every time ``tree`` measured for each query of ``suite`` (of rounds of one ``parity`` only, 0 or 1)."""
    out: dict[str, list[float]] = {}
    for run in runs:
        if run["tree"] != tree or suite not in run["suites"] or (parity is not None and run["round"] % 2 != parity):
            continue
        s = run["suites"][suite]
        for q, sec in s["seconds"].items():
            kept = (s.get("rounds_s") or {}).get(q) or ([sec] if sec is not None else [])
            out.setdefault(q, []).extend(kept)
    return out


def _ratios(new: dict[str, list[float]], base: dict[str, list[float]]) -> dict[str, float]:
    return {q: min(new[q]) / min(base[q]) for q in sorted(set(new) & set(base)) if new[q] and base[q]}


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """The per-suite summary of a ``device_compare`` result (see the module docstring)."""
    runs = result["runs"]
    out: dict[str, Any] = {}
    for suite in sorted({s for run in runs for s in run["suites"]}):
        base, new = samples(runs, "base", suite), samples(runs, "new", suite)
        ratios = _ratios(new, base)
        if not ratios:
            continue
        worst = sorted(ratios.items(), key=lambda kv: -kv[1])
        entry: dict[str, Any] = {
            "queries": len(ratios),
            "samples_per_query": min(len(v) for v in new.values()),
            "summed_base_s": round(sum(min(base[q]) for q in ratios), 6),
            "summed_new_s": round(sum(min(new[q]) for q in ratios), 6),
            "median_ratio": round(statistics.median(ratios.values()), 4),
            "over_bound": sum(r > BOUND for r in ratios.values()),
            "worst": [[q, round(r, 4), round(min(base[q]), 6), round(min(new[q]), 6)] for q, r in worst[:8]],
        }
        entry["summed_ratio"] = round(entry["summed_new_s"] / entry["summed_base_s"], 4)
        for tree in ("base", "new"):
            halves = _ratios(samples(runs, tree, suite, 1), samples(runs, tree, suite, 0))
            if halves:
                entry[f"{tree}_against_itself_over_bound"] = sum(max(r, 1 / r) > BOUND for r in halves.values())
        out[suite] = entry
    return out


def lines(summary: dict[str, Any]) -> list[str]:
    """One line per suite."""
    text = []
    for suite, e in summary.items():
        itself = ", ".join(f"{t} against itself {e[k]}" for t in ("base", "new")
                           if (k := f"{t}_against_itself_over_bound") in e)
        text.append(f"{suite}: {e['queries']} queries, least of {e['samples_per_query']} samples each: summed "
                    f"{e['summed_base_s']} -> {e['summed_new_s']} s ({e['summed_ratio']}x), median "
                    f"{e['median_ratio']}x, over {BOUND}x: {e['over_bound']} ({itself or 'one round: no resolution'}), "
                    f"worst {[(q, r) for q, r, *_ in e['worst'][:4]]}")
    return text


def cli(argv: list[str] | None = None) -> int:
    [path] = argv if argv is not None else sys.argv[1:]
    result = json.loads(Path(path).read_text())
    result["summary"] = summarize(result)
    Path(path).write_text(json.dumps(result, indent=1))
    print("\n".join(lines(result["summary"])))
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
