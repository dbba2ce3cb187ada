"""The broad dense suites: the clustered generator and the selection of one query per size and decade of answers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import networkx as nx
import numpy as np

import distsm
from benchmarks import dense_suites
from benchmarks.generators import clustered_graph


def test_clustered_graphs_are_simple_seeded_and_hold_triangles():
    g = clustered_graph(2000, 10, 20, seed=3)
    assert g.n == 2000 and not g.directed
    assert 0.8 * 10_000 <= g.m <= 10_000  # about n * degree / 2 edges (repeats merged)
    assert np.all(g.edge_src != g.edge_dst) and set(np.unique(g.vertex_labels)) <= set(range(20))
    again = clustered_graph(2000, 10, 20, seed=3)
    assert np.array_equal(g.edge_src, again.edge_src) and np.array_equal(g.vertex_labels, again.vertex_labels)
    def clustering(closure: float) -> float:
        h = clustered_graph(2000, 10, 20, seed=3, closure=closure)
        return nx.average_clustering(nx.Graph(zip(h.edge_src.tolist(), h.edge_dst.tolist())))

    assert clustering(0.4) > 2 * clustering(0.0)  # closed wedges are what make dense queries


def test_the_selection_keeps_one_query_per_size_and_decade(tmp_path: Path):
    out = tmp_path / "suites.json"
    dense_suites.main(["--dir", str(tmp_path), "--graphs", "c3k-l20", "--sizes", "16", "--candidates", "6",
                       "--cap", "20", "--backend", "numpy", "--out", str(out)])
    record = json.loads(out.read_text())["graphs"]["c3k-l20"]
    kept = record["manifest"]["queries"]
    assert kept, record["drawn"]
    decades = [math.floor(math.log10(q["count"])) for q in kept]
    assert len(decades) == len(set(decades)) and all(1 <= d <= 11 for d in decades)
    data = distsm.read_graph(tmp_path / "c3k-l20" / "data.graph")
    manifest = json.loads((tmp_path / "c3k-l20" / "manifest.json").read_text())
    assert manifest["queries"] == kept
    first = distsm.read_graph(tmp_path / "c3k-l20" / kept[0]["path"])
    assert first.n == 16 and 2 * first.m >= 3 * first.n  # dense: average degree at least 3
    assert distsm.count(data, first, backend="numpy") == kept[0]["count"]
