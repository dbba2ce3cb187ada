"""Independent oracles and random inputs for the engine tests.

Nothing here uses distsm's engine: brute force enumerates maps directly from the edge list, and networkx's VF2
matchers are a separate implementation.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
from networkx.algorithms import isomorphism as iso

from distsm import Graph


def random_graph(rng: np.random.Generator, n: int, p: float, vlabels: int, elabels: int, directed: bool) -> Graph:
    pairs = [(u, v) for u in range(n) for v in range(n) if u != v and (directed or u < v)]
    keep = [pr for pr in pairs if rng.random() < p]
    edges = np.array(keep, dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(edges, n=n, edge_labels=rng.integers(0, elabels, len(keep)),
                            vertex_labels=rng.integers(0, vlabels, n), directed=directed)


def random_connected_query(rng: np.random.Generator, data: Graph, size: int, extra_p: float,
                           vlabels: int, elabels: int) -> Graph:
    """A connected query: a random walk subgraph of ``data`` when possible (so matches exist), plus noise."""
    n = size
    # Random spanning tree, then extra edges.
    edges = {}
    for v in range(1, n):
        u = int(rng.integers(0, v))
        a, b = (u, v) if (not data.directed or rng.random() < 0.5) else (v, u)
        edges[(a, b)] = int(rng.integers(0, elabels))
    for u in range(n):
        for v in range(n):
            if u != v and (data.directed or u < v) and (u, v) not in edges and (v, u) not in edges \
                    and rng.random() < extra_p:
                edges[(u, v)] = int(rng.integers(0, elabels))
    pairs = np.array(list(edges), dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(pairs, n=n, edge_labels=list(edges.values()),
                            vertex_labels=rng.integers(0, vlabels, n), directed=data.directed)


def sampled_query(rng: np.random.Generator, data: Graph, size: int) -> Graph | None:
    """A connected query copied from ``data``: a grown vertex set and a random connected subset of its edges."""
    if data.m == 0:
        return None
    und = data.to_networkx().to_undirected(as_view=True)
    start = int(rng.integers(0, data.n))
    if und.degree[start] == 0:
        return None
    verts = [start]
    while len(verts) < size:
        frontier = sorted({w for v in verts for w in und[v]} - set(verts))
        if not frontier:
            break
        verts.append(int(rng.choice(frontier)))
    index = {v: i for i, v in enumerate(verts)}
    keep = [(index[u], index[v], int(lab)) for u, v, lab in zip(data.edge_src, data.edge_dst, data.edge_labels)
            if u in index and v in index]
    # Drop some non-tree edges at random, keeping the query connected.
    rng.shuffle(keep)
    chosen = []
    comp = nx.Graph()
    comp.add_nodes_from(range(len(verts)))
    for u, v, lab in keep:
        if not nx.has_path(comp, u, v) or rng.random() < 0.6:
            chosen.append((u, v, lab))
            comp.add_edge(u, v)
    arr = np.array([(u, v) for u, v, _ in chosen], dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(arr, n=len(verts), edge_labels=[lab for *_, lab in chosen],
                            vertex_labels=data.vertex_labels[verts], directed=data.directed)


def queries_for(rng: np.random.Generator, data: Graph, sizes: list[int], vl: int, el: int) -> list[Graph]:
    """Connected queries of the given sizes: copied from ``data`` where possible (they have matches), random
    otherwise, and one whose vertex label ``data`` never uses (no candidates)."""
    out = []
    for k, size in enumerate(sizes):
        q = sampled_query(rng, data, size) if k % 2 else None
        out.append(q if q is not None else random_connected_query(rng, data, size, 0.3, vl, el))
    lone = Graph.from_edges(np.array([[0, 1]]), n=2, vertex_labels=[vl + 3, 0], directed=data.directed)
    return out + [lone]


def _edge_map(g: Graph) -> dict[tuple[int, int], int]:
    out = {}
    for u, v, lab in zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_labels.tolist()):
        out[(u, v)] = lab
        if not g.directed:
            out[(v, u)] = lab
    return out


def brute_force(data: Graph, query: Graph, *, induced: bool = False, homomorphism: bool = False) -> set[tuple]:
    """Every match as a tuple ``(f(0), ..., f(nq-1))``, by enumerating all maps."""
    de, qe = _edge_map(data), _edge_map(query)
    maps = (itertools.product(range(data.n), repeat=query.n) if homomorphism
            else itertools.permutations(range(data.n), query.n))
    out = set()
    for f in maps:
        if any(data.vertex_labels[f[u]] != query.vertex_labels[u] for u in range(query.n)):
            continue
        if any(de.get((f[a], f[b])) != lab for (a, b), lab in qe.items()):
            continue
        if induced and any((f[a], f[b]) in de and (a, b) not in qe
                           for a in range(query.n) for b in range(query.n) if a != b):
            continue
        out.add(tuple(f))
    return out


def networkx_matches(data: Graph, query: Graph, *, induced: bool = False) -> set[tuple]:
    """Matches by networkx VF2 (monomorphisms, or induced subgraph isomorphisms)."""
    gd, gq = data.to_networkx(), query.to_networkx()
    cls = iso.DiGraphMatcher if data.directed else iso.GraphMatcher
    gm = cls(gd, gq, node_match=iso.categorical_node_match("label", None),
             edge_match=iso.categorical_edge_match("label", None))
    it = gm.subgraph_isomorphisms_iter() if induced else gm.subgraph_monomorphisms_iter()
    out = set()
    for mapping in it:  # data node -> query node
        f = [0] * query.n
        for dv, qv in mapping.items():
            f[qv] = dv
        out.add(tuple(f))
    return out


def oracle_mappings(data_nx, query_nx, restrict=None) -> set[frozenset]:
    """Every match of networkx graph ``query_nx`` in ``data_nx`` (``label`` attributes compared by value) as a
    frozenset of ``(query node, data node)`` pairs, by networkx VF2 monomorphisms; ``restrict`` (query node ->
    allowed data nodes) keeps only the matches within it."""
    gm_cls = iso.DiGraphMatcher if data_nx.is_directed() else iso.GraphMatcher
    gm = gm_cls(data_nx, query_nx, node_match=iso.categorical_node_match("label", None),
                edge_match=iso.categorical_edge_match("label", None))
    out = set()
    for m in gm.subgraph_monomorphisms_iter():
        inv = {qv: dv for dv, qv in m.items()}
        if restrict is None or all(inv[u] in allowed for u, allowed in restrict.items()):
            out.add(frozenset(inv.items()))
    return out


def subgraph_key(data: Graph, query: Graph, f: tuple) -> tuple:
    """The matched subgraph of an embedding: its vertex set and its (labelled) edge set."""
    edges = []
    for u, v, lab in zip(query.edge_src.tolist(), query.edge_dst.tolist(), query.edge_labels.tolist()):
        a, b = f[u], f[v]
        if not data.directed:
            a, b = min(a, b), max(a, b)
        edges.append((a, b, lab))
    return frozenset(f), frozenset(edges)


def make_case(seed: int, n: int, p: float, vl: int, el: int, directed: bool, qsize: int,
              sampled: bool) -> tuple[Graph, Graph]:
    """A random data graph and a connected query (copied from the data when ``sampled`` and possible)."""
    rng = np.random.default_rng(seed)
    data = random_graph(rng, n, p, vl, el, directed)
    query = sampled_query(rng, data, qsize) if sampled else None
    if query is None:
        query = random_connected_query(rng, data, qsize, 0.3, vl, el)
    return data, query


def check_split(result, k):
    """A partitioned result's breakdown: a PBE plan's ``sum(intra) + inter`` is its count (``intra`` per part); a
    global plan counted every match in one join over the whole graph and carries no split."""
    from distsm.plan import Strategy

    if result.intra is None:
        assert result.strategy is Strategy.GLOBAL and result.inter is None, result
        assert result.runs == "one join over the whole graph counting every match"
    else:
        assert len(result.intra) == k and result.count == sum(result.intra) + result.inter, result


def heavy_case():
    """``(data, heavy, edge)``: a dense random graph (2000 vertices, 40000 edges), a 7-vertex path whose
    embeddings (about 10^13) no test could finish counting, and a single edge (2m embeddings, a fraction of a
    second)."""
    import networkx as nx

    from distsm import Graph

    data = Graph.from_networkx(nx.gnm_random_graph(2000, 40000, seed=1))
    return data, Graph.from_networkx(nx.path_graph(7)), Graph.from_networkx(nx.path_graph(2))


def brute_trailing_sets(query: Graph, most: int, excluded: frozenset[int] = frozenset(),
                        group: int | None = None) -> set[frozenset[int]]:
    """Every trailing set of ``query`` by definition: non-empty, independent, at most ``most`` vertices, none
    excluded, at most ``group`` vertices of one label, and a non-empty connected rest."""
    g = nx.Graph(list(zip(query.edge_src.tolist(), query.edge_dst.tolist())))
    g.add_nodes_from(range(query.n))
    labels = [int(x) for x in query.vertex_labels]
    out = set()
    for size in range(1, most + 1):
        for s in itertools.combinations(range(query.n), size):
            if excluded & set(s) or any(g.has_edge(a, b) for a, b in itertools.combinations(s, 2)):
                continue
            if group is not None and max(sum(labels[u] == x for u in s) for x in labels) > group:
                continue
            rest = set(range(query.n)) - set(s)
            if rest and nx.is_connected(g.subgraph(rest)):
                out.add(frozenset(s))
    return out
