"""torch.cuda's device and memory functions during a simulation, answered from the caching-
allocator model (names and memory_stats() keys as PyTorch's: torch/cuda/memory.py,
c10/cuda/CUDACachingAllocator.h DeviceStats). install() replaces them, uninstall() restores."""

import types

import torch

from matmulviz import _C


def _stats(device=None):
    return dict(_C.memory_stats())


def _summary(device=None, abbreviated=False):
    """A short table in the spirit of torch.cuda.memory_summary(): current and peak of each
    statistic the model keeps."""
    s = _C.memory_stats()
    lines = ["matmulviz.simulate: simulated CUDA memory (caching-allocator model)",
             f"{'metric':<24}{'current':>16}{'peak':>16}"]
    for metric in ("allocated_bytes", "requested_bytes", "reserved_bytes", "active_bytes"):
        lines.append(f"{metric:<24}{s[metric + '.all.current']:>16}{s[metric + '.all.peak']:>16}")
    lines.append(f"{'segment':<24}{s['segment.all.current']:>16}{s['segment.all.peak']:>16}")
    lines.append(f"num_alloc_retries {s['num_alloc_retries']}, num_ooms {s['num_ooms']}")
    return "\n".join(lines)


def _reset_peak(device=None):
    _C.reset_peak_memory_stats()
    if _C._record_active():
        _C._record_mark("reset_peak_memory_stats")


def _properties(sim):
    total = _C.device_capacity()
    return types.SimpleNamespace(name=sim.gpu_name, total_memory=total if total else 0,
                                 major=9, minor=0, multi_processor_count=132,
                                 is_integrated=False, is_multi_gpu_board=False)


def _mem_get_info(device=None):
    total = _C.device_capacity() or 0
    return (max(0, total - _C.memory_reserved()), total)


def install(sim):
    """Replaces torch.cuda's functions; returns what uninstall needs to restore them."""
    replacements = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda device: None,
        "synchronize": lambda device=None: None,
        "get_device_name": lambda device=None: sim.gpu_name,
        "get_device_capability": lambda device=None: (9, 0),
        "get_device_properties": lambda device=None: _properties(sim),
        "memory_allocated": lambda device=None: _C.memory_allocated(),
        "max_memory_allocated": lambda device=None: _C.max_memory_allocated(),
        "memory_reserved": lambda device=None: _C.memory_reserved(),
        "max_memory_reserved": lambda device=None: _C.max_memory_reserved(),
        "memory_cached": lambda device=None: _C.memory_reserved(),
        "memory_stats": _stats,
        "reset_peak_memory_stats": _reset_peak,
        "reset_max_memory_allocated": _reset_peak,
        "empty_cache": lambda: _C.empty_cache(),
        "memory_summary": _summary,
        "mem_get_info": _mem_get_info,
    }
    saved = []
    for module in (torch.cuda, torch.cuda.memory):
        for name, fn in replacements.items():
            if module is torch.cuda.memory and not hasattr(module, name):
                continue
            saved.append((module, name, module.__dict__.get(name, _MISSING)))
            setattr(module, name, fn)
    return saved


_MISSING = object()


def uninstall(saved):
    for module, name, fn in reversed(saved):
        if fn is _MISSING:
            delattr(module, name)
        else:
            setattr(module, name, fn)
