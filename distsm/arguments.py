"""Checks of the arguments users pass to the API, done before any work starts, with messages that say what
was expected and what came instead.

Every public parameter is declared once, in :data:`PARAMETERS`, with the check its values must pass (the style of
scikit-learn's ``validate_params``): :func:`entry_point` checks the declared parameters of each call of a public
function (and runs it as one request: :func:`distsm.config.snapshot`), and the request objects
(:class:`~distsm.semantics.Semantics`, :class:`~distsm.resources.Resources`) check their fields against the same
declarations (:func:`check_declared`), so a parameter reads the same wherever it is given.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard, TypeVar

import numpy as np

from distsm.config import under_snapshot
from distsm.errors import short_repr
from distsm.vocabulary import BACKENDS, DISTRIBUTIONS, PARTITION_METHODS, check_adjacency

F = TypeVar("F", bound=Callable[..., Any])


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
        hint = " (a number of bytes, e.g. 256 << 20, or a size such as '1GB')" if "budget" in name else ""
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


def check_seconds(name: str, value: Any) -> float | None:
    """``value`` as a positive number of seconds; None passes.

    Raises:
        TypeError: not a number (bools and strings are refused).
        ValueError: zero, negative or not finite.
    """
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__} {short_repr(value)}")
    if not 0 < float(value) < float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def check_callable(name: str, value: Any) -> Any:
    """``value`` when it is callable or None."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be callable or None, not {type(value).__name__} {short_repr(value)}")
    return value


def check_optional_flag(name: str, value: Any) -> bool | None:
    """``value`` when it is a bool or None (None: the default of whatever reads it)."""
    return None if value is None else check_flag(name, value)


def check_flag(name: str, value: Any) -> bool:
    """``value`` when it is a bool (``induced="no"`` would otherwise read as True)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__} {short_repr(value)}")
    return bool(value)


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4, "tb": 1000**4, "tib": 1024**4}


def parse_size(text: str) -> int:
    """``"512MiB"`` -> 536870912, ``"2GB"`` -> 2000000000; plain integers are bytes.

    Raises:
        ValueError: not a size, or not positive.
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {short_repr(text)} (examples: 100000000, 512MiB, 2GB)")
    value = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if value <= 0:
        raise ValueError(f"size must be positive: {short_repr(text)}")
    return value


def check_size(name: str, value: Any) -> int | None:
    """A byte count given as an integer or a size string (``"1GB"``, ``"512MiB"``: :func:`parse_size`), as the
    CLI takes it; None passes.

    Raises:
        TypeError: neither an integer nor a string.
        ValueError: a string that is not a size, or a count below one.
    """
    if isinstance(value, str):
        try:
            return parse_size(value)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    return check_int(name, value, minimum=1)


#: Each public parameter's check, by name: called as ``check(name, value)``, it raises a TypeError or ValueError
#: naming the parameter.  A parameter means the same in every function that takes it.
PARAMETERS: Mapping[str, Callable[[str, Any], Any]] = {
    **dict.fromkeys(("induced", "homomorphism", "unique", "as_frame", "verify"), check_flag),
    **dict.fromkeys(("directed", "dedupe"), check_optional_flag),
    **dict.fromkeys(("memory_budget", "device_budget"), check_size),
    "backend": functools.partial(check_choice, choices=BACKENDS),
    "timeout": check_seconds,
    "progress": check_callable,
    "limit": functools.partial(check_int, minimum=0),
    "adjacency": lambda _, value: check_adjacency(value),
    "partition_method": functools.partial(check_choice, choices=PARTITION_METHODS),
    "partition_seed": functools.partial(check_int, minimum=0, optional=False),
    "distribute": functools.partial(check_choice, choices=DISTRIBUTIONS),
}


def entry_point(function: F) -> F:
    """A public entry point: each argument a call gives to a parameter :data:`PARAMETERS` declares is checked
    before it runs (defaults are not), and it runs as one request, under the options configured when it is called
    (:func:`~distsm.config.under_snapshot`; an iterator it returns keeps them while it is consumed)."""
    parameters = list(inspect.signature(function).parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    # (name, position among the positional arguments or None); looked up directly: binding the signature would
    # cost a light query's count a few percent.
    declared = [(p.name, i if p.kind in positional else None) for i, p in enumerate(parameters) if p.name in PARAMETERS]
    run = under_snapshot(function)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        for name, at in declared:
            if name in kwargs:
                PARAMETERS[name](name, kwargs[name])
            elif at is not None and at < len(args):
                PARAMETERS[name](name, args[at])
        return run(*args, **kwargs)

    return call  # type: ignore[return-value]


def check_declared(obj: Any) -> None:
    """Check each field of the dataclass instance ``obj`` that :data:`PARAMETERS` declares."""
    # The class's field table, not dataclasses.fields(), which builds a tuple per call (two a request).
    for name in obj.__dataclass_fields__:
        if name in PARAMETERS:
            PARAMETERS[name](name, getattr(obj, name))
