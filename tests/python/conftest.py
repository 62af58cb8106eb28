"""Shared set-up for tests/python: makes the folder importable as plain modules (cases,
summary), and gives the memory tests an empty simulated device (`empty_device`)."""

import gc
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def empty_device():
    """Data mode, everything earlier tests left to the garbage collector freed, the cache
    emptied and the peak reset; fails when a tensor outlived an earlier test. Afterwards the
    device is emptied again."""
    import matmulviz
    import matmulviz.torch as torch

    matmulviz.set_cuda_mode("data")
    gc.collect()
    torch.cuda.empty_cache()
    allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    if allocated or reserved:
        pytest.fail(f"the device is not empty before the test: {allocated} bytes allocated, "
                    f"{reserved} reserved (a tensor outlived an earlier test)")
    torch.cuda.reset_peak_memory_stats()
    yield
    matmulviz.set_cuda_mode("data")
    gc.collect()
    torch.cuda.empty_cache()
