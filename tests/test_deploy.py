"""deploy/ is consistent: every command line in it parses with the CLI it calls, and the files agree.

Command lines are collected from the README's fenced shell blocks (``docker run`` / ``docker compose run``
included, through the image's entry point), the Dockerfile (RUN, ENTRYPOINT + CMD), the compose services
(entrypoint + command) and the Kubernetes containers (command + args). Each one is then checked:

- ``distsm ...`` with the real argparse parser (:func:`distsm.cli.build_parser`), option names matched exactly;
- ``dask scheduler`` / ``dask worker`` with distributed's click commands;
- ``dask cuda worker`` with a click command rebuilt from ``deploy/dask_cuda_worker_options.txt``, the option list
  that ``deploy/vendor_dask_cuda_options.py`` extracted from dask-cuda 26.10.0's ``dask_cuda/cli.py`` (dask-cuda
  cannot be imported without a CUDA driver; where it can, the list is compared with the real command).

Cross-file checks (scheduler addresses and ports, shared volumes, partition stores, GPU requests, the image's
entry point) read the distsm commands with the *contract* parser: the real one plus the cluster options of
``distsm count`` that the CLI is getting, so that they do not depend on when those options land; the strict
parse tests above do.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

import click
import pytest
import yaml

from distsm.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
README = DEPLOY / "README.md"
DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = DEPLOY / "Dockerfile.dockerignore"
COMPOSE = DEPLOY / "compose.yaml"
K8S = DEPLOY / "kubernetes" / "daskcluster.yaml"
CUDA_OPTIONS = DEPLOY / "dask_cuda_worker_options.txt"
DASK_CONFIG = DEPLOY / "dask-distsm.yaml"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

IMAGE_REPO = "distsm"  # the image built from deploy/Dockerfile is tagged distsm:<version>
DASK_CUDA_VERSION = "26.10.0"

# The cluster options of `distsm count` (the contract the CLI is being extended to), and the flags that take no value.
CONTRACT_COUNT_OPTIONS = {
    "--partitions": int, "--workers": int, "--gpus": str, "--scheduler": str, "--scheduler-file": str,
    "--partition-dir": str, "--json": None, "--backend": str, "--memory-budget": str,
}
CONTRACT_PARTITION_OPTIONS = {"-k": int, "--out": str}


# ----------------------------------------------------------------------------------------------------------------
# Collecting command lines


@dataclass
class Command:
    where: str  # file:line or file:object, for messages
    argv: list[str]
    k8s: bool = False  # the operator injects DASK_SCHEDULER_ADDRESS into worker pods
    via: str = ""  # "compose" for a README line that runs through `docker compose run`

    @property
    def name(self) -> str:
        if self.argv[:3] == ["dask", "cuda", "worker"]:
            return "dask cuda worker"
        return " ".join(self.argv[:2])

    def __str__(self) -> str:
        return f"{self.where}: {shlex.join(self.argv)}"


_SUBST = re.compile(r"\$\([^()]*\)")
_SEPARATORS = {";", "&&", "||", "|", "&"}
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def shell_commands(script: str, first_line: int = 1) -> list[tuple[int, list[str]]]:
    """Simple commands of a shell script as ``(line, argv)``: continuations joined, ``$(...)`` replaced by a word,
    split at ``; && || | &``, redirections dropped, leading ``VAR=value``/``sudo``/``env``/``exec`` removed."""
    out: list[tuple[int, list[str]]] = []
    lines = script.split("\n")
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i]
        i += 1
        lex = shlex.shlex(_SUBST.sub("SUBST", line), posix=True, punctuation_chars=";&|<>")
        lex.whitespace_split = True
        cmd: list[str] = []
        tokens = list(lex)
        j = 0
        while j < len(tokens):
            tok = tokens[j]
            if tok in _SEPARATORS:
                out.append((first_line + start, cmd))
                cmd = []
            elif tok and set(tok) <= set("<>&") and ("<" in tok or ">" in tok):
                j += 1  # a redirection and its target
            else:
                cmd.append(tok)
            j += 1
        out.append((first_line + start, cmd))
    result = []
    for line_no, argv in out:
        while argv and (_ENV_ASSIGN.match(argv[0]) or argv[0] in ("sudo", "env", "exec", "nohup", "$")):
            argv = argv[1:]
        if argv:
            result.append((line_no, argv))
    return result


def markdown_blocks(text: str) -> list[tuple[int, str, str]]:
    """Fenced code blocks as ``(first line number, language, body)``."""
    blocks, lang, body, start = [], None, [], 0
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            if lang is None:
                lang, body, start = line.strip()[3:].strip() or "text", [], n + 1
            else:
                blocks.append((start, lang, "\n".join(body)))
                lang = None
        elif lang is not None:
            body.append(line)
    return blocks


def markdown_inline_code(text: str) -> list[str]:
    outside = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"`([^`\n]+)`", outside)


def dockerfile_instructions(text: str) -> list[tuple[int, str, str]]:
    """``(line, INSTRUCTION, arguments)`` with continuations joined and comment lines dropped."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        start = i + 1
        i += 1
        if not line or line.startswith("#"):
            continue
        parts = [line]
        while parts[-1].endswith("\\") and i < len(lines):
            parts[-1] = parts[-1][:-1]
            nxt = lines[i].strip()
            i += 1
            if nxt.startswith("#"):
                parts.append("\\")
                continue
            parts.append(nxt)
        joined = " ".join(p for p in parts if p != "\\")
        instr, _, rest = joined.partition(" ")
        out.append((start, instr.upper(), rest.strip()))
    return out


def _dockerfile() -> dict:
    instrs = dockerfile_instructions(DOCKERFILE.read_text())
    args: dict[str, str] = {}
    env: dict[str, str] = {}
    info: dict = {"instrs": instrs, "copies": [], "runs": []}
    for line, instr, rest in instrs:
        if instr == "ARG":
            name, _, default = rest.partition("=")
            args[name.strip()] = default.strip()
        elif instr == "FROM":
            info["from"] = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), ""),
                                  rest.split()[0])
        elif instr == "ENV":
            for item in shlex.split(rest):
                k, _, v = item.partition("=")
                env[k] = v
        elif instr in ("ENTRYPOINT", "CMD"):
            info[instr.lower()] = json.loads(rest)  # exec form only (a JSON list)
        elif instr == "COPY":
            words = [w for w in shlex.split(rest) if not w.startswith("--")]
            info["copies"].append((line, words[:-1], words[-1]))
        elif instr == "RUN":
            info["runs"].append((line, rest))
    info["env"] = env
    return info


DOCKER = _dockerfile()


def _interpolate(value, defaults_only: bool = True):
    """Compose variable interpolation with every variable at its default (``${VAR:-default}``)."""
    if isinstance(value, str):
        value = re.sub(r"\$\{(\w+)(?::?-([^}]*))?\}", lambda m: m.group(2) or "", value)
        return value.replace("$$", "$")
    if isinstance(value, list):
        return [_interpolate(v) for v in value]
    if isinstance(value, dict):
        return {k: _interpolate(v) for k, v in value.items()}
    return value


COMPOSE_RAW = COMPOSE.read_text()
COMPOSE_DOC = _interpolate(yaml.safe_load(COMPOSE_RAW))
K8S_DOCS = [d for d in yaml.safe_load_all(K8S.read_text()) if d]


def _argv(value) -> list[str] | None:
    if value is None:
        return None
    return shlex.split(value) if isinstance(value, str) else [str(v) for v in value]


def image_argv(entrypoint: list[str] | None, cmd: list[str] | None) -> list[str]:
    """What a container of the distsm image runs, Docker/Compose style (an overridden entrypoint drops CMD)."""
    if entrypoint is not None:
        return entrypoint + (cmd or [])
    return DOCKER["entrypoint"] + (cmd if cmd is not None else DOCKER.get("cmd", []))


def _is_distsm_image(image: str) -> bool:
    """``distsm:0.1.0``, ``registry.example.com/team/distsm:tag`` and ``distsm@sha256:...`` are the distsm image."""
    last = image.split("@")[0].split("/")[-1]
    return last.split(":")[0] == IMAGE_REPO


def compose_service_argv(name: str, entrypoint: list[str] | None = None, args: list[str] | None = None):
    svc = COMPOSE_DOC["services"][name]
    if not _is_distsm_image(svc.get("image", "")):
        return None
    ep = entrypoint if entrypoint is not None else _argv(svc.get("entrypoint"))
    cmd = args if args else _argv(svc.get("command"))
    if entrypoint is not None and not args:
        cmd = []
    return image_argv(ep, cmd)


_DOCKER_RUN_VALUE_OPTS = {"-e", "--env", "-v", "--volume", "-p", "--publish", "-w", "--workdir", "-u", "--user",
                          "--name", "--entrypoint", "-l", "--label", "--env-file", "--network", "--gpus",
                          "--shm-size", "--ipc", "--mount", "--cpus", "-m", "--memory", "--pull", "--platform",
                          "--hostname", "-h", "--add-host", "--cap-add", "--cap-drop", "--runtime", "--device"}
_COMPOSE_GLOBAL_VALUE_OPTS = {"-f", "--file", "-p", "--project-name", "--profile", "--env-file",
                              "--project-directory", "--ansi", "--progress", "--parallel"}


def _split_options(tokens: list[str], value_opts: set[str]) -> tuple[dict[str, str], list[str]]:
    opts: dict[str, str] = {}
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        tok = tokens[i]
        if "=" in tok:
            k, _, v = tok.partition("=")
            opts[k] = v
        elif tok in value_opts:
            opts[tok] = tokens[i + 1]
            i += 1
        else:
            opts[tok] = ""
        i += 1
    return opts, tokens[i:]


def docker_argv(argv: list[str]) -> list[str] | None:
    """The command a ``docker run IMAGE ...`` / ``docker compose run SERVICE ...`` line runs in a distsm container."""
    if argv[1:2] == ["run"]:
        opts, rest = _split_options(argv[2:], _DOCKER_RUN_VALUE_OPTS)
        if not rest or not _is_distsm_image(rest[0]):
            return None
        ep = [opts["--entrypoint"]] if "--entrypoint" in opts else None
        args = rest[1:]
        return image_argv(ep, args if args or ep else None)
    if argv[1:2] == ["compose"]:
        _, rest = _split_options(argv[2:], _COMPOSE_GLOBAL_VALUE_OPTS)
        if rest[:1] != ["run"]:
            return None
        opts, rest = _split_options(rest[1:], _DOCKER_RUN_VALUE_OPTS)
        ep = [opts["--entrypoint"]] if "--entrypoint" in opts else None
        return compose_service_argv(rest[0], ep, rest[1:])
    return None


def resolve(argv: list[str]) -> list[str] | None:
    """``argv`` as a distsm or dask command line, or None when it runs something else."""
    if argv[0] in ("distsm", "dask"):
        return argv
    if argv[:3] == ["python", "-m", "distsm"]:
        return ["distsm"] + argv[3:]
    if argv[0] == "docker":
        return docker_argv(argv)
    return None


def readme_commands() -> list[Command]:
    out = []
    for start, lang, body in markdown_blocks(README.read_text()):
        if lang not in ("bash", "sh", "shell", "console"):
            continue
        for line, argv in shell_commands(body, start):
            resolved = resolve(argv)
            if resolved:
                via = "compose" if argv[:2] == ["docker", "compose"] else ""
                out.append(Command(f"README.md:{line}", resolved, via=via))
    return out


def dockerfile_commands() -> list[Command]:
    out = [Command("Dockerfile ENTRYPOINT+CMD", DOCKER["entrypoint"] + DOCKER.get("cmd", []))]
    for line, script in DOCKER["runs"]:
        for _, argv in shell_commands(script, line):
            resolved = resolve(argv)
            if resolved:
                out.append(Command(f"Dockerfile:{line}", resolved))
    return out


def compose_commands() -> list[Command]:
    out = []
    for name in COMPOSE_DOC["services"]:
        argv = compose_service_argv(name)
        if argv is None:
            continue
        if argv[0] in ("sh", "bash") and argv[1] == "-c":
            out.extend(Command(f"compose.yaml:{name}", a) for _, a in shell_commands(argv[2]) if resolve(a))
        elif resolve(argv):
            out.append(Command(f"compose.yaml:{name}", resolve(argv)))
    return out


def k8s_containers() -> list[tuple[str, dict, dict]]:
    """``(where, container, pod spec)`` for every container in the manifest."""
    out = []
    for doc in K8S_DOCS:
        kind = doc["kind"]
        if kind == "DaskCluster":
            pods = [("scheduler", doc["spec"]["scheduler"]["spec"]), ("worker", doc["spec"]["worker"]["spec"])]
        elif kind in ("Job", "Deployment", "StatefulSet"):
            pods = [("pod", doc["spec"]["template"]["spec"])]
        elif kind == "Pod":
            pods = [("pod", doc["spec"])]
        else:
            continue
        for role, pod in pods:
            for c in pod.get("initContainers", []) + pod.get("containers", []):
                out.append((f"daskcluster.yaml:{kind}/{doc['metadata']['name']}/{role}/{c['name']}", c, pod))
    return out


def k8s_argv(container: dict) -> list[str] | None:
    if not _is_distsm_image(container.get("image", "")):
        return None
    command, args = _argv(container.get("command")), _argv(container.get("args"))
    if command is not None:
        return command + (args or [])
    return DOCKER["entrypoint"] + (args if args is not None else DOCKER.get("cmd", []))


def k8s_commands() -> list[Command]:
    out = []
    for where, c, _ in k8s_containers():
        argv = k8s_argv(c)
        if argv and resolve(argv):
            out.append(Command(where, resolve(argv), k8s=True))
    return out


ALL_COMMANDS = readme_commands() + dockerfile_commands() + compose_commands() + k8s_commands()
DISTSM_COMMANDS = [c for c in ALL_COMMANDS if c.argv[0] == "distsm"]
DASK_COMMANDS = [c for c in ALL_COMMANDS if c.argv[0] == "dask"]


# ----------------------------------------------------------------------------------------------------------------
# Parsers


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def contract_parser() -> argparse.ArgumentParser:
    """The real parser plus the contract options of ``distsm count``/``partition`` that it lacks today."""
    parser = build_parser()
    subs = _subparsers(parser)
    for sub, options in (("count", CONTRACT_COUNT_OPTIONS), ("partition", CONTRACT_PARTITION_OPTIONS)):
        known = subs[sub]._option_string_actions
        for opt, typ in options.items():
            if opt not in known:
                if typ is None:
                    subs[sub].add_argument(opt, action="store_true")
                else:
                    subs[sub].add_argument(opt, type=typ)
    return parser


def parse_distsm(argv: list[str], parser: argparse.ArgumentParser) -> argparse.Namespace | None:
    """Parse with argparse; raise AssertionError with argparse's message on error (None for --help/--version)."""
    assert argv[0] == "distsm"
    subs = _subparsers(parser)
    if len(argv) > 1 and argv[1] in subs:
        known = subs[argv[1]]._option_string_actions
        unknown = [t.split("=", 1)[0] for t in argv[2:] if t.startswith("-") and t.split("=", 1)[0] not in known]
        assert not unknown, f"`distsm {argv[1]}` has no option {', '.join(unknown)}"
    err = io.StringIO()
    try:
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            return parser.parse_args(argv[1:])
    except SystemExit as e:
        assert e.code == 0, f"argparse rejected it: {err.getvalue().strip()}"
        return None


def contract(cmd: Command) -> argparse.Namespace:
    ns = parse_distsm(cmd.argv, contract_parser())
    assert ns is not None, cmd
    return ns


def cuda_worker_spec() -> tuple[str, list[str]]:
    lines = CUDA_OPTIONS.read_text().splitlines()
    version = next(line.split()[1] for line in lines if line.startswith("version "))
    return version, [line for line in lines if line.startswith(("option ", "argument "))]


def vendored_cuda_worker() -> click.Command:
    """A click command with the parameters that dask-cuda declares for ``dask cuda worker``."""
    from distributed.preloading import validate_preload_argv

    params: list[click.Parameter] = []
    for line in cuda_worker_spec()[1]:
        fields = line.split()
        if fields[0] == "argument":
            name = fields[1]
            nargs = int(fields[2].split("=")[1])
            if name == "preload_argv":
                params.append(click.Argument([name], nargs=nargs, type=click.UNPROCESSED,
                                             callback=validate_preload_argv))
            else:
                params.append(click.Argument([name], nargs=nargs, required=fields[3] == "required=True"))
        else:
            decls, kind = fields[1:-1], fields[-1]
            if kind == "flag" and "/" in decls[0]:
                params.append(click.Option(decls, default=None))  # an --on/--off pair
            elif kind == "flag":
                params.append(click.Option(decls, is_flag=True))
            else:
                params.append(click.Option(decls, multiple=kind == "multiple", is_eager=decls == ["--preload"]))
    return click.Command("worker", params=params, context_settings={"ignore_unknown_options": True})


def dask_click_command(argv: list[str]) -> tuple[click.Command, list[str]]:
    if argv[1:2] == ["scheduler"]:
        from distributed.cli.dask_scheduler import main

        return main, argv[2:]
    if argv[1:2] == ["worker"]:
        from distributed.cli.dask_worker import main

        return main, argv[2:]
    if argv[1:3] == ["cuda", "worker"]:
        return vendored_cuda_worker(), argv[3:]
    raise AssertionError(f"not a dask command these tests know: {shlex.join(argv[:3])}")


def parse_dask(argv: list[str]) -> dict:
    cmd, args = dask_click_command(argv)
    names = {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts + p.secondary_opts}
    unknown = [t.split("=", 1)[0] for t in args if t.startswith("--") and t.split("=", 1)[0] not in names]
    assert not unknown, f"`{' '.join(argv[:3] if argv[1] == 'cuda' else argv[:2])}` has no option {unknown}"
    try:
        ctx = cmd.make_context(cmd.name, list(args))
    except click.exceptions.Exit:
        return {}
    except click.ClickException as e:
        raise AssertionError(f"click rejected it: {e.format_message()}") from None
    return ctx.params


def opt(argv: list[str], name: str, default: str | None = None) -> str | None:
    """The value of option ``name`` in ``argv`` (``--x v`` or ``--x=v``)."""
    for i, tok in enumerate(argv):
        if tok == name and i + 1 < len(argv):
            return argv[i + 1]
        if tok.startswith(name + "="):
            return tok.split("=", 1)[1]
    return default


def _port(address: str | None, default: int) -> int:
    if not address:
        return default
    return int(address.rsplit(":", 1)[1])


def _tcp(address: str) -> tuple[str, int]:
    m = re.fullmatch(r"tcp://([^:/]+):(\d+)", address)
    assert m, f"not a tcp://host:port address: {address}"
    return m.group(1), int(m.group(2))


# ----------------------------------------------------------------------------------------------------------------
# Every command line parses


def test_commands_were_found_in_every_file():
    by_file: dict[str, set[str]] = {}
    for c in ALL_COMMANDS:
        by_file.setdefault(c.where.split(":")[0].split(" ")[0], set()).add(c.name)
    want = {
        "README.md": {"dask scheduler", "dask cuda worker", "dask worker", "distsm partition", "distsm count"},
        "Dockerfile": {"distsm count", "distsm --version"},
        "compose.yaml": {"dask scheduler", "dask cuda worker", "distsm partition", "distsm count"},
        "daskcluster.yaml": {"dask scheduler", "dask cuda worker", "distsm partition", "distsm count"},
    }
    for f, names in want.items():
        assert names <= by_file.get(f, set()), f"{f}: found {sorted(by_file.get(f, set()))}"


def test_cli_has_the_contract_options():
    """The options deploy/ relies on exist in the real CLI (they fail here until the cluster options land)."""
    subs = _subparsers(build_parser())
    missing = [f"count {o}" for o in CONTRACT_COUNT_OPTIONS if o not in subs["count"]._option_string_actions]
    missing += [f"partition {o}" for o in CONTRACT_PARTITION_OPTIONS
                if o not in subs["partition"]._option_string_actions]
    assert not missing, f"distsm CLI lacks: {', '.join(missing)}"


@pytest.mark.parametrize("cmd", DISTSM_COMMANDS, ids=str)
def test_distsm_command_parses(cmd):
    parse_distsm(cmd.argv, build_parser())


@pytest.mark.parametrize("cmd", DISTSM_COMMANDS, ids=str)
def test_distsm_command_parses_with_the_contract(cmd):
    parse_distsm(cmd.argv, contract_parser())


@pytest.mark.parametrize("cmd", DASK_COMMANDS, ids=str)
def test_dask_command_parses(cmd):
    params = parse_dask(cmd.argv)
    if cmd.name in ("dask worker", "dask cuda worker"):
        if cmd.k8s:  # the Dask operator sets DASK_SCHEDULER_ADDRESS, which dask-cuda and dask worker read
            assert params.get("scheduler") in (None, "$(DASK_SCHEDULER_ADDRESS)"), cmd
        else:
            assert params.get("scheduler") or params.get("scheduler_file"), f"{cmd}: no scheduler address"


def test_readme_inline_options_exist():
    """Every ``--option`` quoted in the README's prose exists in one of the CLIs it talks about."""
    known = set(contract_parser()._option_string_actions)
    for sub in _subparsers(contract_parser()).values():
        known |= set(sub._option_string_actions)
    for argv in (["dask", "scheduler"], ["dask", "worker"], ["dask", "cuda", "worker"]):
        cmd, _ = dask_click_command(argv)
        known |= {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts + p.secondary_opts}
    bad = []
    for span in markdown_inline_code(README.read_text()):
        words = span.split()
        if words[0] in ("docker", "kubectl", "pip", "python", "curl", "#SBATCH", "#PBS"):
            continue
        options = [w.split("=")[0] for w in words]
        bad += [o for o in options if re.fullmatch(r"--[a-z][a-z0-9-]*", o) and o not in known]
    assert not bad, f"README mentions options no CLI has: {bad}"


# ----------------------------------------------------------------------------------------------------------------
# The vendored dask-cuda option list


def test_vendored_dask_cuda_options_name_their_source():
    text = CUDA_OPTIONS.read_text()
    version, spec = cuda_worker_spec()
    assert version == DASK_CUDA_VERSION
    assert f"dask-cuda {DASK_CUDA_VERSION}" in text and "dask_cuda/cli.py" in text and "sha256" in text
    assert re.search(rf"dask_cuda-{re.escape(DASK_CUDA_VERSION)}-.*\.whl", text)
    options = {d for line in spec if line.startswith("option ") for d in line.split()[1:-1]}
    for needed in ("--scheduler-file", "--name", "--nthreads", "--memory-limit", "--device-memory-limit",
                   "--local-directory", "--death-timeout", "--rmm-pool-size/--rmm-maximum-pool-size"):
        assert all(part in " ".join(options) for part in needed.split("/")), needed
    assert "argument scheduler nargs=1 required=False" in spec


def test_vendored_dask_cuda_version_matches_the_gpu_extra():
    from packaging.requirements import Requirement

    reqs = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["gpu"]]
    dask_cuda = next(r for r in reqs if r.name == "dask-cuda")
    assert "cu13" in dask_cuda.extras
    assert dask_cuda.specifier.contains(cuda_worker_spec()[0]), dask_cuda


@pytest.mark.gpu
def test_vendored_dask_cuda_options_match_the_installed_package():
    """On a GPU box with the gpu extra, the vendored list is the installed worker command's."""
    from dask_cuda import cli

    real = {o for p in cli.worker.params if isinstance(p, click.Option) for o in p.opts + p.secondary_opts}
    vendored = {o for p in vendored_cuda_worker().params if isinstance(p, click.Option)
                for o in p.opts + p.secondary_opts}
    import dask_cuda

    if dask_cuda.__version__ == DASK_CUDA_VERSION:
        assert real == vendored
    else:
        assert {o for o in vendored if any(o in str(c) for c in DASK_COMMANDS)} <= real


# ----------------------------------------------------------------------------------------------------------------
# Dockerfile


def test_dockerfile_base_is_a_cuda13_runtime_image():
    assert re.fullmatch(r"nvidia/cuda:13\.\d+\.\d+-runtime-ubuntu\d\d\.\d\d", DOCKER["from"]), DOCKER["from"]


def test_dockerfile_installs_python312_and_the_gpu_extra():
    from packaging.specifiers import SpecifierSet

    runs = " ".join(r for _, r in DOCKER["runs"])
    assert re.search(r"apt-get install[^&;]*\bpython3\.12\b", runs)
    assert "python3.12 -m venv" in runs
    assert SpecifierSet(PYPROJECT["project"]["requires-python"]).contains("3.12")
    assert re.search(r"pip install [^&;]*[\"']?\.\[gpu\][\"']?", runs), "no `pip install .[gpu]`"
    assert DOCKER["env"].get("PATH", "").startswith("/opt/venv/bin"), "the venv is not first on PATH"


def test_dockerfile_entrypoint_is_distsm():
    assert DOCKER["entrypoint"] == ["distsm"]
    assert PYPROJECT["project"]["scripts"]["distsm"] == "distsm.cli:main"


def test_dockerfile_copies_every_package_and_nothing_ignored():
    sources = {s for _, srcs, _ in DOCKER["copies"] for s in srcs}
    for s in sources:
        assert (ROOT / s).exists(), f"COPY {s}: not in the build context (the repository root)"
    package_dirs = set(PYPROJECT["tool"]["setuptools"]["package-dir"].values())
    assert package_dirs <= sources, f"packages not copied: {package_dirs - sources}"
    assert {"pyproject.toml", PYPROJECT["project"]["readme"]} <= sources
    ignored = [p.strip() for p in DOCKERIGNORE.read_text().splitlines() if p.strip() and not p.startswith("#")]
    for s in sources:
        parts = PurePosixPath(s).parts
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        hit = [p for p in ignored for pre in prefixes if fnmatch(pre, p.removeprefix("**/"))]
        assert not hit, f"COPY {s} is excluded by {DOCKERIGNORE.name}: {hit}"


def test_dockerfile_installs_the_dask_config_and_keeps_nvls_off():
    assert any(srcs == ["deploy/dask-distsm.yaml"] and dest.startswith("/etc/dask/")
               for _, srcs, dest in DOCKER["copies"])
    assert DOCKER["env"].get("NCCL_NVLS_ENABLE") == "0"


def test_example_paths_used_by_compose_and_k8s_are_created_by_the_image():
    text = DOCKERFILE.read_text()
    paths = {t for c in compose_commands() + k8s_commands() for t in c.argv if t.startswith("/opt/")}
    assert paths
    for p in paths:
        pp = PurePosixPath(p)
        assert p in text or (str(pp.parent) in text and pp.name in text), f"{p} is not made by the Dockerfile"


# ----------------------------------------------------------------------------------------------------------------
# Cross-file consistency: shared partition stores


def _stores(commands: list[Command]) -> dict[str, argparse.Namespace]:
    """``{--out: namespace}`` of the ``distsm partition`` commands."""
    return {contract(c).out: contract(c) for c in commands if c.name == "distsm partition"}


def _partition_pairs(commands: list[Command]) -> list[tuple[Command, argparse.Namespace, argparse.Namespace]]:
    """``(count command, its namespace, the partition namespace that wrote its --partition-dir)``; a README line
    run through ``docker compose run`` may use the store that the compose file's partition service writes."""
    own, composed = _stores(commands), _stores(compose_commands())
    out = []
    for c in commands:
        if c.name == "distsm count":
            ns = contract(c)
            if ns.partition_dir is not None:
                parts = {**composed, **own} if c.via == "compose" else own
                assert ns.partition_dir in parts, f"{c}: no `distsm partition --out {ns.partition_dir}` in the file"
                out.append((c, ns, parts[ns.partition_dir]))
    return out


@pytest.mark.parametrize("source", ["README.md", "compose.yaml", "daskcluster.yaml"])
def test_counts_use_the_store_their_partition_step_wrote(source):
    commands = [c for c in ALL_COMMANDS if c.where.startswith(source)]
    pairs = _partition_pairs(commands)
    assert pairs, f"{source}: no `distsm count --partition-dir`"
    for c, count_ns, part_ns in pairs:
        assert count_ns.data == part_ns.data, c
        assert count_ns.partitions == part_ns.k, f"{c}: --partitions {count_ns.partitions} but -k {part_ns.k}"
        assert count_ns.partition_method == part_ns.method, c
    for c in commands:
        if c.name == "distsm count":
            ns = contract(c)
            if ns.scheduler or ns.scheduler_file:
                assert ns.partition_dir and ns.partitions, f"{c}: a remote cluster needs --partitions and a shared " \
                                                           "--partition-dir"


def test_readme_recipe():
    text = README.read_text()
    for needed in ("NCCL_NVLS_ENABLE=0", "8787", "/metrics", "/distsm/status", "--scheduler-file"):
        assert needed in text, needed
    cmds = [c for c in readme_commands()]
    files = {opt(c.argv, "--scheduler-file") for c in cmds} - {None}
    assert len(files) == 1, f"the README uses several scheduler files: {files}"
    (sched_file,) = files
    assert sched_file.startswith("/shared/")
    by = {}
    for c in cmds:
        by.setdefault(c.name, []).append(c)
    assert any(opt(c.argv, "--scheduler-file") for c in by["dask scheduler"])
    assert any(opt(c.argv, "--scheduler-file") for c in by["dask cuda worker"])
    cpu = [c for c in by["dask worker"] if opt(c.argv, "--nworkers") and opt(c.argv, "--nthreads") == "1"]
    assert cpu, "no CPU-only `dask worker --nworkers N --nthreads 1`"
    remote = [contract(c) for c in by["distsm count"] if opt(c.argv, "--scheduler-file")]
    assert remote and all(ns.partition_dir.startswith("/shared/") for ns in remote)
    assert any(ns.backend == "numpy" for ns in remote), "the CPU variant should pick the NumPy backend"


# ----------------------------------------------------------------------------------------------------------------
# compose.yaml


def _compose_services() -> dict[str, dict]:
    return COMPOSE_DOC["services"]


def _schedulers(argvs: dict[str, list[str]]) -> dict[str, dict]:
    out = {}
    for name, argv in argvs.items():
        if argv and argv[:2] == ["dask", "scheduler"]:
            out[name] = {"port": int(opt(argv, "--port", "8786")),
                         "dashboard": _port(opt(argv, "--dashboard-address", ":8787"), 8787)}
    return out


def _mounts(svc: dict) -> dict[str, str]:
    """``{target: source}`` of a compose service's volumes (short syntax)."""
    out = {}
    for v in svc.get("volumes", []):
        if isinstance(v, str):
            src, tgt = v.split(":")[:2]
        else:
            src, tgt = v.get("source", ""), v["target"]
        out[tgt] = src
    return out


def test_compose_every_variable_has_a_default():
    for m in re.finditer(r"\$\{(\w+)([^}]*)\}", COMPOSE_RAW):
        assert m.group(2).startswith((":-", "-")), f"${{{m.group(1)}}} has no default"


def test_compose_builds_the_image_from_this_dockerfile():
    for name, svc in _compose_services().items():
        assert _is_distsm_image(svc["image"]), name
        build = svc["build"]
        assert (DEPLOY / build["context"]).resolve() == ROOT
        assert ((DEPLOY / build["context"]) / build["dockerfile"]).resolve() == DOCKERFILE


def test_compose_services_reference_each_other():
    services = _compose_services()
    argvs = {name: compose_service_argv(name) for name in services}
    worker_services = [n for n, a in argvs.items()
                       if a[:3] == ["dask", "cuda", "worker"] or a[:2] == ["dask", "worker"]]
    schedulers = _schedulers(argvs)
    assert len(schedulers) == 1
    (sname, sched), = schedulers.items()
    ports = {str(p) for p in services[sname].get("ports", [])}
    # published on the host's loopback only (secure by default)
    assert {f"127.0.0.1:{sched[k]}:{sched[k]}" for k in ("port", "dashboard")} == ports
    declared = set(COMPOSE_DOC.get("volumes") or {})
    assert worker_services
    for name, svc in services.items():
        for dep in svc.get("depends_on", {}):
            assert dep in services, f"{name} depends on unknown service {dep}"
        for src in _mounts(svc).values():
            if not src.startswith((".", "/", "~")):
                assert src in declared, f"{name}: volume {src} is not declared under top-level volumes:"
        argv = argvs[name]
        if name in worker_services:
            params = parse_dask(argv)
            assert _tcp(params["scheduler"]) == (sname, sched["port"]), f"{name} does not connect to {sname}"
            assert sname in svc.get("depends_on", {})
        if argv[:2] == ["distsm", "count"]:
            ns = contract(Command(name, argv))
            assert _tcp(ns.scheduler) == (sname, sched["port"]), f"{name} does not connect to {sname}"
            assert sname in svc.get("depends_on", {})
            for w in worker_services:
                assert w in svc.get("depends_on", {}), f"{name} should wait for {w}"
        # healthchecks that call a scheduler's HTTP port use its dashboard port
        for url_host, url_port in re.findall(r"http://([\w.-]+):(\d+)/", json.dumps(svc.get("healthcheck", {}))):
            target = name if url_host == "localhost" else url_host
            assert target in schedulers and int(url_port) == schedulers[target]["dashboard"], (name, url_host)


def test_compose_gpu_worker_reserves_nvidia_gpus_and_keeps_nvls_off():
    services = _compose_services()
    gpu_workers = [n for n in services if compose_service_argv(n)[:3] == ["dask", "cuda", "worker"]]
    assert gpu_workers
    for name in gpu_workers:
        devices = services[name]["deploy"]["resources"]["reservations"]["devices"]
        assert any(d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", []) for d in devices), name
        assert str(services[name]["environment"]["NCCL_NVLS_ENABLE"]) == "0", name


def test_compose_partition_store_is_on_a_volume_the_workers_mount():
    services = _compose_services()
    argvs = {n: compose_service_argv(n) for n in services}
    gpu_workers = [n for n in services if argvs[n][:3] == ["dask", "cuda", "worker"]]
    for name, argv in argvs.items():
        if argv[:2] != ["distsm", "count"]:
            continue
        ns = contract(Command(name, argv))
        mounts = _mounts(services[name])
        target = next((t for t in mounts if ns.partition_dir.startswith(t.rstrip("/") + "/")), None)
        assert target, f"{name}: --partition-dir {ns.partition_dir} is not on a mounted volume"
        for w in gpu_workers:
            assert _mounts(services[w]).get(target) == mounts[target], f"{w} lacks {mounts[target]} at {target}"
        writers = [n for n, a in argvs.items() if a[:2] == ["distsm", "partition"]
                   and contract(Command(n, a)).out == ns.partition_dir]
        for w in writers:
            assert _mounts(services[w]).get(target) == mounts[target]
            assert services[name]["depends_on"][w]["condition"] == "service_completed_successfully"


# ----------------------------------------------------------------------------------------------------------------
# kubernetes/daskcluster.yaml


def _k8s(kind: str) -> list[dict]:
    return [d for d in K8S_DOCS if d["kind"] == kind]


def _claims(pod: dict) -> dict[str, str]:
    """``{volume name: PVC claim}`` of a pod spec."""
    return {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod.get("volumes", [])
            if "persistentVolumeClaim" in v}


def _mounted_claims(container: dict, pod: dict) -> dict[str, str]:
    """``{mount path: PVC claim}`` of a container."""
    claims = _claims(pod)
    return {m["mountPath"]: claims[m["name"]] for m in container.get("volumeMounts", []) if m["name"] in claims}


def test_k8s_daskcluster_kind_and_scheduler():
    (cluster,) = _k8s("DaskCluster")
    assert cluster["apiVersion"] == "kubernetes.dask.org/v1"
    name = cluster["metadata"]["name"]
    (sched,) = cluster["spec"]["scheduler"]["spec"]["containers"]
    argv = k8s_argv(sched)
    assert argv[:2] == ["dask", "scheduler"]
    ports = {p["name"]: p["containerPort"] for p in sched["ports"]}
    assert ports["tcp-comm"] == int(opt(argv, "--port", "8786"))
    assert ports["http-dashboard"] == _port(opt(argv, "--dashboard-address", ":8787"), 8787)
    service = cluster["spec"]["scheduler"]["service"]
    assert service["selector"] == {"dask.org/cluster-name": name, "dask.org/component": "scheduler"}
    svc_ports = {p["name"]: p for p in service["ports"]}
    assert svc_ports["tcp-comm"]["targetPort"] == "tcp-comm" and svc_ports["http-dashboard"]["port"] == 8787
    for probe in ("readinessProbe", "livenessProbe"):
        assert sched[probe]["httpGet"] == {"port": "http-dashboard", "path": "/health"}


def test_k8s_workers_are_dask_cuda_workers_with_one_gpu():
    (cluster,) = _k8s("DaskCluster")
    pod = cluster["spec"]["worker"]["spec"]
    assert cluster["spec"]["worker"]["replicas"] >= 1
    for c in pod["containers"]:
        argv = k8s_argv(c)
        assert argv[:3] == ["dask", "cuda", "worker"]
        assert int(c["resources"]["limits"]["nvidia.com/gpu"]) == 1
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        assert env.get("NCCL_NVLS_ENABLE") == "0"
        assert opt(argv, "--name") == "$(DASK_WORKER_NAME)"


def test_k8s_shared_volume_and_job():
    (cluster,) = _k8s("DaskCluster")
    pvcs = {d["metadata"]["name"]: d for d in _k8s("PersistentVolumeClaim")}
    for pvc in pvcs.values():
        assert "ReadWriteMany" in pvc["spec"]["accessModes"]
    wpod = cluster["spec"]["worker"]["spec"]
    (worker,) = wpod["containers"]
    worker_mounts = _mounted_claims(worker, wpod)
    assert worker_mounts and set(worker_mounts.values()) <= set(pvcs)
    sched_port = int(opt(k8s_argv(cluster["spec"]["scheduler"]["spec"]["containers"][0]), "--port", "8786"))
    service = f"{cluster['metadata']['name']}-scheduler"
    (job,) = _k8s("Job")
    jpod = job["spec"]["template"]["spec"]
    counts = 0
    for c in jpod.get("initContainers", []) + jpod["containers"]:
        argv = k8s_argv(c)
        if argv[:2] == ["distsm", "count"]:
            counts += 1
            ns = contract(Command(c["name"], argv))
            host, port = _tcp(ns.scheduler)
            assert host.split(".")[0] == service and port == sched_port, ns.scheduler
            mounts = _mounted_claims(c, jpod)
            target = next((t for t in mounts if ns.partition_dir.startswith(t.rstrip("/") + "/")), None)
            assert target and worker_mounts.get(target) == mounts[target], "workers cannot read the partition store"
        if argv[:2] == ["distsm", "partition"]:
            ns = contract(Command(c["name"], argv))
            assert any(ns.out.startswith(t.rstrip("/") + "/") for t in _mounted_claims(c, jpod))
        for addr, n in re.findall(r"Client\('([^']+)'.*?wait_for_workers\((\d+)", " ".join(argv)):
            assert _tcp(addr) == (service, sched_port)
            assert int(n) == cluster["spec"]["worker"]["replicas"], "wait for every worker replica"
    assert counts == 1


# ----------------------------------------------------------------------------------------------------------------
# The scheduler config that serves /distsm/status


def _distributed_default_routes() -> list[str]:
    import distributed

    defaults = yaml.safe_load((Path(distributed.__file__).parent / "distributed.yaml").read_text())
    return defaults["distributed"]["scheduler"]["http"]["routes"]


def test_dask_config_adds_the_distsm_route_to_the_defaults():
    routes = yaml.safe_load(DASK_CONFIG.read_text())["distributed"]["scheduler"]["http"]["routes"]
    assert routes == _distributed_default_routes() + ["distsm.cluster.http"]
    from importlib import import_module

    assert any(r[0] == "/distsm/status" for r in import_module("distsm.cluster.http").routes)


def test_scheduler_with_the_deploy_config_serves_status_metrics_and_health():
    import dask
    from distributed import Scheduler
    from tornado.httpclient import AsyncHTTPClient

    routes = yaml.safe_load(DASK_CONFIG.read_text())["distributed"]["scheduler"]["http"]["routes"]

    async def fetch_all() -> dict[str, tuple[int, bytes]]:
        with dask.config.set({"distributed.scheduler.http.routes": routes}):
            async with Scheduler(host="127.0.0.1", port=0, dashboard_address="127.0.0.1:0", dashboard=False) as s:
                port = s.http_server.port
                client = AsyncHTTPClient()
                out = {}
                for path in ("/distsm/status", "/metrics", "/health", "/json/counts.json"):
                    r = await client.fetch(f"http://127.0.0.1:{port}{path}", raise_error=False)
                    out[path] = (r.code, r.body)
                return out

    res = asyncio.run(fetch_all())
    assert all(code == 200 for code, _ in res.values()), {k: v[0] for k, v in res.items()}
    status = json.loads(res["/distsm/status"][1])
    assert "totals" in status and "batches" in status
    assert res["/health"][1] == b"ok"
    assert json.loads(res["/json/counts.json"][1])["workers"] == 0


def test_readme_metric_names_are_the_monitors():
    import inspect

    from distsm.cluster import monitor

    source = inspect.getsource(monitor)
    for name in re.findall(r"`(distsm_\w+)_total`", README.read_text()):
        assert f'"{name}"' in source, f"README names {name}_total, which distsm.cluster.monitor does not export"


# ----------------------------------------------------------------------------------------------------------------
# The CPU-only recipe, end to end: the README's own commands on local processes


def _localize(argv: list[str], shared: Path, **values: str) -> list[str]:
    out = []
    for i, tok in enumerate(argv):
        if tok.startswith("/shared/"):
            tok = str(shared / tok.removeprefix("/shared/"))
        if i > 0 and argv[i - 1] in values:
            tok = values[argv[i - 1]]
        out.append(tok)
    return out


def _shared_example(tmp_path: Path, count: Command) -> Path:
    """A temporary stand-in for /shared/ holding the bundled example where ``count`` reads its graph and queries,
    and empty ``dask/`` and ``parts/`` folders."""
    import gzip

    from distsm import example

    shared = tmp_path / "shared"
    data_ns = contract(count)
    data = shared / data_ns.data.removeprefix("/shared/")
    data.parent.mkdir(parents=True)
    data.write_bytes(gzip.decompress(example.data_path().read_bytes()))
    queries = shared / data_ns.queries[0].removeprefix("/shared/")
    queries.mkdir(parents=True)
    for q in example.query_paths():
        shutil.copy(q, queries / q.name)
    (shared / "dask").mkdir()
    (shared / "parts").mkdir()
    return shared


@pytest.mark.slow
def test_cpu_recipe_from_the_readme_runs(tmp_path):
    """``dask scheduler`` + ``dask worker --nworkers N --nthreads 1`` + ``distsm partition`` + ``distsm count
    --scheduler-file`` exactly as the README writes them (paths under /shared/ moved to a temporary directory,
    2 workers and 2 parts), on the bundled example, with the known counts."""
    from distsm import example

    dask_exe = Path(sys.executable).with_name("dask")
    if not dask_exe.exists() and not shutil.which("dask"):
        pytest.skip("no `dask` executable next to this Python")
    dask_exe = str(dask_exe) if dask_exe.exists() else shutil.which("dask")
    cmds = readme_commands()
    sched = next(c for c in cmds if c.name == "dask scheduler" and "--port" not in c.argv)
    worker = next(c for c in cmds if c.name == "dask worker")
    count = next(c for c in cmds if c.name == "distsm count" and "--backend" in c.argv)
    partition = next(c for c in cmds if c.name == "distsm partition"
                     and opt(c.argv, "--out") == opt(count.argv, "--partition-dir"))
    shared = _shared_example(tmp_path, count)

    procs: list[subprocess.Popen] = []
    logs = tmp_path / "logs"
    logs.mkdir()
    try:
        s_argv = _localize(sched.argv, shared) + ["--host", "127.0.0.1", "--port", "0", "--dashboard-address",
                                                  "127.0.0.1:0"]
        w_argv = _localize(worker.argv, shared, **{"--nworkers": "2"}) + ["--host", "127.0.0.1"]
        for argv, log in ((s_argv, "scheduler"), (w_argv, "worker")):
            procs.append(subprocess.Popen([dask_exe] + argv[1:], stdout=open(logs / log, "w"), stderr=subprocess.STDOUT,
                                          cwd=tmp_path))
            if log == "scheduler":
                sched_file = Path(opt(s_argv, "--scheduler-file"))
                deadline = time.time() + 60
                while not sched_file.exists() and time.time() < deadline:
                    time.sleep(0.2)
                assert sched_file.exists(), (logs / "scheduler").read_text()
        p_argv = _localize(partition.argv, shared, **{"-k": "2"})
        run = subprocess.run([sys.executable, "-m", "distsm"] + p_argv[1:], capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        from distributed import Client

        with Client(scheduler_file=str(sched_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        c_argv = _localize(count.argv, shared, **{"--partitions": "2"}) + ["--json"]
        run = subprocess.run([sys.executable, "-m", "distsm"] + c_argv[1:], capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, f"{shlex.join(c_argv)}\n{run.stderr}"
        got = {r["query"]: r["count"] for r in map(json.loads, run.stdout.splitlines())}
        assert got == example.expected_counts()
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


# ----------------------------------------------------------------------------------------------------------------
# The batch-system recipe (dask-jobqueue)


def _jobqueue_recipe() -> tuple[Command, Command, Command]:
    """The README's ``distsm jobqueue`` command and the partition and count commands after it."""
    cmds = readme_commands()
    at = next(i for i, c in enumerate(cmds) if c.name == "distsm jobqueue")
    return (cmds[at], next(c for c in cmds[at:] if c.name == "distsm partition"),
            next(c for c in cmds[at:] if c.name == "distsm count"))


def _job_script(argv: list[str]) -> str:
    from distsm.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv[1:] + ["--print-script"]) == 0
    return out.getvalue()


def test_jobqueue_scripts_book_the_gpus_and_run_one_dask_cuda_worker_per_gpu():
    start, _, _ = _jobqueue_recipe()
    assert start.argv[2] == "slurm"
    gpus, cores, queue, walltime = (opt(start.argv, o) for o in ("--gpus", "--cores", "--queue", "--walltime"))
    for system, directives in (
            ("slurm", [f"#SBATCH --gres=gpu:{gpus}", f"#SBATCH --cpus-per-task={cores}", f"#SBATCH -p {queue}",
                       f"#SBATCH -t {walltime}"]),
            ("pbs", [f"#PBS -l select=1:ncpus={cores}:mem=256gb:ngpus={gpus}", f"#PBS -q {queue}",
                     f"#PBS -l walltime={walltime}"])):
        script = _job_script([*start.argv[:2], system, *start.argv[3:]])
        lines = script.splitlines()
        for d in directives:
            assert d in lines, f"{system}: no {d!r} in\n{script}"
        assert "export NCCL_NVLS_ENABLE=0" in lines and opt(start.argv, "--prologue") in lines
        [worker] = [shlex.split(line) for line in lines if " -m dask_cuda.cli " in line]
        assert worker[0] == sys.executable and worker[1:3] == ["-m", "dask_cuda.cli"]
        # The worker's command line parses as `dask cuda worker` of the vendored dask-cuda declares it.
        ctx = vendored_cuda_worker().make_context("worker", worker[3:])
        assert ctx.params["nthreads"] == "1" and ctx.params["interface"] == opt(start.argv, "--interface")
        assert ctx.params["memory_limit"] == "64.00GiB"  # 256GiB over 4 workers
        assert ctx.params["name"]


def test_jobqueue_cpu_jobs_run_single_threaded_dask_workers():
    from distsm.cluster import jobqueue

    script = jobqueue.job_script(jobqueue.JobSpec("slurm", "/s.json", workers=8, cores=8, memory="32GiB",
                                                  host="10.0.0.1"))
    [worker] = [shlex.split(line) for line in script.splitlines() if " -m distributed.cli.dask_worker " in line]
    assert opt(worker, "--nworkers") == "8" and opt(worker, "--nthreads") == "1"
    assert "#SBATCH --gres" not in script and "NCCL" not in script


def test_jobqueue_refuses_a_batch_scheduler_nobody_can_reach(capsys):
    from distsm.cli import main
    from distsm.cluster import jobqueue

    with pytest.raises(SystemExit) as stop:
        main(["jobqueue", "slurm", "--jobs", "2", "--gpus", "4", "--scheduler-file", "/tmp/s.json"])
    assert stop.value.code == 2 and "interface" in capsys.readouterr().err
    with pytest.raises(ValueError, match="system must be one of"):
        jobqueue.JobSpec("lsf", "/tmp/s.json", host="h")
    with pytest.raises(ValueError, match="gpus must be >= 0"):
        jobqueue.JobSpec("local", "/tmp/s.json", gpus=-1)


@pytest.mark.slow
def test_jobqueue_recipe_from_the_readme_runs(tmp_path):
    """The README's three batch commands as written, through dask-jobqueue's local test cluster: ``slurm`` becomes
    ``local`` and each job one CPU worker in place of four GPUs (no GPU here; the GPU job script is the previous
    tests'), two jobs and two parts, paths under /shared/ moved to a temporary directory; the bundled example's
    known counts; then SIGTERM, as a batch system ends the scheduler's job, cancels the jobs."""
    import signal

    from distsm import example

    start, partition, count = _jobqueue_recipe()
    shared = _shared_example(tmp_path, count)
    argv = _localize(start.argv, shared, **{"--jobs": "2", "--gpus": "0", "--memory": "2GiB"})
    argv[2] = "local"
    drop = {"--interface", "--queue", "--walltime", "--prologue"}  # a batch system's, not a local process's
    argv = [t for i, t in enumerate(argv) if t not in drop and argv[i - 1] not in drop]
    log = tmp_path / "jobqueue.log"
    proc = subprocess.Popen([sys.executable, "-m", "distsm", *argv[1:]], stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"), cwd=tmp_path)
    try:
        deadline = time.time() + 120
        while "ready" not in log.read_text() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.3)
        assert "ready" in log.read_text(), log.read_text()
        assert "workers 2/2" in log.read_text()
        p_argv = _localize(partition.argv, shared, **{"-k": "2"})
        run = subprocess.run([sys.executable, "-m", "distsm", *p_argv[1:]], capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        c_argv = _localize(count.argv, shared, **{"--partitions": "2"}) + ["--json"]
        run = subprocess.run([sys.executable, "-m", "distsm", *c_argv[1:]], capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, f"{shlex.join(c_argv)}\n{run.stderr}"
        got = {r["query"]: r["count"] for r in map(json.loads, run.stdout.splitlines())}
        assert got == example.expected_counts()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert "cancelling the jobs" in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
