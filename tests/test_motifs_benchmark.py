"""benchmarks/motifs.py's inputs for G2Miner: the CSR it writes and, on a labelled graph, the subgraph induced by the
query label, whose unlabelled counts must equal the labelled graph's counts of label-0 patterns."""

from __future__ import annotations

import numpy as np

import distsm
from benchmarks.generators import rmat_graph
from benchmarks.motifs import check_csr, pattern_graph, query_label_subgraph, write_g2miner_csr


def test_the_query_label_subgraph_counts_as_the_labelled_graph(tmp_path):
    data = rmat_graph(9, 3000, vertex_labels=4, edge_labels=1, seed=3, a=0.57, b=0.19, c=0.19)
    sub = query_label_subgraph(data)
    assert sub.n == int(np.sum(np.asarray(data.vertex_labels) == 0)) and 0 < sub.m < data.m
    for name in ("triangle", "4-cycle", "diamond"):
        query = pattern_graph(name)
        assert distsm.count(sub, query, unique=True, backend="numpy") == \
            distsm.count(data, query, unique=True, backend="numpy"), name
    ptr, nbr = check_csr(sub)
    written = write_g2miner_csr(sub, tmp_path / "g")
    assert written["nnz"] == 2 * sub.m
    assert np.array_equal(np.fromfile(tmp_path / "g.vertex.bin", "<i8"), ptr)
    assert np.array_equal(np.fromfile(tmp_path / "g.edge.bin", "<i4"), nbr)
