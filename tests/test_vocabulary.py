"""The vocabulary module is the one spelling of the users' choices: the CLI offers exactly its values, the API and
the engine accept exactly them, and each refusal names them."""

from __future__ import annotations

import argparse

import pytest

import distsm
from distsm import vocabulary
from distsm.cli import build_parser
from distsm.formats import FORMATS
from distsm.kernels import get_backend
from distsm.partition import PARTITION_METHODS, partition_vertices
from distsm.plan import Strategy


def _choices(parser: argparse.ArgumentParser) -> dict[tuple[str, str], tuple[str, ...]]:
    """``{(subcommand, option): choices}`` over every subcommand of the CLI."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for a in sub._actions:
                    if a.choices is not None and a.option_strings:
                        found[(name, a.option_strings[-1])] = tuple(a.choices)
    return found


def test_cli_choices_are_the_vocabulary() -> None:
    choices = _choices(build_parser())
    assert choices[("count", "--backend")] == choices[("match", "--backend")] == vocabulary.BACKENDS
    assert choices[("count", "--partition-method")] == choices[("partition", "--method")] == PARTITION_METHODS
    assert choices[("count", "--adjacency")] == vocabulary.ADJACENCY_MODES
    assert choices[("count", "--format")] == ("auto", *FORMATS)


def test_packages_reuse_the_vocabulary() -> None:
    assert PARTITION_METHODS is vocabulary.PARTITION_METHODS
    assert Strategy is vocabulary.Strategy and distsm.Strategy is vocabulary.Strategy
    assert vocabulary.BACKENDS == ("auto", "numpy", "cupy")
    assert vocabulary.ADJACENCY_MODES == ("auto", "device", "host", "gather")


@pytest.mark.parametrize("bad", ["tpu", "NumPy", 3, None])
def test_unknown_backend_is_refused_naming_the_choices(bad: object) -> None:
    q = distsm.Graph.from_edges([(0, 1)])
    with pytest.raises(ValueError, match="unknown backend .*'auto', 'numpy', 'cupy'"):
        distsm.count(q, q, backend=bad)
    if isinstance(bad, str):
        with pytest.raises(ValueError, match="unknown backend .*auto, numpy, cupy"):
            get_backend(bad)


def test_unknown_adjacency_partition_method_and_strategy_name_their_choices() -> None:
    g = distsm.Graph.from_edges([(0, 1), (1, 2), (2, 0)])
    with pytest.raises(ValueError, match="adjacency must be one of 'auto', 'device', 'host', 'gather', got 'disk'"):
        distsm.count(g, g, partitions=2, adjacency="disk", backend="numpy")
    with pytest.raises(ValueError, match="unknown partition method 'kl'; choose one of metis, random, contiguous"):
        partition_vertices(g, 2, method="kl")
    with pytest.raises(ValueError, match="strategy must be 'pbe' or 'global', got 'local'"):
        Strategy.parse("local")
    assert Strategy.parse("global") is Strategy.GLOBAL and Strategy.parse(Strategy.PBE) == "pbe"
