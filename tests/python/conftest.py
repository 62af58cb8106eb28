"""Shared set-up for tests/python: makes the folder importable as plain modules (cases,
summary), and gives the memory tests an empty simulated device (`empty_device`)."""

import gc
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True, scope="session")
def forum_pytorch():
    """The memory tests here pin the rules of the forum post's PyTorch (1.x: no cuBLAS
    workspace counted), and so do the scripts they run in other processes. The tests of
    PyTorch 2.x's numbers (test_gpu_memcases.py, test_gpu_forum.py) choose it explicitly."""
    import matmulviz

    os.environ["MATMULVIZ_PYTORCH"] = "forum"
    matmulviz.set_pytorch("forum")
    yield


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


GPU_REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference", "gpu")


def pytest_addoption(parser):
    parser.addoption("--gpu-truth", default=None,
                     help="a memcases.py measurement (JSON) to test the engine against "
                          "(default: tests/reference/gpu/memcases_torch.json, an H200)")
    parser.addoption("--gpu-truth-gpu", default=None,
                     help="the GPU architecture of that measurement: h200, h100, a100, t4")
    parser.addoption("--gpu-truth-noworkspace", default=None,
                     help="the same GPU's measurement with CUBLAS_WORKSPACE_CONFIG=:0:0")


@pytest.fixture
def gpu_truth(request):
    """(measurement file, GPU key, no-workspace measurement file or None): the command line's,
    else MATMULVIZ_GPU_TRUTH / MATMULVIZ_GPU_TRUTH_GPU / MATMULVIZ_GPU_TRUTH_NOWORKSPACE, else
    the H200's files in tests/reference/gpu."""
    opt = request.config.getoption
    path = opt("--gpu-truth") or os.environ.get("MATMULVIZ_GPU_TRUTH")
    gpu = opt("--gpu-truth-gpu") or os.environ.get("MATMULVIZ_GPU_TRUTH_GPU")
    noworkspace = (opt("--gpu-truth-noworkspace")
                   or os.environ.get("MATMULVIZ_GPU_TRUTH_NOWORKSPACE"))
    if path is None:
        path = os.path.join(GPU_REFERENCE, "memcases_torch.json")
        noworkspace = noworkspace or os.path.join(GPU_REFERENCE, "memcases_noworkspace.json")
        gpu = gpu or "h200"
    return path, gpu or "h200", noworkspace
