"""benchmarks/paired.py: trees timed side by side, query by query, and where their time goes."""

import json
from pathlib import Path

from benchmarks import paired

HPRD = Path(__file__).resolve().parent / "data" / "hprd"


def test_paired_times_each_tree_and_its_stages(tmp_path):
    """Two trees (here the installed distsm twice, one with an option set) count the same queries in child processes;
    every round's time is kept per tree and query, and with --stages each stage's time and paired difference, a stage
    never longer than the count it is part of."""
    out = tmp_path / "paired.json"
    paired.main(["--tree", f"a={tmp_path}", "--tree", f"b={tmp_path}:DASK_DISTSM__ENGINE__TRIAL_HOST_ENTRIES=1",
                 "--hprd", str(HPRD), "--limit", "3", "--rounds", "2", "--processes", "1", "--backend", "numpy",
                 "--stages", "--out", str(out)])
    hprd = json.loads(out.read_text())["suites"]["hprd"]
    assert set(hprd["seconds"]) == {"a", "b"}
    assert all(len(rounds) == 2 and min(rounds) > 0 for rounds in hprd["seconds"]["b"].values())
    assert hprd["summary"]["b"]["queries"] == 3
    stages = hprd["stages_us"]["b"]
    assert {"count", "counting.count", "counting.Count.light", "request.prepare"} <= set(stages)
    counted, whole = stages["counting.count"], stages["count"]
    assert 0 < counted[0] <= whole[0] and 0 < counted[1] <= whole[1]
    per_query = hprd["query_stages_us"]
    assert set(per_query) == {"a", "b"} and len(per_query["b"]) == 3
    for row in per_query["b"].values():
        assert 0 < row["counting.count"] <= row["count"]
