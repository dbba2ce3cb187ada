import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


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
