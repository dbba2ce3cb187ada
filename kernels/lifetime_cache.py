"""A cache whose entries live as long as their key objects (indexes, bitsets, programs), looked up by identity."""

from __future__ import annotations

import weakref
from typing import Any


class LifetimeCache:
    """Values cached for the lifetime of a key object, looked up by identity: an entry goes when its object is
    collected.  Objects that cannot be weakly referenced are not cached (``put`` returns the value anyway)."""

    def __init__(self) -> None:
        self._table: dict[int, tuple[Any, Any]] = {}

    def get(self, obj: Any) -> Any:
        ent = self._table.get(id(obj))
        return ent[1] if ent is not None and ent[0]() is obj else None

    def put(self, obj: Any, value: Any) -> Any:
        key = id(obj)

        def forget(ref: Any, key: int = key, table: dict = self._table) -> None:
            ent = table.get(key)
            if ent is not None and ent[0] is ref:
                del table[key]

        try:
            self._table[key] = (weakref.ref(obj, forget), value)
        except TypeError:
            pass
        return value
