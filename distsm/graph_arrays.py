"""The arrays a :class:`~distsm.graph.Graph` is built from, checked as they come in: integer ids and labels
(:func:`int_array`), node names (:func:`node_id_array`), all kept read-only."""

from __future__ import annotations

from typing import Any

import numpy as np

from distsm.arguments import is_integer
from distsm.errors import GraphError, short_repr


def readonly(a: np.ndarray) -> np.ndarray:
    """``a``, made read-only (a graph's arrays are shared, never changed)."""
    a.flags.writeable = False
    return a


def int_array(values: Any, name: str, length: int | None = None) -> np.ndarray:
    """``values`` as a one-dimensional array of non-negative integers (``int32`` kept, else ``int64``; whole floats
    taken), or a :class:`~distsm.errors.GraphError` naming ``name`` and the entry at fault."""
    arr = np.asarray(values)
    if arr.size == 0:
        arr = arr.reshape(0).astype(np.int64)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise GraphError(f"{name} must be integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise GraphError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise GraphError(f"{name} has {arr.shape[0]} entries, expected {length}")
    if arr.size and arr.min() < 0:  # a minimum needs no temporary array: millions of edges pass here
        i = int(np.flatnonzero(arr < 0)[0])
        raise GraphError(f"{name}[{i}] = {int(arr[i])} is negative", edge_index=i if name.startswith("edge") else None,
                         vertex_index=i if name == "vertex_labels" else None)
    # int32 stays: readers number vertices in int32, and half the bytes halve the passes that follow.
    return arr if arr.dtype == np.int32 else arr.astype(np.int64, copy=False)


def node_id_array(node_ids: Any, n: int) -> np.ndarray | None:
    """``node_ids`` as a read-only array (``int64`` for integer names, else ``object``), checked; None stays."""
    if node_ids is None:
        return None
    if isinstance(node_ids, np.ndarray) and node_ids.ndim == 1 and (
            node_ids.dtype.kind == "i" or node_ids.dtype.kind == "u" and (node_ids.size == 0
                                                                            or node_ids.max() < 2**63)):
        # Vectorised checks: readers pass the ids of graphs with millions of vertices.
        if node_ids.shape[0] != n:
            raise GraphError(f"node_ids has {node_ids.shape[0]} entries, expected n = {n}")
        ordered = np.sort(node_ids)
        dup = np.flatnonzero(ordered[1:] == ordered[:-1])
        if dup.size:
            raise GraphError(f"node_ids names {int(ordered[dup[0]])} more than once")
        return readonly(node_ids.astype(np.int64))
    names = list(node_ids)
    if len(names) != n:
        raise GraphError(f"node_ids has {len(names)} entries, expected n = {n}")
    try:
        distinct = len(set(names))
    except TypeError as e:
        raise GraphError(f"node_ids must be hashable: {e}") from None
    if distinct != n:
        seen: set[Any] = set()
        for x in names:
            if x in seen:
                raise GraphError(f"node_ids names {short_repr(x)} more than once")
            seen.add(x)
    if all(is_integer(x) and -2**63 <= x < 2**63 for x in names):
        arr = np.asarray(names, dtype=np.int64)
    else:
        arr = np.empty(n, dtype=object)
        arr[:] = names
    return readonly(arr)
