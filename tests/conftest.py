import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

from hypothesis_settings import BASE_EXAMPLES  # noqa: E402  (found through the path set above)

# Hypothesis profiles (tests scale their example counts with the loaded one: see hypothesis_settings.py).
# Explicit parents: Hypothesis itself may already have loaded its own "ci" profile, which settings would inherit.
_default = settings.get_profile("default")
settings.register_profile("local", _default, max_examples=BASE_EXAMPLES, print_blob=True)
settings.register_profile("ci", _default, max_examples=BASE_EXAMPLES, derandomize=True, print_blob=True,
                          database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", settings.get_profile("local"), max_examples=10 * BASE_EXAMPLES)
# --hypothesis-profile NAME, when given, replaces this choice (Hypothesis's plugin loads it in pytest_configure).
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "local"))


@pytest.fixture(scope="module")
def cluster():
    """A client of a CPU LocalCluster of two one-thread worker processes, shared by a test module's tests."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0") as lc:
        with Client(lc) as client:
            yield client


def _cuda_devices() -> int:
    from distsm.kernels import cuda_device_count

    return cuda_device_count()


def pytest_collection_modifyitems(config, items):
    if _cuda_devices() > 0:
        return
    skip = pytest.mark.skip(reason="no CUDA device present")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
