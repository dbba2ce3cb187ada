"""The count command's progress line on stderr: queries done of total and the query running longest, in process
and on a cluster."""

import io
import time

from hprd import DATA, query_path

from distsm.cli import count_command
from distsm.cli import main
from distsm.progress import ProgressBar, Running, logged_steps

NAMES = ["query_dense_16_1", "query_dense_16_2", "query_dense_16_3"]


def test_the_bar_shows_its_status_and_keeps_it_current():
    stream = io.StringIO()
    asked = []

    def status():
        asked.append(1)
        return f"slowest running: q{len(asked)}"

    with ProgressBar(2, "counting", stream=stream, enabled=True, status=status, interval=0.05):
        deadline = time.monotonic() + 10
        while len(asked) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    lines = stream.getvalue().split("\r")
    assert any("0/2" in line and "slowest running: q2" in line for line in lines)
    assert "slowest running" not in lines[-1]  # the last draw: nothing runs any more


def test_running_names_the_current_query_and_its_seconds():
    running = Running()
    assert running() is None
    running.start("q7")
    assert running().startswith("running: q7 ") and running().endswith("s")
    running.start(None)
    assert running() is None


def test_in_process_progress_names_each_running_query(capsys):
    assert main(["count", str(DATA), *(str(query_path(n)) for n in NAMES), "--progress", "--backend",
                 "numpy"]) == 0
    err = capsys.readouterr().err
    assert "3/3" in err
    for i, name in enumerate(NAMES):
        assert f"{i}/3" in err and f"running: {name} " in err


def test_cluster_progress_reports_done_of_total(capsys, tmp_path):
    assert main(["count", str(DATA), *(str(query_path(n)) for n in NAMES), "--progress", "--workers", "1",
                 "--backend", "numpy", "--partition-dir", str(tmp_path / "parts"), "--dashboard-address",
                 "127.0.0.1:0"]) == 0
    out, err = capsys.readouterr()
    assert "3/3" in err and len(out.splitlines()) == 3
    # The cluster's set-up shows its steps before the first query: the partition store, then each load.
    assert "partitioning " in err and "partition store of 1 parts ready" in err and "loaded part 0 on worker" in err
    assert err.index("partitioning ") < err.index("loaded part 0") < err.index("0/3")


def test_logged_steps_print_a_logger_s_info_lines_only_while_enabled():
    import logging

    log = logging.getLogger("distsm.test-steps")
    for enabled in (True, False):
        stream = io.StringIO()
        with logged_steps("distsm.test-steps", enabled=enabled, stream=stream):
            log.info("step %d", 1)
        log.info("after the block")
        assert stream.getvalue() == ("step 1\n" if enabled else "")
    assert not log.handlers and log.level == logging.NOTSET


def test_cluster_status_text_names_the_slowest_running_query():
    class Batch:
        def __init__(self, status):
            self._status = status

        def status(self):
            return self._status

    slowest = {"query": "q9", "seconds": 12.34, "worker": "1"}
    assert count_command._slowest(Batch({"slowest": slowest}))() == "slowest running: q9 12.3s on worker 1"
    assert count_command._slowest(Batch({"slowest": None}))() is None
    assert count_command._slowest(Batch(None))() is None  # the monitor does not know the batch (yet)
