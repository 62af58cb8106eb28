"""The CUDA memory a script sees through matmulviz.torch: the caching allocator's rules and the
forum post's numbers, through Python's own reference counting (temporaries die at the end of
their statement)."""

import gc

import numpy as np
import pytest

import matmulviz
import matmulviz.torch as torch

MiB = 2**20


@pytest.fixture
def meta():
    gc.collect()
    matmulviz.set_cuda_mode("meta")
    yield
    gc.collect()
    matmulviz.set_cuda_mode("data")


def test_rounding_and_pools():
    gc.collect()
    base = torch.cuda.memory_allocated()
    x = torch.empty(10, device="cuda")  # 40 bytes -> one 512-byte block, small pool
    assert torch.cuda.memory_allocated() - base == 512
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.small_pool.current"] >= 512
    assert stats["requested_bytes.all.current"] >= 40
    del x
    assert torch.cuda.memory_allocated() == base


def test_cpu_tensors_are_not_counted():
    gc.collect()
    base = torch.cuda.memory_allocated()
    x = torch.ones(1000, 1000)
    assert torch.cuda.memory_allocated() == base
    y = x.cuda()
    assert torch.cuda.memory_allocated() - base == 4000256  # 4e6 bytes rounded up to 512
    assert y.device == torch.device("cuda", 0) and x.device == torch.device("cpu")


def test_temporaries_die_with_their_statement():
    gc.collect()
    c = torch.zeros(64, 64, 64, device="cuda")
    q = torch.from_numpy(np.arange(64)).long()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    s = c[q].sum()  # c[q] (1 MiB) lives only during this statement
    assert torch.cuda.max_memory_allocated() - before >= 64 * 64 * 64 * 4
    assert torch.cuda.memory_allocated() - before == 512  # the sum's 0-dim result
    del s


def _strategy1(a, c):
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[i, :, :]) for i in range(a.shape[0])],
                     dim=0)


def test_forum_direct_and_strategy3_at_full_size(meta):
    N, M = 131072, 2048
    q = torch.randint(0, M, (N,))
    for requires_grad, expected in ((False, (96, 2144)), (True, (2144, 2144))):
        a = torch.rand([N, 1, 64]).cuda()
        c = torch.rand([M, 64, 64]).cuda()
        if requires_grad:
            a.requires_grad_()
        torch.cuda.reset_peak_memory_stats()
        out = torch.matmul(a, c[q])
        assert (torch.cuda.memory_allocated() // MiB,
                torch.cuda.max_memory_allocated() // MiB) == expected
        del out, a, c


def test_saved_tensor_keeps_the_gathered_copy_alive(meta):
    a = torch.rand([4096, 1, 64]).cuda().requires_grad_()
    c = torch.rand([2048, 64, 64]).cuda()
    q = torch.randint(0, 2048, (4096,))
    before = torch.cuda.memory_allocated()
    out = torch.matmul(a, c[q])
    kept = torch.cuda.memory_allocated() - before - 4096 * 64 * 4
    assert kept == 4096 * 64 * 64 * 4  # c[q], saved as mat2 of BmmBackward0
    assert out.grad_fn.name() == "UnsafeViewBackward0" or out.grad_fn.name() == "ViewBackward0"


@pytest.mark.parametrize("mode", ["meta", "data"])
def test_zero_dim_cuda_index_selects_a_view(mode):
    """c[q[i]] with q on the device: PyTorch reads the 0-dim index with item() and selects, a
    view (no allocation), in both modes; in meta mode the index's value is unknown and only the
    view's offset depends on it."""
    gc.collect()
    matmulviz.set_cuda_mode(mode)
    try:
        c = torch.zeros(8, 48, 40, device="cuda")
        q = torch.from_numpy(np.arange(8)[::-1].copy()).cuda()
        before = torch.cuda.memory_allocated()
        row = c[q[2]]
        assert row.shape == (48, 40) and row.stride() == (40, 1)
        assert torch.cuda.memory_allocated() == before
        if mode == "data":
            assert row.storage_offset() == 5 * 48 * 40
        del row, c, q
    finally:
        gc.collect()
        matmulviz.set_cuda_mode("data")


def test_out_of_memory_is_pytorchs_error():
    gc.collect()
    matmulviz.set_device_capacity("64MiB")
    try:
        x = torch.empty(8 * MiB, device="cuda")  # 32 MiB
        with pytest.raises(torch.cuda.OutOfMemoryError, match="CUDA out of memory. Tried to "
                                                             "allocate 40.00 MiB"):
            torch.empty(10 * MiB, device="cuda")
        assert isinstance(torch.cuda.OutOfMemoryError("x"), RuntimeError)
        assert torch.cuda.memory_stats()["num_ooms"] == 1
        del x
    finally:
        gc.collect()
        matmulviz.set_device_capacity(None)


def test_unsupported_names_raise_not_implemented():
    with pytest.raises(NotImplementedError, match="torch.fft is not supported"):
        torch.fft
    assert "matmul" in torch.supported()["torch"]
