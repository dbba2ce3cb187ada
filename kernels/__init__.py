"""The matching engine: one interface (:class:`~distsm.kernels.backend.Backend`), two backends (NumPy on the CPU,
CuPy on the GPU).

Installed as ``distsm.kernels``.  :func:`get_backend` is the one place a backend is chosen.
"""

from __future__ import annotations

from distsm.errors import BackendUnavailableError
from distsm.kernels.array_backend import NUMPY
from distsm.kernels.backend import Backend
from distsm.vocabulary import BACKENDS

_instances: dict[str, Backend] = {}


def cuda_device_count() -> int:
    """Number of usable CUDA devices (0 when CuPy or a driver is missing)."""
    try:
        import cupy
    except Exception:
        return 0
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def get_backend(name: str = "auto") -> Backend:
    """Return the backend called ``name``: ``"numpy"``, ``"cupy"``, or ``"auto"`` (CuPy when a CUDA device is
    present, else NumPy).  ``"cupy"`` without a device raises :class:`BackendUnavailableError`."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "auto":
        name = "cupy" if cuda_device_count() > 0 else "numpy"
    if name not in _instances:
        if name == "numpy":
            _instances[name] = NUMPY
        else:
            if cuda_device_count() == 0:
                raise BackendUnavailableError(
                    "backend='cupy' needs CuPy and a CUDA device; none is available here "
                    "(install distsm[gpu] on a machine with an NVIDIA GPU, or use backend='numpy')")
            from distsm.kernels.cupy import CupyBackend

            _instances[name] = CupyBackend()
    return _instances[name]
