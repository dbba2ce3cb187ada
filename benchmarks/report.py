"""Turn the JSON results under ``benchmarks/results/`` into ``benchmarks/README.md`` tables and PNG plots.

    python -m benchmarks report [--results DIR] [--out benchmarks/README.md]

Only measured numbers appear: every table row comes from a result file, which names the machine and command it
was measured with.  A suite without a result file is listed as not run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import compare_summary, meta


def _load(results: Path) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    found: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for path in sorted(results.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        kind = record.get("benchmark") or ("gpu_engine" if "hprd" in record or "rmat" in record else path.stem)
        if kind == "cluster_scaling" and any(run.get("budget_share") for run in record.get("runs", [])):
            kind = "cluster_regimes"  # runs under a device budget below the index answer the out-of-core question
        found.setdefault(kind, []).append((path.name, record))
    return found


def _where(name: str, record: dict[str, Any]) -> str:
    m = record.get("machine", {})
    device = m.get("gpu") or (record.get("versions", {}) or {}).get("device") or m.get("cpu", "unknown machine")
    command = record.get("command", "")
    return f"*{name}*: {device}; `{command}`" + (f"; {record['when']}" if "when" in record else "")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _plot(path: Path, title: str, xlabel: str, ylabel: str, series: dict[str, tuple[list, list]],
          kind: str = "line") -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    if kind == "bar":
        names = list(series)
        labels = series[names[0]][0]
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            xs = [j + i * width for j in range(len(labels))]
            ax.bar(xs, series[name][1], width=width, label=name)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(labels))], labels, rotation=30, ha="right")
    else:
        for name, (xs, ys) in series.items():
            ax.plot(xs, ys, marker="o", label=name)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _hprd_cpu(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### HPRD, CPU engines side by side", "", _where(name, r), ""]
        rows = [[e, s["queries"], s["correct"], s["total_seconds"], s["median_ms"]] for e, s in r["engines"].items()]
        lines += _table(["engine", "queries", "correct", "total s", "median ms"], rows)
        lines += [""] + [f"- {k}: {v}x" for k, v in r.get("time_ratios_on_common_queries", {}).items()] + [""]


def _gpu_engine(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        h = r.get("hprd")
        if h and "skipped" not in h:
            lines += ["### GPU engine: HPRD batch (GPU and NumPy in the same run)", "", _where(name, r), ""]
            lines += _table(["backend", "batch s (median)", "query ms median", "query ms p95", "answers right"],
                            [["cupy", round(h["gpu_batch_s_median"], 3), round(h["gpu_query_ms_median"], 2),
                              round(h["gpu_query_ms_p95"], 2), h["counts_match_expected"]],
                             ["numpy", round(h["numpy_batch_s"], 3), round(h["numpy_query_ms_median"], 2),
                              round(h["numpy_query_ms_p95"], 2), h["numpy_counts_match"]]]
                            + ([["cupy, level by level (no fused descent)", round(h["gpu_batch_s_level_by_level"], 3),
                                 "", "", h["level_by_level_counts_match"]]]
                               if "gpu_batch_s_level_by_level" in h else []))
            lines += ["", f"Target: {h['target']} — {'met' if h['target_met'] else 'not met'}.", ""]
        rm = r.get("rmat") or {}
        sets = [k for k in rm.get("sets", []) if k in rm]
        if sets:
            g = rm["graph"]
            lines += [f"### GPU engine: R-MAT query sets ({name})", "",
                      _where(name, r) + f"; {g['generator']}; {g['vertices']} vertices, {g['edges']} edges, "
                      f"{g['vertex_labels']} vertex labels", ""]
            rows = []
            for k in sets:
                e = rm[k]
                sub = e.get("numpy_subset") or {}
                rows.append([k, e["size"], e["run"], e["finished"], e["cap_s"], e["query_ms_median_finished"],
                             e["query_ms_p95_finished"], f"{e['matches_per_s_all']:.3g}" if e["matches_per_s_all"]
                             else "-", e["peak_query_pool_bytes_max"], sub.get("rate_ratio_median")])
            lines += _table(["set", "query vertices", "run", "finished under cap", "cap s", "median ms (finished)",
                             "p95 ms (finished)", "matches/s (capped runs included)", "peak pool bytes",
                             "GPU/NumPy enumeration rate (median)"], rows)
            lines += ["", f"Target: {rm.get('target')}.", ""]
            peaks = {k: sorted(q["peak_query_pool_bytes"] / 2**20 for q in rm[k].get("per_query", [])
                               if q.get("peak_query_pool_bytes") is not None) for k in sets}
            peaks = {k: (list(range(1, len(v) + 1)), v) for k, v in peaks.items() if v}
            if peaks:
                png = _plot(out_dir / f"{Path(name).stem}_memory.png", "peak device pool per query (sorted)",
                            "query (rank)", "MiB", peaks)
                lines += [f"![peak device memory per query](results/{png})", ""]
        b = r.get("budget")
        if b and "skipped" not in b:
            lines += ["### GPU engine: a query over the memory budget", "", _where(name, r), ""]
            lines += _table(["query", "largest level bytes", "budget bytes", "ratio", "count (default budget)",
                             "count (small budget)", "equal", "ms (default)", "ms (small)", "extend calls",
                             "peak pool bytes (small)"],
                            [[b["query"], b["largest_level_bytes"], b["budget_bytes"], round(b["ratio"], 1),
                              b["count_default_budget"], b["count_small_budget"], b["counts_equal"],
                              round(b["default_budget_ms"], 1), round(b["small_budget_ms"], 1),
                              b["extend_calls_small_budget"], b["peak_query_pool_bytes_small_budget"]]])
            lines += [""]


def _pbe_shared(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        g = r["graph"]
        lines += ["### Shared execution (PBE) against one search per query edge", "",
                  _where(name, r) + f"; graph {g['vertices']} vertices, {g['edges']} edges (R-MAT, seed {g['seed']}); "
                  f"backend {r.get('backend', 'numpy')}",
                  ""]
        rows = [[x["query"], x["k"], x["matches"], f"{100 * (x['intra_share'] or 0):.1f}%", x["edge_groups"],
                 x["shared"]["partial_matches"], x["per_edge"]["partial_matches"], x["partial_ratio"],
                 x["time_ratio"]] for x in r["results"]]
        lines += _table(["query", "k", "matches", "intra share", "groups", "partial (shared)", "partial (per edge)",
                         "partial ratio", "time ratio"], rows)
        for k in sorted({x["k"] for x in r["results"]}):
            sub = [x for x in r["results"] if x["k"] == k]
            png = _plot(out_dir / f"{Path(name).stem}_k{k}.png", f"inter-partition seconds, k={k}", "query", "seconds",
                        {"shared": ([x["query"] for x in sub], [x["shared"]["inter_s"] for x in sub]),
                         "per edge": ([x["query"] for x in sub], [x["per_edge"]["inter_s"] for x in sub])},
                        kind="bar")
            lines += ["", f"![shared execution, k={k}](results/{png})"]
        ks = sorted({x["k"] for x in r["results"]})
        if len(ks) >= 3 and all("intra_s" in x for x in r["results"]):
            names = list(dict.fromkeys(x["query"] for x in r["results"]))
            by = {(x["query"], x["k"]): x for x in r["results"]}
            png = _plot(out_dir / f"{Path(name).stem}_partitions_time.png", "partitioned search seconds "
                        "(intra + shared inter) against k", "partitions k", "seconds",
                        {q: (ks, [by[q, k]["intra_s"] + by[q, k]["shared"]["inter_s"] for k in ks]) for q in names})
            png2 = _plot(out_dir / f"{Path(name).stem}_partitions_share.png", "share of matches spanning parts",
                         "partitions k", "inter-partition share",
                         {q: (ks, [1 - (by[q, k]["intra_share"] or 0) for k in ks]) for q in names})
            lines += ["", f"![time against k](results/{png})", "",
                      f"![inter-partition share against k](results/{png2})"]
        p = r.get("planner", {})
        lines += ["", f"Planner: HPRD queries at most {p.get('hprd_max_s')} s; 16-vertex symmetric queries "
                      f"{p.get('symmetric_16_vertex_s')}.", ""]


def _cluster_batches(name: str, r: dict, lines: list[str]) -> None:
    """A run with several batches (heavy, small), the in-process 1-device time and memory per worker."""
    g = r["graph"]
    lines += [f"### Scaling and memory per worker ({name})", "",
              _where(name, r) + f"; graph {g['vertices']} vertices, {g['edges']} edges, {g['labels']} labels "
              f"(index about {g['index_bytes_estimate'] / 2**20:.0f} MiB); heavy queries of {r['query_size']} "
              f"vertices, small ones of {r['small_size']}", ""] + ([f"Note: {r['note']}", ""] if "note" in r else [])
    rows = []
    for batch, rep in r["batches"].items():
        for s in rep["summary"]:
            rows.append([batch, s["gpus"], s["device_budget"] or "device", s["partitions"], ",".join(s["adjacency"]),
                         s["finished"], s["batch_wall_s"], s["in_process_1gpu_s"], s["speedup"], s["efficiency"],
                         f"{s['distribution']['whole']} / {s['distribution']['sliced']}",
                         round(s["bytes_h2d"] / 2**20, 1), round(s["peak_device_mb"], 1), rep["counts_agree"]])
    lines += _table(["batch", "workers", "device budget", "parts", "adjacency", "finished", "wall s",
                     "in process s", "speedup", "efficiency", "whole / sliced", "host to device MB",
                     "peak device MB/worker", "counts agree"], rows)
    repeated = [f"{batch} on {run['workers']} worker(s): {b['walls_s']}" for run in r.get("runs", [])
                for batch, b in run["batches"].items() if len(b.get("walls_s", [])) > 1]
    lines += [""] + ([f"Wall seconds of each repeated count, in order (the first on fresh workers): "
                      f"{'; '.join(repeated)}.", ""] if repeated else [])


def _cluster_scaling(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        if "batches" in r:
            _cluster_batches(name, r, lines)
            continue
        g = r["graph"]
        lines += [f"### Scaling over GPUs ({name})", "",
                  _where(name, r) + f"; graph {g['vertices']} vertices, {g['edges']} edges, {g['labels']} labels; "
                  f"{r['common_queries']} queries of {r['query_size']} vertices; counts agree: {r['counts_agree']}",
                  ""]
        rows = [[s["gpus"], s["finished"], s["batch_wall_s"], s["speedup"], s["efficiency"], s["intra_s"],
                 s["inter_s"], s.get("slowest_slice_s", "—"), s.get("adjacency_read_gb", "—"),
                 s.get("adjacency_loaded_mb_per_worker", "—")] for s in r["summary"]]
        lines += _table(["GPUs", "finished", "wall s", "speedup", "efficiency", "intra task s", "inter task s",
                         "slowest slice s", "adjacency read GB", "adjacency loaded MB/worker"], rows)
        xs = [s["gpus"] for s in r["summary"]]
        png = _plot(out_dir / f"{Path(name).stem}.png", "batch wall time", "GPUs", "seconds",
                    {"measured": (xs, [s["batch_wall_s"] for s in r["summary"]]),
                     "ideal": (xs, [r["summary"][0]["batch_wall_s"] * xs[0] / x for x in xs])})
        lines += ["", f"![scaling](results/{png})", ""]


def _dashboard(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### Dashboard during a batch", "", _where(name, r), "",
                  f"Task groups: {', '.join(r['distsm_groups'])}; {r['queries']} queries, all right: {r['all_ok']}.",
                  "", f"![dashboard](results/{Path(r['screenshot']).name})", ""]


def _synthetic(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        g = r["graph"]
        backends = r["backends"]
        lines += [f"### Time per query size ({name})", "",
                  _where(name, r) + f"; graph {g['vertices']} vertices, {g['edges']} edges, {g['labels']} labels; "
                  f"cap {r['cap_s']} s per query; counts agree: {r['counts_agree']}", ""]
        header = ["size", "kind", "queries"] + [f"{b} finished / median ms / p95 ms" for b in backends]
        if "cupy" in backends:
            header.append("speedup (median)")
        rows = []
        for e in r["summary"]:
            row = [e["size"], e["kind"], e["queries"]]
            row += [f"{e[b]['finished']} / {e[b]['median_ms']} / {e[b]['p95_ms']}" for b in backends]
            if "cupy" in backends:
                row.append(e.get("speedup_median"))
            rows.append(row)
        lines += _table(header, rows)
        series = {}
        for b in backends:
            for kind in ("dense", "sparse"):
                pts = [(e["size"], e[b]["median_ms"]) for e in r["summary"] if e["kind"] == kind and e[b]["median_ms"]]
                if pts:
                    series[f"{b} {kind}"] = ([x for x, _ in pts], [y for _, y in pts])
        if series:
            png = _plot(out_dir / f"{Path(name).stem}.png", "median time per query", "query vertices", "ms", series)
            lines += ["", f"![time per size](results/{png})"]
        speedup = {}
        for kind in ("dense", "sparse"):
            pts = [(e["size"], e["speedup_median"]) for e in r["summary"]
                   if e["kind"] == kind and e.get("speedup_median") is not None]
            if pts:
                speedup[kind] = ([x for x, _ in pts], [y for _, y in pts])
        if speedup:
            png = _plot(out_dir / f"{Path(name).stem}_speedup.png", "GPU over NumPy (median over queries both "
                        "finished)", "query vertices", "speedup", speedup)
            lines += ["", f"![GPU over NumPy](results/{png})"]
        lines += [""]


def _rdf_lubm(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### SPARQL BGPs on LUBM (distsm NumPy against rdflib)", "", _where(name, r), ""]
        queries = sorted({q for size in r["sizes"] for q in size["queries"]}, key=lambda q: int(q[1:]))
        rows = []
        for size in r["sizes"]:
            cells = []
            for q in queries:
                x = size["queries"].get(q, {})
                ours = f"{1000 * x['distsm_s']:.1f}" if "distsm_s" in x else "-"
                theirs = f"{1000 * x['rdflib_s']:.0f}" if x.get("rdflib_s") is not None else "-"
                gpu = f" / {1000 * x['distsm_gpu_s']:.1f}" if "distsm_gpu_s" in x else ""
                cells.append(f"{ours}{gpu} / {theirs}")
            rows.append([size["universities"], size["triples"], *cells])
        what = "numpy / cupy / rdflib" if "cupy" in r.get("backends", []) else "numpy / rdflib"
        lines += _table(["universities", "triples", *[f"{q} ms ({what})" for q in queries]], rows)
        lines += ["", f"Answers that disagree with rdflib: {r['mismatches']}.", ""]


def _outofcore(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        g, s = r["graph"], r["summary"]
        lines += ["### Beyond the device budget (out of core)", "",
                  _where(name, r) + f"; graph {g['vertices']} vertices, {g['edges']} edges, index "
                  f"{s['graph_index_bytes'] / 2**20:.0f} MiB = {s['graph_over_budget']}x the "
                  f"{s['budget_bytes'] / 2**20:.0f} MiB budget; k = {s['k']} ({s['method']}); "
                  f"{s['queries']} queries of {g['query_size']} vertices; counts agree: {s['counts_agree']}", ""]
        rows = []
        for mode, sec in s["batch_s"].items():
            split = s["intra_inter_s"].get(mode)
            rows.append([mode, sec, s["over_out_of_core"].get(mode), s["peak_pool_bytes"].get(mode, "-"),
                         s["bytes_h2d"].get(mode, "-"), "-" if split is None else f"{split[0]} / {split[1]}"])
        lines += _table(["mode", "batch s", "relative to out_of_core", "peak pool bytes", "bytes host->device",
                         "intra s / inter s"], rows)
        lines += ["", f"Share of matches spanning parts: {s['inter_share_of_matches']}.", ""]


def _load_balance(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        g, s = r["graph"], r["summary"]
        lines += ["### GPU join load balance: entry-parallel against tiered kernels", "",
                  _where(name, r) + f"; graph {g['vertices']} vertices, {g['edges']} edges, R-MAT "
                  f"{g['rmat_abc']}; cap {r['cap_s']} s; counts agree: {s['counts_agree']}", ""]
        listed = "list_seconds" in r["queries"][0]["entry"] if r["queries"] else False

        def ms(q: dict, mode: str, key: str, done: str) -> Any:
            return round(1e3 * q[mode][key], 2) if q[mode][done] else "capped"

        rows = [[q["size"], q["kind"], ms(q, "entry", "seconds", "finished"), ms(q, "tiered", "seconds", "finished")]
                + ([ms(q, "entry", "list_seconds", "list_finished"), ms(q, "tiered", "list_seconds", "list_finished")]
                   if listed else [])
                + [q["entry"]["count"] if q["entry"]["finished"] else "capped"] for q in r["queries"]]
        lines += _table(["size", "kind", "count: entry-parallel ms", "count: tiered ms"]
                        + (["list: entry-parallel ms", "list: tiered (write cache) ms"] if listed else [])
                        + ["count"], rows)
        hp = s.get("hprd") or {}
        hprd = "" if not hp else (f" HPRD 200: entry-parallel {hp['entry']['seconds']:.3f} s, "
                                  f"tiered {hp['tiered']['seconds']:.3f} s.")
        lines += ["", f"Median time ratio entry/tiered: {s['entry_over_tiered_median']} "
                      f"({s['both_finished']} queries finished in both).{hprd}"]
        if s.get("listed_queries_over_10ms"):
            lines += [f"Listing into device tables, median time ratio entry/tiered: "
                      f"{s['list_entry_over_tiered_median_over_10ms']} ({s['listed_queries_over_10ms']} queries "
                      f"above 10 ms in both)."]
        lines += [""]


def _peer_line(name: str, p: dict[str, Any]) -> str:
    commit = p.get("commit") or "commit not given"
    patched = "" if not p.get("patched") else (" (patched)" if p["patched"] is True else f" (patched: {p['patched']})")
    extra = f", extra arguments `{' '.join(p['extra_args'])}`" if p.get("extra_args") else ""
    return f"- {name} ({p['device']}): source {commit}{patched}{extra}"


def _peers(entries: list, lines: list[str], out_dir: Path) -> None:
    lines += ["### distsm against its peers, side by side", "",
              "Each suite's latest result (runs newest first; a run shows the suites no newer run measured).", ""]
    for name, r in entries:
        lines += [_where(name, r) + f"; distsm backend {r['backend']}; cap {r['max_seconds']} s per query and "
                  f"system; load average at start {r.get('load_average_start')}", ""]
        lines += [_peer_line(p, info) for p, info in r["peers"].items()] or ["- no peer given"]
        for suite, res in r["suites"].items():
            if not res.get("complete", True):
                ran = sorted({sys for q in res["queries"] for sys in q["systems"]})
                lines += ["", f"**{suite}**: cut short; no summary; each query's results so far (status, count, "
                              "seconds):", ""]
                lines += _table(["query", *ran], [[q["name"], *(_status(q["systems"].get(sys)) for sys in ran)]
                                                  for q in res["queries"]])
                lines += [""] + ([f"Note: {r['note']}", ""] if "note" in r else [])
                continue
            s = res["summary"]
            common = s["common"]
            lines += ["", f"**{suite}**: {res['note']}; {len(res['queries'])} queries run; summed seconds over the "
                          f"{common['queries']} queries every system finished; ratios are distsm / peer per query "
                          "(above 1: distsm slower), over the queries both finished.", ""]
            rows = []
            for system, e in s["systems"].items():
                vs = s["vs_distsm"].get(system)
                rows.append([system, e["queries"], e["solved"], e["exact"], e["wrong"], e["unchecked"], e["capped"],
                             e["unsupported"], e["error"], common["summed_seconds"].get(system, "-"),
                             vs["summed_ratio"] if vs else "-", vs["median_ratio"] if vs else "-",
                             f"{vs['worst_ratio']} ({vs['worst_query']})" if vs and vs["worst_query"] else "-"])
            lines += _table(["system", "queries", "solved", "exact", "wrong", "unchecked", "capped", "unsupported",
                             "errors", "summed s (common)", "distsm/peer summed", "median ratio", "worst ratio"],
                            rows)
            lines += ["", *_per_query(res["queries"])]
            for peer, vs in s["vs_distsm"].items():
                if vs.get("peer_timer_seconds"):
                    phases = ", ".join(f"{k} {v} s" for k, v in vs["peer_timer_seconds"].items())
                    lines += ["", f"{peer}'s own timers over the {vs['queries']} queries it and distsm finished: "
                                  f"{phases} (distsm {vs['distsm_seconds']} s)."]
        lines += [""]


def _per_query(queries: list[dict[str, Any]]) -> list[str]:
    """Per query: its count (as distsm found it) and each system's milliseconds, a peer's with its ratio distsm /
    peer; a query a system did not finish shows its status."""
    systems = [s for s in dict.fromkeys(k for q in queries for k in q["systems"]) if s != "distsm"]

    def cell(q: dict[str, Any], system: str) -> str:
        run = q["systems"].get(system)
        if run is None:
            return "-"
        if run.get("status") != "ok" or run.get("seconds") is None:
            return run.get("status", "-")
        ratio = q.get("ratio_distsm_over", {}).get(system)
        return f"{run['seconds'] * 1e3:.2f}" + ("" if ratio is None else f" ({ratio:.2g}x)")

    rows = [[q["name"], q["systems"].get("distsm", {}).get("count", "-"), cell(q, "distsm"),
             *(cell(q, s) for s in systems)] for q in queries]
    return ["Per query, milliseconds (distsm / peer in brackets):", "",
            *_table(["query", "count", "distsm ms", *(f"{s} ms" for s in systems)], rows)]


def _settings_section(lines: list[str], title: str, where: str, r: dict[str, Any], setting: str, unit: str,
                      seconds: dict[str, list[float]]) -> None:
    """A section of one result that timed several settings: its title, where and how it ran, its note, and per
    setting the seconds of every repeat."""
    lines += [f"### {title}", "", where, ""]
    if r.get("note"):
        lines += [f"Note: {r['note']}", ""]
    lines += _table([setting, f"summed seconds per {unit}"],
                    [[name, ", ".join(map(str, secs))] for name, secs in seconds.items()])
    lines += [""]


def _allocator(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        _settings_section(lines, "Host allocator of Dask workers",
                          _where(name, r) + f"; {r['queries']} of {r['generated']} {r['size']}-vertex queries (those "
                          f"under {r['cap_s']} s), NumPy, one child process per setting and repeat; counts agree: "
                          f"{r['counts_agree']}", r, "setting", "repeat", r["summed_seconds"])


def _index_memory(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        _settings_section(lines, "Whole-graph index in process memory or memory-mapped",
                          _where(name, r) + f"; NumPy, queries {', '.join(r['queries'])}; counts agree: "
                          f"{r['counts_agree']}", r, "index", "round", r["seconds"])


def _one_worker(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### One worker against in process, interleaved rounds", "",
                  _where(name, r) + f"; backend {r['backend']}; heavy queries {', '.join(r['heavy'])}; "
                  f"{r['small_queries']} small queries of {r['small_size']} vertices; counts agree: "
                  f"{r['counts_agree']}", ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        lines += _table(["batch", "round", "in process s", "one worker s", "worker / in process"],
                        [[batch, i, x["in_process_s"], x["worker_s"], x["ratio"]]
                         for batch, rounds in r["rounds"].items() for i, x in enumerate(rounds)])
        lines += ["", "Median ratios: " + ", ".join(f"{b} {s['median_ratio']}" for b, s in r["summary"].items()), ""]


def _first_use(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### A fresh process's first heavy counts, with and without the process warm-up", "",
                  _where(name, r) + f"; backend {r['backend']}; R-MAT 2^{r['graph']['scale']} vertices, "
                  f"{r['graph']['edges']} edges, {r['graph']['labels']} labels", ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        lines += _table(["variant", "warm-up s", "query", "first s", "again s", "first - again s"],
                        [[variant, round(run["warm_process_s"] or 0, 3), q, round(x["first_s"], 3),
                          round(x["again_s"], 3), round(x["extra_s"], 3)]
                         for variant, run in r["runs"].items()
                         for q, x in run.items() if isinstance(x, dict)])
        lines += [""]


def _contention(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### k plain processes at once against one alone", "", _where(name, r) + f"; {r['cpus']} CPUs", ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        lines += _table(["workload", "processes", "mean s", "slowest s", "mean / one", "slowest / one",
                         "efficiency at most"],
                        [[kind, x["processes"], x["mean_s"], x["max_s"], x["mean_over_one"], x["max_over_one"],
                          x["efficiency_bound"]] for kind, rows in r["workloads"].items() for x in rows])
        lines += [""]


def _status(run: dict[str, Any] | None) -> str:
    """One system's result on one query: status, count and seconds."""
    if not run:
        return "-"
    seconds = run.get("seconds")
    return " ".join(str(x) for x in (run.get("status"), run.get("count"),
                                     None if seconds is None else round(seconds, 4)) if x is not None)


def _device_compare(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        commits = sorted({f"{run['tree']} = {(run.get('machine') or {}).get('git_commit')}" for run in r["runs"]})
        lines += ["### Before and after on one GPU machine", "",
                  _where(name, r) + f"; {', '.join(commits)}; distsm's own timers, each tree installed apart and "
                  "run alternately, first tree swapped each round", ""]
        def backend(run: dict[str, Any]) -> str:
            words = (run.get("command") or "").split()
            return words[words.index("--backend") + 1] if "--backend" in words[:-1] else "-"

        rows = [[backend(run), suite, run["round"], run["tree"], v["summed_s"], v["exact"]]
                for run in sorted(r["runs"], key=lambda x: (x["run"], x["round"], x["tree"]))
                for suite, v in run["suites"].items()]
        lines += _table(["backend", "suite", "round", "tree", "summed seconds", "all exact"], rows)
        lines += [""] + [f"- {line}" for line in compare_summary.lines(r.get("summary") or {})] + [""]


def _paired(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        trees = ", ".join(f"{t} = {v['site'].rsplit('/', 1)[-1]}" + (f" ({v['env']})" if v["env"] else "")
                          for t, v in r["trees"].items())
        lines += ["### Trees side by side, query by query (benchmarks/paired.py)", "",
                  _where(name, r) + f"; {trees}; {r['rounds']} rounds" + (f"; {r['note']}" if "note" in r else ""), ""]
        rows = [[suite, tree, s["queries"], s["summed_least_ratio"], s["median_paired_ratio"],
                 s["over_bound_paired"], s["over_bound_least"], s["worst_paired"][:3]]
                for suite, v in r["suites"].items() for tree, s in v["summary"].items()]
        lines += _table(["suite", "tree against the first", "queries", "summed least", "median paired ratio",
                         f"over {r['bound']}x (paired)", "over (least)", "worst (paired)"], rows) + [""]
        staged = [[suite, tree, stage, *values] for suite, v in r["suites"].items()
                  for tree, stages in v.get("stages_us", {}).items() for stage, values in stages.items()]
        if staged:
            lines += ["Stages (`--stages`), microseconds a count: the first tree's, this tree's, and the mean over "
                      "queries of the median paired difference.", ""]
            lines += _table(["suite", "tree", "stage", "first tree", "this tree", "paired difference"], staged) + [""]


def _device_warmup(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### First use of the GPU kernels: cold kernel cache, and after `distsm warmup`", "",
                  _where(name, r) + f"; commit {r['machine'].get('git_commit')}" + (f"; {r['note']}" if "note" in r
                                                                                  else ""), ""]
        lines += _table(["step", "query", "count", "first count s", "second count s"],
                        [[s["step"], s["query"], s["count"], s["first_s"], s["second_s"]]
                         for s in r["steps"] if "first_s" in s])
        lines += [""] + [f"- {s['step']}: " + ", ".join(f"{k} {v}" for k, v in s.items() if k != "step")
                         for s in r["steps"] if "first_s" not in s] + [""]


def _loading(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        sec = r["seconds"]
        lines += ["### Loading graphs", "",
                  _where(name, r) + f"; a random SNAP edge list of {r['edges']:,} lines over {r['vertices']:,} ids "
                  f"({r['file_bytes'] / 1e6:.0f} MB), best of the repeats in one run", ""]
        readers = ["pandas.read_csv", "pyarrow.csv.read_csv", "distsm.read_graph", "Graph.from_pandas_edgelist",
                   "distsm.save_graph", "distsm.load_graph"]
        lines += _table(["reader", "best s", "all s"],
                        [[k, sec[k], ", ".join(map(str, sec.get(f"{k}_all", [])))] for k in readers if sec.get(k)])
        lines += ["", f"distsm.read_graph / pandas.read_csv: {sec['ratio_read_graph_to_pandas']}x; graph: "
                      f"{sec['graph']['n']:,} vertices, {sec['graph']['m']:,} edges, "
                      f"{sec['graph']['array_bytes'] / 1e6:.0f} MB of arrays", ""]
        lines += _table(["edges", "peak RSS MB", "RSS after import MB", "graph arrays MB", "peak / arrays",
                         "one cold read s"],
                        [[f"{x['edges']:,}", round(x["peak_rss_bytes"] / 1e6), round(x["rss_after_import_bytes"] / 1e6),
                          round(x["graph_bytes"] / 1e6), x["peak_over_graph"], x.get("read_s", "")]
                         for x in r["memory"]])
        lines += [""]


def _batch_gpu(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### HPRD as one batch against one query at a time", "",
                  _where(name, r) + f"; {r.get('backend', 'cupy')}; median of {r['reps']} passes, "
                  f"{r['counted_alone']} queries left to the per-query path; counts: {r['counts_checked']}", ""]
        if "seconds" in r:
            lines += [f"- {way}: " + ", ".join(f"{k} {v['median']:.4f} s" for k, v in parts.items())
                      for way, parts in r["seconds"].items()]
        else:  # the first run, whose batched pass was written out by hand (filter, plan, count by stage)
            lines += [f"- one at a time: {r['one_at_a_time_s']['median']:.4f} s",
                      f"- batched: {r['batched_s']['median']:.4f} s ("
                      + ", ".join(f"{k} {v['median']:.4f} s" for k, v in r["batched_stages"].items()) + ")"]
        lines += [""]


def _device_trailing(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### The trailing count on the GPU: array code against the fused kernel", "",
                  (_where(name, r) if "machine" in r else f"*{name}*: {r.get('device')}; "
                   "`benchmarks/device_trailing.sh`") + f"; data {r.get('data')}", ""]
        lines += _table(["query", "core", "trailing", "core rows", "count", "array s", "fused s", "whole count s"],
                        [[q["query"], q["core"], q["trailing"], q["core_rows"], q["count"], q["array_s"], q["fused_s"],
                          q["whole_s"]] for q in r["rows"]])
        lines += [""]
        check = out_dir / name.replace("device_trailing", "device_trailing_warmup_check")
        if check.exists():
            c = json.loads(check.read_text())
            lines += [f"With `WARMUP_CHECK=1` (*{check.name}*): `distsm warmup` took {c['warmup_s']} s; a fresh "
                      "process counting gMatch's suite and these queries after it still compiled: "
                      f"{c['compiled_after_warmup']}", ""]


def _explain_stages(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### Where a count's time goes, stage by stage (medians of distsm.explain)", "",
                  _where(name, r) + f"; backend {r['backend']}; {r['repeat']} runs a query", ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        runs = r.get("runs") or [{"tree": "", "round": 1, "queries": r["queries"]}]
        lines += _table(["tree", "round", "query", "count median ms", "stage medians ms"],
                        [[run["tree"], run["round"], q, round(1e3 * x["count_median_s"], 2),
                          ", ".join(f"{k} {1e3 * v:.2f}" for k, v in x["stages_median_s"].items())]
                         for run in runs for q, x in run["queries"].items()])
        lines += [""]


def _plan_share(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        shares = [str(s) for s in r["shares"]]
        lines += ["### The planner's sampling share for device plans", "",
                  _where(name, r) + f"; backend {r['backend']}; {r['rounds']} rounds of {r['repeat']} counts", ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        lines += _table(["suite", "query", "count"] + [f"{s} ms" for s in shares],
                        [[suite, q, next(iter(row.values()))["count"]] +
                         [round(1e3 * row[s]["seconds"], 1) for s in shares]
                         for suite, rows in r["suites"].items() for q, row in rows.items()])
        lines += ["", "Summed seconds: " + "; ".join(f"{suite} " + ", ".join(f"{s}: {v}" for s, v in sums.items())
                                                     for suite, sums in r["summed_s"].items()), ""]


def _dense_heavy(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### Dense heavy queries drawn and kept", "", _where(name, r), ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        lines += _table(["query", "vertices", "edges", "count (selection)", "seconds (selection)"],
                        [[q["name"], q["size"], q["edges"], q["count"], q["seconds"]]
                         for q in r["manifest"]["queries"]])
        lines += [""]


def _motifs(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### Motif counts against G2Miner (unique, edge-induced)", "", _where(name, r), ""]
        rows = []
        for pattern, rec in r.get("patterns", {}).items():
            one = rec.get("g2miner", {}).get("1", {})
            spread = "; ".join(f"{n}: {c.get('median_s')} s ({c.get('speedup')}x)"
                               for n, c in rec.get("distsm_cluster", {}).items())
            rows.append([pattern, rec.get("count"), rec.get("distsm", {}).get("median_s"),
                         one.get("kernel_median_s", "-"), rec.get("distsm_over_g2miner_1gpu_kernel", "-"),
                         spread or "-"])
        lines += _table(["pattern", "count", "distsm 1 GPU s", "G2Miner 1 GPU kernel s", "distsm / G2Miner",
                         "distsm on a cluster (GPUs: median, speed-up)"], rows)
        setup = r.get("distsm_cluster", {})
        if setup:
            lines += [""] + [f"Cluster of {n} GPUs ready in {v.get('seconds')} s." for n, v in setup.items()]
        lines += [""] + ([f"Note: {r['note']}", ""] if r.get("note") else [])


def _trial_placement(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### Light joins on the host and on the GPU: the host trial's allowance", "", _where(name, r), ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        fits = [("all", r["fit"])] + [(k[4:], v) for k, v in sorted(r.items()) if k.startswith("fit:")]
        lines += _table(["queries of", "kept", "best allowance per vertex", "most candidates", "rule s",
                         "no host trial s", "faster side s", "rule / faster (geometric mean)"],
                        [[who, f["queries"], f.get("trial_host_entries", "-"), f.get("trial_host_candidates", "-"),
                          round(f["rule"]["rule_s"], 4) if "rule" in f else "-",
                          round(f["rule"]["device_s"], 4) if "rule" in f else "-",
                          round(f["rule"]["best_s"], 4) if "rule" in f else "-",
                          round(f["rule"]["geomean_over_best"], 3) if "rule" in f else "-"] for who, f in fits])
        lines += [""]


def _filter_placement(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### Light counts with the filter on the host and on the GPU: its pool limit", "",
                  _where(name, r), ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        fits = [("all", r["fit"])] + [(k[4:], v) for k, v in sorted(r.items()) if k.startswith("fit:")]
        lines += _table(["queries of", "fitted", "best pool limit", "rule s", "host s", "device s", "faster side s",
                         "rule / faster (geometric mean)"],
                        [[who, f["queries"], f.get("host_filter_vertices", "-")] +
                         ([round(f["rule"][k], 4) for k in ("rule_s", "host_s", "device_s", "best_s")] +
                          [round(f["rule"]["geomean_over_best"], 3)] if "rule" in f else ["-"] * 5)
                         for who, f in fits])
        lines += [""]


def _trial_placement_ab(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### The host trial's allowance before and after, light queries", "", _where(name, r), ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        runs = list(r["rows"][0]["summed_light_ms"]) if r["rows"] else []
        lines += _table(["suite", "light queries", "new_1 / old_1", "new_2 / old_2", "old_1 / old_2",
                         *(f"{n} ms" for n in runs)],
                        [[x["suite"], x["light_queries"], x["new_1_over_old_1"], x["new_2_over_old_2"],
                          x["old_1_over_old_2"], *x["summed_light_ms"].values()] for x in r["rows"]])
        lines += [""]


def _trailing_bits(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += ["### The trailing count by walked runs and by bit rows", "", _where(name, r), ""]
        lines += [f"Note: {r['note']}", ""] if r.get("note") else []
        lines += _table(["suite", "query", "count", "run entries", "bit-row words", "entries / words",
                         "runs ms", "auto ms", "count ms (runs / auto)"],
                        [[q["suite"], q["query"], q["count"], q["never"]["entries"], q["auto"]["words"],
                          round(q["never"]["entries"] / q["auto"]["words"], 1) if q["auto"]["words"] else "-",
                          round(1e3 * q["never"]["trailing_s"], 2), round(1e3 * q["auto"]["trailing_s"], 2),
                          f"{1e3 * q['never']['count_s']:.2f} / {1e3 * q['auto']['count_s']:.2f}"]
                         for q in r["queries"]])
        lines += [""]


def _design_notes(entries: list, lines: list[str], out_dir: Path) -> None:
    for name, r in entries:
        lines += [_where(name, r), "", r["note"], ""]
        lines += _table(["where in the code", "machine", "measured"],
                        [[f"`{n['site']}`", n["machine"], n["measured"]] for n in r["notes"]])
        lines += [""]


def _others(found: dict[str, list], lines: list[str]) -> None:
    """Results of kinds without a section of their own: where, how and the note."""
    for kind, entries in sorted(found.items()):
        for name, r in entries:
            lines += [f"{_where(name, r)} ({kind})", ""] + ([f"Note: {r['note']}", ""] if r.get("note") else [])


SECTIONS = {"hprd_cpu": _hprd_cpu, "gpu_engine": _gpu_engine, "pbe_shared": _pbe_shared,
            "cluster_scaling": _cluster_scaling, "cluster_regimes": _cluster_scaling,
            "dashboard_screenshot": _dashboard, "rdf_lubm": _rdf_lubm,
            "synthetic": _synthetic, "outofcore": _outofcore, "load_balance": _load_balance,
            "peers": _peers, "allocator": _allocator, "device_compare": _device_compare, "paired": _paired,
            "device_warmup": _device_warmup, "loading": _loading, "batch_gpu": _batch_gpu,
            "device_trailing": _device_trailing, "index_memory": _index_memory,
            "one_worker": _one_worker, "first_use": _first_use, "contention": _contention,
            "explain_stages": _explain_stages, "plan_share": _plan_share, "dense_heavy": _dense_heavy,
            "motifs": _motifs, "trial_placement": _trial_placement, "filter_placement": _filter_placement,
            "trial_placement_ab": _trial_placement_ab, "trailing_bits": _trailing_bits,
            "design_notes": _design_notes}


#: The questions the report answers, in order, each by the benchmarks that measure it.
QUESTIONS = (
    ("Against the peers on one GPU: HPRD, gMatch's suite, the dense suites",
     ("peers", "device_compare", "paired", "dense_heavy", "plan_share", "trial_placement", "trial_placement_ab",
      "filter_placement", "gpu_engine", "batch_gpu")),
    ("Few labels at scale: motif counts against G2Miner, on one GPU and several", ("motifs",)),
    ("Scaling over workers and GPUs", ("cluster_scaling", "one_worker", "contention")),
    ("Beyond one GPU: out of core, memory per worker", ("cluster_regimes", "outofcore", "index_memory", "allocator")),
    ("Loading and cold start", ("loading", "first_use", "device_warmup")),
    ("The engine's paths: shared execution, load balance, trailing counts, stages",
     ("pbe_shared", "synthetic", "load_balance", "trailing_bits", "device_trailing", "explain_stages", "hprd_cpu")),
    ("RDF and the dashboard", ("rdf_lubm", "dashboard_screenshot")),
    ("Measurements behind the engine's settings", ("design_notes",)),
)


def _plain(entries: list, lines: list[str], out_dir: Path) -> None:
    """A result without a table of its own: where, how and its note."""
    for name, r in entries:
        lines += [_where(name, r), ""] + ([f"Note: {r['note']}", ""] if r.get("note") else [])


#: Benchmarks whose runs each measure some suites: the report shows every suite's latest result, not only the latest
#: run's (a run of two generated suites would otherwise hide the gMatch-suite run made minutes before it).
PER_SUITE = ("peers",)


def _latest_per_suite(entries: list) -> list:
    """``entries`` (newest first) that hold a suite no newer one holds, each cut to those suites."""
    seen: set[str] = set()
    out = []
    for name, r in entries:
        fresh = [k for k in r.get("suites", {}) if k not in seen]
        if fresh:
            out.append((name, {**r, "suites": {k: r["suites"][k] for k in fresh}}))
            seen.update(fresh)
    return out


def _latest_first(entries: list) -> list:
    return sorted(entries, key=lambda e: (str(e[1].get("when", "")), e[0]), reverse=True)


def build(results: Path = meta.RESULTS, out: Path | None = None) -> Path:
    """Write the report, one section per question (:data:`QUESTIONS`), each benchmark's latest result in full and
    its earlier runs a line each (their numbers stay in the JSON); returns its path."""
    out = out or results.parent / "README.md"
    found = _load(results)
    lines = ["# distsm benchmarks", "",
             "Generated by `python -m benchmarks report` from the JSON files in `benchmarks/results/`; do not edit.",
             "One section per question; under it, each benchmark's latest result with the machine and command it "
             "was measured with, then its earlier runs, one line each (their numbers are in the JSON files).", ""]
    for title, kinds in QUESTIONS:
        lines += [f"## {title}", ""]
        for kind in kinds:
            entries = _latest_first(found.pop(kind, []))
            if not entries:
                lines += [f"### {kind}", "", "Not run yet.", ""]
                continue
            shown = _latest_per_suite(entries) if kind in PER_SUITE else entries[:1]
            SECTIONS.get(kind, _plain)(shown, lines, results)
            earlier = [e for e in entries if e[0] not in {n for n, _ in shown}]
            if earlier:
                lines += [f"Earlier runs of `{kind}`:", ""] + [f"- {_where(n, r)}" for n, r in earlier] + [""]
    if found:
        lines += ["## One-off comparisons (A/B runs of one setting)", ""]
        _others(found, lines)
    out.write_text("\n".join(lines) + "\n")
    return out
