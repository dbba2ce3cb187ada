"""The engine's CUDA modules, the constants they share with Python, and their fatbins compiled ahead by ``nvcc``.

Each ``.cu`` file under ``cuda/`` is compiled with ``-D`` definitions of the sizes both sides use; this module is
their only definition (the Python side imports them from here, the CUDA side refuses to compile without them).

A module's kernels load from a fatbin compiled when the package is built (``setup.py`` runs :func:`build_fatbins`
when ``nvcc`` is on the path): machine code for every architecture of :data:`DEFAULT_ARCHS` (or of the
``DISTSM_CUDA_ARCHS`` environment variable, ``;``-separated) and PTX for the oldest one, which a newer GPU's driver
compiles.  A fatbin's name holds a hash of its source and options (:attr:`Module.key`) and the architectures it
was built for, so an edited source or constant never loads a stale one, nor a GPU one without code for it
(:func:`runs_on`): where none matches, the module is compiled by NVRTC on first use, as before.

Only the standard library is imported here, so that the build reads this file without the package's dependencies.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

CUDA_DIR = Path(__file__).resolve().parent / "cuda"

# ------------------------------------------------------------------ join.cu
BLOCK = 256            # threads per block of the grid-stride kernels (and of extend_tiered's groups)
SMALL_BLOCK = 1024     # threads of the fused single-block kernels
MAX_GRID = 65535
PCSR_SLOTS = 16        # 8-byte slots per 128-byte group
EMPTY_SLOT_BITS = 0xFFFFFFFFFFFFFFFF
TIER_COLS = 64         # larger steps stay entry-parallel (extend_tiered keeps a row in shared memory)
TIER_CHECKS = 32
PROG_MAX = 2048        # program words the single-block kernels keep in shared memory
BATCH_HEAD = 7         # int64 words of a query's header in descend_batch
FILTER_HEAD = 5        # int64 words of a query's header in filter_batch
BATCH_BLOCK = 1024     # threads of a block of the batched kernels (one query per block; measured best of 128-1024)
SIG_WORDS = 4          # 32-bit words of a vertex signature (kernels/signature.py)

# ------------------------------------------------------------------ trailing.cu (the fused trailing count)
TRAILING_BLOCK = 256       # threads per block: a thread per core row, the block's rows a contiguous range
TRAILING_BLOCKS = 8192     # blocks at most: the granularity at which an int64 overflow is recounted exactly
TRAILING_MAX_LINKS = 32    # links of all trailing vertices together (each row keeps its runs' bounds)
TRAILING_MAX_GROUP = 5     # vertices of one label group (a histogram of 2^5 membership masks per row)
TRAILING_PROG_MAX = 2048   # program words in shared memory

# ------------------------------------------------------------------ dfs.cu (the depth-first set-intersection search)
DFS_MAX_LEVELS = 10        # query vertices a search takes at most (a fixed per-warp stack of this depth)
DFS_HEAD_WORDS = 4         # program words of its header (kernels/dfs_plan.py)
DFS_LEVEL_WORDS = 7 + DFS_MAX_LEVELS
DFS_BLOCK = 256            # threads per block: 8 warps, each its own task at a time
DFS_GRAB = 32              # tasks a warp takes per atomic and loads a lane each (at most 32)
DFS_TRIM = 64              # runs longer than this are cut to a level's bounds by binary search, shorter ones read whole
DFS_MIN_BLOCKS = 6         # blocks per multiprocessor it must fit (__launch_bounds__): 40 registers, some
                           # spilled, beat 64 (4 blocks) on every motif of benchmarks/motifs.py on an H200
DFS_LANE_RUN = 16          # a triangle task whose shorter run is no longer than this is searched by one lane
DFS_TASK_RANGE = 1 << 21  # tasks per launch: a cancelled count stops after the range in flight

# ------------------------------------------------------------------ arrays.cu (array primitives between joins)
ARRAY_ITEMS = 16           # entries per thread of a scan's tile (BLOCK * ARRAY_ITEMS entries per block)

#: Architectures a built fatbin holds machine code for: one per family CuPy 14's CUDA 13 wheels run on (a
#: family's newer members run its oldest member's code), the oldest also as PTX for GPUs newer than all of them.
DEFAULT_ARCHS = ("75", "80", "90", "100", "110", "120")
ARCHS_VARIABLE = "DISTSM_CUDA_ARCHS"


@dataclass(frozen=True)
class Module:
    """A CUDA source file and the ``-D`` definitions it is compiled with."""

    path: Path
    defines: tuple[tuple[str, str], ...]

    @property
    def options(self) -> tuple[str, ...]:
        """Compiler options, the same for NVRTC and nvcc."""
        return ("--std=c++17", *(f"-D{k}={v}" for k, v in self.defines))

    @property
    def key(self) -> str:
        """A hash of the source and the options: a fatbin of another key was built from something else."""
        h = hashlib.sha256(self.path.read_bytes())
        h.update("\0".join(self.options).encode())
        return h.hexdigest()[:16]

    def fatbin(self, archs: Sequence[str], directory: Path | None = None) -> Path:
        """The file of this module's fatbin for ``archs`` in ``directory`` (default: beside its source)."""
        return (directory or self.path.parent) / f"{self.path.stem}-{self.key}-sm{'_'.join(archs)}.fatbin"

    def fatbins(self, directory: Path | None = None) -> list[tuple[Path, tuple[str, ...]]]:
        """This module's fatbins of its current key in ``directory``, each with the architectures it holds."""
        prefix = f"{self.path.stem}-{self.key}-sm"
        return [(p, tuple(p.name[len(prefix):-len(".fatbin")].split("_")))
                for p in sorted((directory or self.path.parent).glob(f"{prefix}*.fatbin"))]


def runs_on(archs: Sequence[str], capability: int) -> bool:
    """Whether a fatbin built for ``archs`` runs on a GPU of compute ``capability`` (e.g. 90): one that holds the
    oldest arch's PTX does wherever the capability is at least that arch (the driver compiles the PTX where no
    machine code matches).  The driver may load a module lazily, at its first launch, so a fatbin without code for
    the GPU cannot be told by a failed load: it is told here, before loading."""
    return capability >= min(int(a) for a in archs)


def _defines(**values: object) -> tuple[tuple[str, str], ...]:
    return tuple((f"DSM_{k}", str(v)) for k, v in values.items())


JOIN_MODULE = Module(CUDA_DIR / "join.cu", _defines(
    PCSR_SLOTS=PCSR_SLOTS, EMPTY_SLOT=f"{EMPTY_SLOT_BITS:#x}ull", SIG_WORDS=SIG_WORDS, PROG_MAX=PROG_MAX,
    TIER_COLS=TIER_COLS, TIER_CHECKS=TIER_CHECKS, BLOCK=BLOCK, BATCH_HEAD=BATCH_HEAD, FILTER_HEAD=FILTER_HEAD))
TRAILING_MODULE = Module(CUDA_DIR / "trailing.cu", _defines(
    TR_BLOCK=TRAILING_BLOCK, TR_MAX_LINKS=TRAILING_MAX_LINKS, TR_MAX_GROUP=TRAILING_MAX_GROUP,
    TR_PROG_MAX=TRAILING_PROG_MAX))
DFS_MODULE = Module(CUDA_DIR / "dfs.cu", _defines(
    DFS_MAX_LEVELS=DFS_MAX_LEVELS, DFS_HEAD_WORDS=DFS_HEAD_WORDS, DFS_LEVEL_WORDS=DFS_LEVEL_WORDS,
    DFS_BLOCK=DFS_BLOCK, DFS_GRAB=DFS_GRAB, DFS_TRIM=DFS_TRIM, DFS_MIN_BLOCKS=DFS_MIN_BLOCKS,
    DFS_LANE_RUN=DFS_LANE_RUN))
ARRAYS_MODULE = Module(CUDA_DIR / "arrays.cu", _defines(AR_BLOCK=BLOCK, AR_ITEMS=ARRAY_ITEMS))
MODULES = (JOIN_MODULE, TRAILING_MODULE, DFS_MODULE, ARRAYS_MODULE)


def build_archs() -> tuple[str, ...]:
    """The architectures to build for: ``DISTSM_CUDA_ARCHS`` (``;`` or ``,`` separated) or :data:`DEFAULT_ARCHS`."""
    value = os.environ.get(ARCHS_VARIABLE, "").replace(",", ";")
    archs = tuple(a.strip() for a in value.split(";") if a.strip())
    for a in archs:
        if not a.isdigit():
            raise ValueError(f"{ARCHS_VARIABLE}: {a!r} is not an architecture number such as 90")
    return archs or DEFAULT_ARCHS


def nvcc_command(module: Module, out: Path, archs: Sequence[str], nvcc: str = "nvcc") -> list[str]:
    """The ``nvcc`` command that writes ``module``'s fatbin for ``archs`` to ``out``."""
    codes = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    codes.append(f"-gencode=arch=compute_{min(archs, key=int)},code=compute_{min(archs, key=int)}")
    return [nvcc, "-fatbin", "--threads", "0", *codes, *module.options, "-o", str(out), str(module.path)]


def build_fatbins(directory: Path, archs: Sequence[str] | None = None, log: Callable[[str], None] = print,
                  modules: Sequence[Module] = MODULES) -> list[Path]:
    """Compile each of ``modules``' fatbin into ``directory`` (kept where one of its key is there already).

    Returns the fatbins written or kept; none when ``nvcc`` is not on the path (the modules then compile by NVRTC
    on first use).  Raises :class:`RuntimeError` with nvcc's message when a compile fails."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        log("distsm: nvcc not found; the CUDA kernels will be compiled by NVRTC on first use")
        return []
    archs = tuple(archs or build_archs())
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for module in modules:
        out = module.fatbin(archs, directory)
        if not out.exists():
            for stale in directory.glob(f"{module.path.stem}-*.fatbin"):
                stale.unlink()
            log(f"distsm: compiling {module.path.name} for sm_{', sm_'.join(archs)}")
            tmp = out.with_suffix(".tmp")
            done = subprocess.run(nvcc_command(module, tmp, archs, nvcc), capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"nvcc failed on {module.path}:\n{done.stderr}")
            tmp.replace(out)
        written.append(out)
    return written
