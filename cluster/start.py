"""Start or join the Dask cluster distsm runs on.

:func:`local` starts a ``dask_cuda.LocalCUDACluster`` (one worker per GPU) when CUDA devices exist and GPUs are
wanted, otherwise a ``distributed.LocalCluster`` of single-threaded worker processes.  :func:`connect` accepts
anything a user may hold: a ``Client``, a cluster object, a scheduler address or a scheduler file.  dask-cuda is
imported only on the GPU path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import dask

from distsm.kernels import cuda_device_count

#: Where the dashboard of a cluster distsm starts listens: loopback only, unless the user asks otherwise.
DEFAULT_DASHBOARD = "127.0.0.1:8787"

#: Module served by the scheduler at ``/distsm/status`` (added to the scheduler's HTTP routes).
HTTP_ROUTES_MODULE = "distsm.cluster.http"


class ClusterError(RuntimeError):
    """The cluster cannot be reached or used (lost scheduler, bad address, no workers)."""


def with_distsm_routes() -> Any:
    """A ``dask.config.set`` context adding distsm's HTTP routes to schedulers started inside it."""
    routes = list(dask.config.get("distributed.scheduler.http.routes", []))
    if HTTP_ROUTES_MODULE not in routes:
        routes.append(HTTP_ROUTES_MODULE)
    return dask.config.set({"distributed.scheduler.http.routes": routes})


def local(gpus: str | int | None = "all", workers: int | None = None, *,
          dashboard_address: str | None = DEFAULT_DASHBOARD, **kwargs: Any) -> Any:
    """Start a local cluster.

    Args:
        gpus: ``"all"`` (default) or a count: one dask-cuda worker per GPU when CUDA devices exist; ``None`` or 0
            forces CPU workers.
        workers: number of CPU worker processes (default: 2, at most the CPU count) when no GPU is used.
        dashboard_address: where the dashboard listens: ``127.0.0.1:8787`` by default, reachable from this host
            only; ``":8787"`` listens on every interface (anyone who reaches it sees the cluster's tasks),
            ``"127.0.0.1:0"`` picks a free port, ``None`` disables it.
        kwargs: passed to the cluster class.  The scheduler and workers listen on 127.0.0.1 unless ``host`` (or
            ``interface``) says otherwise.
    """
    wanted: str | int = 0 if gpus is None else gpus
    devices = cuda_device_count() if wanted != 0 else 0
    if "interface" not in kwargs:
        kwargs.setdefault("host", "127.0.0.1")
    with with_distsm_routes():
        if devices:
            n = devices if wanted == "all" else min(int(wanted), devices)
            from dask_cuda import LocalCUDACluster

            return LocalCUDACluster(n_workers=n, dashboard_address=dashboard_address, **kwargs)
        from distributed import LocalCluster

        n = workers if workers is not None else max(1, min(2, os.cpu_count() or 1))
        if n < 1:
            raise ValueError(f"workers must be >= 1, got {n}")
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=dashboard_address,
                            **kwargs)


@dataclass(frozen=True)
class LocalClusterSpec:
    """A local cluster for a :class:`~distsm.Matcher` to start (and close with itself): ``gpus``, ``workers`` and
    ``dashboard_address`` as in :func:`local`.  ``Matcher(data)`` starts ``LocalClusterSpec()``."""

    gpus: str | int | None = "all"
    workers: int | None = None
    dashboard_address: str | None = DEFAULT_DASHBOARD

    def start(self) -> Any:
        return local(self.gpus, self.workers, dashboard_address=self.dashboard_address)


def connect(target: Any = None, *, timeout: float = 30) -> tuple[Any, Any]:
    """Return ``(client, owned_cluster)`` for ``target``.

    ``target`` may be a ``distributed.Client`` (used as is), a cluster object, a scheduler address
    (``"tcp://host:8786"``), a path to a scheduler file, a :class:`LocalClusterSpec`, or None (start
    ``LocalClusterSpec()``).  ``owned_cluster`` is the cluster distsm started (close it when done), or None.
    """
    from distributed import Client

    if isinstance(target, Client):
        return target, None
    owned = None
    try:
        if target is None or isinstance(target, LocalClusterSpec):
            owned = (target or LocalClusterSpec()).start()
            return Client(owned, timeout=timeout), owned
        if hasattr(target, "scheduler_address"):
            return Client(target, timeout=timeout), None
        if isinstance(target, (str, os.PathLike)) and os.path.isfile(target):
            return Client(scheduler_file=os.fspath(target), timeout=timeout), None
        if isinstance(target, str) and "://" in target or isinstance(target, str) and ":" in target:
            return Client(target, timeout=timeout), None
    except OSError as e:
        if owned is not None:
            owned.close()
        raise ClusterError(f"cannot reach the Dask scheduler at {target!r}: {e}") from e
    raise ClusterError(f"do not know how to connect to {target!r}: give a Client, a cluster, a scheduler "
                       "address like tcp://host:8786, a scheduler file or a distsm.LocalClusterSpec")
