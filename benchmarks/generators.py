"""Synthetic inputs for the benchmarks: R-MAT power-law graphs with power-law labels, random-walk queries.

Everything is seeded and vectorised with NumPy; a 2**20-vertex, 16M-edge graph takes seconds, not minutes.

* :func:`rmat_graph` draws R-MAT edges (Chakrabarti et al.; default quadrant probabilities a, b, c, d =
  0.57, 0.19, 0.19, 0.05 as in Graph500), drops self loops and repeats, relabels vertices by a random
  permutation (hubs are not all at small ids) and gives vertices and edges Zipf-distributed labels
  (``P(label = i) ~ 1 / (i + 1) ** alpha``, the power-law labelling GSI/SGSI/EGSM use).
* :func:`random_walk_query` grows a vertex set by a random walk (SGSI/EGSM style: a random walk from a random
  start, each new vertex is added with all its edges to the set), so the query is an induced subgraph of the
  data with the data's labels and has at least one match.  ``kind="dense"`` keeps walks whose query has average
  degree >= 3; ``kind="sparse"`` removes random non-tree edges until the average degree is < 3 (the query stays
  connected and still has a match).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from distsm.graph import Graph


def zipf_labels(rng: np.random.Generator, count: int, labels: int, alpha: float = 1.0) -> np.ndarray:
    """``count`` labels in ``0..labels-1`` with ``P(i) ~ (i + 1) ** -alpha`` (label 0 the most frequent)."""
    if labels <= 1:
        return np.zeros(count, np.int64)
    p = 1.0 / np.arange(1, labels + 1, dtype=np.float64) ** alpha
    p /= p.sum()
    return np.minimum(np.searchsorted(np.cumsum(p), rng.random(count), side="right"), labels - 1).astype(np.int64)


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` for int64 keys by sort + mask (much faster than the hash-based path on 10M+ keys)."""
    a = np.sort(a)
    if a.shape[0] == 0:
        return a
    keep = np.empty(a.shape[0], bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def rmat_edges(rng: np.random.Generator, scale: int, m: int, a: float = 0.57, b: float = 0.19,
               c: float = 0.19) -> tuple[np.ndarray, np.ndarray]:
    """``m`` raw R-MAT draws on ``2**scale`` vertices (may hold loops and repeats)."""
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    ab, abc = a + b, a + b + c
    for level in range(scale):
        r = rng.random(m, dtype=np.float32)
        bit = np.int64(1) << np.int64(scale - 1 - level)
        down = r >= ab                       # quadrants c, d: source bit set
        right = ((r >= a) & (r < ab)) | (r >= abc)  # quadrants b, d: target bit set
        src += down * bit
        dst += right * bit
    return src, dst


def rmat_graph(scale: int = 20, edges: int = 16_000_000, vertex_labels: int = 16, edge_labels: int = 1, *,
               seed: int = 0, alpha: float = 1.0, directed: bool = False, a: float = 0.57, b: float = 0.19,
               c: float = 0.19) -> Graph:
    """An R-MAT graph with ``2**scale`` vertices and ``edges`` distinct edges (fewer only if R-MAT cannot
    produce that many distinct pairs), Zipf vertex and edge labels."""
    rng = np.random.default_rng(seed)
    n = 1 << scale
    keys = np.zeros(0, np.int64)
    draw = int(edges * 1.1) + 1024
    for _ in range(8):
        s, t = rmat_edges(rng, scale, draw, a, b, c)
        keep = s != t
        s, t = s[keep], t[keep]
        if not directed:
            s, t = np.minimum(s, t), np.maximum(s, t)
        keys = _sorted_unique(np.concatenate([keys, s * n + t]))
        if keys.shape[0] >= edges:
            break
        draw = int((edges - keys.shape[0]) * 1.5) + 1024
    if keys.shape[0] > edges:
        keys = rng.choice(keys, edges, replace=False)
    perm = rng.permutation(n).astype(np.int64)
    src, dst = perm[keys // n], perm[keys % n]
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    return Graph.from_edges(np.stack([src, dst], 1), n=n,
                            edge_labels=zipf_labels(rng, src.shape[0], edge_labels, alpha),
                            vertex_labels=zipf_labels(rng, n, vertex_labels, alpha), directed=directed)


def clustered_graph(n: int, avg_degree: float, labels: int, *, seed: int = 0, closure: float = 0.4,
                    gamma: float = 2.5, alpha: float = 1.0) -> Graph:
    """An undirected graph of ``n`` vertices and about ``n * avg_degree / 2`` edges with power-law degrees and
    triangles, Zipf vertex labels in ``0..labels-1``: a Chung-Lu graph (expected degrees ``~ rank ** (-1 / (gamma
    - 1))``) holds ``1 - closure`` of the edges, and the rest close wedges (an edge ``v-a``, then ``a`` joined to
    another neighbour of ``v``), so dense random-walk queries find dense neighbourhoods as in real networks."""
    rng = np.random.default_rng(seed)
    weights = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (gamma - 1.0))
    cdf = np.cumsum(weights) / weights.sum()
    m = int(n * avg_degree / 2)

    def draw(count: int) -> np.ndarray:
        return np.minimum(np.searchsorted(cdf, rng.random(count)), n - 1).astype(np.int64)

    def unique_pairs(s: np.ndarray, t: np.ndarray) -> np.ndarray:
        keep = s != t
        lo, hi = np.minimum(s[keep], t[keep]), np.maximum(s[keep], t[keep])
        return _sorted_unique(lo * n + hi)

    keys = unique_pairs(draw(int(m * (1 - closure))), draw(int(m * (1 - closure))))
    for _ in range(4):
        want = m - keys.shape[0]
        if want <= 0:
            break
        s, t = keys // n, keys % n
        heads, tails = np.concatenate([s, t]), np.concatenate([t, s])
        order = np.argsort(heads, kind="stable")
        heads, tails = heads[order], tails[order]
        start = np.searchsorted(heads, np.arange(n))
        degree = np.bincount(heads, minlength=n)
        pick = rng.integers(0, heads.shape[0], want)           # an edge v-a, v its head
        v, a = heads[pick], tails[pick]
        b = tails[start[v] + (rng.random(want) * degree[v]).astype(np.int64)]  # another neighbour of v
        keys = _sorted_unique(np.concatenate([keys, unique_pairs(a, b)]))
    perm = rng.permutation(n).astype(np.int64)
    src, dst = perm[keys // n], perm[keys % n]
    return Graph.from_edges(np.stack([np.minimum(src, dst), np.maximum(src, dst)], 1), n=n,
                            vertex_labels=zipf_labels(rng, n, labels, alpha))


def _induced_edges(data: Graph, verts: list[int]) -> list[tuple[int, int, int]]:
    """Edges ``(i, j, label)`` (query ids) of ``data`` among ``verts``, each once, in data direction."""
    index = {v: i for i, v in enumerate(verts)}
    vset = np.asarray(verts, np.int64)
    out: dict[tuple[int, int], int] = {}
    for v in verts:
        lo, hi = int(data.indptr[v]), int(data.indptr[v + 1])
        row = data.neighbors[lo:hi]
        labs = data.neighbor_labels[lo:hi]
        hit = np.flatnonzero(np.isin(row, vset))
        for k in hit:
            w, e = int(row[k]), int(labs[k])
            if data.directed:
                a, b, lab = (v, w, e // 2) if e % 2 == 0 else (w, v, e // 2)
                out[(index[a], index[b])] = lab
            else:
                i, j = sorted((index[v], index[w]))
                out[(i, j)] = e
    return [(i, j, lab) for (i, j), lab in sorted(out.items())]


def _as_query(data: Graph, verts: list[int], edges: list[tuple[int, int, int]]) -> Graph:
    arr = np.array([(i, j) for i, j, _ in edges], dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(arr, n=len(verts), edge_labels=[lab for *_, lab in edges],
                            vertex_labels=np.asarray(data.vertex_labels)[verts], directed=data.directed)


def _finder(parent: list[int]):
    """Union-find root lookup (with path halving) over ``parent``."""

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    return find


def _connected(n: int, edges: list[tuple[int, int, int]]) -> bool:
    parent = list(range(n))
    find = _finder(parent)

    for i, j, _ in edges:
        parent[find(i)] = find(j)
    return len({find(x) for x in range(n)}) == 1


def random_walk_query(data: Graph, size: int, rng: np.random.Generator,
                      kind: Literal["dense", "sparse", "core", "any"] = "any", *, attempts: int = 200,
                      max_steps: int | None = None) -> Graph | None:
    """A connected ``size``-vertex query grown by a random walk in ``data`` (None if none found).

    Dense: average degree >= 3 (walks are retried up to ``attempts`` times, then the query is grown greedily
    towards the densest frontier vertex, see :func:`_dense_growth`).  Sparse: average degree < 3
    (random non-tree edges are dropped).  Core: every query vertex has degree >= 2 (no pendant vertices, whose
    images multiply the match count by a data vertex's degree; retried like dense).  Any: the induced walk
    subgraph as it is.
    """
    if data.n == 0 or data.nnz == 0:
        return None
    deg = np.diff(data.indptr)
    starts = np.flatnonzero(deg > 0)
    max_steps = max_steps or 50 * size
    for _ in range(attempts):
        cur = int(starts[rng.integers(0, starts.shape[0])])
        verts, seen = [cur], {cur}
        for _step in range(max_steps):
            if len(verts) == size:
                break
            lo, hi = int(data.indptr[cur]), int(data.indptr[cur + 1])
            if hi == lo:
                cur = verts[int(rng.integers(0, len(verts)))]
                continue
            nxt = int(data.neighbors[lo + int(rng.integers(0, hi - lo))])
            if nxt not in seen:
                seen.add(nxt)
                verts.append(nxt)
            # restart from a random set member now and then so hubs' neighbourhoods do not trap the walk
            cur = nxt if rng.random() < 0.8 else verts[int(rng.integers(0, len(verts)))]
        if len(verts) < size:
            continue
        edges = _induced_edges(data, verts)
        avg = 2.0 * len(edges) / size
        if kind == "dense" and avg < 3.0:
            continue
        if kind == "core":
            deg = np.bincount(np.array([(i, j) for i, j, _ in edges], dtype=np.int64).ravel(), minlength=size)
            if deg.min() < 2:
                continue
        if kind == "sparse" and avg >= 3.0:
            edges = _thin(edges, size, rng)
        return _as_query(data, verts, edges)
    if kind == "dense":
        return _dense_growth(data, size, rng, attempts)
    return None


def _dense_growth(data: Graph, size: int, rng: np.random.Generator, attempts: int,
                  scan: int = 256) -> Graph | None:
    """A dense query where random walks found none (sparse power-law graphs): from a random start, repeatedly add
    the frontier vertex with the most edges into the set (ties broken at random; at most ``scan`` sampled
    neighbours of each added vertex join the frontier, so hubs stay cheap).  None when no attempt reaches an
    average degree of 3."""
    deg = np.diff(data.indptr)
    starts = np.flatnonzero(deg >= 3)
    if starts.shape[0] == 0:
        return None
    for _ in range(attempts):
        verts = [int(starts[rng.integers(0, starts.shape[0])])]
        seen = set(verts)
        links: dict[int, int] = {}
        while len(verts) < size:
            lo, hi = int(data.indptr[verts[-1]]), int(data.indptr[verts[-1] + 1])
            nbrs = data.neighbors[lo:hi]
            if nbrs.shape[0] > scan:
                nbrs = nbrs[rng.choice(nbrs.shape[0], scan, replace=False)]
            for w in nbrs.tolist():
                if w not in seen:
                    links[w] = links.get(w, 0) + 1
            if not links:
                break
            best = max(links.values())
            top = [w for w, c in links.items() if c == best]
            nxt = top[int(rng.integers(0, len(top)))]
            del links[nxt]
            seen.add(nxt)
            verts.append(nxt)
        if len(verts) < size:
            continue
        edges = _induced_edges(data, verts)
        if 2.0 * len(edges) / size >= 3.0:
            return _as_query(data, verts, edges)
    return None


def _thin(edges: list[tuple[int, int, int]], n: int, rng: np.random.Generator) -> list[tuple[int, int, int]]:
    """Drop random non-tree edges until the average degree is below 3, keeping the graph connected."""
    order = list(rng.permutation(len(edges)))
    parent = list(range(n))
    find = _finder(parent)

    tree, extra = [], []
    for k in order:
        i, j, lab = edges[k]
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj
            tree.append(edges[k])
        else:
            extra.append(edges[k])
    keep = max(0, int(np.ceil(1.5 * n)) - 1 - len(tree))  # 2*(|tree|+keep)/n < 3
    out = sorted(tree + extra[:keep])
    assert _connected(n, out)
    return out


def query_set(data: Graph, count: int, size: int, seed: int, kinds: tuple[str, ...] = ("dense", "sparse"),
              attempts: int = 200) -> list[tuple[str, Graph]]:
    """``count`` queries of ``size`` vertices, alternating over ``kinds``; each is labelled by what it is
    (``dense``: average degree >= 3, else ``sparse``; ``core`` queries keep that name).  A dense or sparse
    kind that yields nothing is replaced by ``any``; core queries are only kept when found."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, Graph]] = []
    i = 0
    while len(out) < count and i < 4 * count:
        kind = kinds[i % len(kinds)]
        i += 1
        q = random_walk_query(data, size, rng, kind, attempts=attempts)  # type: ignore[arg-type]
        if q is None and kind != "core":
            q = random_walk_query(data, size, rng, "any")
        if q is not None:
            avg = 2.0 * q.m / q.n
            out.append(("core" if kind == "core" else "dense" if avg >= 3 else "sparse", q))
    return out
