"""Builds the package as pyproject.toml describes, and compiles the CUDA kernels ahead into fatbins.

Everything else is declared in pyproject.toml; this file only adds the fatbins to ``build_py``
(:func:`distsm.kernels.cuda_modules.build_fatbins`: skipped with a message when ``nvcc`` is not on the path).
"""

import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _cuda_modules():
    # Read by path: importing distsm.kernels would need the package's dependencies, which a build does not have.
    spec = importlib.util.spec_from_file_location("_distsm_cuda_modules", ROOT / "kernels" / "cuda_modules.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class BuildWithFatbins(build_py):
    """``build_py``, then the fatbins beside the CUDA sources: in the tree for an editable install, else in the
    build directory the wheel is made of."""

    def run(self):
        super().run()
        inplace = getattr(self, "editable_mode", False)
        target = ROOT / "kernels" / "cuda" if inplace else Path(self.build_lib) / "distsm" / "kernels" / "cuda"
        _cuda_modules().build_fatbins(target, log=lambda line: print(line, file=sys.stderr))


setup(cmdclass={"build_py": BuildWithFatbins})
