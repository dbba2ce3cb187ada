"""The host-side steps every count runs before its join (filter, refinement's scan size), checked against their
definitions, and the trial general join checked against the other counting paths and the published HPRD answers.

The filter reads structures cached per index (label pools) and gathers in bulk; these tests pin what it must
compute whatever the layout.
"""

import logging
from unittest import mock

import hprd
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_settings import scaled
from oracles import brute_force, make_case

import distsm
from distsm.config import engine_options
from distsm.kernels import array_backend, counting, engine, get_backend, vertex_sets
from distsm.kernels.budget import MIN_CHUNK_ENTRIES, BudgetPlan
from distsm.kernels.candidate_edges import query_arcs, scan_entries
from distsm.kernels.counting import Count, Target
from distsm.kernels.dfs_plan import supported
from distsm.kernels.explain import Explanation
from distsm.kernels.placement import Lazy, Placement, pool_vertices
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.signature import signatures
from distsm.plan.search import symmetry
from distsm.semantics import Semantics

SETTINGS = scaled(60)
NUMPY = get_backend("numpy")
REFINED_EMPTY = "refinement left a query vertex without candidates"

case_args = dict(
    seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), p=st.floats(0.1, 0.8), vl=st.integers(1, 4),
    el=st.integers(1, 3), directed=st.booleans(), qsize=st.integers(1, 6), sampled=st.booleans(),
)


def filter_by_definition(idx, query, homomorphism, restrict):
    """Each query vertex's candidates, vertex by vertex: same label, signature covering the query vertex's,
    degree at least as large (unless homomorphism), inside ``restrict`` where given."""
    rows = np.repeat(np.arange(query.n), query.degrees)
    qsig = signatures(np, query.n, rows, np.asarray(query.neighbor_labels),
                      query.vertex_labels[np.asarray(query.neighbors, np.int64)], presence_only=homomorphism)
    out = []
    for u in range(query.n):
        allowed = restrict.get(u)
        keep = []
        for v in range(idx.n):
            if idx.vertex_labels[v] != query.vertex_labels[u] or (allowed is not None and v not in allowed):
                continue
            if any(int(idx.sig[w, v]) & int(qsig[w, u]) != int(qsig[w, u]) for w in range(qsig.shape[0])):
                continue
            if not homomorphism and idx.degrees[v] < query.degrees[u]:
                continue
            keep.append(v)
        out.append(keep)
    return out


@SETTINGS
@given(**case_args, homomorphism=st.booleans(), restrict_seed=st.integers(0, 2**32 - 1),
       as_range=st.booleans())
def test_filter_matches_its_definition(seed, n, p, vl, el, directed, qsize, sampled, homomorphism, restrict_seed,
                                       as_range):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    idx = NUMPY.index(data)
    rng = np.random.default_rng(restrict_seed)
    restrict = {}
    for u in rng.choice(query.n, size=int(rng.integers(0, query.n + 1)), replace=False).tolist():
        lo = int(rng.integers(0, data.n + 1))
        hi = int(rng.integers(lo, data.n + 1))
        restrict[u] = range(lo, hi) if as_range else np.sort(rng.choice(data.n, size=hi - lo, replace=False))
    got = NUMPY.candidates(idx, query, homomorphism=homomorphism, restrict=restrict)
    sets = {u: set(np.asarray(a).tolist()) for u, a in restrict.items()}
    want = filter_by_definition(idx, query, homomorphism, sets)
    assert [np.asarray(c).tolist() for c in got] == want
    assert all(c.dtype == NUMPY.vertex_dtype for c in got)


@SETTINGS
@given(**case_args, homomorphism=st.booleans())
def test_scan_entries_add_every_query_arcs_runs(seed, n, p, vl, el, directed, qsize, sampled, homomorphism):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    idx = NUMPY.index(data)
    cands = NUMPY.candidates(idx, query, homomorphism=homomorphism)
    # Run lengths from the data graph's own adjacency, arc by arc.
    rows = np.repeat(np.arange(data.n), data.degrees)
    want = 0
    for u, _, e in query_arcs(query):
        for v in np.asarray(cands[u]).tolist():
            want += int(np.count_nonzero((rows == v) & (np.asarray(data.neighbor_labels) == e)))
    assert scan_entries(NUMPY, idx, cands, query) == want


@pytest.fixture(scope="module")
def hprd_data():
    return distsm.read_graph(hprd.DATA)


@pytest.mark.parametrize("name", sorted(hprd.expected_counts())[3::20])
def test_light_hprd_queries_finish_their_trial_and_agree_with_the_trailing_path(name, hprd_data):
    query = distsm.read_graph(hprd.query_path(name))
    report = Explanation()
    auto = counting.count(NUMPY, hprd_data, counting.Target(query, MatchOptions()), budget=1 << 28, explain=report)
    trailing = counting.count(NUMPY, hprd_data, counting.Target(query, MatchOptions()), budget=1 << 28, path="trailing")
    assert auto == trailing == hprd.expected_counts()[name]
    assert report.path == "general" and not report.trials, report
    assert report.reason.startswith("the general join finished in its trial"), report.reason


@SETTINGS
@given(**case_args)
def test_auto_path_counts_what_both_forced_paths_count(seed, n, p, vl, el, directed, qsize, sampled):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    opts = MatchOptions()
    sym = symmetry(query, Semantics())  # the depth-first search breaks the query's symmetry and multiplies back
    counts = {path: counting.count(NUMPY, data, counting.Target(query, opts, sym), budget=1 << 26, path=path)
              for path in counting.COUNT_PATHS if path != "dfs" or not supported(query)}
    assert len(set(counts.values())) == 1, counts


@SETTINGS
@given(**case_args, homomorphism=st.booleans(), unique=st.booleans(), entries=st.sampled_from([1, 8, 64, 1 << 20]),
       ratio=st.sampled_from([0.0, 0.01, 1.0]), budget=st.sampled_from([1, 4000, 1 << 26]))
def test_trials_stopped_or_finished_count_what_brute_force_counts(seed, n, p, vl, el, directed, qsize, sampled,
                                                                  homomorphism, unique, entries, ratio, budget):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    unique = unique and not homomorphism
    with distsm.options({"engine.trial-entries": entries, "engine.trial-ratio-host": ratio}):
        got = distsm.explain(data, query, homomorphism=homomorphism, unique=unique, memory_budget=budget,
                             backend="numpy")
    want = len(brute_force(data, query, homomorphism=homomorphism))
    if unique:
        # Each subgraph copy is the image of |Aut(Q)| embeddings (Q's embeddings into itself).
        want //= len(brute_force(query, query))
    assert got.count == want
    for backend, allowance, _read in got.trials:
        # Past its allowance, or stopped before a level whose reading must pass it (then it read less).
        assert backend == "numpy" and allowance >= entries * query.n
    # A stopped trial hands the count to the planner (or, when its index would not fit the budget, to the general
    # join without allowance), whose refinement may find a query vertex without candidates (no match); a finished
    # trial answers the count (unless the semantics or the filter decided first).
    if got.trials:
        assert got.path == "trailing" or got.reason.startswith("the candidate-edge index would need") or \
            (got.path, got.count, got.reason) == ("filter", 0, REFINED_EMPTY), got.reason
    elif got.path == "general" and query.n > 1:
        assert got.reason.startswith("the general join finished in its trial"), got.reason


def test_a_stopped_trial_may_hand_over_to_a_refinement_that_finds_no_match():
    """Copies of A-B-C-D with many A's (D lacking the E the query's D needs) and of B-C-D-E (B lacking the A):
    every vertex passes the filter, so the trial join reads past its allowance, but refinement empties them all."""
    edges, labels = [], []

    def vertex(label):
        labels.append(label)
        return len(labels) - 1

    for _ in range(20):
        b, c, d = vertex(1), vertex(2), vertex(3)
        edges += [(b, c), (c, d), (vertex(0), b), (vertex(0), b)]
        b, c, d = vertex(1), vertex(2), vertex(3)
        edges += [(b, c), (c, d), (d, vertex(4))]
    data = distsm.Graph.from_edges(edges, n=len(labels), vertex_labels=labels)
    query = distsm.Graph.from_edges([(0, 1), (1, 2), (2, 3), (3, 4)], vertex_labels=[0, 1, 2, 3, 4])
    with distsm.options({"engine.trial-entries": 1, "engine.trial-ratio-host": 0.0}):
        got = distsm.explain(data, query, memory_budget=1 << 26, backend="numpy")
    assert got.trials and min(got.candidates) > 0, got
    assert (got.path, got.count, got.reason) == ("filter", 0, REFINED_EMPTY)
    assert counting.count(NUMPY, data, counting.Target(query, MatchOptions()), budget=1 << 26, path="general") == 0


class PosingDevice(array_backend.NumpyBackend):
    """NumPy posing as a device backend whose host is the NumPy backend: the device's trials, host filter and
    hand-overs between the two run without a GPU."""

    name = "posing-device"
    on_device = True

    def host(self):
        return NUMPY


#: The placement's options a device count is tried under.
PLACEMENT_OPTIONS = st.fixed_dictionaries({
    "engine.trial-entries": st.sampled_from([0, 1, 64, 1 << 20]),
    "engine.trial-ratio-device": st.sampled_from([0.0, 0.01, 16.0]),
    "engine.device-refine": st.sampled_from([0, 1 << 22]),
    "engine.trial-host-entries": st.sampled_from([0, 1, 600, 1 << 20]),
    "engine.trial-host-candidates": st.sampled_from([0, 2048, 1 << 30]),
    "engine.host-filter-vertices": st.sampled_from([0, 8, 1 << 16])})


@SETTINGS
@given(**case_args, homomorphism=st.booleans(), prebuilt=st.booleans(), settings=PLACEMENT_OPTIONS)
def test_device_trials_count_what_brute_force_counts(seed, n, p, vl, el, directed, qsize, sampled, homomorphism,
                                                     prebuilt, settings):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    device = PosingDevice()
    report = Explanation()
    with distsm.options(settings):
        got = counting.count(device, device.index(data) if prebuilt else data,
                             counting.Target(query, MatchOptions(homomorphism=homomorphism)),
                             budget=1 << 26, explain=report)
    assert got == len(brute_force(data, query, homomorphism=homomorphism))
    if not prebuilt:
        # The filter runs on the host for label pools of at most host-filter-vertices data vertices.
        pools = pool_vertices(NUMPY.index(data), query)
        side = "numpy" if pools <= settings["engine.host-filter-vertices"] else "posing-device"
        assert [d for d in report.placement if d.startswith("filter ")] == \
            [f"filter on {side}: {pools} label-pool vertices, "
             f"{'at most' if side == 'numpy' else 'over'} {settings['engine.host-filter-vertices']}"]
    for runner, allowance, _read in report.trials:
        # The host's trial gets its own allowance per query vertex, only for queries with few candidates, and none
        # when the index was built on the device.  (What a stopped trial read is past its allowance, or less where
        # it stopped before a level that must pass it.)
        assert (runner == "numpy" and allowance == settings["engine.trial-host-entries"] * query.n
                and sum(report.candidates) <= settings["engine.trial-host-candidates"] and not prebuilt) or \
            runner == "posing-device"
    if report.path == "trailing":
        # Past device-refine entries (and always without a host twin) the device refines.
        on_device = prebuilt or (settings["engine.device-refine"] == 0 and scan_of(data, query) > 0)
        assert report.reason.endswith(f"refined on {'posing-device' if on_device else 'numpy'})"), report.reason


def test_the_hosts_first_trial_takes_queries_with_few_candidates_only():
    """A device tries its host first only where the filter left at most ``engine.trial-host-candidates`` candidates
    in all; the count is the same either way.  (The host's allowance is one entry per query vertex, so that its
    trial stops and the report lists it.)"""
    data, query = make_case(0, 20, 0.3, 1, 1, False, 4, False)
    runs = {}
    for limit in ("default", 0):
        device, report = PosingDevice(), Explanation()
        settings = {"engine.trial-entries": 1 << 20, "engine.trial-host-entries": 1}
        if limit == 0:
            settings["engine.trial-host-candidates"] = 0
        with distsm.options(settings):
            got = counting.count(device, data, counting.Target(query, MatchOptions()), budget=1 << 26,
                                 explain=report)
        runs[limit] = (got, [runner for runner, _, _ in report.trials], sum(report.candidates))
    (got, runners, candidates), (got0, runners0, _) = runs["default"], runs[0]
    assert got == got0 == len(brute_force(data, query))
    assert 0 < candidates <= engine_options().trial_host_candidates and runners[0] == "numpy"
    assert "numpy" not in runners0
    # Either way the scan is measured before the device's trial runs, whose chunks follow the allowance it sets.
    for limit in (0, 1 << 30):
        scan = Lazy(lambda: 10)
        with distsm.options({"engine.trial-host-candidates": limit}):
            placement = Placement.of(device, data)
            trials = placement.trials(scan, query.n, candidates)
        assert scan.known and trials[-1].chunk_entries() == max(trials[-1].allowance() // 2, MIN_CHUNK_ENTRIES)


def test_small_queries_on_a_device_are_answered_on_its_host(hprd_data):
    query = distsm.read_graph(hprd.query_path("query_dense_16_1"))
    device = PosingDevice()
    report = Explanation()
    assert counting.count(device, hprd_data, counting.Target(query, MatchOptions()), budget=1 << 28,
                          explain=report) == \
        hprd.expected_counts()["query_dense_16_1"]
    assert report.reason.startswith("the general join finished in its trial on numpy (") and \
        report.reason.endswith(f"refinement would scan {scan_of(hprd_data, query)})"), report.reason
    # Without the host's allowance the device's own trial answers.
    with distsm.options({"engine.trial-entries": 0}):
        counting.count(device, hprd_data, counting.Target(query, MatchOptions()), budget=1 << 28, explain=report)
    assert "on posing-device" in report.reason, report.reason


def test_a_device_index_with_a_host_twin_works_on_the_host_like_a_graph(hprd_data):
    query = distsm.read_graph(hprd.query_path("query_dense_16_2"))
    device = PosingDevice()
    twin = NUMPY.index(hprd_data)
    on_index, with_twin = Explanation(), Explanation()
    want = hprd.expected_counts()["query_dense_16_2"]
    assert counting.count(device, device.index(hprd_data), counting.Target(query, MatchOptions()), budget=1 << 28,
                          explain=on_index) == want
    assert "on posing-device" in on_index.reason, on_index.reason
    assert Count(Placement.of(device, device.index(hprd_data), twin), Target(query, MatchOptions()), 1 << 28,
                 explain=with_twin).total() == want
    assert "on numpy" in with_twin.reason, with_twin.reason


def test_candidates_handed_to_a_device_take_its_vertex_dtype(hprd_data):
    query = distsm.read_graph(hprd.query_path("query_dense_16_4"))
    device = PosingDevice()
    device.vertex_dtype = np.int32
    seen = []
    walk = engine.walk

    def recording(backend, prepared, *args, **kwargs):
        seen.append((backend.name, {c.dtype for c in prepared.candidates}))
        return walk(backend, prepared, *args, **kwargs)

    with mock.patch.object(counting, "walk", recording), distsm.options({"engine.trial-entries": 0}):
        got = counting.count(device, hprd_data, counting.Target(query, MatchOptions()), budget=1 << 28)
    assert got == hprd.expected_counts()["query_dense_16_4"]
    assert ("posing-device", {np.dtype(np.int32)}) in seen, seen


class BusDevice(PosingDevice):
    """A device that reads every index's adjacency over the bus (a zero-copy host-resident index)."""

    def adjacency_over_bus(self, idx):
        return True


def test_a_device_reading_over_the_bus_leaves_trials_to_its_host(hprd_data):
    query = distsm.read_graph(hprd.query_path("query_dense_16_3"))
    device = BusDevice()
    report = Explanation()
    with distsm.options({"engine.trial-entries": 0}):  # no small-query host trial: only the bus decides
        got = Count(Placement.of(device, device.index(hprd_data), NUMPY.index(hprd_data)),
                    Target(query, MatchOptions()), 1 << 28, explain=report).total()
    assert got == hprd.expected_counts()["query_dense_16_3"]
    assert "on numpy" in report.reason, report.reason


def scan_of(data, query):
    idx = NUMPY.index(data)
    return scan_entries(NUMPY, idx, NUMPY.candidates(idx, query, homomorphism=False), query)


def test_a_trial_stops_before_a_level_that_must_pass_its_allowance():
    """Triangles in K_40 with an allowance of 300 entries: the second level reads 40 * 39 entries in chunks of 150,
    so the trial must pass its allowance there; it stops before reading any, and the count is still exact."""
    data = distsm.Graph.from_edges([(a, b) for a in range(40) for b in range(a + 1, 40)], n=40)
    query = distsm.Graph.from_edges([(0, 1), (1, 2), (0, 2)], n=3)
    with distsm.options({"engine.trial-entries": 100, "engine.trial-ratio-host": 0.0}):
        report = distsm.explain(data, query, backend="numpy", memory_budget=1 << 26)
    assert report.count == 40 * 39 * 38
    [(backend, allowance, read)] = report.trials
    assert (backend, allowance, read) == ("numpy", 300, 0)


def test_a_trial_stops_before_a_level_whose_last_chunk_would_pass_its_allowance():
    """Triangles in K_20 with an allowance of 300 entries: the second level's 20 * 19 = 380 entries pass it though
    all but its last chunk of 150 do not.  The trial stops before reading any (it used to read 150)."""
    data = distsm.Graph.from_edges([(a, b) for a in range(20) for b in range(a + 1, 20)], n=20)
    query = distsm.Graph.from_edges([(0, 1), (1, 2), (0, 2)], n=3)
    with distsm.options({"engine.trial-entries": 100, "engine.trial-ratio-host": 0.0}):
        report = distsm.explain(data, query, backend="numpy", memory_budget=1 << 26)
    assert report.count == 20 * 19 * 18
    assert report.trials == [("numpy", 300, 0)]


def test_a_trial_projects_a_chunk_of_the_first_level_onto_the_whole_join():
    """1000 disjoint labelled paths A-B-C and the query A-B-C with an allowance of 300 entries: the trial's first
    level is cut into chunks of fewer than 200 rows, each reading one entry per row at the next level, far below the
    allowance; but the whole level reads 1000, so the trial stops before reading any (it used to read past 300)."""
    n = 1000
    edges = [(3 * i, 3 * i + 1) for i in range(n)] + [(3 * i + 1, 3 * i + 2) for i in range(n)]
    data = distsm.Graph.from_edges(edges, n=3 * n, vertex_labels=[0, 1, 2] * n)
    query = distsm.Graph.from_edges([(0, 1), (1, 2)], vertex_labels=[0, 1, 2])
    with distsm.options({"engine.trial-entries": 100, "engine.trial-ratio-host": 0.0}):
        report = distsm.explain(data, query, backend="numpy", memory_budget=1 << 26)
    assert report.count == n
    assert report.trials == [("numpy", 300, 0)]


def test_a_user_cancelling_a_trial_is_not_a_stopped_trial():
    data, query = make_case(3, 12, 0.6, 1, 1, False, 4, False)
    control = engine.Control(cancelled=lambda: True)
    with pytest.raises(engine.JoinCancelled):
        counting.count(NUMPY, data, counting.Target(query, MatchOptions()), budget=1 << 26, control=control)


def test_explain_names_a_stopped_trial():
    data, query = make_case(5, 12, 0.7, 1, 1, False, 4, False)
    with distsm.options({"engine.trial-entries": 1, "engine.trial-ratio-host": 0.0}):
        report = distsm.explain(data, query, backend="numpy", memory_budget=1 << 26)
    assert report.count == len(brute_force(data, query))
    assert report.path == "trailing" and report.trials, report
    assert "trial general join on numpy: stopped after" in str(report)


@SETTINGS
@given(**case_args, words=st.booleans())
def test_membership_sets_as_masks_or_bitsets_give_the_same_counts(seed, n, p, vl, el, directed, qsize, sampled,
                                                                     words):
    data, query = make_case(seed, n, p, vl, el, directed, qsize, sampled)
    idx = NUMPY.index(data)
    limit = -1 if words else array_backend.MASK_VERTICES
    with mock.patch.object(array_backend, "MASK_VERTICES", limit):
        rng = np.random.default_rng(seed)
        members = np.sort(rng.choice(data.n, size=int(rng.integers(0, data.n + 1)), replace=False))
        bits = NUMPY.bitset(idx, members.astype(np.int32))
        assert (bits.dtype == np.uint32) == words
        everyone = np.arange(data.n, dtype=np.int32)
        assert np.array_equal(vertex_sets.member(np, bits, everyone), np.isin(everyone, members))
        counts = {path: counting.count(NUMPY, data, counting.Target(query, MatchOptions()), budget=1 << 26, path=path)
                  for path in ("general", "trailing")}
    assert counts["general"] == counts["trailing"] == len(brute_force(data, query))


def test_a_candidate_edge_index_too_big_for_the_device_is_counted_on_its_host(hprd_data):
    """Out of core a device's join budget is small: a candidate-edge index that does not fit it but fits the
    host's is built, joined and counted on the host; one that fits neither falls back to the general join (an int
    budget holds on both sides)."""
    query = distsm.read_graph(hprd.query_path("query_dense_16_2"))
    want = hprd.expected_counts()["query_dense_16_2"]
    device = PosingDevice()
    small = 4 * scan_of(hprd_data, query)  # under SCAN_ENTRY_BYTES / 2 per scanned entry
    report = Explanation()
    with distsm.options({"engine.trial-entries": 0, "engine.trial-ratio-device": 0.0,
                         "engine.trial-ratio-host": 0.0}):
        placement = Placement.of(device, device.index(hprd_data), NUMPY.index(hprd_data))
        budget = BudgetPlan(small, 1 << 28)
        assert Count(placement, Target(query, MatchOptions()), budget, explain=report).total() == want
        assert report.path == "trailing" and report.reason.endswith("refined on numpy)"), report.reason
        assert "on numpy" in report.reason, report.reason
        assert any(note.startswith("candidate-edge index on numpy") for note in report.placement), report.placement
        report = Explanation()
        assert Count(placement, Target(query, MatchOptions()), small, explain=report).total() == want
        assert report.reason.startswith("the candidate-edge index would need"), report.reason


def test_decisions_are_logged_at_debug_and_silent_by_default(hprd_data, caplog, capsys):
    """Every host-or-device choice and the plan are logged on the ``distsm`` loggers at DEBUG; nothing reaches the
    terminal unless the application configures logging."""
    query = distsm.read_graph(hprd.query_path("query_dense_16_2"))
    device = PosingDevice()
    with distsm.options({"engine.trial-entries": 0, "engine.trial-ratio-device": 0.0,
                         "engine.trial-ratio-host": 0.0}):
        counting.count(device, hprd_data, counting.Target(query, MatchOptions()), budget=1 << 28)
        assert capsys.readouterr().err == ""
        with caplog.at_level(logging.DEBUG, logger="distsm"):
            counting.count(device, hprd_data, counting.Target(query, MatchOptions()), budget=1 << 28)
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("distsm.kernels")]
    assert any(m.startswith("filter on numpy") for m in messages), messages
    assert any(m.startswith("core join and trailing count on numpy") for m in messages), messages
    assert any(m.startswith("planned a core of") for m in messages), messages


def test_a_plan_counted_on_a_device_holds_only_the_arcs_it_reads(hprd_data):
    """Refined on the host and counted on the device, a plan's index goes over with the arcs its core join and
    trailing count read, one direction of each query edge (the other direction's arrays would be copied for
    nothing), and counts what HPRD's answers say; explain still reports every candidate edge refinement kept."""
    name = "query_dense_16_179"
    query = distsm.read_graph(hprd.query_path(name))
    device = PosingDevice()
    report = Explanation()
    with distsm.options({"engine.host-work": 0, "engine.device-refine": 1 << 40}):
        stages = Count(Placement.of(device, hprd_data), Target(query, MatchOptions()), 1 << 28, explain=report)
        planned = stages.plan()
        assert planned.plan is not None and planned.runner is stages.placement.device, planned.reason
        arcs = planned.plan.arcs
        assert set(planned.ce.arcs) == arcs
        assert sorted(tuple(sorted(arc[:2])) for arc in arcs) == sorted({tuple(sorted(arc[:2]))
                                                                         for arc in query_arcs(query)})
        assert stages.run(planned) == hprd.expected_counts()[name]
    assert report.candidate_edges > sum(a.edges for a in planned.ce.arcs.values()) > 0
    assert {"refine", "plan", "upload"} <= set(report.seconds)
