"""``distsm warmup``: the counts that fill CuPy's kernel cache are right, and after them a count compiles nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import distsm
from distsm import example
from distsm.cli import main
from distsm.kernels import counting, get_backend
from distsm.kernels.query_plan import MatchOptions
from distsm.compile_ahead import _connected_prefix, warmup
from distsm.warm import dense_graph, query_shapes, sliced_counts, warm_process


def test_warmup_counts_equal_the_published_and_networkx_answers(capsys):
    assert main(["warmup", "--backend", "numpy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = example.expected_counts()
    for path in example.query_paths()[:2]:
        q = distsm.read_graph(path)
        assert report["counts"][f"{path.stem}[:{q.n}]"] == expected[path.stem]
        assert report["counts"][f"{path.stem} small budget"] == expected[path.stem]
        assert report["counts"][f"{path.stem} partitioned host"] == expected[path.stem]
    # The dense graph's unlabelled shapes match its label-0 vertices only (labels are matched by value):
    # networkx counts those edges and triangles (each found 2 and 6 times, once per automorphism).
    data = dense_graph(directed=False).to_networkx()
    zero = data.subgraph([v for v, label in data.nodes(data="label") if label == 0])
    assert all(query_shapes(directed=False)[name].num_effective_labels == 1 for name in ("edge", "triangle"))
    assert report["counts"]["dense edge"] == 2 * zero.number_of_edges()
    assert report["counts"]["dense triangle"] == 6 * sum(nx.triangles(zero).values()) // 3
    assert report["counts"]["dense triangle unique"] == sum(nx.triangles(zero).values()) // 3


def test_connected_prefix_is_connected_and_keeps_labels():
    q = distsm.read_graph(example.query_paths()[0])
    for size in (1, 3, 8, q.n):
        p = _connected_prefix(q, size)
        assert p.n == size and p.is_connected()
        assert sorted(p.vertex_label_counts().items()) <= sorted(q.vertex_label_counts().items()) or size < q.n
    assert _connected_prefix(q, q.n).m == q.m


@pytest.mark.parametrize("name", ["path4", "triangle"])
def test_the_warmups_slices_add_up_to_the_general_joins_count(name):
    """The warm-up's sliced counts (a cluster's slices restricting the plan's first two core vertices) on NumPy:
    the plan's count whole and its slices' sum both equal the general join's."""
    data, query = dense_graph(directed=False), query_shapes(directed=False)[name]
    want = counting.count(get_backend("numpy"), data, counting.Target(query, MatchOptions()), budget=1 << 28,
                          path="general")
    assert want > 0 and sliced_counts("numpy", data, query) == (want, want)


def test_warm_process_runs_the_sliced_paths_and_checks_them(monkeypatch):
    """A process warm-up counts its plans whole and as slices and raises when the two differ."""
    assert warm_process("numpy") > 0
    monkeypatch.setattr("distsm.warm.sliced_counts", lambda backend, data, query: (2, 1))
    with pytest.raises(AssertionError, match="whole 2, slices 1"):
        warm_process("numpy")


def test_the_sliced_warmup_counts_under_the_options_it_names(monkeypatch):
    """The placement of the warm-up's sliced counts reads PLANNED_ON_DEVICE (a placement takes the engine options
    in force when it is made: one made before the options block would plan on the host as usual)."""
    from distsm.kernels import counting

    seen = []
    made = counting.Count.__init__

    def record(self, placement, *args, **kwargs):
        seen.append(placement.options)
        made(self, placement, *args, **kwargs)

    monkeypatch.setattr(counting.Count, "__init__", record)
    sliced_counts("numpy", dense_graph(directed=False), query_shapes(directed=False)["path4"])
    assert seen and all(o.host_work == 0.0 and o.trial_entries == 0 and o.device_refine == 0 for o in seen)


def test_warmup_without_a_gpu_says_so():
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed")
    except ImportError:
        pass
    with pytest.raises(distsm.BackendUnavailableError):
        warmup("cupy")


@pytest.mark.gpu
def test_after_warmup_a_fresh_process_compiles_nothing(tmp_path):
    """A warm-up into an empty kernel cache compiles kernels; a fresh process's counts (every semantics, the
    bundled heavy queries) then find every kernel they launch in the cache."""
    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "distsm", "warmup", "--json"], env=env, capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout)["compiled"] > 0
    before = sum(1 for p in (tmp_path / "cache").rglob("*") if p.is_file())
    script = ("import distsm; from distsm import example\n"
              "d = distsm.read_graph(example.data_path())\n"
              "for q in example.query_paths():\n"
              "    for kw in ({}, {'unique': True}, {'induced': True}, {'homomorphism': True}):\n"
              "        assert distsm.count(d, q, backend='cupy', **kw) >= 0\n")
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    assert sum(1 for p in (tmp_path / "cache").rglob("*") if p.is_file()) == before


def _kernel_files_written(tmp_path: Path, script: str) -> list[str]:
    """The files CuPy writes to an empty kernel cache while a fresh process runs ``script`` in the repository."""
    root = Path(__file__).resolve().parent.parent
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, cwd=root)
    return sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file())


@pytest.mark.gpu
def test_a_fresh_process_counts_labelled_queries_without_compiling(tmp_path):
    """No warm-up and an empty kernel cache: the labelled count path (index, candidate filter, joins, split runs,
    the trailing count) launches only kernels compiled ahead, so CuPy writes nothing to its cache."""
    script = ("import distsm, glob; from distsm import example\n"
              "d = distsm.read_graph(example.data_path())\n"
              "for q in example.query_paths():\n"
              "    assert distsm.count(d, q, backend='cupy') == distsm.count(d, q, backend='numpy')\n"
              "h = distsm.read_graph('tests/data/hprd/data_graph/HPRD.graph')\n"
              "for p in sorted(glob.glob('tests/data/hprd/query_graph/*.graph'))[::25]:\n"
              "    q = distsm.read_graph(p)\n"
              "    assert distsm.count(h, q, backend='cupy') == distsm.count(h, q, backend='numpy')\n")
    assert _kernel_files_written(tmp_path, script) == []


@pytest.mark.gpu
def test_a_fresh_process_counts_motifs_without_compiling(tmp_path):
    """The motif path (ranked graph, depth-first search, the wedge and path shortcuts) on unlabelled and labelled
    graphs launches only kernels compiled ahead; counts are checked against the NumPy backend."""
    script = ("import distsm\n"
              "from benchmarks.generators import rmat_graph\n"
              "from benchmarks.motifs import PATTERNS, pattern_graph\n"
              "for labels in (1, 3):\n"
              "    g = rmat_graph(scale=10, edges=6000, vertex_labels=labels, edge_labels=1, seed=3)\n"
              "    for name in PATTERNS:\n"
              "        q = pattern_graph(name)\n"
              "        assert distsm.count(g, q, backend='cupy') == distsm.count(g, q, backend='numpy'), name\n")
    assert _kernel_files_written(tmp_path, script) == []
