"""The registry of what the package keeps (distsm/caches.py): entries live as long as their key objects, sites say
what they hold through the public ``distsm.cache_info()`` and let it go through ``distsm.clear_caches()``, sub-keys
are bounded where a site says so, and threads share a site safely; and no module keeps a cache of its own."""

from __future__ import annotations

import ast
import gc
import threading
from pathlib import Path

import numpy as np
import pytest

import distsm
from distsm import caches
from distsm.kernels import NUMPY

ROOT = Path(__file__).resolve().parent.parent


class Key:
    """A weakly referenceable key object."""


def test_entries_live_as_long_as_their_objects_and_sub_keys_are_bounded():
    site = caches.cache("test: bounded", "a test site", kept=2)
    a, b = Key(), Key()
    site.put(a, np.zeros(10, dtype=np.int64))
    for sub in range(3):
        site.put(b, sub, sub)
    assert site.get(b, 0) is None and site.get(b, 1) == 1 and site.get(b, 2) == 2  # the oldest went
    info = distsm.cache_info()["test: bounded"]
    assert (info.objects, info.entries, info.nbytes) == (2, 3, 80)
    del a
    gc.collect()
    assert distsm.cache_info()["test: bounded"].objects == 1
    distsm.clear_caches("test: bounded")
    assert distsm.cache_info()["test: bounded"].entries == 0 and site.get(b, 1) is None
    with pytest.raises(KeyError, match="no cache called 'nope'"):
        distsm.clear_caches("nope")


def test_a_count_fills_the_sites_and_clear_caches_empties_them():
    data = distsm.Graph.from_edges([(0, 1), (1, 2), (0, 2), (2, 3)])
    query = distsm.Graph.from_edges([(0, 1), (1, 2), (0, 2)])
    assert distsm.count(data, query, backend="numpy") == 6
    held = distsm.cache_info()
    assert held["indexes"].entries >= 1 and held["query adjacency"].entries >= 1
    assert caches.site("indexes").get(data, NUMPY.name) is NUMPY.index(data)
    distsm.clear_caches()
    assert all(i.entries == 0 for i in distsm.cache_info().values())
    assert distsm.count(data, query, backend="numpy") == 6  # rebuilt on demand


def test_owned_sites_are_their_owners_own_and_go_with_them():
    """Two owners' sites of one name never share values (a device backend's hold its device's memory), the
    registry sums them by name and clears them, and an owner's site goes when the owner does."""
    owners, key = [Key(), Key()], Key()
    sites = [caches.owned(o, "test: owned", "a test site") for o in owners]
    sites[0].put(key, np.zeros(4, dtype=np.int64))
    assert sites[1].get(key) is None
    sites[1].put(key, np.zeros(2, dtype=np.int64))
    assert (distsm.cache_info()["test: owned"].entries, distsm.cache_info()["test: owned"].nbytes) == (2, 48)
    del owners[0], sites[0]
    gc.collect()
    assert distsm.cache_info()["test: owned"].entries == 1
    distsm.clear_caches("test: owned")
    assert sites[0].get(key) is None and distsm.cache_info()["test: owned"].entries == 0


def test_requests_share_checked_semantics_and_resources_of_plain_values():
    from distsm.resources import Resources
    from distsm.semantics import Semantics

    assert Semantics.of(False, False, True) is Semantics.of(False, False, True)
    assert Resources.of("1GB", "numpy", 2.5) is Resources.of("1GB", "numpy", 2.5)
    assert Resources.of(1 << 30, "numpy") is not Resources.of("1GB", "numpy")
    # A bool is an int to Python but no budget: it is checked anew every time, never shared.
    for _ in range(2):
        with pytest.raises(TypeError, match="memory_budget"):
            Resources.of(True, "numpy")
    with pytest.raises(ValueError, match="unknown backend"):
        Resources.of(None, "gpu")
    assert caches.info()["shared resources"].entries <= 64


def test_threads_share_a_site():
    site = caches.cache("test: threads", "a test site")
    keys = [Key() for _ in range(64)]

    def work(offset):
        for i, k in enumerate(keys):
            site.get_or(k, lambda value=i: value, sub=offset % 4)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert site.info().entries == 64 * 4


#: Module-level containers filled at run time that hold no derived structure, and why.
NOT_CACHES = {
    "distsm/caches.py _SITES": "the registry itself",
    "distsm/caches.py _OWNED": "the registry's sites that belong to one object each",
    "distsm/config.py _defaults": "the package's default options, read once from distsm.yaml for dask.config",
    "distsm/formats/registry.py _REGISTRY": "the file formats a user registers (register_format), not derived data",
    "kernels/__init__.py _instances": "one backend object per name (get_backend), which the sites' values outlive",
}


def test_no_module_keeps_a_cache_of_its_own():
    """Module-level names bound to an empty dict, list, set or OrderedDict that a function fills are caches outside
    the registry, unless :data:`NOT_CACHES` says why not; constants (filled where they are written) are not."""
    found = []
    for pkg in ("distsm", "kernels", "partition", "cluster"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text())
            mutable = {}
            for node in tree.body:
                target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
                    node.target if isinstance(node, ast.AnnAssign) else None
                value = getattr(node, "value", None)
                if isinstance(target, ast.Name) and _empty_container(value):
                    mutable[target.id] = node.lineno
            for name, line in mutable.items():
                where = f"{path.relative_to(ROOT)} {name}"
                if _written(tree, name) and where not in NOT_CACHES:
                    found.append(f"{where} (line {line})")
    assert not found, found


def _empty_container(value) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set)):
        return not (getattr(value, "keys", None) or getattr(value, "elts", None))
    return isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) in (
        "dict", "list", "set", "OrderedDict", "defaultdict", "WeakValueDictionary", "WeakKeyDictionary")


def _written(tree: ast.Module, name: str) -> bool:
    """Whether a function writes into ``name`` (item assignment or a mutating method call)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Subscript,)) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id == name:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == name and \
                node.func.attr in ("append", "update", "setdefault", "add", "pop", "popitem", "clear", "extend"):
            return True
    return False
