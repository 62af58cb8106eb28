"""matmulviz: run PyTorch matmul code on matmulviz's engine and see the CUDA memory it uses.

    import matmulviz.torch as torch      # instead of `import torch`

Tensors on "cuda" live on a simulated CUDA device whose memory is PyTorch's caching-allocator
model, so torch.cuda.memory_allocated() and friends answer as on a GPU, without one. See
docs/python.md for what is supported.
"""

from matmulviz import _C
from matmulviz._record import record

__all__ = ["record", "set_cuda_mode", "cuda_mode", "set_device_capacity", "gather_bmm",
           "set_pytorch", "pytorch", "set_gpu", "gpu"]


def set_cuda_mode(mode):
    """"data" (default): CUDA tensors hold values computed on this machine (BLAS).
    "meta": sizes, strides and the memory accounting only, no data, so very large workloads
    answer in seconds (values, item() and tolist() are then unavailable). Also set by the
    environment variable MATMULVIZ_CUDA_MODE=meta. Call before the first CUDA tensor is made."""
    _C.set_cuda_mode(mode)


def cuda_mode():
    """The current CUDA mode: "data" or "meta"."""
    return _C.cuda_mode()


def set_pytorch(version):
    """Which PyTorch the simulated device follows where versions differ: "2.x" (default,
    today's PyTorch: each thread's cuBLAS handle gets a workspace from the caching allocator on
    its first use, 32 MiB on an sm_90 GPU, one for the main thread and one for the autograd
    engine's thread, never freed) or "forum" (the PyTorch of the forum post's table, 1.x: no
    workspace counted). CUBLAS_WORKSPACE_CONFIG in the environment sizes the workspace as in
    PyTorch (":0:0": none). Call before the first CUDA tensor is made."""
    _C.set_pytorch(version)


def pytorch():
    """The modelled PyTorch: "2.x" or "forum"."""
    return _C.pytorch()


def set_gpu(key):
    """The simulated GPU's architecture: "h200" (default), "h100", "a100" or "t4". It sizes
    the cuBLAS workspace (by compute capability) and topk's buffers (by SM count). Call before
    the first CUDA tensor is made."""
    _C.set_gpu(key)


def gpu():
    """The simulated GPU's key ("h200")."""
    return _C.gpu()


def set_device_capacity(capacity):
    """The simulated GPU's memory: bytes (int) or a size string such as "80GiB" or "512MiB";
    None for unlimited (the default). An allocation beyond it raises
    torch.cuda.OutOfMemoryError with PyTorch's message, after the allocator has released its
    cached segments and retried, as PyTorch does."""
    _C.set_device_capacity(None if capacity is None else _parse_size(capacity))


def _parse_size(value):
    if isinstance(value, int):
        return value
    text = str(value).strip()
    units = {"": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
             "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
    number = text.rstrip("KMGTiB")
    unit = text[len(number):]
    try:
        return int(float(number) * units[unit])
    except (KeyError, ValueError):
        raise ValueError(f"not a size: {value!r} (examples: 80GiB, 512MiB, 1073741824)") from None


def gather_bmm(a, c, q):
    """The fused gathered batched matmul: out[n] = a[n] @ c[q[n]] for a [N, I, J], c [M, J, K],
    q [N] (int64, on the CPU), without materialising c[q]. Differentiable in a and c."""
    return _C.gather_bmm(a, c, q)


def __getattr__(name):
    # matmulviz.simulate is imported on first use: it needs PyTorch, the rest of the package not.
    if name == "simulate":
        import importlib
        return importlib.import_module("matmulviz.simulate")
    raise AttributeError(f"module 'matmulviz' has no attribute {name!r}")
