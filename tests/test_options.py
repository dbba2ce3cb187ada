"""Tuning options read from dask.config (distsm/config.py): defaults, overrides, validation."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources

import dask.config
import pytest
import yaml

import distsm
from distsm.config import engine_options, gpu_options, options


def test_defaults_come_from_the_shipped_yaml():
    shipped = yaml.safe_load((resources.files("distsm") / "distsm.yaml").read_text())["distsm"]
    g = gpu_options()
    assert g.fuse_levels is shipped["gpu"]["fuse-levels"]
    assert g.small_limit == shipped["gpu"]["small-limit"]
    assert g.descend_limit == shipped["gpu"]["descend-limit"]
    assert g.load_balance == shipped["gpu"]["load-balance"]
    assert engine_options().host_work == float(shipped["engine"]["host-work"])


def test_context_manager_overrides_then_restores():
    before = gpu_options()
    with distsm.options({"gpu.fuse-levels": not before.fuse_levels}, gpu__small_limit=7):
        assert gpu_options().fuse_levels is not before.fuse_levels
        assert gpu_options().small_limit == 7
    assert gpu_options() == before
    with dask.config.set({"distsm.gpu.load-balance": "tiered", "distsm.gpu.tier-limits": [2, 5]}):
        assert gpu_options().load_balance == "tiered" and gpu_options().tier_limits == (2, 5)
    assert gpu_options() == before


@pytest.mark.parametrize("values, message", [
    ({"gpu.fuse-level": False}, "unknown option 'gpu.fuse-level'"),
    ({"cpu.pinned": False}, "unknown option"),
    ({"gpu.load-balance": "rows"}, "load-balance must be one of"),
    ({"gpu.small-limit": -1}, "small-limit must be >= 0"),
    ({"gpu.descend-limit": -2}, "descend-limit must be >= 0"),
])
def test_bad_names_and_values_are_refused_before_anything_is_set(values, message):
    before = gpu_options()
    with pytest.raises(ValueError, match=message):
        with options(values):
            pass
    assert gpu_options() == before


def test_a_bad_value_set_through_dask_is_reported_when_read():
    with dask.config.set({"distsm.gpu.load-balance": "rows"}):
        with pytest.raises(ValueError, match="distsm.gpu.load-balance"):
            gpu_options()


def test_environment_variables_reach_the_options_through_dask():
    env = dict(os.environ, DASK_DISTSM__GPU__FUSE_LEVELS="False", DASK_DISTSM__GPU__PINNED="0",
               DASK_DISTSM__ENGINE__HOST_WORK="5")
    code = "from distsm.config import *; g = gpu_options(); print(g.fuse_levels, g.pinned, engine_options().host_work)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "5.0"]


def test_a_dask_config_block_entered_before_distsm_read_its_options_leaves_the_defaults():
    # Dask restores a block's dotted keys by deleting those it did not find: entered before distsm registered its
    # defaults, the block's exit removed the whole ``distsm`` key, and every later read failed.
    code = ("import dask.config, distsm\n"
            "from distsm.config import engine_options\n"
            "with dask.config.set({'distsm.engine.trial-ratio-host': 32.0}):\n"
            "    print(engine_options().trial_ratio_host)\n"
            "print(engine_options().trial_ratio_host, engine_options().host_work > 0)\n"
            "g = distsm.Graph.from_edges([(0, 1), (1, 2), (2, 0)])\n"
            "print(distsm.count(g, g, backend='numpy'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    shipped = yaml.safe_load((resources.files("distsm") / "distsm.yaml").read_text())["distsm"]
    assert out.split() == ["32.0", str(float(shipped["engine"]["trial-ratio-host"])), "True", "6"]


def test_a_request_keeps_the_options_it_started_with(monkeypatch):
    """An entry point takes the options as configured when it is called: an iterator of matches sees them while it
    is consumed, whatever is set around it by then (one snapshot per request)."""
    from distsm.kernels import engine

    seen = []
    walk = engine.walk

    def watched(*args, **kwargs):
        seen.append(engine_options().host_work)
        yield from walk(*args, **kwargs)

    monkeypatch.setattr(engine, "walk", watched)
    data = distsm.Graph.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)], n=4)
    query = distsm.Graph.from_edges([(0, 1), (1, 2)], n=3)
    with options({"engine.host-work": 5.0}):
        rows = distsm.iter_matches(data, query, backend="numpy")
    with options({"engine.host-work": 7.0}):
        found = sum(len(r) for r in rows)
    assert seen == [5.0] and found == 10


def test_options_set_inside_a_snapshot_apply_to_their_block_only():
    from distsm.config import snapshot

    default = engine_options().host_work
    with snapshot():
        with dask.config.set({"distsm.engine.host-work": default + 1}):  # set around the request: not seen in it
            assert engine_options().host_work == default
            with options({"engine.host-work": default + 2}):              # set by the request itself: seen
                assert engine_options().host_work == default + 2
            assert engine_options().host_work == default
    assert engine_options().host_work == default
