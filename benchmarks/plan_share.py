"""How much sampling a device plan is worth, and what other planning and placement settings cost: counts of
gMatch's suite, HPRD's queries and the dense heavy suites under each configuration given, in one process:

    python -m benchmarks run plan-share --shares 0.25 0.025 --gmatch-test .peers/gmatch-test \
        --dense-heavy .peers/dense/hprd6 .peers/dense/hprd8 --backend cupy
    python -m benchmarks run plan-share --configs default= refine-on-device=engine.device-refine:0 \
        --gmatch-test .peers/gmatch-test --hprd 40 --backend cupy

A configuration is the planner's ``engine.plan-share-device`` (:mod:`distsm.kernels.count_plan`; ``--shares``) or a
set of engine options (``--configs LABEL=KEY:VALUE,...``, as ``distsm.options`` takes them; ``LABEL=`` alone: the
defaults).  Per query and configuration: one warm count, then ``--repeat`` counts (the median kept) and one
``distsm.explain`` for the stage times and the plans sampled; ``--rounds`` rounds, the configurations in reverse
order every other round, the best median kept.  Counts must agree across configurations (and with the published
ones of gMatch's suite and HPRD).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import distsm
from benchmarks import meta
from benchmarks.common import parser
from benchmarks.peers import Query, Suite, dense_heavy_suite, gmatch_test_suite, hprd_suite
from distsm.kernels import count_plan


@dataclass(frozen=True)
class Config:
    """One configuration under test: the planner's device sampling ``share`` (None: as it is) and engine
    ``options`` (``distsm.options`` keys)."""

    label: str
    share: float | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> Config:
        """``LABEL=KEY:VALUE,KEY:VALUE`` (values read as numbers or booleans where they are)."""
        label, _, spec = text.partition("=")
        options = {}
        for item in filter(None, spec.split(",")):
            key, _, value = item.partition(":")
            options[key] = _value(value)
        return cls(label, None, options)

    @contextmanager
    def applied(self) -> Iterator[None]:
        share = {} if self.share is None else {"engine.plan-share-device": self.share}
        with distsm.options({**self.options, **share}):
            yield


def _value(text: str) -> Any:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "null": None}.get(text.lower(), text)


def timed(data: distsm.Graph, query: distsm.Graph, backend: str, repeat: int) -> tuple[int, float, dict]:
    """``(count, median seconds of repeat counts, explain)`` after one warm count."""
    distsm.count(data, query, backend=backend)
    seconds, counts = [], set()
    for _ in range(repeat):
        t = time.perf_counter()
        counts.add(distsm.count(data, query, backend=backend))
        seconds.append(time.perf_counter() - t)
    explained = distsm.explain(data, query, backend=backend)
    counts.add(explained.count)
    if len(counts) != 1:
        raise SystemExit(f"counts differ between repeats: {sorted(counts)}")
    return counts.pop(), statistics.median(seconds), {
        "stages_ms": {k: round(v * 1e3, 3) for k, v in explained.seconds.items()},
        "plans_tried": explained.plans_tried, "path": explained.path}


def run(suite: Suite, configs: list[Config], backend: str, repeat: int, rounds: int) -> dict:
    """Per query of ``suite``: per configuration its count, best median seconds and last explain."""
    data = distsm.read_graph(suite.data)
    out: dict[str, dict] = {}
    for q in suite.queries:
        out[q.name] = _query(data, q, configs, backend, repeat, rounds)
        print(f"{suite.name} {q.name}: " + " | ".join(f"{c}: {1e3 * rec['seconds']:.1f} ms"
                                                       for c, rec in out[q.name].items()), flush=True)
    return out


def _query(data: distsm.Graph, q: Query, configs: list[Config], backend: str, repeat: int, rounds: int) -> dict:
    """Per configuration: the count, the best median seconds over the rounds and the last explain's stages."""
    query = distsm.read_graph(q.path)
    row: dict[str, dict] = {}
    for r in range(rounds):
        for config in (configs if r % 2 == 0 else configs[::-1]):
            with config.applied():
                n, median, explained = timed(data, query, backend, repeat)
            rec = row.setdefault(config.label, {"count": n, "seconds": median, "medians": []})
            if rec["count"] != n:
                raise SystemExit(f"{q.name}: {config.label} counted {n}, earlier {rec['count']}")
            rec["medians"].append(round(median, 6))
            rec["seconds"] = min(rec["seconds"], median)
            rec.update(explained)
    counts = {rec["count"] for rec in row.values()}
    if len(counts) != 1 or (q.expected is not None and counts != {q.expected}):
        raise SystemExit(f"{q.name}: counts {sorted(counts)} across configurations, expected {q.expected}")
    return row


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "plan_share")
    p.add_argument("--shares", type=float, nargs="*", default=[],
                   help="planner device sampling shares (default, without --configs: the host's and the device's)")
    p.add_argument("--configs", type=Config.parse, nargs="*", default=[], metavar="LABEL=KEY:VALUE,...")
    p.add_argument("--gmatch-test", type=Path, metavar="DIR", help="gMatch's test/ directory")
    p.add_argument("--hprd", type=int, metavar="N", help="the first N of HPRD's 200 queries")
    p.add_argument("--dense-heavy", type=Path, nargs="*", default=[], metavar="DIR",
                   help="folders written by `benchmarks run dense-heavy`")
    p.add_argument("--backend", default="cupy")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    shares = args.shares or ([] if args.configs else [count_plan.PLAN_SHARE, count_plan.PLAN_SHARE_DEVICE])
    configs = [Config(str(s), s) for s in shares] + args.configs
    suites = (([gmatch_test_suite(args.gmatch_test, None)] if args.gmatch_test else [])
              + ([hprd_suite(args.hprd)] if args.hprd else [])
              + [dense_heavy_suite(d, None, f"dense-heavy:{d.name}") for d in args.dense_heavy])
    if not suites:
        p.error("give --gmatch-test, --hprd and/or --dense-heavy")
    results = {s.name: run(s, configs, args.backend, args.repeat, args.rounds) for s in suites}
    summed = {name: {c.label: round(sum(row[c.label]["seconds"] for row in rows.values()), 4) for c in configs}
              for name, rows in results.items()}
    for name, sums in summed.items():
        print(f"{name}: summed best medians {sums}")
    meta.write("plan_share", {"backend": args.backend, "shares": [c.label for c in configs],
                              "configs": {c.label: {"share": c.share, "options": c.options} for c in configs},
                              "repeat": args.repeat, "rounds": args.rounds, "summed_s": summed, "suites": results},
               args.out)


if __name__ == "__main__":
    main()
