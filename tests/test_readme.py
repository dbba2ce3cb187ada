"""The README's Python examples, extracted from README.md itself and run as written (each as a script)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_readme_has_its_examples():
    joined = "\n".join(BLOCKS)
    assert len(BLOCKS) >= 5
    assert "distsm.Matcher(" in joined and 'if __name__ == "__main__":' in joined
    assert "from distsm.rdf import" in joined and "iter_mappings" in joined and "as_frame=True" in joined


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs_as_written(tmp_path, index):
    # A script in an empty folder, run by a fresh interpreter: what a user who pastes the block into a file gets
    # (the cluster example needs its __main__ guard exactly there).
    script = tmp_path / "example.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_readme_networkx_example_prints_what_it_says(tmp_path):
    block = next(b for b in BLOCKS if "carbonyl" in b)
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300).stdout.splitlines()
    assert out[:2] == ["1", "[{'x': 'c2', 'y': 'o1'}]"], out
    assert out[2].split() == ["x", "y"] and out[3].split() == ["0", "c2", "o1"], out
    assert out[4] == "0" and out[5].startswith("['c1' 'c2' 'o1'] LabelVocabulary"), out


def test_the_install_guide_commands_parse_and_name_real_extras():
    """The commands of "Which install, where" as written: each `distsm` one parses with the CLI, each `dask` one
    names options its CLI has, and each `pip install` names extras that pyproject.toml declares."""
    import shlex
    import tomllib

    import click

    from distsm.cli import build_parser

    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Which install, where"):text.index("## Python API")]
    spans = re.findall(r"`([^`]+)`", section)
    extras = set(tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    parser = build_parser()
    seen = set()
    for span in spans:
        argv = shlex.split(span)
        if argv[:2] == ["pip", "install"]:
            named = re.fullmatch(r"distsm(?:\[([a-z,]+)\])?", argv[2])
            assert named, span
            assert set(filter(None, (named.group(1) or "").split(","))) <= extras, span
        elif argv[0] == "distsm":
            parser.parse_args(argv[1:])
        elif argv[0] == "dask":
            from distributed.cli import dask_scheduler, dask_worker

            cmd = {"scheduler": dask_scheduler.main, "worker": dask_worker.main}.get(argv[1])
            if cmd is None:  # `dask cuda worker`: dask-cuda may be absent; its options are checked in test_deploy
                continue
            cmd.make_context(argv[1], argv[2:])
            assert isinstance(cmd, click.Command)
        else:
            continue
        seen.add(argv[0] if argv[0] != "pip" else "pip")
    assert seen == {"pip", "distsm", "dask"}
