"""METIS partitioning (pymetis), run in a child process.

pymetis holds the GIL for the whole call and segfaults on some bad input (an out-of-range neighbour id, say), so
METIS never runs in the caller's process.  :func:`metis_parts` writes the symmetrised CSR to a temporary directory as
``.npy`` files and starts ``python -P -c <_CHILD_CODE>``, a short script that imports only NumPy and pymetis, runs
``part_graph`` and writes the partition vector back.  A child that crashes, is killed, times out or leaves no valid
output raises :class:`PartitionError` in the caller; the caller itself is never at risk.

METIS coarsens by random matching (``ctype`` RM, not the default sorted heavy-edge matching, which on unit edge
weights only adds a sort by degree), refines in four passes (not ten) and splits by recursive bisection for every
``k`` (pymetis's default switches to k-way past eight parts): on R-MAT graphs these options cut fewer edges in
less time than the defaults, and k-way cut two to three times more (benchmarks/README.md, 'Measurements behind the
engine's settings').
"""

from __future__ import annotations

import json
import numbers
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from distsm.graph import Graph

_MAX_PARTS = int(np.iinfo(np.int32).max)

# The child imports nothing from distsm (``-P`` keeps the working directory off sys.path), so it starts in ~0.2 s.
_CHILD_CODE = r"""
import json, sys
import numpy as np
import pymetis
d, k, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
xadj = np.load(d + "/xadj.npy")
adjncy = np.load(d + "/adjncy.npy")
ew = np.load(d + "/eweights.npy") if sys.argv[4] == "1" else None
res = pymetis.part_graph(k, adjacency=pymetis.CSRAdjacency(xadj, adjncy), eweights=ew, recursive=True,
                         options=pymetis.Options(seed=seed, ctype=0, niter=4))
np.save(d + "/parts.npy", np.asarray(res.vertex_part, dtype=np.int64))
with open(d + "/result.json", "w") as f:
    json.dump({"edge_cuts": int(res.edge_cuts)}, f)
"""


class PartitionError(RuntimeError):
    """The METIS child process failed (crashed, was killed, timed out or returned an invalid partition)."""


def check_k(k: object) -> int:
    """``k`` as an ``int``; raises TypeError for a non-integer and ValueError for ``k < 1`` or a huge ``k``."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer >= 1, got {k!r}")
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k > _MAX_PARTS:
        raise ValueError(f"k must be <= {_MAX_PARTS}, got {k}")
    return k


def symmetric_csr(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The undirected simple adjacency of ``graph`` as int64 ``(xadj, adjncy, eweights)``.

    Every undirected edge appears in both rows, without self loops or repeats.  For a directed graph with reciprocal
    arcs ``u->v`` and ``v->u`` the pair is one METIS edge of weight 2, so METIS's edge cut equals the number of cut
    arcs; ``eweights`` is None when all weights would be 1.
    """
    n = graph.n
    rows = np.repeat(np.arange(n, dtype=np.int64), graph.degrees)
    nbr = graph.neighbors.astype(np.int64)
    key = rows * max(n, 1) + nbr
    if graph.directed:
        # A row of a directed graph holds out- and in-arcs, so a reciprocal pair shows up twice; labels differ.
        key, counts = np.unique(key, return_counts=True)
        weights = counts.astype(np.int64) if counts.size and counts.max() > 1 else None
    else:
        # Undirected rows have no repeated neighbour (Graph refuses parallel edges); sort by (row, neighbour).
        key = np.sort(key)
        weights = None
    src = key // max(n, 1)
    adjncy = key % max(n, 1)
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=xadj[1:])
    return xadj, adjncy, weights


def metis_parts(graph: Graph, k: int, *, seed: int = 0, timeout: float | None = None) -> np.ndarray:
    """Split the vertices of ``graph`` into ``k`` parts with METIS; returns ``int32[n]`` with values ``0..k-1``.

    Directed graphs are partitioned through their undirected version (reciprocal arcs weigh 2).  ``seed`` makes
    the result reproducible (same seed, same graph, same pymetis -> same partition).

    Special cases, none of which start METIS: ``k == 1`` gives all zeros; ``k >= n`` puts vertex ``v`` alone in
    part ``v`` (parts ``n..k-1`` stay empty); a graph without edges is split into ``k`` contiguous id ranges
    (every split has edge cut 0).  Otherwise METIS may still leave a part empty on awkward inputs (many
    components of very different sizes); callers that need non-empty parts should check.

    Raises:
        TypeError, ValueError: ``k`` is not an integer >= 1, or ``seed`` is not an integer.
        PartitionError: the METIS child process crashed, was killed, ran past ``timeout`` seconds, or returned
            something that is not a partition.
    """
    k = check_k(k)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    n = graph.n
    if k == 1 or n == 0:
        return np.zeros(n, dtype=np.int32)
    if k >= n:
        return np.arange(n, dtype=np.int32)
    if graph.m == 0:
        return ((np.arange(n, dtype=np.int64) * k) // n).astype(np.int32)
    xadj, adjncy, weights = symmetric_csr(graph)
    parts, _ = _run_child(xadj, adjncy, weights, k, int(seed), timeout)
    return parts


def _run_child(xadj: np.ndarray, adjncy: np.ndarray, eweights: np.ndarray | None, k: int, seed: int,
               timeout: float | None) -> tuple[np.ndarray, int]:
    """Run pymetis on a CSR in a child process; returns ``(int32 parts, METIS edge cut)``."""
    n = int(xadj.shape[0]) - 1
    with tempfile.TemporaryDirectory(prefix="distsm-metis-") as tmp:
        d = Path(tmp)
        np.save(d / "xadj.npy", np.ascontiguousarray(xadj, dtype=np.int64))
        np.save(d / "adjncy.npy", np.ascontiguousarray(adjncy, dtype=np.int64))
        if eweights is not None:
            np.save(d / "eweights.npy", np.ascontiguousarray(eweights, dtype=np.int64))
        cmd = [sys.executable, "-P", "-c", _CHILD_CODE, str(d), str(k), str(seed), "1" if eweights is not None else "0"]
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired as e:
            raise PartitionError(f"METIS child process ran past its timeout of {timeout} s "
                                 f"(n={n}, k={k}) and was killed") from e
        if proc.returncode != 0:
            raise PartitionError(f"METIS child process {_describe_exit(proc.returncode)} "
                                 f"(n={n}, k={k}){_stderr_tail(proc.stderr)}")
        try:
            parts = np.load(d / "parts.npy")
            edge_cuts = int(json.loads((d / "result.json").read_text())["edge_cuts"])
        except (OSError, ValueError, KeyError) as e:
            raise PartitionError(f"METIS child process exited cleanly but left no readable result: {e}") from e
    if parts.shape != (n,):
        raise PartitionError(f"METIS returned {parts.shape} part ids for {n} vertices")
    if n and (parts.min() < 0 or parts.max() >= k):
        raise PartitionError(f"METIS returned part ids outside 0..{k - 1}")
    if edge_cuts < 0:
        # pymetis reports -1 for an asymmetric adjacency instead of raising.
        raise PartitionError("METIS reported an invalid edge cut (is the adjacency symmetric?)")
    return parts.astype(np.int32), edge_cuts


def _describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"was killed by {name}"
    if rc in (128 + signal.SIGSEGV, 128 + signal.SIGKILL, 128 + signal.SIGABRT):
        return f"exited with status {rc} (like {signal.Signals(rc - 128).name})"
    return f"exited with status {rc}"


def _stderr_tail(err: str) -> str:
    """The child's last stderr line (the exception, for a Python error), or nothing."""
    tail = [line.strip() for line in (err or "").splitlines() if line.strip()]
    return f": {tail[-1]}" if tail else ""
