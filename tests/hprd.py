"""Locations of the HPRD known-answer suite (tests/data/hprd, copied from the SubgraphMatching project); the one
reader of the suite is :mod:`benchmarks.common`, shared with the benchmarks."""

from benchmarks.common import HPRD, hprd_data_path, hprd_expected, hprd_query_path

DATA = hprd_data_path(HPRD)


def expected_counts() -> dict[str, int]:
    """The published count of every HPRD query, in query-number order."""
    return hprd_expected(HPRD)


def query_path(name: str):
    """The file of the HPRD query ``name``."""
    return hprd_query_path(name, HPRD)
