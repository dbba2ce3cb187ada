"""Loading graphs: a random SNAP edge list read by distsm (text), reloaded from distsm's binary save, and built
from a DataFrame, against pandas' and pyarrow's CSV readers parsing the same file, in one run.

Each reader runs ``--repeats`` times in this process (best and all times recorded); the peak memory of
``distsm.read_graph`` is the peak RSS of a child process that only imports distsm and reads the file once, next to
the bytes of the graph's arrays and the seconds of that one (cold) read.

    python -m benchmarks run loading --edges 10000000 --vertices 1000000
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import meta
from benchmarks.common import Timer, parser


def write_edge_list(path: Path, edges: int, vertices: int, seed: int) -> None:
    """``edges`` random pairs of ids below ``vertices`` as a tab-separated SNAP file with a comment header."""
    from distsm.formats._writing import format_rows

    rng = np.random.default_rng(seed)
    with open(path, "wb") as f:
        f.write(b"# random edge list\n# FromNodeId\tToNodeId\n")
        for lo in range(0, edges, 1 << 22):
            k = min(1 << 22, edges - lo)
            f.write(format_rows(b"", [rng.integers(0, vertices, k), rng.integers(0, vertices, k)])
                    .replace(b" ", b"\t"))


def graph_bytes(g: Any) -> int:
    """Bytes of the graph's arrays (edges, adjacency, labels, names)."""
    arrays = [g.vertex_labels, g.edge_src, g.edge_dst, g.edge_labels, g.indptr, g.neighbors, g.neighbor_labels]
    return sum(a.nbytes for a in arrays) + (0 if g.node_ids is None else g.node_ids.nbytes)


def _peak_rss() -> int:
    """This process's peak RSS in bytes (``VmHWM``: unlike ``ru_maxrss`` it does not carry over the parent's
    peak through fork and exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(path: str) -> None:
    """Read the file with distsm and print the peak RSS, the graph's array bytes and the seconds the read took,
    pyarrow's import included (the child side)."""
    import pandas  # noqa: F401  (imported before the baseline: the reader uses it)

    import distsm

    base = _peak_rss()
    with warnings.catch_warnings(), Timer() as t:
        warnings.simplefilter("ignore")
        g = distsm.read_graph(path)
    print(json.dumps({"peak_rss_bytes": _peak_rss(), "rss_after_import_bytes": base,
                      "graph_bytes": graph_bytes(g), "m": g.m, "n": g.n, "read_s": round(t.seconds, 2)}))


def _best(fn, repeats: int) -> tuple[float, list[float], Any]:
    times, out = [], None
    for _ in range(repeats):
        with Timer() as t:
            out = fn()
        times.append(round(t.seconds, 3))
    return min(times), times, out


def measure(path: Path, repeats: int) -> dict[str, Any]:
    """Seconds of every reader on ``path`` (best of ``repeats``), checked to agree on the edge count."""
    import pandas as pd

    import distsm

    res: dict[str, Any] = {}
    read_csv = lambda: pd.read_csv(path, sep="\t", comment="#", header=None)  # noqa: E731
    res["pandas.read_csv"], res["pandas.read_csv_all"], frame = _best(read_csv, repeats)
    try:
        import pyarrow.csv as pc

        opts = pc.ReadOptions(skip_rows=2, column_names=["source", "target"])
        popts = pc.ParseOptions(delimiter="\t")
        res["pyarrow.csv.read_csv"], res["pyarrow.csv.read_csv_all"], _ = _best(
            lambda: pc.read_csv(path, read_options=opts, parse_options=popts), repeats)
    except ImportError:
        res["pyarrow.csv.read_csv"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res["distsm.read_graph"], res["distsm.read_graph_all"], g = _best(lambda: distsm.read_graph(path), repeats)
        frame.columns = ["source", "target"]
        res["Graph.from_pandas_edgelist"], res["Graph.from_pandas_edgelist_all"], h = _best(
            lambda: distsm.Graph.from_pandas_edgelist(frame), repeats)
    assert h == g and h.m == g.m, "the DataFrame and the file gave different graphs"
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        saved = Path(tmp) / "g.distsm"
        res["distsm.save_graph"], res["distsm.save_graph_all"], _ = _best(lambda: distsm.save_graph(g, saved), 1)
        res["distsm.load_graph"], res["distsm.load_graph_all"], back = _best(lambda: distsm.load_graph(saved),
                                                                             repeats)
        assert back == g, "the reloaded graph differs"
    res["graph"] = {"n": g.n, "m": g.m, "array_bytes": graph_bytes(g)}
    res["ratio_read_graph_to_pandas"] = round(res["distsm.read_graph"] / res["pandas.read_csv"], 2)
    return res


def measure_labelled(path: Path, repeats: int, seed: int) -> dict[str, Any]:
    """The edge list at ``path`` with a vertex-label file beside it (``vertex label`` lines, tab-separated, for
    every vertex it names; labels plain integers, then tokens ``type<k>``): ``distsm.read_graph(edges,
    vertex_labels=...)`` against ``pandas.read_csv`` of the same two files (best of ``repeats`` each), and the
    integer-labelled graph's counts of labelled edge and path queries against its sm form."""
    import pandas as pd

    import distsm
    from distsm.formats._writing import format_rows

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ids = distsm.read_graph(path).node_ids
    labels = np.random.default_rng(seed).integers(0, 8, ids.size)
    out: dict[str, Any] = {}
    for kind in ("integers", "tokens"):
        lpath = path.with_name(f"labels_{kind}.txt")
        text = format_rows(b"", [ids, labels]).replace(b" ", b"\t")
        lpath.write_bytes(b"# vertex\tlabel\n" + (text if kind == "integers" else
                                                   text.replace(b"\t", b"\ttype")))
        both = lambda lp=lpath: (pd.read_csv(path, sep="\t", comment="#", header=None),  # noqa: E731
                                 pd.read_csv(lp, sep="\t", comment="#", header=None))
        mine = lambda lp=lpath: distsm.read_graph(path, vertex_labels=lp)  # noqa: E731
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = {"pandas.read_csv": _best(both, repeats)[:2], "distsm.read_graph": _best(mine, repeats)[:2]}
            g = mine()
        res["ratio_read_graph_to_pandas"] = round(res["distsm.read_graph"][0] / res["pandas.read_csv"][0], 2)
        out[kind] = res
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        g = distsm.read_graph(path, vertex_labels=path.with_name("labels_integers.txt"))
        distsm.write_graph(g, Path(tmp) / "g.graph", format="sm")
        sm = distsm.read_graph(Path(tmp) / "g.graph")
        checks = []
        for edges, vl in (([(0, 1)], [1, 2]), ([(0, 1), (1, 2)], [3, 0, 3])):
            q = distsm.Graph.from_edges(edges, vertex_labels=vl)
            a, b = distsm.count(g, q, backend="numpy"), distsm.count(sm, q, backend="numpy")
            assert a == b, f"the edge list with labels counts {a}, its sm form {b}"
            checks.append({"query": edges, "labels": vl, "count": a})
    out["counts_equal_sm"] = checks
    return out


def main(argv=None):
    p = parser(__doc__, "loading")
    p.add_argument("--edges", type=int, default=10_000_000)
    p.add_argument("--vertices", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--memory-edges", type=int, nargs="*", default=[],
                   help="also measure the peak RSS of reading files of these many edges (in a child process)")
    p.add_argument("--dir", type=Path, default=None, help="where to write the edge lists (default: a temp dir)")
    p.add_argument("--child", default=None, help="(internal) read this file and report memory")
    p.add_argument("--labelled", action="store_true",
                   help="also read the edge list with a vertex-label file beside it, against pandas")
    args = p.parse_args(argv)
    if args.child:
        return child(args.child)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "edges.txt"
        with Timer() as t:
            write_edge_list(path, args.edges, args.vertices, args.seed)
        result: dict[str, Any] = {"edges": args.edges, "vertices": args.vertices, "file_bytes": path.stat().st_size,
                                  "write_s": round(t.seconds, 2), "seconds": measure(path, args.repeats),
                                  "memory": []}
        if args.labelled:
            result["labelled"] = measure_labelled(path, args.repeats, args.seed)
            print(json.dumps(result["labelled"], indent=1), flush=True)
        for m in [args.edges, *args.memory_edges]:
            if m != args.edges:
                path.unlink()
                write_edge_list(path, m, max(args.vertices, m // 10), args.seed)
            out = subprocess.run([sys.executable, "-m", "benchmarks.loading", "--child", str(path)],
                                 capture_output=True, text=True, check=True)
            mem = json.loads(out.stdout.strip().splitlines()[-1])
            mem["edges"] = m
            mem["peak_over_graph"] = round(mem["peak_rss_bytes"] / mem["graph_bytes"], 2)
            result["memory"].append(mem)
            print(json.dumps(mem), flush=True)
    print(json.dumps(result["seconds"], indent=1))
    print(f"wrote {meta.write('loading', result, args.out)}")


if __name__ == "__main__":
    main()
