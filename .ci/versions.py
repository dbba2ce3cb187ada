"""CI: the base install and the ``gpu`` extra must resolve to the same dask and distributed.

Asks pip for a dry-run resolution of each (``--report``, nothing installed) and compares the versions it would
install; exits 1 naming the difference.  A CPU client and GPU workers then run one dask, which
``distsm.cluster.versions.check_versions`` also checks at run time.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGES = ("dask", "distributed")


def resolved(target: str, report: Path) -> dict[str, str]:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--report",
                    str(report), target], check=True)
    items = json.loads(report.read_text())["install"]
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in items}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        base = resolved(".", Path(tmp) / "base.json")
        gpu = resolved(".[gpu]", Path(tmp) / "gpu.json")
    differ = [f"{p}: base {base.get(p)}, gpu {gpu.get(p)}" for p in PACKAGES if base.get(p) != gpu.get(p)]
    if differ or any(base.get(p) is None for p in PACKAGES):
        print("the base install and the gpu extra resolve differently: " + "; ".join(differ or ["dask missing"]))
        return 1
    print("one set of versions: " + ", ".join(f"{p} {base[p]}" for p in PACKAGES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
