"""Locations of the HPRD known-answer suite (tests/data/hprd, copied from the SubgraphMatching project)."""

from pathlib import Path

HPRD = Path(__file__).parent / "data" / "hprd"
DATA = HPRD / "data_graph" / "HPRD.graph"


def expected_counts() -> dict[str, int]:
    lines = (HPRD / "expected_output.res").read_text().split()
    return {name: int(c) for name, c in (line.split(":") for line in lines)}


def query_path(name: str) -> Path:
    return HPRD / "query_graph" / f"{name}.graph"
