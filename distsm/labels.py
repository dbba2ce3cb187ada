"""Labels and node names of any hashable type, and how a query and a data graph built apart agree on them.

The engine compares small integer *codes*.  A :class:`LabelVocabulary` turns label values (``"C"``, ``("x", 1)``,
``3``, ...) into codes and back, with one code space for vertex labels and another for edge labels.  It only
grows: a code, once given, never changes meaning, so one vocabulary can be shared by any number of graphs
(``Graph.from_networkx(g, labels=vocab)``).

A graph without a vocabulary uses *identity codes*: code ``c`` is the integer label ``c`` (every graph read
from a file is such a graph).  :func:`reconcile` re-encodes a query into the data graph's codes by label
*value*, whatever vocabularies the two carry; a query label the data graph does not have becomes a code no data
vertex or edge carries, so that query vertex simply has no candidates.

Unlabelled is a value of its own, ``None`` (:data:`UNLABELLED`), as in networkx, whose categorical matches take a
missing attribute as ``None``: a networkx node or edge without the label attribute matches unlabelled ones only.  A
graph with no label at all of a kind stores that kind as all ``0`` without a vocabulary (every reader's plain
unlabelled graph), and :func:`reconcile` takes such a kind as unlabelled: it matches the other graph's unlabelled
nodes or edges where that graph has any, and label ``0`` (its unlabelled code when it is plain too) otherwise.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from distsm.arguments import is_integer
from distsm.errors import short_repr

if TYPE_CHECKING:
    from distsm.graph import Graph

KINDS = ("vertex", "edge")
#: The label value of a node or edge that has none (where others of its graph have one).
UNLABELLED = None


#: Integer labels up to this are stored as they are (within both vertex- and edge-label ranges).
MAX_PLAIN_LABEL = 2**30 - 1


def is_plain_label(value: Any) -> TypeGuard[int | np.integer]:
    """Whether ``value`` is a label an identity-coded graph can carry (a small non-negative integer, not a
    bool)."""
    return is_integer(value) and bool(0 <= value <= MAX_PLAIN_LABEL)


class LabelVocabulary:
    """An append-only two-way dictionary between label values (any hashable) and integer codes.

    Vertex labels and edge labels have separate code spaces (``kind`` is ``"vertex"`` or ``"edge"``); codes are
    given ``0, 1, 2, ...`` in order of first :meth:`encode`.
    """

    def __init__(self) -> None:
        self._codes: dict[str, dict[Hashable, int]] = {kind: {} for kind in KINDS}
        self._values: dict[str, list[Hashable]] = {kind: [] for kind in KINDS}

    def encode(self, kind: str, values: Iterable[Hashable]) -> np.ndarray:
        """Codes of ``values`` (``int64``), adding the values not seen before."""
        codes, known = self._codes[_check_kind(kind)], self._values[kind]
        out = []
        for value in values:
            try:
                code = codes.get(value)
            except TypeError:
                raise TypeError(f"{kind} label {short_repr(value)} is not hashable") from None
            if code is None:
                code = codes[value] = len(known)
                known.append(value)
            out.append(code)
        return np.asarray(out, dtype=np.int64)

    def code(self, kind: str, value: Hashable) -> int | None:
        """The code of ``value``, or None when it has none."""
        return self._codes[_check_kind(kind)].get(value)

    def value(self, kind: str, code: int) -> Hashable:
        """The label value of ``code``."""
        return self._values[_check_kind(kind)][int(code)]

    def values(self, kind: str) -> list[Hashable]:
        """Every value of one kind, in code order."""
        return list(self._values[_check_kind(kind)])

    def __len__(self) -> int:
        return sum(len(v) for v in self._values.values())

    def __repr__(self) -> str:
        return (f"LabelVocabulary(vertex labels: {len(self._values['vertex'])}, "
                f"edge labels: {len(self._values['edge'])})")


def unlabelled_as_zero(values: list[Hashable], default: Hashable) -> list[Hashable]:
    """Label values read with ``default`` for a missing one: all ``0`` when ``default`` is :data:`UNLABELLED` and
    none was given (a plain unlabelled kind, which :func:`reconcile` takes as unlabelled), else as they are."""
    if default is UNLABELLED and all(v is UNLABELLED for v in values):
        return [0] * len(values)
    return values


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"label kind must be 'vertex' or 'edge', got {kind!r}")
    return kind


def label_value(graph: Graph, kind: str, code: int) -> Hashable:
    """The label value behind ``code`` in ``graph`` (the integer itself for an identity-coded graph)."""
    vocab = graph.vocabulary
    return int(code) if vocab is None else vocab.value(kind, code)


def _translate(query: Graph, data: Graph, kind: str, codes: np.ndarray, used: np.ndarray) -> np.ndarray:
    """``codes`` (of ``query``) as codes of ``data``; values ``data`` lacks get fresh codes above ``used``.  The
    unlabelled value, and a plain kind with no label at all, take ``data``'s unlabelled code (see the module
    docstring and :func:`_unlabelled_code`)."""
    out = np.empty(codes.shape[0], np.int64)
    fresh: dict[int, int] = {}
    top = int(used.max(initial=-1)) + 1
    plain_unlabelled = query.vocabulary is None and not codes.any()
    alias = _unlabelled_code(data, kind, top)
    for code in np.unique(codes).tolist():
        value = label_value(query, kind, code)
        target = alias if value is UNLABELLED or plain_unlabelled else None
        if target is None:
            target = data.vocabulary.code(kind, value) if data.vocabulary is not None else _identity_code(value, top)
        if target is None:
            target = fresh.setdefault(code, top + len(fresh))
        out[codes == code] = target
    return out


def _unlabelled_code(data: Graph, kind: str, top: int) -> int | None:
    """``data``'s code for unlabelled nodes or edges: its code of the unlabelled value, or its code ``0`` where
    every node (or edge) has that one (a kind read with no labels, plain or encoded beside labels of the other
    kind); None where it has neither."""
    vocab = data.vocabulary
    if vocab is None:
        return 0 if top <= 1 else None
    found = vocab.code(kind, UNLABELLED)
    if found is None and vocab.values(kind) == [0]:
        found = vocab.code(kind, 0)
    return found


def _identity_code(value: Any, top: int) -> int | None:
    """The code below ``top`` of an identity-coded graph that equals ``value`` as a dict key would (``True``,
    ``1.0`` and ``1`` are one key, as in a vocabulary and in networkx's comparisons); None when there is none."""
    if not isinstance(value, (int, float, np.number)):  # bool is an int
        return None
    whole = int(value) if value == value and abs(value) != float("inf") else -1
    return whole if 0 <= whole < top and value == whole else None


def reconcile(query: Graph, data: Graph) -> Graph:
    """``query`` with its labels re-encoded into ``data``'s codes (``query`` itself when they already agree).

    Labels are matched by value; a query label absent from ``data`` gets a code no data vertex (or edge) has.
    The query's node names are kept.
    """
    if query.vocabulary is data.vocabulary:
        return query
    vlab = _translate(query, data, "vertex", np.asarray(query.vertex_labels), np.asarray(data.vertex_labels))
    elab = _translate(query, data, "edge", np.asarray(query.edge_labels), np.asarray(data.edge_labels))
    return type(query)(query.n, np.asarray(query.edge_src, np.int64), np.asarray(query.edge_dst, np.int64), elab, vlab,
                 query.directed, node_ids=query.node_ids, vocabulary=data.vocabulary)
