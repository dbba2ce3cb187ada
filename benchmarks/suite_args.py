"""The suites a per-query benchmark reads, chosen on its command line the same way everywhere.

    --hprd  --gmatch-test DIR  --dense-count N  --dense-heavy DIR ...  --limit N
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks import peers


def add_arguments(p: argparse.ArgumentParser, query_dir: str) -> None:
    """The suite options (``query_dir``: where generated dense HPRD queries are written)."""
    p.add_argument("--hprd", action="store_true", help="HPRD's 200 queries")
    p.add_argument("--gmatch-test", type=Path, metavar="DIR", help="gMatch's test/ directory")
    p.add_argument("--dense-count", type=int, default=0, help="dense 16-vertex random-walk queries on HPRD")
    p.add_argument("--dense-heavy", type=Path, nargs="+", metavar="DIR", help="folders of benchmarks.dense_suites")
    p.add_argument("--query-dir", type=Path, default=Path(query_dir))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None, help="the first N queries of each suite")


def selected(args: argparse.Namespace) -> list[peers.Suite]:
    """The suites ``args`` names, in the order of :func:`add_arguments`."""
    out = []
    if args.hprd:
        out.append(peers.hprd_suite(args.limit))
    if args.gmatch_test:
        out.append(peers.gmatch_test_suite(args.gmatch_test, args.limit))
    if args.dense_count:
        out.append(peers.dense_suite(16, args.dense_count, args.seed + 16, args.query_dir, args.limit))
    out += [peers.dense_heavy_suite(d, args.limit, f"dense-heavy:{d.name}") for d in args.dense_heavy or []]
    return out
