"""A memory-mapped copy of a whole graph's :class:`~distsm.kernels.index.DataIndex` on disk.

Inter-partition search gathers adjacency from the whole graph.  On one host every worker process opens the same
files with ``np.load(..., mmap_mode="r")``, so the operating system keeps one copy in its page cache however many
processes read it.

Layout of a directory written by :func:`save_index`::

    index.json                 format/version, n, num_labels, nbytes, label_entries, which arrays exist,
                               and the sha256 of every .npy file
    <field>.npy                one per array field of DataIndex (vertex_labels, degrees, nbr, indptr, run_keys,
                               run_start, run_end, entry_keys, pair_keys, sig); run_keys is absent when it is None
                               and pair_keys is absent when it is the same array as entry_keys (num_labels == 1)
    vertices_by_label_keys.npy     int64[L]    the vertex labels, ascending
    vertices_by_label_ids.npy      int32[n]    the vertices grouped by label (ascending ids within a label)
    vertices_by_label_offsets.npy  int64[L+1]  label keys[i] owns ids[offsets[i]:offsets[i+1]]
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from distsm.kernels.index import DataIndex
from distsm.manifests import read_manifest

INDEX_FORMAT = "distsm-data-index"
INDEX_VERSION = 1
_ARRAY_FIELDS = ("vertex_labels", "degrees", "nbr", "indptr", "run_keys", "run_start", "run_end", "entry_keys",
                 "pair_keys", "sig")
_VBL = ("vertices_by_label_keys", "vertices_by_label_ids", "vertices_by_label_offsets")


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def confined(root: str | os.PathLike, name: Any) -> Path:
    """The file ``root/name`` named by a manifest, after checking that it stays inside ``root``.

    ``name`` must be a relative path without ``..`` parts, and the path must still lie inside ``root`` once
    symbolic links are resolved; where it exists it must be a regular file (never a device or a pipe, which a
    checksum would read forever).  Raises ValueError otherwise, before anything is read.
    """
    if not isinstance(name, str) or not name or "\\" in name or "\x00" in name:
        raise ValueError(f"manifest file name {name!r} is not a relative path")
    parts = name.split("/")
    if name.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"manifest file name {name!r} leaves the store (absolute, empty or '..' parts)")
    base = Path(root).resolve()
    path = (base / name).resolve()
    if not path.is_relative_to(base):
        raise ValueError(f"manifest file name {name!r} resolves to {path}, outside the store {base}")
    if path.exists() and not path.is_file():
        raise ValueError(f"manifest file name {name!r} is not a regular file")
    return path


def save_npy(directory: Path, name: str, array: Any, *, checksum: bool = True) -> dict[str, Any]:
    """Write ``directory/name`` (a .npy file); returns its manifest entry ``{"sha256", "bytes"}`` (without
    ``checksum``, ``{"bytes"}``: :func:`add_checksums` fills in the rest)."""
    path = directory / name
    np.save(path, np.ascontiguousarray(np.asarray(array)), allow_pickle=False)
    entry: dict[str, Any] = {"bytes": path.stat().st_size}
    if checksum:
        entry["sha256"] = sha256_file(path)
    return entry


def add_checksums(directory: Path, files: dict[str, dict[str, Any]]) -> None:
    """Fill in the sha256 of each entry of ``files`` (names relative to ``directory``) that has none, several
    files at once: hashlib releases the GIL, and a 64M-edge graph's store is gigabytes to hash."""
    todo = [name for name, entry in files.items() if "sha256" not in entry]
    if not todo:
        return
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1, len(todo)))) as pool:
        for name, digest in zip(todo, pool.map(lambda name: sha256_file(directory / name), todo)):
            files[name]["sha256"] = digest


def load_npy(path: Path, *, mmap: bool = False) -> np.ndarray:
    """Read a .npy file (never pickles); ``mmap`` opens it read-only memory-mapped (empty arrays are read)."""
    if mmap:
        try:
            return np.load(path, mmap_mode="r", allow_pickle=False)
        except ValueError:
            # Some NumPy versions refuse to map a zero-length payload; there is nothing to share anyway.
            pass
    arr = np.load(path, allow_pickle=False)
    arr.flags.writeable = False
    return arr


def save_index(index: DataIndex, directory: str | os.PathLike) -> dict[str, Any]:
    """Write a NumPy :class:`DataIndex` to ``directory`` (created if needed); returns what ``index.json`` holds.

    Arrays on another device (CuPy) are refused: build the index with ``build_index(graph, numpy)``.
    """
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    files: dict[str, Any] = {}
    shared_pair_keys = index.pair_keys is index.entry_keys
    for name in _ARRAY_FIELDS:
        value = getattr(index, name)
        if value is None or (name == "pair_keys" and shared_pair_keys):
            continue
        files[f"{name}.npy"] = save_npy(d, f"{name}.npy", _host(value, name), checksum=False)
    labels = sorted(index.vertices_by_label)
    groups = [_host(index.vertices_by_label[lab], "vertices_by_label") for lab in labels]
    sizes = [int(g.shape[0]) for g in groups]
    offsets = np.zeros(len(labels) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    ids = np.concatenate(groups).astype(np.int32) if groups else np.zeros(0, np.int32)
    files["vertices_by_label_keys.npy"] = save_npy(d, "vertices_by_label_keys.npy", np.asarray(labels, np.int64))
    files["vertices_by_label_ids.npy"] = save_npy(d, "vertices_by_label_ids.npy", ids)
    files["vertices_by_label_offsets.npy"] = save_npy(d, "vertices_by_label_offsets.npy", offsets)
    add_checksums(d, files)
    meta = {
        "format": INDEX_FORMAT, "version": INDEX_VERSION, "n": int(index.n), "num_labels": int(index.num_labels),
        "nbytes": int(index.nbytes), "label_entries": {str(k): int(v) for k, v in index.label_entries.items()},
        "pair_keys_is_entry_keys": bool(shared_pair_keys), "files": files,
    }
    tmp = d / "index.json.tmp"
    tmp.write_text(json.dumps(meta, indent=1))
    os.replace(tmp, d / "index.json")
    return meta


def load_index(directory: str | os.PathLike, mmap: bool = True, *, verify: bool = False) -> DataIndex:
    """Open a :class:`DataIndex` written by :func:`save_index`; with ``mmap`` the arrays are read-only memmaps.

    ``verify`` checks every file's sha256 first (reads all the bytes once).  Raises ValueError for a directory
    that is not a saved index or fails verification, FileNotFoundError for a missing one.
    """
    d = Path(directory)
    path = d / "index.json"
    meta = read_manifest(path, INDEX_FORMAT, INDEX_VERSION, lambda problem: ValueError(f"{path}: {problem}"),
                         "saved DataIndex")
    files = meta["files"]
    paths = {name: confined(d, name) for name in files}
    if verify:
        for name, entry in files.items():
            if sha256_file(paths[name]) != entry["sha256"]:
                raise ValueError(f"checksum mismatch in {d / name}")
    arrays: dict[str, Any] = {}
    for name in _ARRAY_FIELDS:
        arrays[name] = load_npy(d / f"{name}.npy", mmap=mmap) if f"{name}.npy" in files else None
    if meta["pair_keys_is_entry_keys"]:
        arrays["pair_keys"] = arrays["entry_keys"]
    keys, ids, offsets = (load_npy(d / f"{name}.npy", mmap=mmap) for name in _VBL)
    by_label = {int(lab): ids[int(offsets[i]):int(offsets[i + 1])] for i, lab in enumerate(np.asarray(keys))}
    return DataIndex(n=int(meta["n"]), num_labels=int(meta["num_labels"]),
                     label_entries={int(k): int(v) for k, v in meta["label_entries"].items()},
                     vertices_by_label=by_label, nbytes=int(meta["nbytes"]), **arrays)


def _host(value: Any, name: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise TypeError(f"DataIndex field {name} is a {type(value).__name__}, not a NumPy array: "
                        "save the index built with build_index(graph, numpy)")
    return value
