"""The device memory of bool tensors, comparisons and boolean-mask indexing on matmulviz's
simulated CUDA device, and their meta-mode behaviour.

No golden here (the CPU build of PyTorch has no CUDA memory). The expected numbers follow from
PyTorch's CUDA kernels: a comparison allocates only its bool output (one byte per element; a
Python number is a CPU scalar); t[mask] is at::index, which expands the mask with nonzero (an
int64 [n, mask.dim()] tensor that dies with the op) before it allocates the output; the mask
itself is what IndexBackward0 saves; t[mask] = number is masked_fill_ (nothing allocated).
Blocks are rounded to 512 bytes (test_cuda_memory.py).
"""


import pytest

try:
    import matmulviz
    import matmulviz.torch as torch
except ImportError as e:
    pytest.skip(f"matmulviz.torch cannot be imported ({e}); build the project and run with "
                f"PYTHONPATH=build/release/python", allow_module_level=True)


pytestmark = pytest.mark.usefixtures("empty_device")


def allocated():
    return torch.cuda.memory_allocated()


def block(nbytes):
    """The allocator's block for a request: a multiple of 512 bytes."""
    return max(512, -(-nbytes // 512) * 512)


def test_bool_tensors_take_one_byte_per_element():
    m = torch.zeros(4096, dtype=torch.bool, device="cuda")
    assert (m.element_size(), m.dtype, allocated()) == (1, torch.bool, 4096)
    assert torch.tensor([True, False], device="cuda").untyped_storage().nbytes() == 2


def test_comparisons_allocate_only_their_bool_output():
    x = torch.ones(4096, device="cuda")  # 16 KiB
    base = allocated()
    outs = [x > 0, x == 1.5, x != x, x <= torch.tensor(2.0), torch.lt(x, x), x.ge(1)]
    assert all(o.dtype == torch.bool and o.grad_fn is None for o in outs)
    assert allocated() == base + len(outs) * 4096
    del outs
    assert allocated() == base


def test_mask_indexing_frees_the_nonzero_index_after_the_op():
    x = torch.ones(1000, 1000, device="cuda")  # 4,000,000 bytes
    mask = torch.tensor([i % 2 == 0 for i in range(1000)], device="cuda")
    torch.cuda.reset_peak_memory_stats()
    base = allocated()
    y = x[mask]  # 500 rows
    assert y.shape == (500, 1000) and y.is_contiguous()
    assert allocated() == base + block(2_000_000)
    # The peak also held nonzero's [500, 1] int64 index (4000 bytes).
    assert torch.cuda.max_memory_allocated() == base + block(2_000_000) + block(4000)
    del y
    assert allocated() == base


def test_mask_indexing_saves_the_mask_only():
    x = torch.ones(1000, 1000, device="cuda", requires_grad=True)
    mask = torch.tensor([i < 10 for i in range(1000)], device="cuda")
    base = allocated()
    y = x[mask]
    assert y.grad_fn.name() == "IndexBackward0"
    assert allocated() == base + block(40_000)  # the output; nonzero's index died
    y.sum().backward()
    assert x.grad.shape == (1000, 1000)
    assert x.grad[:10].sum().item() == 10_000 and x.grad[10:].sum().item() == 0


def test_masked_assignment_of_a_number_allocates_nothing():
    c = torch.zeros(1000, device="cuda")
    mask = c == 0
    base = allocated()
    torch.cuda.reset_peak_memory_stats()
    c[mask] = 2.0
    assert (allocated(), torch.cuda.max_memory_allocated()) == (base, base)
    assert c.sum().item() == 2000.0


def test_meta_mode_comparisons_keep_sizes_and_masks_need_values():
    matmulviz.set_cuda_mode("meta")
    x = torch.empty(3, 4, device="cuda")
    m = x > 0
    assert (m.shape, m.dtype, allocated()) == ((3, 4), torch.bool, block(48) + block(12))
    with pytest.raises(NotImplementedError, match="mask"):
        x[m]
    with pytest.raises(NotImplementedError, match="nonzero"):
        torch.nonzero(m)
