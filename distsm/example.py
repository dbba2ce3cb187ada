"""The bundled example: the HPRD protein network and four of its known-answer queries.

HPRD (9,460 vertices, 34,998 edges, 307 vertex labels) and its queries come from RapidsAtHKUST/SubgraphMatching
(MIT licence); the expected counts are that suite's published answers, so the example checks itself.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def _data_dir() -> Path:
    return Path(str(resources.files("distsm") / "data"))


def data_path() -> Path:
    """Path of the bundled data graph (gzip-compressed ``t/v/e`` format)."""
    return _data_dir() / "hprd.graph.gz"


def query_paths() -> list[Path]:
    """Paths of the bundled query graphs."""
    return sorted(_data_dir().glob("query_*.graph"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))


def expected_counts() -> dict[str, int]:
    """Known embedding counts of the bundled queries, keyed by file stem."""
    text = (_data_dir() / "expected_counts.txt").read_text()
    return {name: int(count) for name, count in (line.split(":") for line in text.split())}
