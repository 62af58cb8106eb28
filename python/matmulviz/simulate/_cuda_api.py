"""torch.cuda's device and memory functions during a simulation, answered from the caching-
allocator model and the simulated GPU (names and memory_stats() keys as PyTorch's:
torch/cuda/memory.py, c10/cuda/CUDACachingAllocator.h DeviceStats). install() replaces them,
uninstall() restores. Also, while a simulation runs: torch.accelerator names CUDA (a PrivateUse1
backend registered for the simulation would be its answer otherwise: _device.py), torch.cuda's
lazy initialisation does nothing (PyTorch's C++ calls it before a CUDA op's arguments are used,
and there is no driver to initialise), and the optimizers' foreach and fused kernels accept SimTensors
(torch/optim/optimizer.py, torch/utils/_foreach_utils.py: _foreach_supported_types, plain
tensors and parameters only otherwise, so a GPU's default foreach AdamW would run its
single-tensor loop)."""

import types

import torch

from matmulviz import _C
from matmulviz.simulate import _tensor


def _stats(device=None):
    return dict(_C.memory_stats())


def _reset_peak(device=None):
    _C.reset_peak_memory_stats()
    if _C._record_active():
        _C._record_mark("reset_peak_memory_stats")


def _properties(sim):
    """The simulated GPU as torch.cuda.get_device_properties() describes it (the modelled
    architecture's compute capability and multiprocessor count; total_memory: the capacity)."""
    p = _C.gpu_properties()
    total = _C.device_capacity()
    return types.SimpleNamespace(name=sim.gpu_name, total_memory=total if total else 0,
                                 major=p["major"], minor=p["minor"],
                                 multi_processor_count=p["multi_processor_count"],
                                 regs_per_multiprocessor=p["regs_per_multiprocessor"],
                                 max_threads_per_multi_processor=p["max_threads_per_multi_processor"],
                                 is_integrated=False, is_multi_gpu_board=False)


def _capability(device=None):
    p = _C.gpu_properties()
    return (p["major"], p["minor"])


def _is_bf16_supported(including_emulation=True):
    """torch.cuda.is_bf16_supported (torch/cuda/__init__.py): native from sm_80 on; below it,
    emulated (True when including_emulation, as a CUDA 11+ GPU can hold bfloat16 tensors)."""
    return _C.gpu_properties()["major"] >= 8 or bool(including_emulation)


def _record_memory_history(sim):
    """torch.cuda.memory._record_memory_history(enabled="all", ...): from here on the run's
    allocations are recorded as a snapshot's trace (simulate/_snapshot.py), and the report marks
    the moment (where a real program's snapshot starts: `matmulviz-cli compare`); enabled=None
    stops the recording."""
    def record(enabled="all", *args, **kwargs):
        if enabled in (None, False):
            sim.history.stop()
            return
        if _C._record_active():
            _C._record_mark("_record_memory_history")
        if kwargs.get("clear_history"):
            sim.history.clear()
        sim.history.start()
    return record


def _dump_snapshot(sim):
    """torch.cuda.memory._dump_snapshot(filename): the recorded trace written as PyTorch writes
    it (simulate/_snapshot.py), and a mark in the report (where the real snapshot ends)."""
    def dump(filename="dump_snapshot.pickle"):
        if _C._record_active():
            _C._record_mark("_dump_snapshot")
        sim.history.write(filename)
    return dump


class _RngState:
    """torch.cuda's random-number state on a device without one: a CUDA generator's state is 16
    bytes (its seed and philox offset, CUDAGeneratorImpl::get_state); what is set is returned."""

    def __init__(self):
        self.state = torch.zeros(16, dtype=torch.uint8)
        self.seed = 0

    def install(self):
        return {
            "get_rng_state": lambda device="cuda": self.state.clone(),
            "get_rng_state_all": lambda: [self.state.clone()],
            "set_rng_state": lambda new_state, device="cuda": self._set(new_state),
            "set_rng_state_all": lambda new_states: self._set(list(new_states)[0]),
            "manual_seed": self._seed,
            "manual_seed_all": self._seed,
            "seed": lambda: None,
            "seed_all": lambda: None,
            "initial_seed": lambda: self.seed,
        }

    def _set(self, state):
        self.state = state.detach().to("cpu", torch.uint8).clone()

    def _seed(self, seed):
        self.seed = int(seed)


def _mem_get_info(device=None):
    total = _C.device_capacity() or 0
    return (max(0, total - _C.memory_reserved()), total)


def install(sim):
    """Replaces torch.cuda's functions; returns what uninstall needs to restore them."""
    replacements = {
        "is_available": lambda: True,
        "_lazy_init": lambda: None,
        "is_current_stream_capturing": lambda: False,
        "is_bf16_supported": _is_bf16_supported,
        "device_count": lambda: sim.world.nproc_per_node if sim.world else 1,
        "current_device": lambda: 0,
        "set_device": lambda device: None,
        "synchronize": lambda device=None: _C._sim_synchronize(),
        "get_device_name": lambda device=None: sim.gpu_name,
        "get_device_capability": _capability,
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
        "reset_accumulated_memory_stats": lambda device=None: _C.reset_accumulated_memory_stats(),
        "mem_get_info": _mem_get_info,
    }
    memory_only = {
        "_record_memory_history": _record_memory_history(sim),
        "_dump_snapshot": _dump_snapshot(sim),
        "_snapshot": lambda device=None, augment_with_fx_traces=False: sim.history.snapshot(),
    }
    from matmulviz.simulate._snapshot import segments
    replacements["memory_snapshot"] = lambda mempool_id=None: segments()
    replacements.update(_RngState().install())
    saved = []
    for name, fn in memory_only.items():
        saved.append((torch.cuda.memory, name, torch.cuda.memory.__dict__.get(name, _MISSING)))
        setattr(torch.cuda.memory, name, fn)
    for module in (torch.cuda, torch.cuda.memory):
        for name, fn in replacements.items():
            if module is torch.cuda.memory and not hasattr(module, name):
                continue
            saved.append((module, name, module.__dict__.get(name, _MISSING)))
            setattr(module, name, fn)
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None:
        cuda = torch.device("cuda")
        for name, fn in {"is_available": lambda check_available=False: True,
                         "current_accelerator": lambda check_available=False: cuda,
                         "device_count": lambda: sim.world.nproc_per_node if sim.world else 1,
                         "current_device_index": lambda: 0,
                         "synchronize": lambda device=None: _C._sim_synchronize()}.items():
            if hasattr(accelerator, name):
                saved.append((accelerator, name, accelerator.__dict__.get(name, _MISSING)))
                setattr(accelerator, name, fn)
    for foreach in _foreach_types():
        if _tensor.SimTensor not in foreach:
            foreach.append(_tensor.SimTensor)
            saved.append((foreach, None, _tensor.SimTensor))
    return saved


def _foreach_types():
    """The lists of tensor types the optimizers' foreach and fused paths accept
    (torch/optim/optimizer.py and torch/utils/_foreach_utils.py, _foreach_supported_types); none
    in PyTorch 1.13."""
    lists = []
    for name in ("torch.optim.optimizer", "torch.utils._foreach_utils"):
        try:
            module = __import__(name, fromlist=["_foreach_supported_types"])
        except ImportError:
            continue
        types_ = getattr(module, "_foreach_supported_types", None)
        if isinstance(types_, list) and all(types_ is not l for l in lists):
            lists.append(types_)
    return lists


_MISSING = object()


def saved_attribute(owner, name):
    """What uninstall() needs to restore `owner.name` as it is now (also when `owner` only
    inherits it, or lacks it)."""
    return (owner, name, owner.__dict__.get(name, _MISSING))


def uninstall(saved):
    for module, name, fn in reversed(saved):
        if name is None:  # a type appended to a list
            module.remove(fn)
        elif fn is _MISSING:
            delattr(module, name)
        else:
            setattr(module, name, fn)
