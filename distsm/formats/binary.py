"""A graph saved as NumPy arrays in a directory, reloaded memory-mapped: :func:`save_graph` / :func:`load_graph`.

Layout (format ``distsm-graph``, version 1)::

    manifest.json           {"format": "distsm-graph", "version": 1, "n", "m", "directed",
                             "arrays": {name: {"file", "dtype", "shape", "bytes", "sha256"}},
                             "names": null | "node_ids" | [name, ...], "vocabulary": null | {"vertex": [...],
                             "edge": [...]}}
    vertex_labels.npy       int32[n]
    edge_src.npy, edge_dst.npy, edge_labels.npy       int32[m]   (undirected edges have src < dst)
    indptr.npy              int64[n+1]
    neighbors.npy, neighbor_labels.npy                int32[2m]  (the adjacency; see distsm.graph.Graph)
    node_ids.npy            int64[n]   only when the node names are integers ("names": "node_ids")

Node names that are not all integers, and label values, are kept in the manifest as JSON: strings, numbers,
booleans and None as themselves, tuples as ``{"tuple": [...]}``; other kinds of names cannot be saved.  A graph
is written into a temporary sibling directory and renamed into place, so a reader never sees half of one.

:func:`load_graph` checks the manifest (format, version, the arrays' names, dtypes, shapes and sizes against
``n`` and ``m``), every file's size and ``.npy`` header, the checksums of the files under 1 MiB (of all of them
with ``verify=True``) and the adjacency's bounds, and maps the arrays read-only without reading them: a problem
is a :class:`~distsm.errors.GraphFormatError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np

from distsm.arguments import entry_point
from distsm.manifests import read_manifest
from distsm.errors import GraphFormatError, short_repr
from distsm.formats._common import PathLike
from distsm.graph import Graph
from distsm.labels import KINDS, LabelVocabulary

FORMAT = "distsm-graph"
VERSION = 1
MANIFEST = "manifest.json"
_SMALL = 1 << 20  # files checked against their checksum on every load


def _layout(n: int, m: int, int_names: bool) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Name -> (dtype, shape) of every array a saved graph of ``n`` vertices and ``m`` edges holds; each name is
    the :class:`Graph` attribute it saves."""
    out: dict[str, tuple[str, tuple[int, ...]]] = {
        "vertex_labels": ("<i4", (n,)), "edge_src": ("<i4", (m,)), "edge_dst": ("<i4", (m,)),
        "edge_labels": ("<i4", (m,)), "indptr": ("<i8", (n + 1,)), "neighbors": ("<i4", (2 * m,)),
        "neighbor_labels": ("<i4", (2 * m,))}
    if int_names:
        out["node_ids"] = ("<i8", (n,))
    return out


def save_graph(graph: Graph, path: PathLike) -> None:
    """Save ``graph`` into the directory ``path`` (created; an existing saved graph there is replaced).

    Raises:
        TypeError: a node name or label value that is not a string, number, boolean, None or tuple of these.
        FileExistsError: ``path`` exists and is not a saved graph (nothing else is overwritten).
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a distsm.Graph, not {type(graph).__name__}")
    target = Path(path)
    if target.exists() and not (target / MANIFEST).is_file():
        raise FileExistsError(f"{target}: exists and is not a saved distsm graph; not overwriting it")
    names: Any = None
    if graph.node_ids is not None:
        names = "node_ids" if graph.node_ids.dtype == np.int64 else [_to_json(x) for x in graph.node_ids.tolist()]
    vocab = None if graph.vocabulary is None else {
        kind: [_to_json(v) for v in graph.vocabulary.values(kind)] for kind in KINDS}
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    tmp.mkdir(parents=True)
    try:
        entries = {}
        for name, (dtype, shape) in _layout(graph.n, graph.m, names == "node_ids").items():
            file = tmp / f"{name}.npy"
            np.save(file, np.ascontiguousarray(getattr(graph, name), dtype=dtype))
            entries[name] = {"file": file.name, "dtype": dtype, "shape": list(shape), "bytes": file.stat().st_size,
                             "sha256": _sha256(file)}
        manifest = {"format": FORMAT, "version": VERSION, "n": graph.n, "m": graph.m, "directed": graph.directed,
                    "arrays": entries, "names": names, "vocabulary": vocab}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def is_saved_graph(path: PathLike) -> bool:
    """Whether ``path`` is a directory holding a manifest (what :func:`load_graph` reads)."""
    return (Path(path) / MANIFEST).is_file()


@entry_point
def load_graph(path: PathLike, *, verify: bool = False) -> Graph:
    """The graph saved in the directory ``path``, its arrays memory-mapped read-only (names and label vocabulary
    as saved).

    Args:
        path: a directory written by :func:`save_graph`.
        verify: also check the checksums of the large arrays (reads every byte; small ones are always checked).

    Raises:
        GraphFormatError: no manifest, a manifest of another format or version, or a missing, truncated or
            inconsistent array; the message names the file.
    """
    root = Path(path)
    man = _manifest(root)
    n, m = man["n"], man["m"]
    arrays = {}
    for name, (dtype, shape) in _layout(man["n"], man["m"], man.get("names") == "node_ids").items():
        entry = man["arrays"].get(name)
        if not isinstance(entry, dict) or entry.get("dtype") != dtype or entry.get("shape") != list(shape):
            raise GraphFormatError(root / MANIFEST, None, f"array {name!r} must be {dtype}{list(shape)} for n={n}, "
                                                          f"m={m}; the manifest says {short_repr(entry)}")
        arrays[name] = _mapped(root, name, entry, dtype, shape, verify)
    indptr, neighbors = arrays["indptr"], arrays["neighbors"]
    if int(indptr[0]) != 0 or int(indptr[-1]) != 2 * m:
        raise GraphFormatError(root / "indptr.npy", None, f"indptr must run from 0 to {2 * m}")
    names = arrays.get("node_ids")
    if isinstance(man["names"], list):
        names = _object_array([_from_json(root, x) for x in man["names"]])
    return Graph(n, arrays["edge_src"], arrays["edge_dst"], arrays["edge_labels"], arrays["vertex_labels"],
                 man["directed"], node_ids=names, vocabulary=_vocabulary(root, man["vocabulary"]),
                 csr=(indptr, neighbors, arrays["neighbor_labels"]))


def _manifest(root: Path) -> dict[str, Any]:
    file = root / MANIFEST
    if not file.is_file():
        raise GraphFormatError(file, None, "no manifest: not a graph saved by distsm.save_graph")
    man = read_manifest(file, FORMAT, VERSION, lambda problem: GraphFormatError(file, None, problem),
                        f"{FORMAT} manifest")
    kinds: dict[str, type] = {"n": int, "m": int, "directed": bool, "arrays": dict}
    for key, kind in kinds.items():
        value = man.get(key)
        negative = kind is int and (isinstance(value, bool) or isinstance(value, int) and value < 0)
        if not isinstance(value, kind) or negative:
            what = "non-negative integer" if kind is int else kind.__name__
            raise GraphFormatError(file, None, f"{key!r} must be a {what}, got {short_repr(value)}")
    if not (man.get("names") in (None, "node_ids") or isinstance(man.get("names"), list)
            and len(man["names"]) == man["n"]):
        raise GraphFormatError(file, None, f"'names' must be null, \"node_ids\" or a list of {man['n']} names")
    vocab = man.get("vocabulary")
    if not (vocab is None or isinstance(vocab, dict) and all(isinstance(vocab.get(k), list) for k in KINDS)):
        raise GraphFormatError(file, None, "'vocabulary' must be null or hold a 'vertex' and an 'edge' list")
    return man


def _mapped(root: Path, name: str, entry: dict[str, Any], dtype: str, shape: tuple[int, ...],
            verify: bool) -> np.ndarray:
    """The array of one manifest entry, memory-mapped read-only, its file checked."""
    file = root / str(entry.get("file"))
    if file.parent != root or not file.is_file():
        raise GraphFormatError(file, None, f"array {name!r}: file missing")
    size = file.stat().st_size
    if size != entry.get("bytes"):
        raise GraphFormatError(file, None, f"array {name!r}: {size} bytes, the manifest says "
                                           f"{short_repr(entry.get('bytes'))} (truncated or replaced)")
    if (verify or size <= _SMALL) and _sha256(file) != entry.get("sha256"):
        raise GraphFormatError(file, None, f"array {name!r}: checksum mismatch (the file was changed)")
    try:
        arr = np.load(file, mmap_mode="r", allow_pickle=False) if size else None
    except (ValueError, OSError, EOFError) as exc:
        raise GraphFormatError(file, None, f"array {name!r}: not a readable .npy file ({exc})") from None
    if arr is None or arr.dtype != np.dtype(dtype) or arr.shape != shape:
        got = "nothing" if arr is None else f"{arr.dtype.str}{list(arr.shape)}"
        raise GraphFormatError(file, None, f"array {name!r}: holds {got}, expected {dtype}{list(shape)}")
    return arr


def _sha256(file: Path) -> str:
    h = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _to_json(value: Any) -> Any:
    """A name or label value as JSON (tuples tagged); TypeError for kinds that cannot be saved."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [_to_json(x) for x in value]}
    raise TypeError(f"cannot save the name or label {short_repr(value)} ({type(value).__name__}): only strings, "
                    "numbers, booleans, None and tuples of these")


def _from_json(root: Path, value: Any) -> Hashable:
    if isinstance(value, dict) and list(value) == ["tuple"] and isinstance(value["tuple"], list):
        return tuple(_from_json(root, x) for x in value["tuple"])
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise GraphFormatError(root / MANIFEST, None, f"unreadable name or label {short_repr(value)}")


def _object_array(values: list[Hashable]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    arr.flags.writeable = False
    return arr


def _vocabulary(root: Path, saved: dict[str, list[Any]] | None) -> LabelVocabulary | None:
    if saved is None:
        return None
    vocab = LabelVocabulary()
    for kind in KINDS:
        values = [_from_json(root, x) for x in saved[kind]]
        try:
            vocab.encode(kind, values)
        except TypeError as exc:
            raise GraphFormatError(root / MANIFEST, None, f"vocabulary: {exc}") from None
        if len(vocab.values(kind)) != len(values):
            raise GraphFormatError(root / MANIFEST, None, f"vocabulary: the {kind} labels repeat a value")
    return vocab
