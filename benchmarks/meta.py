"""What every benchmark result records about where and how it ran."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit() -> str | None:
    # A copy of the tree shipped to another machine may carry stale git metadata; the shipper names the commit.
    if os.environ.get("DISTSM_GIT_COMMIT"):
        return os.environ["DISTSM_GIT_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine() -> dict[str, Any]:
    import numpy

    info: dict[str, Any] = {
        "hostname": platform.node(), "cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
        "numpy": numpy.__version__, "platform": platform.platform(), "git_commit": git_commit(),
    }
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            props = cupy.cuda.runtime.getDeviceProperties(0)
            info["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
            info["cupy"] = cupy.__version__
    except Exception:
        info["gpu"] = None
    return info


def write(name: str, payload: dict[str, Any], out: str | os.PathLike | None = None,
          machine_info: dict[str, Any] | None = None) -> Path:
    """Write ``payload`` plus machine and command to ``out`` (default ``benchmarks/results/NAME.json``).
    ``machine_info`` is :func:`machine`'s answer when the caller already has it (a result written many times)."""
    path = Path(out) if out else RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine_info or machine(),
              "command": " ".join([Path(sys.executable).name, *sys.argv]), **payload}
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path
