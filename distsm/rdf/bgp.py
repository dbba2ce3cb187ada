"""RDF graphs as distsm graphs, and exact evaluation of basic graph patterns (BGPs) on them.

Encoding (exact for every RDF graph).  RDF allows several predicates between one ordered pair of nodes and
triples whose subject equals their object, while a :class:`~distsm.graph.Graph` holds at most one arc per ordered
pair and no self loops.  So each (deduplicated) triple ``(s, p, o)`` is *reified* into a triple vertex ``t``
with vertex label ``1 + p`` and two arcs ``s -> t`` (edge label ``2p``) and ``t -> o`` (edge label ``2p + 1``);
entities (IRIs, blank nodes, literals) are vertices with label 0.  A triple pattern becomes the same three-vertex
path in the query graph, so query arcs map to data arcs with equal labels exactly when the pattern maps to a
triple, parallel predicates and ``s p s`` triples included.  Because a triple vertex is determined by its
endpoints and predicate, homomorphisms of the query graph correspond one to one to SPARQL solution mappings:
the engine's homomorphism count is the BGP's bag-semantics answer size.

Constants are query vertices restricted (``restrict``) to their entity; a constant missing from the data makes
the answer empty.  A BGP whose query graph is disconnected is matched part by part and the parts' solutions are
joined by cross product.

``rdf:type`` folding (``fold_types=True``): ``rdf:type`` triples are removed from the arcs and each entity keeps
its *set* of types (vertex attribute ``typeset``: the id of the sorted tuple of its type ids in
``RDFGraph.typesets``).  A pattern ``x rdf:type C`` with a constant ``C`` then restricts ``x`` to the entities
whose type set contains ``C`` (all of the query's type constants of ``x``, for several): exact, since an entity
with types {A, B} matches ``?x a A``, ``?x a B`` and both together.  With folding, ``rdf:type`` patterns need a
constant class object (others raise ValueError: read the data with ``fold_types=False`` for those).

Matching modes: ``isomorphic=False`` (default) is SPARQL's homomorphic BGP matching; ``isomorphic=True`` keeps
only solutions in which distinct variables (blank-node variables included) bind distinct terms.  Constants are
not variables: a variable may bind the same term as a constant in either mode.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.arguments import entry_point
from distsm.kernels import engine
from distsm.kernels.backend import Backend
from distsm.kernels.query_plan import Constraints, MatchOptions
from distsm.rdf.ntriples import RDF_TYPE, Dictionary, encode_triples, iter_triples
from distsm.rdf.sparql import Query, Var, parse_sparql
from distsm.resources import Resources


class RDFGraph:
    """A dictionary-encoded RDF graph.

    Attributes:
        entities: :class:`Dictionary` of subject/object terms (vertex ids ``0..n-1``).
        predicates: :class:`Dictionary` of predicate IRIs (predicate ids).
        triples: ``int64[m, 3]`` unique ``(s, p, o)`` ids (without ``rdf:type`` triples when folding).
        fold_types: whether ``rdf:type`` triples were folded into ``typeset``.
        typeset: ``int64[n]`` id into ``typesets`` of each entity's set of types (folding only; 0 = no type).
        typesets: list of sorted tuples of entity ids of classes (``typesets[0] == ()``).
    """

    def __init__(self, entities: Dictionary, predicates: Dictionary, triples: np.ndarray, *,
                 fold_types: bool = False):
        self.entities = entities
        self.predicates = predicates
        self.fold_types = fold_types
        self.typesets: list[tuple[int, ...]] = [()]
        self.typeset = np.zeros(len(entities), np.int64)
        tid = predicates.get(RDF_TYPE)
        if fold_types and tid is not None and triples.shape[0]:
            is_type = triples[:, 1] == tid
            typed = triples[is_type]
            triples = triples[~is_type]
            index: dict[tuple[int, ...], int] = {(): 0}
            # triples are sorted by (s, p, o): each subject's classes are one sorted run
            subj = typed[:, 0]
            starts = np.flatnonzero(np.r_[True, subj[1:] != subj[:-1]])
            ends = np.r_[starts[1:], subj.shape[0]]
            for a, b in zip(starts.tolist(), ends.tolist()):
                key = tuple(typed[a:b, 2].tolist())
                self.typeset[subj[a]] = index.setdefault(key, len(index))
            self.typesets = list(index)
        self.triples = triples
        self._graph: Graph | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_triples(cls, triples: Iterable[tuple[str, str, str]], *, fold_types: bool = False) -> RDFGraph:
        """Build from canonical ``(s, p, o)`` strings (see :mod:`distsm.rdf.ntriples`)."""
        ent, pred, spo = encode_triples(triples)
        return cls(ent, pred, spo, fold_types=fold_types)

    @property
    def n(self) -> int:
        return len(self.entities)

    @property
    def m(self) -> int:
        return int(self.triples.shape[0])

    def graph(self) -> Graph:
        """The reified directed :class:`Graph` the engine matches against (built once)."""
        if self._graph is None:
            n, m = self.n, self.m
            s, p, o = (self.triples[:, i] for i in range(3))
            t = np.arange(n, n + m, dtype=np.int64)
            edges = np.concatenate([np.stack([s, t], 1), np.stack([t, o], 1)])
            labels = np.concatenate([2 * p, 2 * p + 1])
            vlab = np.concatenate([np.zeros(n, np.int64), 1 + p])
            self._graph = Graph.from_edges(edges, n=n + m, edge_labels=labels, vertex_labels=vlab, directed=True)
        return self._graph

    def with_type_ids(self, classes: Iterable[int]) -> np.ndarray:
        """Sorted entity ids whose type set contains every class id in ``classes`` (folding only)."""
        need = set(classes)
        ok = [i for i, ts in enumerate(self.typesets) if need.issubset(ts)]
        return np.flatnonzero(np.isin(self.typeset, ok))

    def summary(self) -> dict[str, Any]:
        return {"entities": self.n, "predicates": len(self.predicates), "triples": self.m,
                "fold_types": self.fold_types, "type_sets": len(self.typesets) - 1}

    def __repr__(self) -> str:
        return f"RDFGraph(entities={self.n}, predicates={len(self.predicates)}, triples={self.m})"


def read_ntriples(source: str | os.PathLike | Iterable[str], *, fold_types: bool = False) -> RDFGraph:
    """Read an N-Triples file (``.gz`` by name) or an iterable of lines into an :class:`RDFGraph`."""
    return RDFGraph.from_triples(iter_triples(source), fold_types=fold_types)


@dataclass
class Result:
    """Solutions of a query: ``rows[i, j]`` is the entity id bound to ``variables[j]`` in solution ``i``."""

    variables: list[str]
    rows: np.ndarray
    entities: Dictionary

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def decoded(self) -> list[tuple[str, ...]]:
        """The rows as tuples of canonical N-Triples terms."""
        terms = self.entities.terms
        return [tuple(terms[i] for i in row) for row in self.rows.tolist()]

    def as_dicts(self) -> list[dict[str, str]]:
        return [dict(zip(self.variables, r)) for r in self.decoded()]


_Node = tuple[str, Any]  # ("var", name) or ("const", term)


def _node(t: Var | str) -> _Node:
    return ("var", t.name) if isinstance(t, Var) else ("const", t)


@dataclass
class _Pattern:
    """A BGP as a graph: its ``nodes`` (variables and constants, numbered), ``edges`` (distinct ``(subject,
    predicate id, object)`` patterns) and ``types`` (the classes a node must have, with ``fold_types``)."""

    nodes: dict[_Node, int] = field(default_factory=dict)
    edges: set[tuple[int, int, int]] = field(default_factory=set)
    types: dict[int, set[int]] = field(default_factory=dict)


def _pattern(data: RDFGraph, q: Query) -> _Pattern | None:
    """``q``'s patterns as a :class:`_Pattern`, or None where a constant is not in ``data`` (no solution)."""
    pat, ents = _Pattern(), data.entities
    for s, p, o in q.patterns:
        sn = pat.nodes.setdefault(_node(s), len(pat.nodes))
        if data.fold_types and p == RDF_TYPE:
            if isinstance(o, Var):
                raise ValueError(f"with fold_types=True, rdf:type patterns need a constant class, not {o}; "
                                 "read the data with fold_types=False for such queries")
            cls = ents.get(o)
            if cls is None:
                return None
            pat.types.setdefault(sn, set()).add(cls)
            continue
        on = pat.nodes.setdefault(_node(o), len(pat.nodes))
        pid = data.predicates.get(p)
        if pid is None:
            return None
        pat.edges.add((sn, pid, on))
    return pat


def _restrictions(data: RDFGraph, pat: _Pattern) -> dict[int, np.ndarray] | None:
    """The entities each constant or typed node may be, or None where one has none."""
    restrict: dict[int, np.ndarray] = {}
    for (kind, val), u in pat.nodes.items():
        if kind == "const":
            e = data.entities.get(val)
            if e is None:
                return None
            restrict[u] = np.array([e], np.int64)
    for u, classes in pat.types.items():
        allowed = data.with_type_ids(classes)
        if u in restrict:
            allowed = np.intersect1d(restrict[u], allowed)
        restrict[u] = allowed
        if allowed.size == 0:
            return None
    return restrict


def _components(pat: _Pattern) -> list[tuple[list[int], list[tuple[int, int, int]]]]:
    """The connected parts of the pattern (union-find over its edges): each part's nodes and its edges, sorted."""
    parent = list(range(len(pat.nodes)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, _, b in pat.edges:
        parent[find(a)] = find(b)
    comps: dict[int, list[int]] = {}
    for u in range(len(pat.nodes)):
        comps.setdefault(find(u), []).append(u)
    return [(members, sorted(e for e in pat.edges if find(e[0]) == find(members[0]))) for members in comps.values()]


def _component_rows(data: RDFGraph, members: list[int], edges: list[tuple[int, int, int]],
                    restrict: dict[int, np.ndarray], search: tuple[Backend, int], cap: int | None) -> np.ndarray:
    """The solutions of one connected part: a row of entity ids per solution, a column per member.  Each pattern
    edge becomes a query vertex labelled by its predicate between its subject and object (a subdivided edge), so
    one homomorphic match of the directed query graph is one solution."""
    if not edges:
        (u,) = members
        return restrict[u].reshape(-1, 1)
    backend, budget = search
    local = {u: i for i, u in enumerate(members)}
    k = len(members)
    qe, ql, qv = [], [], [0] * k
    for j, (a, pid, b) in enumerate(edges):
        t = k + j
        qe += [(local[a], t), (t, local[b])]
        ql += [2 * pid, 2 * pid + 1]
        qv.append(1 + pid)
    qg = Graph.from_edges(np.asarray(qe, np.int64), n=k + len(edges), edge_labels=ql, vertex_labels=qv,
                          directed=True)
    res = {local[u]: r for u, r in restrict.items() if u in local}
    opts = MatchOptions(induced=False, homomorphism=True)
    chunks = list(engine.iter_matches(backend, data.graph(), qg, opts, budget=budget,
                                      constraints=Constraints(restrict=res), limit=cap))
    return np.concatenate(chunks)[:, :k] if chunks else np.zeros((0, k), np.int64)


@entry_point
def evaluate(data: RDFGraph, query: Query | str, *, isomorphic: bool = False, limit: int | None = None,
             backend: str = "numpy", memory_budget: int | str | None = None) -> Result:
    """Evaluate a SELECT query over one BGP with SPARQL bag semantics (``DISTINCT`` when the query says so).

    ``limit`` caps the rows returned (on top of the query's own ``LIMIT``/``OFFSET``).
    """
    q = parse_sparql(query) if isinstance(query, str) else query
    proj = q.projection
    empty = Result(proj, np.zeros((0, len(proj)), np.int64), data.entities)
    pat = _pattern(data, q)
    restrict = None if pat is None else _restrictions(data, pat)
    if pat is None or restrict is None:
        return empty
    comps = _components(pat)
    engine_budget = Resources(memory_budget, backend).engine()
    # With one part and no DISTINCT/isomorphic filter, the first offset+limit solutions are the answer: stop there.
    cap = None
    if len(comps) == 1 and not q.distinct and not isomorphic:
        caps = [q.offset + x for x in (q.limit, limit) if x is not None]
        cap = min(caps) if caps else None
    # The cross product of the parts' solutions.
    order: list[int] = []
    table = np.zeros((1, 0), np.int64)
    for members, edges in comps:
        rows = _component_rows(data, members, edges, restrict, engine_budget, cap)
        if rows.shape[0] == 0:
            return empty
        a, b = table.shape[0], rows.shape[0]
        table = np.concatenate([np.repeat(table, b, axis=0), np.tile(rows, (a, 1))], axis=1)
        order += members
    col = {u: i for i, u in enumerate(order)}
    var_cols = [col[u] for (kind, _), u in pat.nodes.items() if kind == "var"]
    if isomorphic and len(var_cols) > 1:
        v = np.sort(table[:, var_cols], axis=1)
        table = table[np.all(v[:, 1:] != v[:, :-1], axis=1)]
    out = table[:, [col[pat.nodes[("var", name)]] for name in proj]]
    if q.distinct and out.shape[0]:
        out = np.unique(out, axis=0)
    stop = None if q.limit is None else q.offset + q.limit
    out = out[q.offset:stop]
    if limit is not None:
        out = out[:limit]
    return Result(proj, np.ascontiguousarray(out, dtype=np.int64), data.entities)


def sparql(data: RDFGraph | str | os.PathLike, query: str, **kwargs: Any) -> Result:
    """Convenience: read ``data`` if it is a path, then :func:`evaluate` ``query``."""
    g = data if isinstance(data, RDFGraph) else read_ntriples(data)
    return evaluate(g, query, **kwargs)


def parse_walk(spec: str | list[str | None], prefixes: dict[str, str] | None = None) -> list[str | None]:
    """Normalise a walk pattern ``[T0, P0, T1, ..., Tk]`` (see :func:`type_walks`).

    A string is split on whitespace; ``*`` (or ``None``) is an untyped vertex, ``^P`` a predicate walked
    backwards, ``pfx:local`` is expanded with ``prefixes`` and bare IRIs may be written with angle brackets.
    """
    items = spec.split() if isinstance(spec, str) else list(spec)
    out: list[str | None] = []
    for i, it in enumerate(items):
        if it is None or it == "*":
            if i % 2:
                raise ValueError(f"walk item {i} must be a predicate, not a wildcard")
            out.append(None)
            continue
        back = i % 2 == 1 and it.startswith("^")
        body = it[1:] if back else it
        if not body.startswith("<"):
            pfx, sep, local = body.partition(":")
            if not sep or prefixes is None or pfx not in prefixes:
                raise ValueError(f"walk item {it!r}: write IRIs as <...> or declare the prefix {pfx!r}")
            body = f"<{prefixes[pfx]}{local}>"
        out.append(("^" if back else "") + body)
    if len(out) % 2 == 0 or not out:
        raise ValueError("a walk pattern alternates vertex types and predicates: T0 P0 T1 ... Tk (odd length)")
    return out


@entry_point
def type_walks(data: RDFGraph, walk: str | list[str | None], *, prefixes: dict[str, str] | None = None,
               limit: int | None = None, backend: str = "numpy", memory_budget: int | str | None = None) -> np.ndarray:
    """IRSMG's type-isomorphic walk matching (Plantenga's inexact matching).

    ``walk = [T0, P0, T1, ..., P(k-1), Tk]`` alternates vertex types (class IRIs, or None/``*`` for any) and
    predicates (``^P`` walks the predicate from object to subject).  A data walk ``(v0, ..., vk)`` matches iff
    every ``vi`` has type ``Ti`` (among its possibly several types) and every step ``v(j) -P(j)-> v(j+1)`` is a
    triple.  Positions are independent: a pattern walk that revisits a pattern vertex does not force the data
    walk to revisit a data vertex, and data vertices may repeat along the walk.  This is exactly a homomorphic
    match of the walk unrolled into a path, which is how it runs on the engine.

    Returns ``int64[rows, k+1]`` entity ids (decode with ``data.entities.decode``).
    """
    w = parse_walk(walk, prefixes)
    k = len(w) // 2
    empty = np.zeros((0, k + 1), np.int64)
    restrict: dict[int, np.ndarray] = {}
    tid = data.predicates.get(RDF_TYPE)
    for i in range(k + 1):
        t = w[2 * i]
        if t is None:
            continue
        cid = data.entities.get(t)
        if cid is None:
            return empty
        if data.fold_types:
            allowed = data.with_type_ids([cid])
        elif tid is None:
            allowed = np.zeros(0, np.int64)
        else:
            tr = data.triples
            allowed = np.unique(tr[(tr[:, 1] == tid) & (tr[:, 2] == cid), 0])
        if allowed.size == 0:
            return empty
        restrict[i] = allowed
    qe, ql, qv = [], [], [0] * (k + 1)
    for j in range(k):
        p = w[2 * j + 1]
        assert p is not None
        back = p.startswith("^")
        pid = data.predicates.get(p[1:] if back else p)
        if pid is None:
            return empty
        a, b = (j + 1, j) if back else (j, j + 1)
        mid = k + 1 + j
        qe += [(a, mid), (mid, b)]
        ql += [2 * pid, 2 * pid + 1]
        qv.append(1 + pid)
    if k == 0:
        if 0 not in restrict:
            raise ValueError("a walk of no edges needs a vertex type")
        return restrict[0].reshape(-1, 1)[:limit]
    qg = Graph.from_edges(np.asarray(qe, np.int64), n=2 * k + 1, edge_labels=ql, vertex_labels=qv, directed=True)
    be, budget = Resources(memory_budget, backend).engine()
    chunks = list(engine.iter_matches(be, data.graph(), qg, MatchOptions(induced=False, homomorphism=True),
                                      budget=budget, limit=limit, constraints=Constraints(restrict=restrict)))
    return np.concatenate(chunks)[:, :k + 1] if chunks else empty
