"""The benchmarks' shared pieces: the HPRD reader, and every script a registered suite whose ``--out`` is a file."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from benchmarks import common, meta
from benchmarks.__main__ import SUITES

BENCHMARKS = Path(common.__file__).parent


def test_hprd_expected_is_the_published_file_in_query_number_order() -> None:
    raw = (common.HPRD / "expected_output.res").read_text().splitlines()
    published = dict(line.split(":") for line in raw if line.strip())
    expected = common.hprd_expected()
    assert len(expected) == 200 and {k: str(v) for k, v in expected.items()} == published
    assert [int(n.rsplit("_", 1)[1]) for n in expected] == list(range(1, 201))
    assert all(common.hprd_query_path(n).exists() for n in expected)


def test_hprd_dir_prefers_the_given_folder_and_refuses_one_without_the_data_graph(tmp_path: Path) -> None:
    assert common.hprd_dir() == common.HPRD
    assert common.hprd_dir(common.HPRD) == common.HPRD
    assert common.hprd_dir(tmp_path) is None


def test_every_script_with_a_main_is_a_registered_suite() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")
               if p.stem != "__main__" and re.search(r"^def main\(", p.read_text(), flags=re.M)}
    assert scripts == {module.rsplit(".", 1)[1] for module in SUITES.values()}


@pytest.mark.parametrize("suite", sorted(SUITES), ids=lambda s: f"suite-{s}")  # "gpu" alone would mark it a GPU test
def test_every_suite_takes_out_as_a_result_file(suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(SUITES[suite])
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    match = re.search(r"--out FILE result JSON \(default: benchmarks/results/(\w+)\.json\)", text)
    assert match, text
    assert (meta.RESULTS / f"{match.group(1)}.json").parent == meta.RESULTS


def test_contention_times_the_small_workload_in_agreeing_processes_on_the_graph_given(tmp_path: Path) -> None:
    """Two processes count the small batch on a tiny R-MAT graph at one barrier; their answers must agree (the run
    exits otherwise), and the JSON holds one row per process count with the graph that was asked for."""
    import json

    from benchmarks import contention

    out = tmp_path / "contention.json"
    contention.main(["--processes", "1", "2", "--workloads", "small", "--scale", "8", "--edges", "600",
                     "--labels", "4", "--out", str(out)])
    record = json.loads(out.read_text())
    rows = record["workloads"]["small"]
    assert [r["processes"] for r in rows] == [1, 2] and [len(r["records"]) for r in rows] == [1, 2]
    assert record["backend"] == "numpy" and record["gpus"] == 0
    assert record["graph"]["scale"] == 8 and record["graph"]["edges"] == 600
    assert all(r["efficiency_bound"] > 0 for r in rows)


def test_plan_share_counts_each_query_alike_under_every_share_and_restores_the_planner(tmp_path: Path) -> None:
    """Two HPRD queries laid out as a gMatch-style suite (their published counts as its answers), each share timed
    in two rounds; the run exits on a count that differs from the published one, and leaves the planner's share as it
    found it."""
    import json
    import shutil

    from benchmarks import plan_share
    from distsm.kernels import count_plan

    suite = tmp_path / "suite"
    (suite / "query_graph").mkdir(parents=True)
    shutil.copy(common.hprd_data_path(), suite / "data.graph")
    names = ["query_dense_16_1", "query_dense_16_2"]
    for i, name in enumerate(names):
        shutil.copy(common.hprd_query_path(name), suite / "query_graph" / f"Q_{i}.graph")
    (suite / "expected_output.txt").write_text("\n".join(str(common.hprd_expected()[n]) for n in names) + "\n")
    out = tmp_path / "plan_share.json"
    plan_share.main(["--shares", "0.5", "0.005", "--gmatch-test", str(suite), "--backend", "numpy", "--repeat", "1",
                     "--out", str(out)])
    from distsm.config import engine_options

    assert engine_options().plan_share_device == count_plan.PLAN_SHARE_DEVICE  # the configuration was undone
    record = json.loads(out.read_text())
    rows = record["suites"]["gmatch-test"]
    assert sorted(rows) == ["Q_0", "Q_1"]
    for i, name in enumerate(names):
        assert {rec["count"] for rec in rows[f"Q_{i}"].values()} == {common.hprd_expected()[name]}
        assert all(len(rec["medians"]) == 2 for rec in rows[f"Q_{i}"].values())
    assert set(record["summed_s"]["gmatch-test"]) == {"0.5", "0.005"}


def test_plan_share_takes_engine_option_sets_and_hprd(tmp_path: Path) -> None:
    """Configurations of engine options (as distsm.options takes them) are timed side by side on HPRD's first
    queries, every count checked against the published one, and the options are gone afterwards."""
    import json

    import distsm
    from benchmarks import plan_share
    from distsm.config import engine_options

    kept = engine_options().host_work
    out = tmp_path / "configs.json"
    plan_share.main(["--configs", "default=", "all-host=engine.host-work:1e12,engine.dfs-host:false", "--hprd", "2",
                     "--backend", "numpy", "--repeat", "1", "--rounds", "1", "--out", str(out)])
    assert engine_options().host_work == kept
    record = json.loads(out.read_text())
    assert record["configs"]["all-host"]["options"] == {"engine.host-work": 1e12, "engine.dfs-host": False}
    rows = record["suites"]["hprd"]
    assert len(rows) == 2 and all(set(row) == {"default", "all-host"} for row in rows.values())
    with pytest.raises(ValueError, match="unknown option"):
        with plan_share.Config.parse("bad=engine.nope:1").applied():
            distsm.count(distsm.Graph.from_edges([(0, 1)], n=2), distsm.Graph.from_edges([(0, 1)], n=2))


def test_compare_summary_takes_each_query_least_time_and_measures_its_own_resolution(tmp_path: Path) -> None:
    """Two trees, four rounds: q1 is 10% slower on the new tree in every sample, q2 the same on both; the base's
    odd and even rounds of q2 differ by 20%, which the resolution count reports (and the ratio of least times
    does not see)."""
    import json

    from benchmarks import compare_summary

    def run(tree: str, rnd: int, q1: float, q2: list[float]) -> dict:
        return {"tree": tree, "round": rnd, "run": 1,
                "suites": {"s": {"seconds": {"q1": q1, "q2": q2[0]}, "rounds_s": {"q1": [q1], "q2": q2}}}}

    runs = [run("base", r, 1.0, [2.0 if r % 2 else 2.4]) for r in (1, 2, 3, 4)] + \
        [run("new", r, 1.1, [2.0, 2.05]) for r in (1, 2, 3, 4)]
    path = tmp_path / "compare.json"
    path.write_text(json.dumps({"runs": runs}))
    assert compare_summary.cli([str(path)]) == 0
    s = json.loads(path.read_text())["summary"]["s"]
    assert s["queries"] == 2 and s["samples_per_query"] == 4
    assert s["summed_base_s"] == 3.0 and s["summed_new_s"] == 3.1
    assert s["over_bound"] == 1 and s["worst"][0][:2] == ["q1", 1.1]
    assert s["base_against_itself_over_bound"] == 1 and s["new_against_itself_over_bound"] == 0
