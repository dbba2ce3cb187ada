"""Look at the Dask dashboard in a real browser while distsm runs a batch.

    python -m benchmarks run dashboard [--screenshot benchmarks/results/dashboard_status.png] [--chromium PATH]
        [--out FILE]

Starts a local cluster through distsm, submits the 200 HPRD queries (three times over, so the batch is still
running), takes a headless Chromium screenshot of the scheduler's ``/status`` page, then checks what the page's
data sources hold: the task-stream and progress groups must be the ``distsm-*`` stages.  Needs Debian's
``chromium`` package.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks import common, meta

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--window-size=1600,1000"]


def screenshot(chromium: str, url: str, out: str, wait: float = 6.0) -> None:
    """Screenshot ``url`` after letting its scripts run for ``wait`` seconds.

    Chromium's ``--screenshot`` flag captures before the Bokeh page has drawn over its websocket, so this drives
    the browser through the DevTools protocol instead (tornado's websocket client; tornado comes with Dask).
    """
    import asyncio
    import base64
    import socket

    from tornado.websocket import websocket_connect

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", f"--remote-debugging-port={port}",
                                 "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2).read())
                    page = next(t for t in targets if t.get("type") == "page")
                    break
                except (OSError, StopIteration):
                    if time.monotonic() > deadline:
                        raise SystemExit("chromium did not open its DevTools port") from None
                    time.sleep(0.2)

            async def drive() -> bytes:
                ws = await websocket_connect(page["webSocketDebuggerUrl"])
                calls = iter(range(1, 100))

                async def call(method: str, **params: object) -> dict:
                    n = next(calls)
                    await ws.write_message(json.dumps({"id": n, "method": method, "params": params}))
                    while True:
                        msg = json.loads(await ws.read_message())
                        if msg.get("id") == n:
                            return msg.get("result", {})

                await call("Page.enable")
                await call("Page.navigate", url=url)
                await asyncio.sleep(wait)
                shot = await call("Page.captureScreenshot", format="png")
                ws.close()
                return base64.b64decode(shot["data"])

            Path(out).write_bytes(asyncio.run(drive()))
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def main(argv=None):
    import distsm
    from distributed import Client

    from distsm.cluster import local

    p = common.parser(__doc__, "dashboard_screenshot")
    p.add_argument("--screenshot", default=str(meta.RESULTS / "dashboard_status.png"), metavar="PNG",
                   help="where the screenshot goes (default: benchmarks/results/dashboard_status.png)")
    p.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = p.parse_args(argv)
    queries = sorted(common.hprd_query_path(n) for n in common.hprd_expected())
    cluster = local(gpus=None, workers=2, dashboard_address="127.0.0.1:0")
    try:
        with Client(cluster) as client, tempfile.TemporaryDirectory() as tmp:
            m = distsm.Matcher(str(common.hprd_data_path()), cluster=client,
                               partitions=distsm.Partitioning(4, directory=Path(tmp) / "parts"), backend="numpy")
            names = [q.stem for q in queries]
            batches = [m.submit([str(q) for q in queries], names=names, distribute=d)
                       for d in ("sliced", "sliced", "auto")]
            time.sleep(2)  # let the task stream fill
            base = client.dashboard_link.rsplit("/", 1)[0]
            screenshot(args.chromium, f"{base}/status", args.screenshot)
            prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
            results = [r for b in batches for r in b.results()]
            status = json.loads(urllib.request.urlopen(f"{base}/distsm/status", timeout=10).read())
            m.close()
    finally:
        cluster.close()
    ok = all(r.ok for r in results)
    distsm_groups = [x for x in prefixes if x.startswith("distsm-")]
    report = {"screenshot": args.screenshot, "task_prefixes": prefixes, "distsm_groups": distsm_groups,
              "queries": len(results), "all_ok": ok, "status_totals": status["totals"]}
    meta.write("dashboard_screenshot", report, args.out)
    print(json.dumps(report, indent=1))
    if not ok or not {"distsm-load", "distsm-intra", "distsm-inter", "distsm-merge"} <= set(distsm_groups):
        raise SystemExit("dashboard check failed")


if __name__ == "__main__":
    main()
