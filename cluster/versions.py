"""One set of versions across a cluster: the client refuses a scheduler or worker that runs another dask,
distributed or distsm than it does (their messages and tasks would not mean the same on both sides).

Dask itself only warns about mismatched versions (``Client.get_versions(check=False)``), and distsm is no package
it compares; :func:`check_versions` asks every process and raises one :class:`~distsm.cluster.start.ClusterError`
that lists each difference.
"""

from __future__ import annotations

import importlib
from typing import Any

from distsm.cluster.start import ClusterError

#: The packages whose versions must agree between the client, the scheduler and every worker.
PACKAGES = ("dask", "distributed", "distsm")


def installed_versions() -> dict[str, str | None]:
    """The versions of :data:`PACKAGES` in this process (None: not importable), read when called."""
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            module = importlib.import_module("distsm._version" if name == "distsm" else name)
        except ImportError:
            out[name] = None
        else:
            out[name] = getattr(module, "__version__", None)
    return out


def check_versions(client: Any) -> None:
    """Raise :class:`ClusterError` when the scheduler or a worker of ``client``'s cluster runs other versions of
    dask, distributed or distsm than this process."""
    mine = installed_versions()
    others = {f"worker {addr}": found for addr, found in client.run(installed_versions).items()}
    others["the scheduler"] = client.run_on_scheduler(installed_versions)
    differ = [f"{who}: {name} {found.get(name)} (here {mine[name]})"
              for who, found in sorted(others.items()) for name in PACKAGES if found.get(name) != mine[name]]
    if differ:
        raise ClusterError("the cluster runs other versions than this client, so distsm will not use it: "
                           + "; ".join(differ) + ". Install the same distsm, dask and distributed everywhere "
                           "(the README's install section names the versions).")
