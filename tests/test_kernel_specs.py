"""The kernel descriptions in Python against ``join.cu`` itself, and the checks a launch's arguments get.

Runs without a GPU: the signatures are read from the CUDA source, so a kernel whose arguments change on one side
only fails here instead of receiving misplaced pointers on the device.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from distsm.kernels.cupy import launch
from distsm.kernels.cuda_modules import ARRAYS_MODULE, DFS_MODULE, JOIN_MODULE
from distsm.kernels.cupy.launch import KERNELS, Kernel, KernelArgumentError
from kernel_signatures import assert_described

C_TYPES = {"int": np.int32, "long long": np.int64, "unsigned int": np.uint32, "unsigned long long": np.uint64,
           "unsigned char": np.uint8, "double": np.float64}


def _signatures() -> dict[str, list[tuple[str, type, bool]]]:
    """Every ``extern "C" __global__`` kernel of join.cu: its (name, dtype, is pointer) arguments in order."""
    src = JOIN_MODULE.path.read_text()
    macro = re.search(r"#define DSM_PROBE_ARGS (.*?)(?<!\\)\n", src, re.S)
    assert macro is not None
    probe = macro.group(1).replace("\\\n", " ")
    out = {}
    for m in re.finditer(r'extern "C" __global__ void (\w+)\((.*?)\)\s*\{', src, re.S):
        args = []
        for part in m.group(2).replace("DSM_PROBE_ARGS", probe).split(","):
            words = part.replace("__restrict__", " ").replace("const", " ").split()
            pointer = "*" in part
            name = words[-1].lstrip("*")
            ctype = " ".join(w.rstrip("*") for w in words[:-1]).strip()
            args.append((name, C_TYPES[ctype], pointer))
        out[m.group(1)] = args
    return out


def test_every_kernel_is_described_in_signature_order():
    sigs = _signatures()
    assert sorted(sigs) == sorted(KERNELS)
    for name, kernel in KERNELS.items():
        assert [(a.name, a.dtype, a.pointer) for a in kernel.args] == sigs[name], name


def test_shared_constants_are_not_defined_in_cuda():
    src = JOIN_MODULE.path.read_text()
    for name, _ in JOIN_MODULE.defines:
        assert not re.search(rf"#define\s+{name}\b", src), name
        assert f"defined({name})" in src, f"join.cu does not guard the definition of {name}"


def test_pack_orders_named_values_and_converts_scalars():
    k = Kernel("k", (launch.Arg("x", np.int64, True), launch.Arg("n", np.int32), launch.Arg("res", np.int64, True)))
    x = np.zeros(3, np.int64)
    addr = np.uint64(1 << 20)
    packed = k.pack({"n": 7, "res": addr, "x": x})
    assert packed[0] is x and packed[2] is addr
    assert packed[1] == 7 and type(packed[1]) is np.int32


@pytest.mark.parametrize("values, message", [
    ({"x": np.zeros(3, np.int64), "n": 1}, "missing"),
    ({"x": np.zeros(3, np.int64), "n": 1, "res": np.zeros(1, np.int64), "extra": 1}, "unexpected"),
    ({"x": np.zeros(3, np.int32), "n": 1, "res": np.zeros(1, np.int64)}, "'x' must be a int64"),
    ({"x": np.zeros(3, np.int64), "n": 1, "rez": np.zeros(1, np.int64)}, "missing"),
])
def test_pack_rejects_missing_extra_and_mistyped_arguments(values, message):
    k = Kernel("k", (launch.Arg("x", np.int64, True), launch.Arg("n", np.int32), launch.Arg("res", np.int64, True)))
    with pytest.raises(KernelArgumentError, match=message):
        k.pack(values)


def test_pack_rejects_a_scalar_out_of_range():
    with pytest.raises(OverflowError):
        Kernel("k", (launch.Arg("n", np.int32),)).pack({"n": 2**40})


def test_dfs_kernels_are_described_in_signature_order():
    src = DFS_MODULE.path.read_text()
    types = {"int": np.int32, "i64": np.int64, "u64": np.uint64, "unsigned": np.uint32}
    macro = re.search(r"#define DFS_COUNT_ARGS (.*?)(?<!\\)\n", src, re.S)
    assert macro is not None
    shared = macro.group(1).replace("\\\n", " ")
    found = {}
    kernel = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\([\w, ]+\) )?(\w+)\((.*?)\)\s*\{', re.S)
    for m in kernel.finditer(src):
        args = []
        for part in m.group(2).replace("DFS_COUNT_ARGS", shared).split(","):
            words = part.replace("const", " ").split()
            args.append((words[-1].lstrip("*"), types[words[0].rstrip("*")], "*" in part))
        found[m.group(1)] = args
    assert sorted(found) == sorted(launch.DFS_KERNELS)
    for name, kernel in launch.DFS_KERNELS.items():
        assert [(a.name, a.dtype, a.pointer) for a in kernel.args] == found[name], name
    for name, _ in DFS_MODULE.defines:
        assert not re.search(rf"#define\s+{name}\b", src), name


def test_array_kernels_are_described_in_signature_order():
    assert_described(ARRAYS_MODULE, launch.ARRAY_KERNELS)
