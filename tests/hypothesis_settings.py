"""Example counts for the Hypothesis tests that scale with the loaded settings profile.

The profiles are registered (and one chosen) in ``tests/conftest.py``: ``local`` (the default, random),
``ci`` (derandomized, chosen when ``CI`` is set) and ``explore`` (ten times the examples).  A test's own
``@settings(max_examples=...)`` would override the profile, so tests take their settings from :func:`scaled`,
which multiplies their example count by the profile's ``max_examples`` over :data:`BASE_EXAMPLES`.  Test modules
call it when they are imported, at collection, after Hypothesis's pytest plugin has loaded
``--hypothesis-profile`` (in ``pytest_configure``); settings objects made then also inherit the rest of the
profile (``derandomize``, ``database``, ``print_blob``).
"""

from hypothesis import HealthCheck, settings

BASE_EXAMPLES = 100  # max_examples of the local and ci profiles; explore has ten times this


def factor() -> float:
    """How many times its base example count each test runs under the loaded profile."""
    return settings.default.max_examples / BASE_EXAMPLES


def scaled(n: float, **kwargs) -> settings:
    """``settings(max_examples=n, deadline=None, suppress_health_check=[too_slow], **kwargs)``, ``n`` scaled by
    :func:`factor` (at least one example)."""
    kwargs.setdefault("deadline", None)
    kwargs.setdefault("suppress_health_check", [HealthCheck.too_slow])
    return settings(max_examples=max(1, int(n * factor())), **kwargs)
