"""The package's shape (issue 53): no module over 500 lines, and no function over 60 lines or 8 parameters, other
than the public entry points of ``distsm/api.py`` and ``Graph``'s constructors, which take the user's keywords;
and no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("distsm", "kernels", "partition", "cluster")
MODULE_LINES, FUNCTION_LINES, PARAMETERS = 500, 60, 8

#: Entry points whose keywords are the user's (the API's five, Graph's constructors).
ENTRY_POINTS = {"distsm/api.py count", "distsm/api.py match", "distsm/api.py iter_matches",
                "distsm/api.py count_batch", "distsm/api.py iter_batch", "distsm/graph.py __init__",
                "distsm/graph.py from_pandas_edgelist"}

def _modules():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
    return count - (1 if names and names[0].arg in ("self", "cls") else 0)


def _offenders() -> set[str]:
    found = set()
    for name, text in _modules():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES or _parameters(node) > PARAMETERS:
                    found.add(f"{name} {node.name}")
    return found - ENTRY_POINTS


def test_no_module_is_over_500_lines():
    long = {name: text.count("\n") for name, text in _modules() if text.count("\n") > MODULE_LINES}
    assert not long, long


def test_no_long_function_or_long_signature():
    found = _offenders()
    assert not found, f"functions over {FUNCTION_LINES} lines or {PARAMETERS} parameters: {sorted(found)}"


def test_no_import_cycles(tmp_path):
    """No two modules of the package import each other, directly or through others, whether at the top or inside
    a function (imports under TYPE_CHECKING, which name types only, aside)."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(ROOT / "distsm", tmp_path / "distsm")
    for pkg in PACKAGES[1:]:  # installed as distsm.kernels, distsm.partition, distsm.cluster
        shutil.copytree(ROOT / pkg, tmp_path / "distsm" / pkg)
    script = """
import grimp
g = grimp.build_graph("distsm", exclude_type_checking_imports=True)
found = sorted({tuple(sorted((a, b))) for a in g.modules for b in g.find_modules_directly_imported_by(a)
                if g.chain_exists(importer=b, imported=a)})
print(found)
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"modules in an import cycle: {out}"


def test_no_hardware_timings_in_the_code():
    """Timings measured on a given machine go stale: they live in benchmarks/README.md (its section of measurements
    behind the engine's settings, from benchmarks/results/design_notes.json), and the code keeps the reasons."""
    import re

    machine = re.compile(r"H100|H200|EPYC|\d-core|x H200")
    timing = re.compile(r"\d(\.\d+)? ?(ms|s)\b")
    found = [f"{name}:{i}" for name, text in _modules() for i, line in enumerate(text.splitlines(), 1)
             if machine.search(line) and timing.search(line)]
    assert not found, found


def test_no_two_classes_share_a_name():
    """A class name says what it holds in the whole package, not per module (two ``Placement`` classes once held
    different things); private helpers (a leading underscore) aside."""
    seen: dict[str, list[str]] = {}
    for name, text in _modules():
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen.setdefault(node.name, []).append(name)
    twice = {cls: where for cls, where in seen.items() if len(where) > 1}
    assert not twice, twice
