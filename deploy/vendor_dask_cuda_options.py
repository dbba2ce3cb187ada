"""Regenerate ``deploy/dask_cuda_worker_options.txt``: the CLI of ``dask cuda worker``, read from dask-cuda's source.

dask-cuda cannot be imported without a CUDA driver, so tests/test_deploy.py checks the ``dask cuda worker`` command
lines in deploy/ against this vendored list instead. The list is extracted (with ``ast``, nothing is imported or run)
from ``dask_cuda/cli.py`` inside the released wheel:

    python deploy/vendor_dask_cuda_options.py                 # downloads dask-cuda==26.10.0 with pip
    python deploy/vendor_dask_cuda_options.py --wheel W.whl   # or reads a wheel you already have

Only the standard library and pip are needed.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DEFAULT_VERSION = "26.10.0"
OUT = Path(__file__).with_name("dask_cuda_worker_options.txt")
CLI_MEMBER = "dask_cuda/cli.py"


def _download(version: str, dest: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                    f"dask-cuda=={version}", "-d", str(dest)], check=True, stdout=subprocess.DEVNULL)
    wheels = sorted(dest.glob("dask_cuda-*.whl"))
    if not wheels:
        raise SystemExit(f"pip downloaded no dask-cuda wheel into {dest}")
    return wheels[0]


def _const(node: ast.AST):
    """The value of a literal (``-1`` included), else None."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _click_call(node: ast.AST, module_defs: dict[str, ast.Call]) -> ast.Call | None:
    """The ``click.option(...)``/``click.argument(...)`` call a decorator stands for, if it is one."""
    if isinstance(node, ast.Name):
        node = module_defs.get(node.id)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "click" and node.func.attr in ("option", "argument")):
        return node
    return None


def _command_name(decorator: ast.AST) -> str | None:
    """``worker`` for ``@cuda.command(name="worker", ...)``."""
    func = decorator.func if isinstance(decorator, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr == "command":
        for kw in decorator.keywords:
            if kw.arg == "name":
                return _const(kw.value)
    return None


def extract(source: str, command: str = "worker") -> list[str]:
    """Lines ``argument NAME nargs=N required=B`` and ``option DECLS KIND`` in declaration order (top to bottom)."""
    tree = ast.parse(source)
    module_defs: dict[str, ast.Call] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if isinstance(stmt.value, ast.Call):
                module_defs[stmt.targets[0].id] = stmt.value
    funcs = [f for f in tree.body if isinstance(f, ast.FunctionDef)
             and any(_command_name(d) == command for d in f.decorator_list)]
    if len(funcs) != 1:
        raise SystemExit(f"expected one click command named {command!r} in {CLI_MEMBER}, found {len(funcs)}")
    lines = []
    for decorator in funcs[0].decorator_list:
        call = _click_call(decorator, module_defs)
        if call is None:
            continue
        kwargs = {kw.arg: _const(kw.value) for kw in call.keywords if kw.arg}
        strings = [_const(a) for a in call.args if isinstance(_const(a), str)]
        if call.func.attr == "argument":
            nargs = kwargs.get("nargs", 1)
            required = kwargs.get("required", nargs == 1)
            lines.append(f"argument {strings[0]} nargs={nargs} required={required}")
            continue
        decls = [s for s in strings if s.startswith("-")]
        if not decls:
            raise SystemExit(f"option without a flag name at line {call.lineno}: {strings}")
        if kwargs.get("is_flag") or any("/" in d for d in decls):
            kind = "flag"
        elif kwargs.get("multiple"):
            kind = "multiple"
        else:
            kind = "value"
        lines.append(f"option {' '.join(decls)} {kind}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default=DEFAULT_VERSION,
                    help=f"dask-cuda version to download (default {DEFAULT_VERSION})")
    ap.add_argument("--wheel", type=Path, default=None, help="read this dask-cuda wheel instead of downloading one")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or _download(args.version, Path(tmp))
        with zipfile.ZipFile(wheel) as z:
            raw = z.read(CLI_MEMBER)
            entry_points = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt")))
    version = wheel.name.split("-")[1]
    if "cuda = dask_cuda.cli:cuda" not in entry_points.decode():
        raise SystemExit("the wheel does not register `dask cuda` (entry point group dask_cli)")
    body = extract(raw.decode())
    header = [
        f"# The command line of `dask cuda worker` in dask-cuda {version}.",
        f"# source: {wheel.name}, member {CLI_MEMBER} (sha256 {hashlib.sha256(raw).hexdigest()})",
        "# `dask cuda` is the entry point `[dask_cli] cuda = dask_cuda.cli:cuda`; `worker` is the click command",
        "# `cuda.command(name=\"worker\", context_settings=dict(ignore_unknown_options=True))` in that file.",
        "# Generated by deploy/vendor_dask_cuda_options.py (ast, nothing imported); read by tests/test_deploy.py.",
        "# Lines: `argument NAME nargs=N required=BOOL`, or `option NAMES KIND` where NAMES is a click declaration",
        "# (`--on/--off` for boolean pairs) and KIND is value (takes one value), flag (takes none) or multiple",
        "# (takes one value, may repeat).",
        f"version {version}",
    ]
    args.out.write_text("\n".join(header + body) + "\n")
    print(f"wrote {args.out}: {len(body)} parameters of dask-cuda {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
