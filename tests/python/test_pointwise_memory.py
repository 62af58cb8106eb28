"""The device memory of the pointwise ops (arithmetic, cos/sin/exp/relu, softmax, topk, mean,
stack) on matmulviz's simulated CUDA device.

No golden here (the CPU build of PyTorch has no CUDA memory). The expected numbers follow from
PyTorch's CUDA kernels, which allocate only their outputs (TensorIterator broadcasts and
converts dtypes on the fly; a Python number is a CPU scalar), from the saving rules of
tools/autograd/derivatives.yaml (a saved input costs nothing, a saved result keeps the output's
block), and from the allocator's rounding to 512-byte blocks (test_cuda_memory.py).
"""

import gc

import pytest

try:
    import matmulviz  # noqa: F401  (skips the module when the package is missing)
    import matmulviz.torch as torch
except ImportError as e:
    pytest.skip(f"matmulviz.torch cannot be imported ({e}); build the project and run with "
                f"PYTHONPATH=build/release/python", allow_module_level=True)

N = 1000      # elements: 4000 bytes of float32, a 4096-byte block
BLOCK = 4096


pytestmark = pytest.mark.usefixtures("empty_device")


def allocated():
    return torch.cuda.memory_allocated()


def test_each_op_allocates_only_its_output():
    x = torch.ones(N, device="cuda")
    row = torch.ones(4, N, device="cuda")
    base = allocated()
    outs = [x + 1, 1 - x, x * 2, x / 3, 2 / x, -x, x.cos(), x.sin(), x.exp(), x.relu(),
            x.softmax(0), x + x, x - x, x / x]
    assert allocated() == base + len(outs) * BLOCK
    del outs
    assert allocated() == base
    b = row + x  # broadcasting: the [4, N] output only
    assert allocated() == base + 16384  # 16000 bytes
    del b
    h = x.half() + x  # float16 + float32 -> float32, converted on the fly
    assert h.dtype == torch.float32
    assert allocated() == base + BLOCK  # the output; the .half() copy died with the statement
    del h
    assert x.mean().dim() == 0
    m = x.mean()
    assert allocated() == base + 512
    del m
    v, i = x.topk(10)  # values 40 bytes, indices 80 bytes: one 512-byte block each
    assert allocated() == base + 2 * 512
    del v, i
    s = torch.stack([x, x, x])
    assert allocated() == base + 12288  # 12000 bytes, one output
    del s
    assert allocated() == base


def test_reciprocal_is_a_temporary_without_grad():
    x = torch.ones(N, device="cuda")
    torch.cuda.reset_peak_memory_stats()
    y = 2 / x  # x.reciprocal() * 2: the reciprocal dies with the statement
    assert allocated() == 2 * BLOCK
    assert torch.cuda.max_memory_allocated() == 3 * BLOCK
    del y


def test_saved_results_keep_their_blocks_saved_inputs_cost_nothing():
    x = torch.ones(N, device="cuda", requires_grad=True)
    y = (2 / x).sum()  # ReciprocalBackward0 keeps the reciprocal (result)
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    # x, the reciprocal and the sum; the product (MulBackward0 saves only the number) is gone
    assert allocated() == BLOCK + BLOCK + 512
    del y
    gc.collect()
    assert allocated() == BLOCK
    c = x.cos()  # CosBackward0 saves self: x itself
    assert c.grad_fn._saved_self.data_ptr() == x.data_ptr()
    e = x.exp()  # ExpBackward0 saves result: e's own block
    assert e.grad_fn._saved_result.data_ptr() == e.data_ptr()
    assert allocated() == 3 * BLOCK
    del c, e
    assert allocated() == BLOCK


def test_backward_allocations_match_the_formulas():
    x = torch.ones(N, device="cuda", requires_grad=True)
    y = x.cos()
    g = torch.ones(N, device="cuda")
    torch.cuda.reset_peak_memory_stats()
    before = allocated()
    y.backward(g)  # grad * -self.sin(): sin, neg, mul; the mul output becomes x.grad
    assert allocated() == before + BLOCK
    assert torch.cuda.max_memory_allocated() == before + 3 * BLOCK
