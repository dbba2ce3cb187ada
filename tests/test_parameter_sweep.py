"""Every public entry point refuses every invalid value of every parameter before any work starts, with one clear
error: a ``TypeError`` or ``ValueError`` whose message names the parameter (issue 53)."""

from __future__ import annotations

import pytest

import distsm

DATA = distsm.Graph.from_edges([(0, 1), (1, 2), (0, 2), (2, 3)], n=4)
QUERY = distsm.Graph.from_edges([(0, 1), (1, 2)], n=3)

#: Invalid values of the parameters the query entry points share.
COMMON = {
    "induced": ["yes", 2], "homomorphism": ["no", 3], "unique": ["1", 0.5],
    "memory_budget": [-1, 0, "lots", 1.5, True], "backend": ["gpu", 3],
    "partition_method": ["kmeans", 1], "partition_seed": ["x", 1.5],
    "adjacency": ["disk", None], "timeout": [-1, 0, "soon"],
}
SINGLE = {**COMMON, "partitions": [0, -2, "many", 2.5, True], "restrict": [5, "abc"], "progress": [5]}
LISTING = {**{k: v for k, v in SINGLE.items() if k != "progress"}, "limit": [-1, "ten", 1.5]}
BATCH = {**COMMON, "partitions": [0, -2, "many"], "names": ["abc", [1, 2, 3]]}
EXPLAIN = {k: COMMON[k] for k in ("induced", "homomorphism", "unique", "memory_budget", "backend")}


def _listed(f):
    return lambda *a, **k: list(f(*a, **k))


CASES = [
    (distsm.count, (DATA, QUERY), {}, SINGLE),
    (distsm.match, (DATA, QUERY), {}, {**LISTING, "as_frame": ["yes"]}),
    (_listed(distsm.iter_matches), (DATA, QUERY), {}, LISTING),
    (distsm.count_batch, (DATA, [QUERY]), {"partitions": 2}, BATCH),
    (_listed(distsm.iter_batch), (DATA, [QUERY]), {"partitions": 2}, BATCH),
    (distsm.explain, (DATA, QUERY), {}, EXPLAIN),
]


def _sweep():
    for f, args, base, params in CASES:
        for name, values in params.items():
            for value in values:
                yield pytest.param(f, args, {**base, name: value}, name,
                                   id=f"{getattr(f, '__name__', 'listed')}-{name}-{value!r}")


@pytest.mark.parametrize("f, args, kwargs, name", list(_sweep()))
def test_every_invalid_parameter_value_gets_one_clear_error(f, args, kwargs, name):
    with pytest.raises((TypeError, ValueError)) as err:
        f(*args, backend=kwargs.pop("backend", "numpy"), **kwargs)
    assert name in str(err.value), str(err.value)


@pytest.mark.parametrize("role, args", [("data", (42, QUERY)), ("query", (DATA, 42))])
@pytest.mark.parametrize("f", [distsm.count, distsm.match, distsm.explain])
def test_a_graph_argument_that_is_no_graph_is_named(f, role, args):
    with pytest.raises(TypeError, match=role):
        f(*args, backend="numpy")


@pytest.mark.parametrize("kwargs, name", [
    ({"format": "nope"}, "format"), ({"directed": "yes"}, "directed"), ({"dedupe": "x"}, "dedupe"),
    ({"vertex_labels": 5}, "vertex_labels"), ({"default_label": []}, "default_label"),
])
def test_read_graph_refuses_invalid_options(tmp_path, kwargs, name):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n")
    with pytest.raises((TypeError, ValueError)) as err:
        distsm.read_graph(path, **kwargs)
    assert name in str(err.value), str(err.value)


def test_load_save_and_warmup_refuse_invalid_values(tmp_path):
    with pytest.raises(TypeError, match="graph"):
        distsm.save_graph(5, tmp_path / "g")
    distsm.save_graph(DATA, tmp_path / "g")
    with pytest.raises((TypeError, ValueError), match="verify"):
        distsm.load_graph(tmp_path / "g", verify="yes")
    with pytest.raises((TypeError, ValueError), match="backend"):
        distsm.warmup("tpu")
    with pytest.raises((TypeError, ValueError), match="progress"):
        distsm.warmup("numpy", progress=5)


def test_every_public_function_checks_the_declared_parameters_it_takes():
    """Each public function (and Matcher method) that takes a parameter distsm.arguments.PARAMETERS declares goes
    through its checks (the ``entry_point`` decorator), so a new entry point cannot skip them."""
    import inspect

    from distsm.arguments import PARAMETERS

    functions = {name: getattr(distsm, name) for name in dir(distsm) if not name.startswith("_")}
    functions = {name: f for name, f in functions.items() if inspect.isfunction(f)}
    functions |= {f"Matcher.{name}": f for name, f in vars(distsm.Matcher).items()
                  if inspect.isfunction(f) and (not name.startswith("_") or name == "__init__")}
    unchecked = [name for name, f in functions.items()
                 if set(inspect.signature(f).parameters) & set(PARAMETERS) and not hasattr(f, "__wrapped__")]
    assert not unchecked, unchecked
