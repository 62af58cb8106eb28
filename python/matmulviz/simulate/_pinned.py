"""Pinned (page-locked) host memory during a simulation: Tensor.pin_memory() and is_pinned(), so
DataLoader(pin_memory=True) and `x.pin_memory().to("cuda", non_blocking=True)` run. Pinned
memory is host memory: it is not in the device's numbers. It is counted apart, as PyTorch's
CachingHostAllocator holds it (aten/src/ATen/core/CachingHostAllocator.h, allocate): each
request rounded up to a power of two, a freed block kept in the free list of its size and handed
to the next request of that size, never returned to the system by itself. A block that a
non-blocking copy used is reusable once the copy's event has completed; the simulation has no
timeline of the copy, so it is reusable at once.

A pinned tensor is a CPU tensor (a copy of the pageable one, with its values); it counts as
freed when the tensor object returned by pin_memory() dies (a view made of it does not keep the
block here, as it would on a GPU machine).

Patched while the simulation runs (every thread: DataLoader pins in a thread of its own when it
has workers): torch.Tensor.pin_memory, torch.Tensor.is_pinned, and torch.cuda's
host_memory_stats() (2.11's keys, bytes of the rounded blocks)."""

import weakref

import torch

from matmulviz.simulate import _cuda_api
from matmulviz.simulate._cuda_api import saved_attribute
from matmulviz.simulate._tensor import SimTensor
from matmulviz.simulate._version import storage_of


def _round(nbytes):
    """c10::llvm::PowerOf2Ceil: the block a request of `nbytes` gets (0 stays 0)."""
    return 0 if nbytes <= 0 else 1 << (nbytes - 1).bit_length()


class PinnedHost:
    """The caching host allocator's counts: held (blocks it owns, active and cached), active
    (handed out), their peaks, and the free blocks by size."""

    def __init__(self):
        self.held = self.held_peak = 0
        self.active = self.active_peak = 0
        self.requests = 0
        self._free = {}  # rounded size -> free blocks of that size
        self._pinned = {}  # storage data pointer -> rounded size, while the tensor lives

    def pin(self, t):
        """Tensor.pin_memory(): a pinned copy of CPU tensor `t`, allocated from the model."""
        if isinstance(t, SimTensor) or t.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{t.type()}' only dense CPU tensors can be pinned")
        if storage_of(t).data_ptr() in self._pinned:
            return t  # already pinned: PyTorch returns it as it is
        pinned = t.clone()
        size = _round(pinned.numel() * pinned.element_size())
        if self._free.get(size):
            self._free[size] -= 1
        else:
            self.held += size
            self.held_peak = max(self.held_peak, self.held)
        self.active += size
        self.active_peak = max(self.active_peak, self.active)
        self.requests += 1
        ptr = storage_of(pinned).data_ptr()
        self._pinned[ptr] = size
        weakref.finalize(pinned, self._release, ptr, size).atexit = False
        return pinned

    def _release(self, ptr, size):
        self._pinned.pop(ptr, None)
        self.active -= size
        self._free[size] = self._free.get(size, 0) + 1

    def is_pinned(self, t):
        return not isinstance(t, SimTensor) and t.device.type == "cpu" and (
            storage_of(t).data_ptr() in self._pinned)

    def stats(self):
        """torch.cuda.host_memory_stats()'s main keys (torch/cuda/memory.py)."""
        return {"allocated_bytes.current": self.held, "allocated_bytes.peak": self.held_peak,
                "active_bytes.current": self.active, "active_bytes.peak": self.active_peak,
                "active_requests.allocated": self.requests}

    def summary(self):
        """The line printed at the end of a run that pinned memory; [] if none."""
        if not self.requests:
            return []
        mib = 2**20
        return [f"matmulviz.simulate: pinned host memory (page-locked, not on the device): "
                f"peak {self.active_peak / mib:.2f} MiB in use by {self.requests} pinned "
                f"tensor(s), {self.held_peak / mib:.2f} MiB held by PyTorch's host cache "
                "(each block a power of two)"]

    def report(self):
        return {"peak_active_bytes": self.active_peak, "peak_held_bytes": self.held_peak,
                "pinned_tensors": self.requests}


def install(host):
    """Patches the pinning functions; returns what uninstall() restores."""
    saved = [saved_attribute(torch.Tensor, name) for name in ("pin_memory", "is_pinned")]
    torch.Tensor.pin_memory = lambda self, device=None: host.pin(self)
    torch.Tensor.is_pinned = lambda self, device=None: host.is_pinned(self)
    if hasattr(torch.cuda, "host_memory_stats"):
        saved.append(saved_attribute(torch.cuda, "host_memory_stats"))
        torch.cuda.host_memory_stats = host.stats
    return saved


uninstall = _cuda_api.uninstall
