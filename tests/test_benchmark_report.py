"""The benchmark report is generated from the result files, and only from them."""

import shutil
from pathlib import Path

from benchmarks.report import QUESTIONS, SECTIONS, _latest_first, _latest_per_suite, _load, _per_query, build

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


def test_report_tables_come_from_the_results(tmp_path):
    """Each question shows every benchmark's latest result in full (its table from its file) and names the earlier
    runs; every plot it shows was drawn."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    out = build(results, tmp_path / "README.md")
    text = out.read_text()
    name, latest = _latest_first(_load(results)["hprd_cpu"])[0]
    cpu = latest["engines"]["distsm-numpy"]
    assert f"| distsm-numpy | {cpu['queries']} | {cpu['correct']} | {cpu['total_seconds']} |" in text
    plots = [line.split("(results/")[1].split(")")[0] for line in text.splitlines() if "(results/" in line]
    assert plots and all((results / png).stat().st_size > 1000 for png in plots)
    # Every result file is named in the report: the earlier runs and kinds without a section of their own too.
    assert all(f"*{f.name}*" in text for f in results.glob("*.json"))
    assert [line for line in text.splitlines() if line.startswith("## ")][:len(QUESTIONS)] == \
        [f"## {title}" for title, _ in QUESTIONS]


def test_every_benchmark_with_a_section_answers_a_question():
    assert sorted(kind for _, kinds in QUESTIONS for kind in kinds) == sorted(SECTIONS)


def test_missing_suites_are_said_to_be_missing(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    text = build(results, tmp_path / "README.md").read_text()
    assert text.count("Not run yet.") == len(SECTIONS)


def test_peers_runs_show_each_suites_latest_result():
    """A run of two generated suites made after a gMatch-suite run must not hide that run's figures: each suite's
    newest result is shown, cut to the suites no newer run measured, and a run with nothing new is left out."""
    newest = ("c.json", {"when": "3", "suites": {"dense:a": 1, "dense:b": 2}})
    middle = ("b.json", {"when": "2", "suites": {"gmatch-test": 3, "dense:a": 4}})
    oldest = ("a.json", {"when": "1", "suites": {"dense:b": 5}})
    shown = _latest_per_suite([newest, middle, oldest])
    assert [(n, r["suites"]) for n, r in shown] == [("c.json", {"dense:a": 1, "dense:b": 2}),
                                                     ("b.json", {"gmatch-test": 3})]
    assert shown[1][1]["when"] == "2"


def test_per_query_table_shows_every_system_and_ratio():
    """Each query's row: distsm's count and milliseconds, each peer's milliseconds with distsm / peer, and the
    status of a run that did not finish (a peer missing from a query shows '-')."""
    queries = [
        {"name": "q1", "systems": {"distsm": {"status": "ok", "count": 7, "seconds": 0.002},
                                   "gmatch": {"status": "ok", "count": 7, "seconds": 0.004},
                                   "egsm": {"status": "capped"}},
         "ratio_distsm_over": {"gmatch": 0.5}},
        {"name": "q2", "systems": {"distsm": {"status": "ok", "count": 9, "seconds": 0.0031},
                                   "gmatch": {"status": "unsupported"}}, "ratio_distsm_over": {}},
    ]
    lines = _per_query(queries)
    assert lines[2] == "| query | count | distsm ms | gmatch ms | egsm ms |"
    assert lines[4:] == ["| q1 | 7 | 2.00 | 4.00 (0.5x) | capped |", "| q2 | 9 | 3.10 | unsupported | - |"]
