"""What a call may use: the :class:`Resources` every entry point (the API, the RDF layer, the CLI) reads its
backend, memory budget and time limit from."""

from __future__ import annotations

from dataclasses import dataclass

from distsm.arguments import check_declared, check_size
from distsm.kernels import get_backend
from distsm.kernels.backend import Backend
from distsm.kernels.budget import default_budget


@dataclass(frozen=True)
class Resources:
    """What a call may use: ``memory_budget`` (bytes, or a size such as ``"1GB"``; None: the backend's default),
    ``backend`` (``"auto"``, ``"numpy"``, ``"cupy"``) and ``timeout`` (seconds; None: no limit).  Checked when made,
    so a bad value reads the same from every entry point."""

    memory_budget: int | str | None = None
    backend: str = "auto"
    timeout: float | None = None

    def __post_init__(self) -> None:
        check_declared(self)

    @property
    def budget_bytes(self) -> int | None:
        """The memory budget in bytes (None: the backend's default)."""
        return check_size("memory_budget", self.memory_budget)

    def engine(self) -> tuple[Backend, int]:
        """The backend these resources name and the join's memory budget on it, in bytes (the backend's default
        when none was given)."""
        backend = get_backend(self.backend)
        return backend, default_budget(backend, self.budget_bytes)


#: The backend chosen automatically, its default budget, no time limit.
DEFAULT_RESOURCES = Resources()
