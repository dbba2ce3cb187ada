"""What a call may use: the :class:`Resources` every entry point (the API, the RDF layer, the CLI) reads its
backend, memory budget and time limit from."""

from __future__ import annotations

from dataclasses import dataclass

from distsm import caches
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

    @staticmethod
    def of(memory_budget: int | str | None = None, backend: str = "auto", timeout: float | None = None) -> Resources:
        """The resources of these values: one shared, checked instance per combination of plain values (the entry
        points ask once a call, and a light count should not build and check one anew each time), else a new one,
        checked as the constructor checks it.  The last :data:`SHARED_RESOURCES` combinations are kept."""
        if type(memory_budget) not in _PLAIN or type(backend) is not str or type(timeout) not in _PLAIN:
            return Resources(memory_budget, backend, timeout)
        key = (memory_budget, backend, timeout)
        shared = _SHARED.get(caches.GLOBAL, key)
        return shared if shared is not None else _SHARED.put(caches.GLOBAL, Resources(memory_budget, backend, timeout),
                                                             key)

    def engine(self) -> tuple[Backend, int]:
        """The backend these resources name and the join's memory budget on it, in bytes (the backend's default
        when none was given)."""
        backend = get_backend(self.backend)
        return backend, default_budget(backend, self.budget_bytes)


#: Value types :meth:`Resources.of` shares instances of (bools, which ``int`` would admit, are checked anew).
_PLAIN = (type(None), int, float, str)
#: Combinations :meth:`Resources.of` keeps.
SHARED_RESOURCES = 64
_SHARED = caches.cache("shared resources", "(memory budget, backend, timeout) -> its checked Resources",
                       kept=SHARED_RESOURCES)

#: The backend chosen automatically, its default budget, no time limit.
DEFAULT_RESOURCES = Resources()
