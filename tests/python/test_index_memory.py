"""The device memory of advanced indexing with several index tensors (x[i, j]), of assignment
through index tensors (x[i, j] = v, index_put_) and of in-place assignment recorded as
CopySlices, on matmulviz's simulated CUDA device.

No golden here (the CPU build of PyTorch has no CUDA memory). The expected numbers follow from
PyTorch's CUDA kernels: x[i, j] is at::index, which copies host (CPU) index tensors to the device
(AdvancedIndex's `indices[i].to(src.device())`) before allocating the output, and frees the
copies after the op; index_put_ allocates nothing but those copies; x[0] = v on a tensor that
requires grad is copy_ into a view (nothing allocated) and records CopySlices.
Blocks are rounded to 512 bytes (test_cuda_memory.py).
"""

import pytest

try:
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


def test_two_device_indices_allocate_only_the_output():
    x = torch.ones(1000, 1000, device="cuda")
    i = torch.arange(100, device="cuda")
    j = torch.arange(100, device="cuda")
    torch.cuda.reset_peak_memory_stats()
    base = allocated()
    y = x[i[:, None], j]  # [100, 100] float32
    assert y.shape == (100, 100) and y.is_contiguous()
    assert allocated() == base + block(40_000)
    assert torch.cuda.max_memory_allocated() == base + block(40_000)
    del y
    assert allocated() == base


def test_host_indices_are_copied_to_the_device_for_the_op_only():
    x = torch.ones(1000, 1000, device="cuda")
    i = torch.arange(1000)  # host, 8000 bytes each
    j = torch.arange(1000)
    torch.cuda.reset_peak_memory_stats()
    base = allocated()
    y = x[i, j]
    assert y.shape == (1000,)
    assert allocated() == base + block(4000)
    assert torch.cuda.max_memory_allocated() == base + block(4000) + 2 * block(8000)


def test_index_backward_saves_the_index_tensors():
    x = torch.ones(100, 100, device="cuda", requires_grad=True)
    i = torch.tensor([0, 0, 5], device="cuda")
    j = torch.tensor([1, 1, 7], device="cuda")
    base = allocated()
    y = x[i, j]
    assert y.grad_fn.name() == "IndexBackward0"
    assert y.grad_fn._saved_names == ["indices"]
    saved = y.grad_fn._saved_indices  # a tuple, as PyTorch's list of index tensors
    assert len(saved) == 2 and saved[0].data_ptr() == i.data_ptr()
    assert allocated() == base + block(12)
    y.sum().backward()
    assert x.grad[0, 1].item() == 2 and x.grad[5, 7].item() == 1 and x.grad.sum().item() == 3


def test_index_put_allocates_nothing_but_host_index_copies():
    c = torch.zeros(1000, 1000, device="cuda")
    v = torch.ones(1000, device="cuda")
    i = torch.arange(1000)
    torch.cuda.reset_peak_memory_stats()
    base = allocated()
    c[i, i] = v
    assert allocated() == base
    assert torch.cuda.max_memory_allocated() == base + 2 * block(8000)
    d = torch.arange(1000, device="cuda")
    torch.cuda.reset_peak_memory_stats()
    c[d, d] = 2.0
    assert allocated() == base + block(8000)  # d itself
    assert torch.cuda.max_memory_allocated() == base + block(8000)
    assert c.sum().item() == 2000


def test_copy_slices_allocates_nothing_forward():
    x = torch.ones(1000, device="cuda", requires_grad=True)
    z = torch.ones(1000, device="cuda", requires_grad=True)
    y = x.clone()
    base = allocated()
    y[0] = z[0]
    assert allocated() == base
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    y.sum().backward()
    assert x.grad[0].item() == 0 and x.grad.sum().item() == 999
    assert z.grad[0].item() == 1 and z.grad.sum().item() == 1


def test_assignment_into_a_view_of_a_tensor_that_requires_grad_is_refused():
    x = torch.ones(3, device="cuda", requires_grad=True)
    v = (x * 2)[1:]
    with pytest.raises(NotImplementedError, match="CopySlices"):
        v[0] = 0.0


def test_a_mask_with_an_index_tensor_indexes_with_the_masks_nonzero_columns():
    x = torch.arange(12., device="cuda").view(3, 4)
    mask = torch.tensor([True, False, True], device="cuda")
    j = torch.tensor([1, 3], device="cuda")
    torch.cuda.reset_peak_memory_stats()
    base = allocated()
    y = x[mask, j]
    assert y.tolist() == [1.0, 11.0]
    # the output, and during the op nonzero's [2, 1] int64 index
    assert allocated() == base + block(8)
    assert torch.cuda.max_memory_allocated() == base + 2 * block(8)
    x[mask, j] = 0.0
    assert x.sum().item() == 66 - 12


def test_index_put_on_a_tensor_that_requires_grad_records_index_put_backward():
    x = torch.ones(1000, device="cuda", requires_grad=True)
    v = torch.ones(2, device="cuda", requires_grad=True)
    y = x * 3
    base = allocated()
    y[torch.tensor([0, 5], device="cuda")] = v
    assert allocated() == base + block(16)  # the index tensor itself
    assert y.grad_fn.name() == "IndexPutBackward0"
    y.sum().backward()
    assert x.grad.sum().item() == 3 * 998 and x.grad[5].item() == 0
    assert v.grad.tolist() == [1.0, 1.0]
