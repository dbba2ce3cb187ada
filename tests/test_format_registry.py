"""The format registry: a format registered by one decorated function is read, written and detected through the
package's entry points, and the built-in detectors never claim the same line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from distsm.formats import FORMATS, detect_format, read_graph, read_graphs, registry, write_graph, write_graphs
from distsm.graph import Graph


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the registry that the test may extend without leaking its format into other tests."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def _read_pairs(path: Path | str, *, directed: bool, dedupe: bool) -> Graph:
    # "PAIRS" then "u-v" tokens: a format no built-in detector accepts.
    tokens = Path(path).read_text().split()[1:]
    edges = [tuple(int(x) for x in t.split("-")) for t in tokens]
    return Graph.from_edges(edges, directed=directed)


def _write_pairs(graph: Graph, path: Path | str) -> None:
    Path(path).write_text("PAIRS " + " ".join(f"{u}-{v}" for u, v in zip(graph.edge_src, graph.edge_dst)) + "\n")


def test_registered_format_is_detected_read_and_written(tmp_path: Path, scratch_registry: None) -> None:
    @registry.register_format("pairs", title="pair list", first_line="'PAIRS u-v ...'", directed=True,
                              codec=registry.Codec(_read_pairs, _write_pairs))
    def detect_pairs(fields: list[bytes]) -> bool:
        return fields[0] == b"PAIRS"

    g = Graph.from_edges([(0, 1), (1, 2), (2, 0)], directed=True)
    path = tmp_path / "g.pairs"
    write_graph(g, path, format="pairs")
    assert detect_format(path) == "pairs"
    back = read_graph(path)
    assert back.directed and back.n == 3
    assert sorted(zip(back.edge_src.tolist(), back.edge_dst.tolist())) == [(0, 1), (1, 2), (2, 0)]
    assert [h.m for h in read_graphs(path)] == [3]  # no read_all: the file's one graph
    assert not read_graph(path, directed=False).directed  # the caller's direction overrides the format's
    with pytest.raises(ValueError, match="a pair list holds one graph"):
        write_graphs([g], tmp_path / "two.pairs", format="pairs")


def test_undetectable_message_lists_every_registered_format(tmp_path: Path, scratch_registry: None) -> None:
    registry.register_format("pairs", title="pair list", first_line="'PAIRS u-v ...'", directed=True,
                             codec=registry.Codec(_read_pairs, _write_pairs))(lambda fields: fields[0] == b"PAIRS")
    path = tmp_path / "bad.graph"
    path.write_text("hello world\n")
    with pytest.raises(ValueError, match=r"\(SNAP edge list\) or 'PAIRS u-v \.\.\.' \(pair list\)$"):
        detect_format(path)


def test_registering_a_name_twice_fails(scratch_registry: None) -> None:
    with pytest.raises(ValueError, match="'sm' is registered twice"):
        registry.register_format("sm", title="sm", first_line="'t N M'", directed=False,
                                 codec=registry.Codec(_read_pairs, _write_pairs))(lambda fields: False)


@pytest.mark.parametrize("line", ["t 3 2", "t # 0", "t # -1", "0 1", "0 1 7", "t 3", "v 0 1", "e 0 1 2",
                                  "1 2 3 4", "t # x", "-1 2", "x y"])
def test_builtin_detectors_are_disjoint(line: str) -> None:
    fields = line.encode().split()
    claimed = [f.name for f in registry.registered() if f.detect(fields)]
    expected = {"t 3 2": ["sm"], "t # 0": ["gsi"], "t # -1": ["gsi"], "0 1": ["snap"], "0 1 7": ["snap"]}
    assert claimed == expected.get(line, [])
    assert set(FORMATS) == {f.name for f in registry.registered()}


def test_defaults_come_from_the_registry(tmp_path: Path) -> None:
    g = Graph.from_edges(np.array([[0, 1], [1, 2]]), directed=True)
    path = tmp_path / "g.gsi"
    write_graph(g, path, format="gsi")
    assert read_graph(path).directed and not read_graph(path, format="gsi", directed=False).directed
