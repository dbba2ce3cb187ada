"""The ``extern "C"`` kernels of a CUDA module read from its source, to check the Python descriptions of
``distsm.kernels.cupy.launch`` against them without a GPU."""

from __future__ import annotations

import re

import numpy as np

C_TYPES = {"int": np.int32, "unsigned": np.uint32, "unsigned int": np.uint32, "long long": np.int64, "i64": np.int64,
           "unsigned long long": np.uint64, "u64": np.uint64, "double": np.float64, "unsigned char": np.uint8}
_KERNEL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\([\w, ]+\)\s*)?(\w+)\((.*?)\)\s*\{', re.S)


def signatures(src: str) -> dict[str, list[tuple[str, type, bool]]]:
    """Each kernel of ``src``: its ``(name, dtype, is pointer)`` arguments in order."""
    found = {}
    for m in _KERNEL.finditer(src):
        args = []
        for part in m.group(2).split(","):
            words = part.replace("__restrict__", " ").replace("const", " ").replace("*", " ").split()
            args.append((words[-1], C_TYPES[" ".join(words[:-1])], "*" in part))
        found[m.group(1)] = args
    return found


def assert_described(module, kernels: dict) -> None:
    """``kernels`` (name -> Kernel) are exactly ``module``'s, each described in signature order, and the constants
    the module is compiled with are defined by Python only (the source refuses to compile without them)."""
    src = module.path.read_text()
    found = signatures(src)
    assert sorted(found) == sorted(kernels)
    for name, kernel in kernels.items():
        assert [(a.name, a.dtype, a.pointer) for a in kernel.args] == found[name], name
        assert kernel.module is module
    for name, _ in module.defines:
        assert not re.search(rf"#define\s+{name}\b", src) and f"defined({name})" in src, name
