"""A partition of one graph: the assignment, the induced subgraph of each part, the cross edges, and statistics.

A :class:`PartitionStore` lives in memory (:meth:`PartitionStore.build`) or in a directory
(:meth:`PartitionStore.save` / :meth:`PartitionStore.open`).  Layout of a saved store::

    manifest.json              format, version, graph fingerprint, n, m, directed, k, method, seed, stats, and
                               {relative path: {"sha256", "bytes"}} for every file below
    assignment.npy             int32[n]   part of each vertex
    cross_src.npy              int64[c]   cross edges (endpoints in different parts), global ids, sorted by
    cross_dst.npy              int64[c]   (src, dst); undirected edges have src < dst
    cross_labels.npy           int32[c]
    cross_vertices.npy         int64[v]   the vertices incident to a cross edge, ascending (absent in stores
                                          written before it existed: then derived from the cross edges)
    parts/00000/global_ids.npy     int64[n_i]  local id -> global id, ascending
    parts/00000/vertex_labels.npy  int32[n_i]
    parts/00000/src.npy            int32[m_i]  edges of the induced subgraph, local ids, sorted by (src, dst)
    parts/00000/dst.npy            int32[m_i]
    parts/00000/edge_labels.npy    int32[m_i]
    parts/00001/...
    adjacency/                 the whole graph's DataIndex (see distsm.partition.graph_store), memory-mapped by
                               every worker that needs inter-partition adjacency

Each part directory is self-contained, so a worker can load its part without the whole graph.  :meth:`open` reads
only the manifest; every other file is read (and its checksum verified) on first use.  A store is written into a
temporary sibling directory and renamed into place, so readers never see half a store.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from distsm._version import __version__
from distsm.graph import Graph, graph_fingerprint
from distsm.manifests import read_manifest
from distsm.kernels.index import DataIndex, build_index, csr_of_index
from distsm.partition.graph_store import add_checksums, confined, load_index, save_index, save_npy, sha256_file
from distsm.partition.methods import check_method, partition_vertices
from distsm.partition.metis import check_k
from distsm.partition.parts import (LocalPart, PartitionStats, PartLayout, incident_vertices, local_part,
                                    partition_stats)

STORE_FORMAT = "distsm-partition"
STORE_VERSION = 1
_PART_FILES = ("global_ids", "vertex_labels", "src", "dst", "edge_labels")


class StalePartitionError(ValueError):
    """A saved partition does not belong to the graph or ``k`` at hand, has an unknown format version, or a file
    failed its checksum.  Rebuild it (:func:`load_or_build` does so automatically)."""


def _part_dir(i: int) -> str:
    return f"parts/{i:05d}"


@dataclass(frozen=True)
class StoreFacts:
    """What a store says of its partition and its graph (a saved store's manifest header): ``k`` parts by
    ``method`` and ``seed`` with their ``stats``, and the graph's ``fingerprint``, ``n``, ``m`` and ``directed``."""

    k: int
    method: str
    seed: int
    stats: PartitionStats
    fingerprint: str
    n: int
    m: int
    directed: bool


class PartitionStore:
    """A partition of one graph into ``k`` parts, in memory or backed by a directory.

    Attributes: ``k``, ``method``, ``seed``, ``stats`` (:class:`PartitionStats`), ``fingerprint`` (of the graph),
    ``n``, ``m``, ``directed``, ``graph`` (None for a store opened without one), ``directory`` (None in memory),
    ``reused`` (True when :func:`load_or_build` found it fresh on disk).
    """

    def __init__(self, facts: StoreFacts, *, graph: Graph | None = None, assignment: np.ndarray | None = None,
                 directory: Path | None = None, manifest: dict[str, Any] | None = None):
        # Private: use build() or open().
        self.k, self.method, self.seed, self.stats = facts.k, facts.method, facts.seed, facts.stats
        self.fingerprint, self.n, self.m, self.directed = facts.fingerprint, facts.n, facts.m, facts.directed
        self.graph = graph
        self.directory = directory
        self.reused = False
        self._manifest = manifest
        self._assignment = assignment
        self._layout: PartLayout | None = None
        self._parts: dict[int, LocalPart] = {}
        self._cross: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._cross_vertices: np.ndarray | None = None
        self._index: DataIndex | None = None
        #: Files this process wrote, their checksums computed from the bytes it wrote: a deep check of them only
        #: compares sizes (a 64M-edge graph's adjacency is gigabytes of sha256); other processes check them.
        self._written: set[str] = set()

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(cls, graph: Graph, k: int, method: str = "metis", seed: int = 0) -> PartitionStore:
        """Partition ``graph`` into ``k`` parts in memory (see :func:`distsm.partition.partition_vertices`)."""
        check_method(method)
        k = check_k(k)
        t0 = time.perf_counter()
        assignment = np.asarray(partition_vertices(graph, k, method=method, seed=seed), dtype=np.int32)
        seconds = time.perf_counter() - t0
        assignment.flags.writeable = False
        facts = StoreFacts(k, method, int(seed), partition_stats(graph, assignment, k, seconds),
                           graph_fingerprint(graph), graph.n, graph.m, graph.directed)
        return cls(facts, graph=graph, assignment=assignment)

    @classmethod
    def open(cls, directory: str | os.PathLike, graph: Graph | None = None, k: int | None = None) -> PartitionStore:
        """Open a saved store, reading only its manifest; parts and arrays are read on first use.

        Raises:
            FileNotFoundError: no ``manifest.json`` in ``directory``.
            StalePartitionError: the manifest is unreadable, of another format or version, or disagrees with
                ``graph`` (fingerprint) or ``k``.
        """
        d = Path(directory)
        path = d / "manifest.json"
        manifest = read_manifest(path, STORE_FORMAT, STORE_VERSION,
                                 lambda problem: StalePartitionError(f"{path}: {problem}"), "distsm partition manifest")
        try:
            stored_k = int(manifest["k"])
            facts = StoreFacts(stored_k, str(manifest["method"]), int(manifest["seed"]),
                               PartitionStats.from_dict(manifest["stats"]), str(manifest["fingerprint"]),
                               int(manifest["n"]), int(manifest["m"]), bool(manifest["directed"]))
            store = cls(facts, graph=graph, directory=d, manifest=manifest)
            files = dict(manifest["files"])
        except (KeyError, TypeError, ValueError) as e:
            raise StalePartitionError(f"{path} is incomplete or malformed: {e!r}") from e
        try:
            # Every name is checked before any file is read: a crafted manifest must not make us read elsewhere.
            for name in files:
                confined(d, name)
        except ValueError as e:
            raise StalePartitionError(f"{path}: {e}") from e
        if k is not None and check_k(k) != stored_k:
            raise StalePartitionError(f"{d} holds a partition into {stored_k} parts, not {k}")
        if graph is not None and graph_fingerprint(graph) != store.fingerprint:
            raise StalePartitionError(f"{d} was built for another graph (n={store.n}, m={store.m}, fingerprint "
                                      f"{store.fingerprint[:19]}...), not this one (n={graph.n}, m={graph.m})")
        return store

    # ------------------------------------------------------------------ contents
    @property
    def in_memory(self) -> bool:
        return self.directory is None

    @property
    def assignment(self) -> np.ndarray:
        """``int32[n]``: the part of every vertex (read-only)."""
        if self._assignment is None:
            self._assignment = self._read("assignment.npy")
        return self._assignment

    def part(self, i: int) -> LocalPart:
        """Part ``i`` as a :class:`LocalPart` (computed or read on first use, then cached)."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.k:
            raise IndexError(f"part index {i!r} out of range 0..{self.k - 1}")
        i = int(i)
        if i not in self._parts:
            if self.in_memory:
                arrays = self._layout_of().part_arrays(self._own_graph(), i)
            else:
                arrays = {name: self._read(f"{_part_dir(i)}/{name}.npy") for name in _PART_FILES}
            self._parts[i] = local_part(i, arrays, self.directed, self._whole_csr() if self.k == 1 else None)
        return self._parts[i]

    def _whole_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The whole graph's adjacency ``(indptr, neighbours, effective labels)``, which is a one-part store's part
        as it is (ids unchanged): from the graph in memory, or from the saved adjacency index (None where the store
        was saved without it).  Sorting 64M edges again took a worker seconds."""
        if self.in_memory:
            g = self._own_graph()
            return g.indptr, g.neighbors, g.neighbor_labels
        if not any(name.startswith("adjacency/") for name in self._files()):
            return None
        return csr_of_index(self.adjacency_index(mmap=True))

    def parts(self) -> Iterator[LocalPart]:
        """All parts in order."""
        return (self.part(i) for i in range(self.k))

    def cross_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, labels)``: the edges whose endpoints lie in different parts, global ids (int64; labels
        int32), sorted by ``(src, dst)``; undirected edges have ``src < dst``, directed ones keep their direction."""
        if self._cross is None:
            if self.in_memory:
                cross = self._layout_of().cross
            else:
                cross = (self._read("cross_src.npy"), self._read("cross_dst.npy"), self._read("cross_labels.npy"))
            for arr in cross:
                arr.flags.writeable = False
            self._cross = cross
        return self._cross

    def cross_vertices(self) -> np.ndarray:
        """The vertices incident to at least one cross edge (int64, ascending): where a spanning search's prime
        edge can start."""
        if self._cross_vertices is None:
            if not self.in_memory and "cross_vertices.npy" in self._files():
                self._cross_vertices = self._read("cross_vertices.npy")
            else:
                src, dst, _ = self.cross_edges()
                self._cross_vertices = incident_vertices(src, dst)
                self._cross_vertices.flags.writeable = False
        return self._cross_vertices

    def adjacency_index(self, mmap: bool = True, *, verify: bool = True) -> DataIndex:
        """The whole graph's NumPy :class:`DataIndex` for inter-partition adjacency.

        A saved store opens ``adjacency/`` (memory-mapped when ``mmap``, so processes on one host share the pages;
        ``verify`` checks the files' sha256 first, reading them once).  An in-memory store builds it with
        ``build_index(graph, numpy)``.  Cached after the first call.
        """
        if self._index is None:
            if self.directory is None:  # in memory
                self._index = build_index(self._own_graph(), np)
            else:
                files = self._files()
                names = [name for name in files if name.startswith("adjacency/")]
                if not names:
                    raise StalePartitionError(f"{self.directory} was saved without its adjacency index")
                if verify:
                    for name in names:
                        self._check_file(name, deep=True)
                try:
                    self._index = load_index(self.directory / "adjacency", mmap=mmap)
                except (ValueError, KeyError) as e:
                    raise StalePartitionError(f"{self.directory / 'adjacency'} cannot be read: {e}") from e
        return self._index

    def verify(self, *, deep: bool = True) -> None:
        """Check every file of a saved store: present with the recorded size, and (``deep``) the recorded sha256.
        Raises StalePartitionError; does nothing for an in-memory store."""
        if self.in_memory:
            return
        for name in self._files():
            self._check_file(name, deep=deep)

    # ------------------------------------------------------------------ saving
    def save(self, directory: str | os.PathLike, *, adjacency: bool = True) -> Path:
        """Write the store to ``directory`` (replacing a partition store already there) and return its path.

        The store is written to a temporary sibling and renamed into place.  A directory that exists, is not empty
        and holds no ``manifest.json`` is refused (FileExistsError) rather than overwritten.  ``adjacency`` also
        writes the whole graph's index under ``adjacency/``.
        """
        d = Path(directory).absolute()
        if d.exists() and (not d.is_dir() or (any(d.iterdir()) and not (d / "manifest.json").exists())):
            raise FileExistsError(f"{d} exists and is not a partition store; refusing to overwrite it")
        if self.directory is not None and d == self.directory.absolute():
            return d
        d.parent.mkdir(parents=True, exist_ok=True)
        # Not tempfile.mkdtemp: its 0700 mode would survive the rename and lock out workers running under another
        # user id (the deploy recipe's shared directory); mkdir applies the user's umask like every other file.
        tmp = d.parent / f".{d.name}.tmp-{uuid.uuid4().hex[:12]}"
        tmp.mkdir()
        try:
            if self.directory is None:  # in memory
                self._write(tmp, adjacency)
            else:
                self.verify(deep=True)
                shutil.rmtree(tmp)
                shutil.copytree(self.directory, tmp)
            _replace_dir(tmp, d)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return d

    def _write(self, d: Path, adjacency: bool) -> None:
        graph = self._own_graph()
        layout = self._layout_of()
        files: dict[str, Any] = {"assignment.npy": save_npy(d, "assignment.npy", self.assignment)}
        for name, arr in zip(("cross_src", "cross_dst", "cross_labels"), layout.cross):
            files[f"{name}.npy"] = save_npy(d, f"{name}.npy", arr)
        files["cross_vertices.npy"] = save_npy(d, "cross_vertices.npy", self.cross_vertices())
        for i in range(self.k):
            sub = d / _part_dir(i)
            sub.mkdir(parents=True)
            for name, arr in layout.part_arrays(graph, i).items():
                files[f"{_part_dir(i)}/{name}.npy"] = save_npy(sub, f"{name}.npy", arr, checksum=False)
        add_checksums(d, files)
        if adjacency:
            index = self._index if self._index is not None else build_index(graph, np)
            meta = save_index(index, d / "adjacency")
            files.update({f"adjacency/{name}": entry for name, entry in meta["files"].items()})
            files["adjacency/index.json"] = {"sha256": sha256_file(d / "adjacency" / "index.json"),
                                             "bytes": (d / "adjacency" / "index.json").stat().st_size}
        manifest = {
            "format": STORE_FORMAT, "version": STORE_VERSION, "distsm_version": __version__,
            "fingerprint": self.fingerprint, "n": self.n, "m": self.m, "directed": self.directed,
            "k": self.k, "method": self.method, "seed": self.seed, "stats": self.stats.as_dict(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "files": files,
        }
        (d / "manifest.json").write_text(json.dumps(manifest, indent=1))

    # ------------------------------------------------------------------ internals
    def _own_graph(self) -> Graph:
        """The graph of an in-memory store (:meth:`build` always keeps it; a store opened from a directory may have
        none, and never calls this)."""
        if self.graph is None:
            raise RuntimeError("an in-memory partition store needs its graph")
        return self.graph

    def _layout_of(self) -> PartLayout:
        if self._layout is None:
            self._layout = PartLayout(self._own_graph(), self.assignment, self.k)
        return self._layout

    def _files(self) -> dict[str, Any]:
        if self._manifest is None:
            raise RuntimeError("an in-memory partition store has no manifest")
        return self._manifest["files"]

    def _entry(self, name: str) -> tuple[dict[str, Any], Path]:
        """The manifest entry of ``name`` and its path (checked by :meth:`open` to stay inside the store)."""
        entry = self._files().get(name)
        directory = self.directory
        if directory is None:
            raise RuntimeError("an in-memory partition store has no files")
        if not isinstance(entry, dict) or "sha256" not in entry:
            raise StalePartitionError(f"{directory} manifest lists no checksum for {name}")
        try:
            # Checked again at each use: a file may have been replaced by a link since open().
            return entry, confined(directory, name)
        except ValueError as e:
            raise StalePartitionError(f"{directory}: {e}") from e

    def _check_file(self, name: str, *, deep: bool) -> None:
        entry, path = self._entry(name)
        try:
            size = path.stat().st_size
        except OSError as e:
            raise StalePartitionError(f"{path} is missing ({e.strerror})") from e
        if size != entry.get("bytes", size):
            raise StalePartitionError(f"{path} has {size} bytes, the manifest says {entry['bytes']}")
        if deep and name not in self._written and sha256_file(path) != entry["sha256"]:
            raise StalePartitionError(f"checksum mismatch in {path}")

    def _read(self, name: str) -> np.ndarray:
        """Read one .npy of a saved store, verifying its sha256 against the manifest (one read of the bytes)."""
        entry, path = self._entry(name)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise StalePartitionError(f"cannot read {path}: {e.strerror}") from e
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise StalePartitionError(f"checksum mismatch in {path}")
        try:
            arr = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as e:
            raise StalePartitionError(f"{path} is not a NumPy array file: {e}") from e
        arr.flags.writeable = False
        return arr

    def __len__(self) -> int:
        return self.k

    def __repr__(self) -> str:
        where = "in memory" if self.in_memory else str(self.directory)
        return (f"PartitionStore(k={self.k}, method={self.method!r}, seed={self.seed}, n={self.n}, m={self.m}, "
                f"cross_edges={self.stats.cross_edges}, balance={self.stats.balance:.3f}, {where})")


def _replace_dir(tmp: Path, d: Path) -> None:
    """Move the finished directory ``tmp`` to ``d``, replacing a store already at ``d``."""
    if not d.exists():
        try:
            os.rename(tmp, d)
            return
        except OSError:
            if not (d / "manifest.json").exists():
                raise
            # Another process saved a store there at the same moment: replace it like an old one.
    trash = d.parent / f".{d.name}.old-{uuid.uuid4().hex[:12]}"
    os.rename(d, trash)
    try:
        os.rename(tmp, d)
    except OSError:
        if (d / "manifest.json").exists():
            # Someone else's store landed in between; theirs is as good as ours.
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            os.rename(trash, d)
            raise
    shutil.rmtree(trash, ignore_errors=True)


def load_or_build(graph: Graph, k: int, *, directory: str | os.PathLike | None = None, method: str = "metis",
                  seed: int = 0, fallback: bool = True) -> PartitionStore:
    """The partition of ``graph`` into ``k`` parts, from ``directory`` when it holds a fresh one.

    Without ``directory`` this is :meth:`PartitionStore.build`.  With one: a store there that matches the graph,
    ``k``, ``method`` and ``seed`` (``seed`` is ignored for ``"contiguous"``) and whose files are all present is
    opened (``store.reused`` is True); otherwise the partition is rebuilt, saved there and the saved copy opened.
    When the directory cannot be written, a RuntimeWarning says so and the in-memory store is returned (with
    ``fallback=False`` the OSError is raised instead).
    """
    check_method(method)
    k = check_k(k)
    if directory is None:
        return PartitionStore.build(graph, k, method=method, seed=seed)
    d = Path(directory)
    if (d / "manifest.json").exists():
        try:
            store = PartitionStore.open(d, graph=graph, k=k)
            if store.method == method and (method == "contiguous" or store.seed == seed):
                store.verify(deep=False)
                store.reused = True
                return store
        except (StalePartitionError, OSError):
            pass
    store = PartitionStore.build(graph, k, method=method, seed=seed)
    try:
        store.save(d)
    except OSError as e:
        if not fallback:
            raise
        warnings.warn(f"cannot save the partition to {d} ({e}); keeping it in memory only", RuntimeWarning,
                      stacklevel=2)
        return store
    try:
        saved = PartitionStore.open(d, graph=graph, k=k)
    except (StalePartitionError, OSError):
        # Another process replaced the store in the meantime (with another k, say); ours is still right.
        return store
    saved._assignment = store._assignment
    saved.stats = store.stats
    saved._written.update(saved._files())
    return saved
