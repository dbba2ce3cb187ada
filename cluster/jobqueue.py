"""Dask clusters on batch systems (SLURM, PBS) through dask-jobqueue, for ``distsm count --scheduler-file``.

The scheduler runs in the process that calls :func:`start` (a login or batch node, with distsm's HTTP routes);
each batch job is one node's workers: on GPU nodes one ``dask cuda worker`` per GPU the job books (``--gres`` /
``ngpus``), named ``JOB-0``, ``JOB-1``, … as dask-jobqueue expects of a job's processes; on CPU nodes ``dask worker
--nworkers N``, single-threaded.  The scheduler file is written where the client reads it.

``system="local"`` is dask-jobqueue's own local test cluster: the same job scripts, run as local subprocesses instead
of being submitted.  The recipe's CI test runs through it, and a user can try a recipe on one machine with it.

Needs the ``jobqueue`` extra (``pip install 'distsm[jobqueue]'``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from distsm.cluster.start import DEFAULT_DASHBOARD, ClusterError, with_distsm_routes

#: Batch systems a job spec may name.
SYSTEMS = ("slurm", "pbs", "local")

#: Environment every GPU job sets before its workers start: NVLink multicast off (deploy/README.md: NCCL).
GPU_PROLOGUE = ("export NCCL_NVLS_ENABLE=0",)


@dataclass(frozen=True)
class JobSpec:
    """One batch job's worth of workers and where the scheduler listens.

    ``gpus``: GPUs each job books, one dask-cuda worker each (0: CPU workers, ``workers`` single-threaded
    processes per job).  ``cores`` and ``memory`` (a Dask size, e.g. ``"256GiB"``): what each job books; the
    workers split the memory evenly.  ``queue``, ``account`` and ``walltime`` go to the batch system as given.
    ``host`` or ``interface``: where the scheduler listens (compute nodes must reach it; ``local`` defaults to
    127.0.0.1).  ``prologue``: shell lines each job runs first (``module load``, activating an environment).
    ``python``: the interpreter the jobs run (the caller's by default: it must exist on the compute nodes)."""

    system: str
    scheduler_file: str
    gpus: int = 0
    workers: int = 1
    cores: int = 1
    memory: str = "4GiB"
    queue: str | None = None
    account: str | None = None
    walltime: str | None = None
    host: str | None = None
    interface: str | None = None
    dashboard_address: str = DEFAULT_DASHBOARD
    local_directory: str | None = None
    log_directory: str | None = None
    prologue: tuple[str, ...] = ()
    python: str = field(default_factory=lambda: sys.executable)

    def __post_init__(self) -> None:
        if self.system not in SYSTEMS:
            raise ValueError(f"system must be one of {', '.join(SYSTEMS)}, got {self.system!r}")
        if self.gpus < 0 or self.workers < 1 or self.cores < 1:
            raise ValueError(f"gpus must be >= 0 and workers and cores >= 1 (got gpus={self.gpus}, "
                             f"workers={self.workers}, cores={self.cores})")
        if self.system != "local" and self.host is None and self.interface is None:
            raise ValueError(f"a {self.system} scheduler must listen where the compute nodes reach it: give a host "
                             "or a network interface (e.g. ib0)")

    @property
    def processes(self) -> int:
        """Worker processes per job."""
        return self.gpus or self.workers


def scheduler_options(spec: JobSpec) -> dict[str, Any]:
    """Where the scheduler of ``spec`` listens and writes its file."""
    options: dict[str, Any] = {"scheduler_file": spec.scheduler_file, "dashboard_address": spec.dashboard_address}
    if spec.host is not None:
        options["host"] = spec.host
    elif spec.interface is not None:
        options["interface"] = spec.interface
    else:
        options["host"] = "127.0.0.1"
    return options


def job_kwargs(spec: JobSpec) -> dict[str, Any]:
    """The dask-jobqueue job arguments of ``spec`` (of SLURMJob, PBSJob or the local test cluster's LocalJob, and
    of their clusters)."""
    kwargs: dict[str, Any] = {
        "processes": spec.processes,
        # One thread per worker (distsm runs one task per worker at a time); the job books all its cores below.
        "cores": spec.processes,
        "memory": spec.memory,
        "python": spec.python,
        "job_script_prologue": list((GPU_PROLOGUE if spec.gpus else ()) + spec.prologue),
        "death_timeout": 120,
        "job_name": "distsm-worker",
    }
    if spec.interface is not None:
        kwargs["interface"] = spec.interface
    if spec.local_directory is not None:
        kwargs["local_directory"] = spec.local_directory
    if spec.log_directory is not None:
        kwargs["log_directory"] = spec.log_directory
    if spec.gpus:
        # `python -m dask_cuda.cli` is `dask cuda worker`: one process per GPU the job sees, named JOB-0, JOB-1, …
        kwargs["worker_command"] = "dask_cuda.cli"
        kwargs["worker_extra_args"] = ["--device-memory-limit", "0.8"]
    if spec.system == "slurm":
        kwargs.update(queue=spec.queue, account=spec.account, walltime=spec.walltime, job_cpu=spec.cores,
                      job_extra_directives=[f"--gres=gpu:{spec.gpus}"] if spec.gpus else [])
    elif spec.system == "pbs":
        select = f"select=1:ncpus={spec.cores}:mem={_pbs_memory(spec.memory)}"
        kwargs.update(queue=spec.queue, account=spec.account, walltime=spec.walltime,
                      resource_spec=select + (f":ngpus={spec.gpus}" if spec.gpus else ""))
    return kwargs


def _pbs_memory(memory: str) -> str:
    """A Dask size as PBS writes it (``256GiB`` -> ``256gb``: PBS's gb are binary)."""
    from dask.utils import parse_bytes

    return f"{max(1, parse_bytes(memory) >> 30)}gb"


def _classes(system: str) -> tuple[Any, Any]:
    """dask-jobqueue's (cluster, job) classes of ``system``."""
    try:
        from dask_jobqueue import PBSCluster, SLURMCluster
        from dask_jobqueue.local import LocalCluster, LocalJob
        from dask_jobqueue.pbs import PBSJob
        from dask_jobqueue.slurm import SLURMJob
    except ImportError as e:
        raise ClusterError("batch-system clusters need dask-jobqueue: pip install 'distsm[jobqueue]'") from e
    return {"slurm": (SLURMCluster, SLURMJob), "pbs": (PBSCluster, PBSJob), "local": (LocalCluster, LocalJob)}[system]


def job_script(spec: JobSpec, scheduler: str = "tcp://SCHEDULER:8786", name: str = "distsm") -> str:
    """The script each job of ``spec`` runs (what ``sbatch`` or ``qsub`` gets), for a scheduler at ``scheduler``;
    nothing is started."""
    return str(_classes(spec.system)[1](scheduler=scheduler, name=name, **job_kwargs(spec)).job_script())


def start(spec: JobSpec, jobs: int) -> Any:
    """A dask-jobqueue cluster of ``spec`` with ``jobs`` jobs submitted (its scheduler, serving distsm's routes,
    writes ``spec.scheduler_file``); close it to cancel the jobs."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    cluster_class = _classes(spec.system)[0]  # imports distributed, whose config the routes' context extends
    with with_distsm_routes():
        cluster = cluster_class(scheduler_options=scheduler_options(spec), **job_kwargs(spec))
    cluster.scale(jobs=jobs)
    return cluster
