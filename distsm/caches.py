"""Every structure the package derives and keeps, in one registry (in the style of CuPy's ``memoize``).

A :class:`Cache` is one *site*: values derived from a key object (an index, a graph, a query, a program) and kept
while that object lives, looked up by its identity and, where one object has several, a sub-key (a label, a query
structure).  An entry goes when its object is collected, or when :func:`clear` empties its site; a site that keeps
at most ``kept`` sub-keys per object drops the oldest.  Sites are locked, so worker threads share them.

:func:`info` says what each site holds (objects, entries, the bytes of array values) and :func:`clear` empties one
site or all: the public way to inspect or release what the package keeps (``distsm.cache_info()``,
``distsm.clear_caches()``), instead of reaching into module globals.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, cast

_NONE = object()  # the sub-key of an object's one value


class _Ref(weakref.ref):
    """A weak reference that remembers its object's id (the site's key), for the callback that drops its values:
    one object per kept object, where a closure per call cost a fresh query's count a few microseconds."""

    __slots__ = ("key",)

    def __init__(self, obj: Any, callback: Callable[[Any], None]) -> None:
        super().__init__(obj, callback)  # type: ignore[call-arg]
        self.key = id(obj)


class _Anchor:
    """The key object of values that belong to no object (a site of the process as a whole)."""


#: The key object of a process-wide site's values (kept by sub-key only).
GLOBAL = _Anchor()


@dataclass(frozen=True)
class CacheInfo:
    """What a site holds: its ``name`` and ``doc``, the key ``objects`` alive in it, its ``entries`` (values) and
    the ``nbytes`` of those that are arrays or carry ``nbytes`` (tuples and dicts summed one level down)."""

    name: str
    doc: str
    objects: int
    entries: int
    nbytes: int


class Cache:
    """One registered site (see the module docstring); create it with :func:`cache`."""

    def __init__(self, name: str, doc: str, kept: int | None = None) -> None:
        self.name, self.doc, self.kept = name, doc, kept
        self._table: dict[int, tuple[_Ref, dict[Hashable, Any]]] = {}
        self._lock = threading.RLock()

    def _values(self, obj: Any) -> dict[Hashable, Any] | None:
        """``obj``'s values (under the lock), or None where it has none (its id may belong to a collected object)."""
        entry = self._table.get(id(obj))
        return None if entry is None or entry[0]() is not obj else entry[1]

    def get(self, obj: Any, sub: Hashable = _NONE) -> Any:
        """The value kept for ``obj`` (and ``sub``), or None."""
        if self.kept is None:
            # Nothing to reorder: one dict lookup each, atomic under the GIL, so light counts (a dozen lookups
            # each) take no lock.
            entry = self._table.get(id(obj))
            return None if entry is None or entry[0]() is not obj else entry[1].get(sub)
        with self._lock:
            values = self._values(obj)
            if values is None:
                return None
            found = values.get(sub)
            if found is not None:
                cast("OrderedDict[Hashable, Any]", values).move_to_end(sub)
            return found

    def put(self, obj: Any, value: Any, sub: Hashable = _NONE) -> Any:
        """Keep ``value`` for ``obj`` (and ``sub``) and return it; an object that cannot be weakly referenced is not
        kept (the value is returned anyway)."""
        with self._lock:
            values = self._values(obj)
            if values is None:
                try:
                    ref = _Ref(obj, self._forget)
                except TypeError:
                    return value
                # A site that keeps every sub-key never reorders them: a plain dict is cheaper to make.
                values = {} if self.kept is None else OrderedDict()
                self._table[ref.key] = (ref, values)
            values[sub] = value
            if self.kept is not None:
                ordered = cast("OrderedDict[Hashable, Any]", values)
                ordered.move_to_end(sub)
                while len(ordered) > self.kept:
                    ordered.popitem(last=False)
        return value

    def _forget(self, ref: _Ref) -> None:
        """Drop the values of a collected object (``ref``'s callback)."""
        with self._lock:
            entry = self._table.get(ref.key)
            if entry is not None and entry[0] is ref:
                del self._table[ref.key]

    def pop(self, obj: Any, sub: Hashable = _NONE) -> Any:
        """Drop the value kept for ``obj`` (and ``sub``) and return it (None where there was none)."""
        with self._lock:
            values = self._values(obj)
            return None if values is None else values.pop(sub, None)

    def get_or(self, obj: Any, compute: Callable[[], Any], sub: Hashable = _NONE) -> Any:
        """The value kept for ``obj`` (and ``sub``), else ``compute()`` kept (computed outside the lock: two threads
        may both compute a missing value, and the later one is kept)."""
        found = self.get(obj, sub)
        return found if found is not None else self.put(obj, compute(), sub)

    def clear(self) -> None:
        with self._lock:
            self._table.clear()

    def info(self) -> CacheInfo:
        with self._lock:
            live = [values for ref, values in self._table.values() if ref() is not None]
            entries = sum(len(v) for v in live)
            nbytes = sum(_nbytes(x) for v in live for x in v.values())
        return CacheInfo(self.name, self.doc, len(live), entries, nbytes)


def _nbytes(value: Any, depth: int = 0) -> int:
    size = getattr(value, "nbytes", None)
    if isinstance(size, int):
        return size
    if depth == 0 and isinstance(value, (tuple, list)):
        return sum(_nbytes(x, 1) for x in value)
    if depth == 0 and isinstance(value, dict):
        return sum(_nbytes(x, 1) for x in value.values())
    return 0


_SITES: dict[str, Cache] = {}
#: Sites that belong to one object each (a device backend's programs live on its device): they go with it.
_OWNED: weakref.WeakKeyDictionary[Any, list[Cache]] = weakref.WeakKeyDictionary()
_SITES_LOCK = threading.Lock()


def cache(name: str, doc: str, kept: int | None = None) -> Cache:
    """The site called ``name`` (created and registered on first use; ``doc`` says what it holds, ``kept`` bounds
    its sub-keys per object)."""
    with _SITES_LOCK:
        site = _SITES.get(name)
        if site is None:
            site = _SITES[name] = Cache(name, doc, kept)
        return site


def owned(owner: Any, name: str, doc: str, kept: int | None = None) -> Cache:
    """A site of ``owner``'s own, kept while it lives (a device backend's values hold that device's memory, so two
    backends never share them and a backend's go when it does); :func:`info` sums the sites called ``name`` and
    :func:`clear` empties them with the others."""
    made = Cache(name, doc, kept)
    with _SITES_LOCK:
        _OWNED.setdefault(owner, []).append(made)
    return made


def _all_sites() -> list[Cache]:
    with _SITES_LOCK:
        return list(_SITES.values()) + [s for sites in list(_OWNED.values()) for s in sites]


def site(name: str) -> Cache:
    """The registered site called ``name`` (KeyError naming the sites there are when none is)."""
    with _SITES_LOCK:
        found = _SITES.get(name)
    if found is None:
        raise KeyError(f"no cache called {name!r} (there are: {', '.join(sorted(_SITES))})")
    return found


def info() -> dict[str, CacheInfo]:
    """What every site holds, by name (the owned sites of one name summed)."""
    found: dict[str, CacheInfo] = {}
    for each in _all_sites():
        held, before = each.info(), found.get(each.name)
        if before is not None:
            held = CacheInfo(held.name, held.doc, before.objects + held.objects, before.entries + held.entries,
                             before.nbytes + held.nbytes)
        found[each.name] = held
    return found


def clear(name: str | None = None) -> None:
    """Empty the site called ``name``, or every site (a device's memory pools keep the freed blocks until
    ``Backend.release_memory``)."""
    sites = _all_sites()
    chosen = [s for s in sites if name is None or s.name == name]
    if not chosen:
        raise KeyError(f"no cache called {name!r} (there are: {', '.join(sorted({s.name for s in sites}))})")
    for each in chosen:
        each.clear()
