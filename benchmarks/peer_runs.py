"""How each peer system is invoked, and how its own printed count and timers are read back.

Peers are other subgraph matchers, built by the user from their public sources (never vendored here):

* ``gmatch``: gMatch's ``bitmap/`` build (w20chen/gMatch), GPU.  ``-d DATA -q QUERY``; prints ``Result: N`` and
  ``# Preparation, time (ms): H(host), K(kernel)`` / ``# Processing, time (ms): ...``.  Its time is preparation
  (candidate graph, copies to the GPU) plus processing (BFS + DFS join), each the larger of its host and
  CUDA-event readings; process start, file parsing and its memory-pool allocation are outside both timers.
  At most 16 query vertices (``QVMAX``).
* ``gmatch-neighbor``: gMatch's ``neighbor/`` build (``SubgraphMatching_labeled``: adjacency lists instead of
  candidate bitmaps), GPU; invoked as ``gmatch``, and timed the same: its ``# Transfer time of the data graph``
  timer is bitmap's Preparation.  Its per-warp arrays hold 32 query vertices (an assert a Release build drops).
* ``egsm``: EGSM (gMatch's ``compared_system/EGSM``), GPU.  ``-q QUERY -d DATA``; prints ``# Matches: N`` and
  ``Build Cuckoo Tries, time (ms): ...``, ``Filtering, time (ms): ...``, ``Total join time (ms): H(host) K(kernel)``;
  its time is the sum of the three.  It refuses queries with more than 16 vertices or 32 edges.
* ``rapidmatch``: RapidMatch (RapidsAtHKUST/RapidMatch), CPU.  ``-order nd -preprocess true -num MAX
  -time_limit S``; prints ``Query time (seconds): T`` (preprocessing, planning and enumeration) and
  ``#Embeddings: N``.  At its own time limit it stops and prints the partial count, so a reported time at or over
  the cap means capped.  At most 32 query vertices.
* ``subgraphmatching``: the SIGMOD'20 study's framework (RapidsAtHKUST/SubgraphMatching), CPU, run as
  ``-filter GQL -order GQL -engine LFTJ -num MAX``; prints ``Total time (seconds): T`` (filter, tables, order and
  enumeration) and ``#Embeddings: N``.

Both GPU peers print whole milliseconds upstream; the patched builds print three decimals.  The parsers read either.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

_MS = r"([0-9]+(?:\.[0-9]+)?)"


@dataclass
class PeerOutput:
    """What one peer run printed: its count, its own time in seconds, the timers it was summed from, and the
    reason it refused the query (if it did)."""

    count: int | None = None
    seconds: float | None = None
    timers: dict[str, float] = field(default_factory=dict)
    refused: str | None = None


def _last_int(pattern: str, text: str) -> int | None:
    found = re.findall(pattern, text, flags=re.MULTILINE)
    return int(found[-1]) if found else None


def _cuda_timers(text: str, names: tuple[str, ...], separator: str) -> dict[str, float]:
    """``{name: ms}`` for lines ``NAME<separator>time (ms): H(host)[,] K(kernel)``; the larger of the host and
    CUDA-event readings (the event time also covers device work still queued when the host clock stopped)."""
    out: dict[str, float] = {}
    for name in names:
        pat = re.escape(name) + separator + r"time \(ms\): " + _MS + r"\(host\),? " + _MS + r"\(kernel\)"
        m = re.search(pat, text)
        if m:
            out[name] = max(float(m.group(1)), float(m.group(2)))
    return out


def parse_gmatch(text: str) -> PeerOutput:
    """gMatch: ``Result:`` and Preparation + Processing (the neighbor variant names its preparation timer
    ``Transfer time of the data graph``; its extra timers of the first partial matches' step, which the bitmap
    variant leaves untimed, are not counted, so that both time the same steps).  A query with no starting partial
    match returns before the join prints its Processing timer; its processing time is then 0."""
    count = _last_int(r"Result:\s*([0-9]+)", text)
    timers = _cuda_timers(text, ("Preparation", "Transfer time of the data graph", "Processing"), r", ")
    prepared = timers.get("Preparation", timers.get("Transfer time of the data graph"))
    seconds = None
    if count is not None and prepared is not None:
        seconds = (prepared + timers.get("Processing", 0.0)) / 1e3
    return PeerOutput(count, seconds, timers)


def parse_egsm(text: str) -> PeerOutput:
    """EGSM: ``# Matches:`` and Build Cuckoo Tries + Filtering + Total join."""
    refused = None
    m = re.search(r"The query graph should have at most [^\n]*", text)
    if m:
        refused = m.group(0).strip()
    count = _last_int(r"^# Matches:\s*([0-9]+)", text)
    timers = _cuda_timers(text, ("Build Cuckoo Tries", "Filtering"), r", ")
    timers.update(_cuda_timers(text, ("Total join",), r" "))
    seconds = None
    if count is not None and len(timers) == 3:
        seconds = sum(timers.values()) / 1e3
    return PeerOutput(count, seconds, timers, refused)


def _seconds_line(label: str, text: str) -> float | None:
    m = re.search(r"^" + re.escape(label) + r" \(seconds\):\s*" + _MS, text, flags=re.MULTILINE)
    return float(m.group(1)) if m else None


def parse_rapidmatch(text: str) -> PeerOutput:
    """RapidMatch: ``#Embeddings:`` (the final line, not the per-order ones) and ``Query time``."""
    seconds = _seconds_line("Query time", text)
    count = _last_int(r"^#Embeddings:\s*([0-9]+)", text)
    return PeerOutput(count, seconds if count is not None else None,
                      {} if seconds is None else {"Query time": seconds * 1e3})


def parse_subgraphmatching(text: str) -> PeerOutput:
    """SubgraphMatching: ``#Embeddings:`` and ``Total time`` (preprocessing + enumeration)."""
    seconds = _seconds_line("Total time", text)
    timers = {k: v * 1e3 for k in ("Preprocessing time", "Enumerate time")
              if (v := _seconds_line(k, text)) is not None}
    count = _last_int(r"^#Embeddings:\s*([0-9]+)", text)
    return PeerOutput(count, seconds if count is not None else None, timers)


@dataclass(frozen=True)
class Peer:
    """One peer: its command line, its output parser and the largest query it takes."""

    name: str
    device: str  # "gpu" or "cpu"
    argv: Callable[[str, str, str, float], list[str]]  # (binary, data, query, cap seconds) -> argv
    parse: Callable[[str], PeerOutput]
    max_vertices: int | None = None
    max_edges: int | None = None

    def unsupported(self, vertices: int, edges: int) -> str | None:
        """Why this peer cannot take a query of this size (None when it can)."""
        if self.max_vertices is not None and vertices > self.max_vertices:
            return f"{self.name} takes at most {self.max_vertices} query vertices ({vertices} given)"
        if self.max_edges is not None and edges > self.max_edges:
            return f"{self.name} takes at most {self.max_edges} query edges ({edges} given)"
        return None


PEERS: dict[str, Peer] = {
    "gmatch": Peer("gmatch", "gpu", lambda b, d, q, cap: [b, "-d", d, "-q", q], parse_gmatch, max_vertices=16),
    "gmatch-neighbor": Peer("gmatch-neighbor", "gpu", lambda b, d, q, cap: [b, "-d", d, "-q", q], parse_gmatch,
                            max_vertices=32),
    "egsm": Peer("egsm", "gpu", lambda b, d, q, cap: [b, "-q", q, "-d", d], parse_egsm, max_vertices=16,
                 max_edges=32),
    # RapidMatch takes whole seconds; it stops itself just past the cap, and a time over the cap reads as capped
    "rapidmatch": Peer("rapidmatch", "cpu", lambda b, d, q, cap: [b, "-d", d, "-q", q, "-order", "nd", "-preprocess",
                                                                  "true", "-num", "MAX", "-time_limit",
                                                                  str(max(1, math.ceil(cap)))],
                       parse_rapidmatch, max_vertices=32),
    "subgraphmatching": Peer("subgraphmatching", "cpu", lambda b, d, q, cap: [b, "-d", d, "-q", q, "-filter", "GQL",
                                                                              "-order", "GQL", "-engine", "LFTJ",
                                                                              "-num", "MAX"],
                             parse_subgraphmatching, max_vertices=64),
}
