"""The benchmark report is generated from the result files, and only from them."""

import json
import shutil
from pathlib import Path

from benchmarks.report import SECTIONS, build

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


def test_report_tables_come_from_the_results(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    out = build(results, tmp_path / "README.md")
    text = out.read_text()
    cpu = json.loads((results / "hprd_cpu.json").read_text())["engines"]["distsm-numpy"]
    assert f"| distsm-numpy | {cpu['queries']} | {cpu['correct']} | {cpu['total_seconds']} |" in text
    for png in ["pbe_shared_k4.png", "cluster_scaling_h200x4_metis.png"]:
        assert f"(results/{png})" in text and (results / png).stat().st_size > 1000
    # Every result file is named in the report: those of kinds without a section of their own too.
    assert all(f"*{f.name}*" in text for f in results.glob("*.json"))


def test_missing_suites_are_said_to_be_missing(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    text = build(results, tmp_path / "README.md").read_text()
    assert text.count("Not run yet.") == len(SECTIONS)
