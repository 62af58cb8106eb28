"""matmulviz.simulate: a real PyTorch program's CUDA memory, without a GPU.

    with matmulviz.simulate(gpu="h200") as sim:
        model = MyModel().cuda()          # the program's own `import torch`
        loss = model(x.cuda()).sum(); loss.backward()
        print(torch.cuda.max_memory_allocated())

or, for a script: python3 -m matmulviz.simulate SCRIPT [ARGS] --report run.json.

Inside the block, what the program puts on "cuda" becomes tensors without values that say
cuda:0 (.device, .is_cuda, printing) and whose storages live in matmulviz's model of PyTorch's
CUDA caching allocator: allocated when the op making them runs, freed when the last tensor on
the storage dies. torch.cuda.memory_allocated(), max_memory_allocated(), memory_reserved(),
memory_stats(), reset_peak_memory_stats(), empty_cache() and memory_summary() answer from the
model; an allocation beyond the capacity raises torch.cuda.OutOfMemoryError with PyTorch's
message. CPU tensors stay real unless host="meta" (simulated too, counted as host memory).
Reads of values (.item(), .cpu()) return placeholders, listed by line; steps whose sizes need
values (nonzero, boolean masks) raise an error naming the line, unless values="cpu". Needs
PyTorch (1.13 and 2.11 under test); see docs/simulate.md.
"""

import sys
import types

__all__ = ["simulate"]


def simulate(gpu=None, capacity=None, values="none", pytorch=None, host="cpu", world=None):
    """A context manager that runs the code inside it on a simulated CUDA device (see the
    module's docstring). `gpu`: a name from matmulviz.simulate._gpus.GPUS ("h200") giving the
    capacity, the device's name and the architecture the allocator rules follow (the cuBLAS
    workspace's size, topk's buffers; none: matmulviz.gpu(), default h200); `pytorch`: "2.x"
    or "forum", the PyTorch whose allocator rules apply (none: matmulviz.pytorch(), default
    2.x; see matmulviz.set_pytorch); `capacity`: bytes or a size string ("80GiB"), overriding
    the GPU's (none of either: unlimited). `values`: "none" (tensors without values: data-
    dependent steps raise) or "cpu" (each CUDA tensor also holds its values on the CPU and every
    op computes them: slower, but .item(), nonzero and boolean masks work; the memory accounted
    is the same). `host`: "cpu" (the script's CPU tensors are real) or "meta" (they are
    simulated too: no values, their bytes counted as host memory; simulate/_host.py).
    `world`: a matmulviz.simulate._distributed.World (nnodes, nproc_per_node, rank): the code
    runs as that rank of a torchrun job, torchrun's environment set and torch.distributed's
    groups on PyTorch's fake process group (PyTorch 2.x; _distributed.py).
    Raises ImportError when PyTorch is not installed, ValueError for an unknown GPU or
    PyTorch model."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ImportError("matmulviz.simulate needs PyTorch (python3-torch on Debian); "
                          "matmulviz.torch runs PyTorch-style code without it") from None
    from matmulviz import _parse_size
    from matmulviz.simulate._gpus import architecture_of, capacity_of
    from matmulviz.simulate._simulation import Simulation
    cap = _parse_size(capacity) if capacity is not None else (capacity_of(gpu) if gpu else None)
    if pytorch is not None and pytorch not in ("2.x", "2", "forum", "1.x"):
        raise ValueError(f"unknown PyTorch model {pytorch!r}: 2.x or forum")
    return Simulation(capacity=cap, gpu_name=gpu.upper() if gpu else None, values=values,
                      gpu=architecture_of(gpu) if gpu else None, pytorch=pytorch, host=host,
                      world=world)


class _CallableModule(types.ModuleType):
    """`matmulviz.simulate(...)` calls simulate(); `matmulviz.simulate.X` reads the module."""

    def __call__(self, *args, **kwargs):
        return simulate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
