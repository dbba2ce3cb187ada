import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


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
