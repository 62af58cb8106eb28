"""torch.cuda's memory functions on matmulviz's simulated device, against the caching
allocator's rules.

No golden here: the CPU build of PyTorch has no CUDA memory to compare with. The expected
numbers follow from the rules of PyTorch's c10/cuda/CUDACachingAllocator.cpp (1.13 to 2.x,
default settings), the same rules the engine documents in core/memory/caching_allocator.h:
- a request is rounded up to a multiple of 512 bytes (at least 512);
- rounded sizes up to 1 MiB come from the small pool, whose segments are 2 MiB;
- larger ones from the large pool: a 20 MiB segment for requests under 10 MiB, else the
  request rounded up to a multiple of 2 MiB;
- a freed block stays reserved (cached) until empty_cache();
- memory_allocated counts rounded blocks, requested_bytes the sizes asked for.
Every test starts from an empty device (nothing allocated, nothing cached).
"""


import pytest

try:
    import matmulviz
    import matmulviz.torch as torch
except ImportError as e:
    pytest.skip(f"matmulviz.torch cannot be imported ({e}); build the project and run with "
                f"PYTHONPATH=build/release/python", allow_module_level=True)

MiB = 2**20
F32 = 4  # bytes per float32


pytestmark = pytest.mark.usefixtures("empty_device")


def stats():
    return torch.cuda.memory_stats()


def test_small_request_rounds_to_512_in_a_2_mib_segment():
    x = torch.zeros(1, device="cuda")
    assert torch.cuda.memory_allocated() == 512
    assert torch.cuda.memory_reserved() == 2 * MiB
    s = stats()
    assert s["requested_bytes.all.current"] == 4
    assert s["allocated_bytes.small_pool.current"] == 512
    assert s["allocated_bytes.large_pool.current"] == 0
    assert s["segment.all.current"] == 1
    y = torch.zeros(129, device="cuda")  # 516 bytes -> 1024
    assert torch.cuda.memory_allocated() == 512 + 1024
    assert torch.cuda.memory_reserved() == 2 * MiB  # the same small segment
    assert stats()["requested_bytes.all.current"] == 4 + 516
    del x, y
    assert torch.cuda.memory_allocated() == 0
    assert torch.cuda.memory_reserved() == 2 * MiB  # cached until empty_cache
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() == 0


def test_large_request_under_10_mib_gets_a_20_mib_segment():
    n = MiB // F32 + 1  # 1 MiB + 4 bytes: just over the small pool's limit
    a = torch.empty(n, device="cuda")
    assert torch.cuda.memory_allocated() == MiB + 512
    assert torch.cuda.memory_reserved() == 20 * MiB
    b = torch.empty(n, device="cuda")  # split from the same segment
    assert torch.cuda.memory_allocated() == 2 * (MiB + 512)
    assert torch.cuda.memory_reserved() == 20 * MiB
    s = stats()
    assert s["allocated_bytes.large_pool.current"] == 2 * (MiB + 512)
    assert s["segment.all.current"] == 1
    del a, b


def test_request_of_10_mib_or_more_gets_its_own_segment():
    a = torch.empty(10 * MiB // F32 + 1, device="cuda")  # 10 MiB + 4 bytes
    assert torch.cuda.memory_allocated() == 10 * MiB + 512
    assert torch.cuda.memory_reserved() == 12 * MiB  # rounded up to a multiple of 2 MiB
    del a


def test_freed_block_is_reused():
    a = torch.empty(3 * MiB // F32, device="cuda")
    del a
    assert torch.cuda.memory_allocated() == 0
    b = torch.empty(3 * MiB // F32, device="cuda")
    assert torch.cuda.memory_allocated() == 3 * MiB
    assert torch.cuda.memory_reserved() == 20 * MiB  # no second segment
    del b


def test_peak_and_reset():
    a = torch.empty(MiB // F32 * 4, device="cuda")  # 4 MiB
    b = torch.empty(MiB // F32 * 2, device="cuda")  # 2 MiB
    del b
    assert torch.cuda.memory_allocated() == 4 * MiB
    assert torch.cuda.max_memory_allocated() == 6 * MiB
    assert stats()["allocated_bytes.all.peak"] == 6 * MiB
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() == 4 * MiB
    assert torch.cuda.max_memory_reserved() == torch.cuda.memory_reserved()
    del a


def test_memory_stats_keys_and_consistency():
    a = torch.zeros(10, device="cuda")
    b = torch.zeros(MiB, device="cuda")
    s = stats()
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                "requested_bytes.all.current", "requested_bytes.all.peak",
                "reserved_bytes.all.current", "reserved_bytes.all.peak",
                "active_bytes.all.current", "active_bytes.all.peak", "segment.all.current",
                "num_alloc_retries", "num_ooms",
                "allocated_bytes.small_pool.current", "allocated_bytes.large_pool.current",
                "reserved_bytes.small_pool.current", "reserved_bytes.large_pool.current"):
        assert key in s, f"memory_stats() has no {key!r}"
    assert s["allocated_bytes.all.current"] == torch.cuda.memory_allocated()
    assert s["reserved_bytes.all.current"] == torch.cuda.memory_reserved()
    assert (s["allocated_bytes.small_pool.current"] + s["allocated_bytes.large_pool.current"]
            == s["allocated_bytes.all.current"])
    assert (s["reserved_bytes.small_pool.current"] + s["reserved_bytes.large_pool.current"]
            == s["reserved_bytes.all.current"])
    assert s["requested_bytes.all.current"] == 10 * F32 + MiB * F32
    del a, b


def test_cpu_tensors_are_not_device_memory():
    x = torch.zeros(1000)
    y = x.to("cpu") * 2
    assert torch.cuda.memory_allocated() == 0
    z = x.cuda()
    assert torch.cuda.memory_allocated() == 4096  # 4000 bytes rounded to 512
    back = z.cpu()
    assert torch.cuda.memory_allocated() == 4096
    del x, y, z, back


def test_views_allocate_nothing_copies_do():
    x = torch.zeros(1024, device="cuda")
    base = torch.cuda.memory_allocated()
    views = [x.view(32, 32), x[1:], x.view(32, 32).t(), x.unsqueeze(0).expand(3, 1024),
             x.narrow(0, 0, 10), x.view(32, 32)[None, ..., 1]]
    assert torch.cuda.memory_allocated() == base
    copies = [x.clone(), x.view(32, 32).t().contiguous()]
    assert torch.cuda.memory_allocated() == base + 2 * 4096
    del x, views, copies


def test_gathered_copy_lives_only_as_long_as_autograd_needs_it():
    """The forum post's lifetimes, small: c[q] is a temporary unless matmul saves it."""
    a = torch.zeros(4, 1, 64, device="cuda")        # 1024 bytes
    c = torch.zeros(8, 64, 64, device="cuda")       # 131072 bytes
    q = torch.tensor([7, 0, 7, 3])                   # on the CPU
    inputs = 1024 + 131072
    assert torch.cuda.memory_allocated() == inputs
    out = torch.matmul(a, c[q])                      # c[q]: 65536 bytes, freed at once
    assert torch.cuda.memory_allocated() == inputs + 1024
    assert torch.cuda.max_memory_allocated() == inputs + 65536 + 1024
    del out
    a.requires_grad_()
    out = torch.matmul(a, c[q])                      # now saved as mat2 for a's gradient
    assert torch.cuda.memory_allocated() == inputs + 65536 + 1024
    del out                                          # the graph goes, and c[q] with it
    assert torch.cuda.memory_allocated() == inputs
    del a, c


def test_out_of_memory_raises_pytorchs_error():
    matmulviz.set_device_capacity("1GiB")
    try:
        keep = torch.empty(MiB // F32, device="cuda")
        ooms = stats()["num_ooms"]
        with pytest.raises(torch.cuda.OutOfMemoryError) as info:
            torch.empty(2**29, device="cuda")  # 2 GiB
        assert isinstance(info.value, RuntimeError)
        assert str(info.value).startswith("CUDA out of memory. Tried to allocate 2.00 GiB")
        assert stats()["num_ooms"] == ooms + 1
        assert torch.cuda.memory_allocated() == MiB  # the failed request left nothing behind
        del keep
    finally:
        # The example capacity; restores room for the tests that follow.
        matmulviz.set_device_capacity("80GiB")
