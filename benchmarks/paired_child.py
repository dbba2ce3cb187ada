"""The child process of :mod:`benchmarks.paired`: it holds one data graph and counts the query files it is sent on
standard input, one JSON line each back (the count, its seconds, and with ``--stages`` each stage's inclusive seconds
within that count).

    python benchmarks/paired_child.py DATA BACKEND [--stages]

It imports only distsm (the tree on ``PYTHONPATH``), so that the trees compared need not have this file.  The
stages are functions of the count path (:data:`STAGES`) timed by wrappers installed before the first count; a stage
a tree lacks is skipped, and a name another module imported before the wrapper was installed is rebound
(:data:`IMPORTED`).  A wrapper's own cost falls alike on every tree that has the stage, and is counted in
the stages that contain it.
"""

import collections
import functools
import importlib
import inspect
import json
import sys
import time

import distsm

#: (module, qualified name) of each stage timed: the API's request, the count and its stages, the join.
STAGES = [("distsm.request", "prepare"), ("distsm.kernels.counting", "count"),
          ("distsm.kernels.counting", "Count.light"), ("distsm.kernels.counting", "Count.candidates"),
          ("distsm.kernels.counting", "Count.search"), ("distsm.kernels.counting", "Count._join"),
          ("distsm.kernels.counting", "Count.plan"), ("distsm.kernels.counting", "Count.run"),
          ("distsm.kernels.placement", "Placement.of"), ("distsm.kernels.placement", "Placement.trials"),
          ("distsm.kernels.engine", "prepare"), ("distsm.kernels.engine", "walk")]
#: (module that imported a stage's function by name, that name, the stage).
IMPORTED = [("distsm.api", "prepare", ("distsm.request", "prepare")),
            ("distsm.kernels.counting", "prepare", ("distsm.kernels.engine", "prepare")),
            ("distsm.kernels.counting", "walk", ("distsm.kernels.engine", "walk"))]

seconds: collections.defaultdict[str, float] = collections.defaultdict(float)


def timed(key: str, f):
    """``f`` adding its inclusive seconds to ``seconds[key]`` (a generator's: the time spent producing its items)."""
    if inspect.isgeneratorfunction(f):
        @functools.wraps(f)
        def gen(*a, **k):
            it = f(*a, **k)
            while True:
                t = time.perf_counter()
                try:
                    item = next(it)
                except StopIteration:
                    seconds[key] += time.perf_counter() - t
                    return
                seconds[key] += time.perf_counter() - t
                yield item
        return gen

    @functools.wraps(f)
    def call(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            seconds[key] += time.perf_counter() - t
    return call


def install() -> None:
    wrapped = {}
    for mod, qual in STAGES:
        try:
            owner = importlib.import_module(mod)
            *path, name = qual.split(".")
            for part in path:
                owner = getattr(owner, part)
            f = getattr(owner, name)
        except (ImportError, AttributeError):
            continue
        wrapped[(mod, qual)] = timed(f"{mod.rsplit('.', 1)[-1]}.{qual}", f)
        setattr(owner, name, wrapped[(mod, qual)])
    for mod, name, stage in IMPORTED:
        try:
            module = importlib.import_module(mod)
        except ImportError:
            continue
        if stage in wrapped and hasattr(module, name):
            setattr(module, name, wrapped[stage])


def serve() -> None:
    if "--stages" in sys.argv[3:]:
        install()
    data = distsm.read_graph(sys.argv[1])
    backend = sys.argv[2]
    print("ready", flush=True)
    for line in sys.stdin:
        query = distsm.read_graph(line.strip())
        seconds.clear()
        t = time.perf_counter()
        found = distsm.count(data, query, backend=backend)
        print(json.dumps({"seconds": time.perf_counter() - t, "count": found, "stages": seconds}), flush=True)


if __name__ == "__main__":
    serve()
