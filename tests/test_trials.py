"""Trial joins (kernels/placement.py ``Trial``, kernels/engine.py ``Watch``): when a trial stops, the share of its
work it has finished, and that a trial which finishes counts exactly."""

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, make_case

import distsm
from distsm.kernels import engine
from distsm.kernels.array_backend import NumpyBackend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.engine import Watch
from distsm.kernels.placement import Lazy, Trial
from distsm.kernels.query_plan import MatchOptions

NUMPY = NumpyBackend()
HPRD = Path(__file__).parent / "data" / "hprd"


class Unfused(NumpyBackend):
    """NumPy without its fused descent: every level goes through the engine's chunked extension."""

    def descend(self, *args, **kwargs):
        return None


def _trial(allowance: int) -> Trial:
    return Trial(NUMPY, allowance, 0.0, Lazy(lambda: 0))


def test_a_trial_goes_on_past_its_allowance_only_while_what_lies_ahead_is_within_it():
    trial = _trial(100)
    assert not trial.stops(100) and not trial.stops(60, 40.0)  # within the allowance
    assert trial.stops(101)  # past it between chunks, with nothing done to project from
    assert trial.stops(60, 41.0)  # before a level that is not the last: what follows it is unknown
    assert not trial.stops(60, 100.0, last=True)  # the last level: all that lies ahead
    assert trial.stops(60, 101.0, last=True)  # more ahead than the allowance
    assert trial.stops(150, 60.0, last=True)  # more than twice the allowance in all
    trial.done = 0.75  # 150 entries for three quarters of the work: 50 ahead
    assert not trial.stops(150) and not trial.stops(150, 40.0)
    assert trial.stops(150, 51.0, last=True)  # the level's own projection is more
    trial.done = 0.5  # 150 ahead
    assert trial.stops(150)


CASES = st.builds(make_case, seed=st.integers(0, 2**32 - 1), n=st.integers(3, 12), p=st.floats(0.1, 0.9),
                  vl=st.integers(1, 3), el=st.integers(1, 2), directed=st.booleans(), qsize=st.integers(2, 5),
                  sampled=st.booleans())


@scaled(100)
@given(case=CASES, fused=st.booleans(), budget=st.sampled_from([1, 2000, 1 << 24]), allowance=st.integers(1, 60))
# A sparse graph whose chunks at a level before the last often extend to nothing: those chunks are done too.
@example(case=make_case(0, 12, 0.15, 1, 1, False, 4, True), fused=False, budget=1, allowance=60)
def test_a_trial_that_finishes_counts_exactly_and_has_done_all_its_work(case, fused, budget, allowance):
    """Every finished subtree of the join adds its share, so a join that ends has done the whole (1.0, up to
    rounding), whatever its chunks; a trial either stops or counts what brute force finds."""
    data, query = case
    backend = NUMPY if fused else Unfused()
    prepared = engine.prepare(backend, data, query, MatchOptions())
    if prepared is None:
        return
    expected = len(brute_force(data, query))
    whole, stats = _trial(1 << 40), {}
    assert sum(int(c) for c in engine.walk(backend, prepared, budget, True, watch=Watch(stats, trial=whole))) \
        == expected
    assert not whole.stopped and whole.done == pytest.approx(1.0)
    trial, stats = _trial(allowance), {}
    total = sum(int(c) for c in engine.walk(backend, prepared, budget, True, watch=Watch(stats, trial=trial)))
    if not trial.stopped:
        assert total == expected and trial.done == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["query_dense_16_160", "query_dense_16_166"])
def test_hprd_host_trials_past_their_allowance_with_little_ahead_finish_on_the_host(name):
    """Two of HPRD's host trials pass 2400 entries a query vertex, query_dense_16_160 before its last level and
    _166 after most of its work, yet read at most twice that in all: they finish on the host instead of handing
    over to a device whose join would cost what the allowance stands for (design_notes.json)."""
    expected = dict(line.split(":") for line in (HPRD / "expected_output.res").read_text().split())
    data = distsm.read_graph(HPRD / "data_graph" / "HPRD.graph")
    query = distsm.read_graph(HPRD / "query_graph" / f"{name}.graph")
    prepared = engine.prepare(NUMPY, data, query, MatchOptions())
    assert prepared is not None
    trial, stats = _trial(2400 * query.n), {}
    budget = BudgetPlan.of(1 << 30).trial(trial.chunk_entries(), query.n)  # chunked as a count's trial is
    total = sum(int(c) for c in engine.walk(NUMPY, prepared, budget, True, watch=Watch(stats, trial=trial)))
    assert not trial.stopped and trial.allowance() < stats["gathered"] <= 2 * trial.allowance()
    assert total == int(expected[name])
