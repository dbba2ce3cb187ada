"""All 200 HPRD queries against their published embedding counts."""

import pytest
from hprd import DATA, expected_counts, query_path

import distsm

EXPECTED = expected_counts()


@pytest.fixture(scope="module")
def hprd():
    return distsm.read_graph(DATA)


def test_suite_is_complete():
    assert len(EXPECTED) == 200


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_known_count(hprd, name):
    query = distsm.read_graph(query_path(name))
    assert distsm.count(hprd, query, backend="numpy") == EXPECTED[name]


@pytest.mark.parametrize("name", ["query_dense_16_2", "query_dense_16_10", "query_dense_16_90"])
def test_listing_and_small_budget_agree_with_known_count(hprd, name):
    query = distsm.read_graph(query_path(name))
    rows = distsm.match(hprd, query, memory_budget=20_000, backend="numpy")
    assert rows.shape == (EXPECTED[name], 16)
    assert len({tuple(r) for r in rows.tolist()}) == EXPECTED[name]
    # every row really is an embedding: labels kept, edges mapped to edges, injective
    adj = {(int(u), int(v)) for u, v in zip(hprd.edge_src, hprd.edge_dst)}
    for r in rows:
        assert len(set(r.tolist())) == 16
        assert (hprd.vertex_labels[r] == query.vertex_labels).all()
        for a, b in zip(query.edge_src, query.edge_dst):
            x, y = int(r[a]), int(r[b])
            assert (min(x, y), max(x, y)) in adj
