"""Checks of the arguments users pass to the API, done before any work starts, with messages that say what
was expected and what came instead."""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np

from distsm.errors import short_repr


def is_integer(value: Any) -> TypeGuard[int | np.integer]:
    """Whether ``value`` is a Python or NumPy integer (bools, which are ints to Python, are not)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, *, minimum: int, optional: bool = True) -> int | None:
    """``value`` as a Python int ``>= minimum`` (None passes when ``optional``).

    Raises:
        TypeError: not an integer (bools, floats and strings are refused, ``2.5`` as much as ``"1MiB"``).
        ValueError: an integer below ``minimum``.
    """
    if value is None and optional:
        return None
    if not is_integer(value):
        hint = " (a number of bytes, e.g. 256 << 20)" if "budget" in name else ""
        raise TypeError(f"{name} must be an integer{hint}, not {type(value).__name__} {short_repr(value)}")
    if value < minimum:
        what = "positive" if minimum == 1 else f">= {minimum}"
        raise ValueError(f"{name} must be {what}, got {value}")
    return int(value)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices``, else a ValueError listing them."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"unknown {name} {short_repr(value)}; choose one of {', '.join(map(repr, choices))}")
    return value


def check_flag(name: str, value: Any) -> bool:
    """``value`` when it is a bool (``induced="no"`` would otherwise read as True)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__} {short_repr(value)}")
    return bool(value)
