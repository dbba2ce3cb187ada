"""The CUDA modules compiled ahead: fatbin names that follow their source and options, the build that writes them,
and loading them on the device (with NVRTC where a fatbin holds no code for the GPU)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from distsm.kernels import cuda_device_count
from distsm.kernels import cuda_modules as cm

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on the path")
needs_gpu = pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device present")

TINY = 'extern "C" __global__ void twice(const int* x, int* y, long long n) {\n' \
       '    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n' \
       '    if (i < n) y[i] = DSM_FACTOR * x[i];\n}\n'


def tiny_module(tmp_path, factor: int = 2, source: str = TINY) -> cm.Module:
    path = tmp_path / "tiny.cu"
    path.write_text(source)
    return cm.Module(path, (("DSM_FACTOR", str(factor)),))


def test_a_fatbin_is_named_by_its_source_options_and_architectures(tmp_path):
    a = tiny_module(tmp_path)
    key = a.key
    assert a.fatbin(("80", "90")).name == f"tiny-{key}-sm80_90.fatbin" and a.fatbin(("90",)).parent == tmp_path
    a.fatbin(("75", "120")).write_bytes(b"")
    (tmp_path / "tiny-0123456789abcdef-sm90.fatbin").write_bytes(b"")  # another source's
    assert a.fatbins() == [(a.fatbin(("75", "120")), ("75", "120"))]
    assert cm.Module(a.path, (("DSM_FACTOR", "3"),)).key != key
    a.path.write_text(TINY.replace("y[i] =", "y[i] = 1 +"))
    assert a.key != key


def test_every_definition_is_one_its_module_reads():
    for module in cm.MODULES:
        src = module.path.read_text()
        assert module.defines, module.path
        for name, _ in module.defines:
            assert name in src, f"{module.path.name} does not read {name}"


def test_a_fatbin_runs_on_gpus_from_its_oldest_architecture_on():
    # Machine code for each arch and the oldest one's PTX, which the driver compiles for newer GPUs.
    assert cm.runs_on(("75", "90"), 75) and cm.runs_on(("75", "90"), 86) and cm.runs_on(("75", "90"), 120)
    assert not cm.runs_on(("90", "120"), 80) and not cm.runs_on(("120",), 90)


def test_archs_come_from_the_environment_or_the_default(monkeypatch):
    monkeypatch.delenv(cm.ARCHS_VARIABLE, raising=False)
    assert cm.build_archs() == cm.DEFAULT_ARCHS
    monkeypatch.setenv(cm.ARCHS_VARIABLE, "90; 100,120")
    assert cm.build_archs() == ("90", "100", "120")
    monkeypatch.setenv(cm.ARCHS_VARIABLE, "sm_90")
    with pytest.raises(ValueError, match="'sm_90' is not an architecture number"):
        cm.build_archs()


def test_the_command_holds_machine_code_for_each_arch_and_ptx_for_the_oldest(tmp_path):
    module = tiny_module(tmp_path)
    cmd = cm.nvcc_command(module, tmp_path / "out.fatbin", ("120", "90", "80"))
    gencodes = [c for c in cmd if c.startswith("-gencode")]
    assert gencodes == ["-gencode=arch=compute_120,code=sm_120", "-gencode=arch=compute_90,code=sm_90",
                        "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_80,code=compute_80"]
    assert "-DDSM_FACTOR=2" in cmd and "--std=c++17" in cmd and cmd[-1] == str(module.path)


def test_without_nvcc_the_build_writes_nothing_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(cm.shutil, "which", lambda name: None)
    said = []
    assert cm.build_fatbins(tmp_path / "out", log=said.append, modules=[tiny_module(tmp_path)]) == []
    assert "NVRTC" in said[0] and not (tmp_path / "out").exists()


@needs_nvcc
def test_the_build_compiles_keeps_and_replaces_fatbins(tmp_path):
    out = tmp_path / "out"
    module = tiny_module(tmp_path)
    (built,) = cm.build_fatbins(out, archs=("90",), log=lambda _: None, modules=[module])
    assert built == module.fatbin(("90",), out) and built.stat().st_size > 0
    cuobjdump = shutil.which("cuobjdump")
    if cuobjdump:
        listing = subprocess.run([cuobjdump, "--list-elf", str(built)], capture_output=True, text=True)
        assert "sm_90" in listing.stdout, listing.stderr
    stamp = built.stat().st_mtime_ns
    assert cm.build_fatbins(out, archs=("90",), log=lambda _: None, modules=[module]) == [built]
    assert built.stat().st_mtime_ns == stamp
    changed = tiny_module(tmp_path, factor=3)
    (rebuilt,) = cm.build_fatbins(out, archs=("90",), log=lambda _: None, modules=[changed])
    assert rebuilt != built and rebuilt.exists() and not built.exists()


@needs_nvcc
def test_a_failing_compile_raises_with_nvccs_message(tmp_path):
    broken = tiny_module(tmp_path, source=TINY.replace("y[i] =", "y[i] = undeclared +"))
    with pytest.raises(RuntimeError, match="undeclared"):
        cm.build_fatbins(tmp_path / "out", archs=("90",), log=lambda _: None, modules=[broken])


@needs_nvcc
def test_the_install_compiled_every_module_ahead():
    # setup.py's build_py compiles them when nvcc is on the path; a missing one means an edited source or constant
    # since the last install (pip install -e . rebuilds it).
    missing = [m.path.name for m in cm.MODULES if not m.fatbins()]
    assert not missing, f"no fatbin for {missing}: reinstall (pip install -e .)"


def _twice(module: cm.Module) -> np.ndarray:
    import cupy

    from distsm.kernels.cupy.launch import Arg, Kernel, Launcher

    kernel = Kernel("twice", (Arg("x", np.int32, True), Arg("y", np.int32, True), Arg("n", np.int64)), module)
    x = cupy.arange(1000, dtype=cupy.int32)
    y = cupy.zeros_like(x)
    Launcher().grid(kernel, x.size, x=x, y=y, n=x.size)
    return cupy.asnumpy(y)


@pytest.mark.gpu
@needs_gpu
@needs_nvcc
def test_a_module_loads_from_its_fatbin_and_from_nvrtc_where_the_fatbin_has_no_code_for_the_gpu(tmp_path):
    import cupy

    from distsm.kernels.cupy.launch import load_module

    module = tiny_module(tmp_path, factor=5)
    capability = cupy.cuda.Device().compute_capability
    (built,) = cm.build_fatbins(tmp_path, archs=(capability,), log=lambda _: None, modules=[module])
    assert load_module(module).file_path == str(built)
    assert (_twice(module) == 5 * np.arange(1000)).all()
    # Machine code for a newer architecture only: the driver would load it lazily and fail at the launch, so the
    # fatbin's name tells it apart and NVRTC compiles the source.
    newer = str(int(capability) + 10)
    built.rename(module.fatbin((newer,)))
    assert getattr(load_module(module), "file_path", None) is None
    assert (_twice(module) == 5 * np.arange(1000)).all()
