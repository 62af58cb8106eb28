"""SimTensor: a CUDA tensor of the simulation. It wraps a meta tensor (sizes, strides, dtype, no
data) and says "cuda:0" where a program asks from Python (.device, .is_cuda, printing). Every
aten op on it goes to the running Simulation (__torch_dispatch__), which runs the op on the meta
tensors and accounts the outputs' storages in the caching-allocator model.

To PyTorch's C++ the wrapper is a CUDA tensor on a CUDA build of 2.x (a gradient: a meta tensor),
and a meta tensor on Debian's CPU-only 1.13, which has no CUDA device type to carry (_device.py
says why and what that takes)."""

import copy

import torch

from matmulviz.simulate._device import TENSOR_BASE

CUDA = torch.device("cuda", 0)

_simulation = None  # the running Simulation (set by Simulation.__enter__)


def current_simulation():
    if _simulation is None:
        raise RuntimeError("matmulviz.simulate: a simulated CUDA tensor was used after its "
                           "simulation ended")
    return _simulation


def set_simulation(sim):
    global _simulation
    _simulation = sim


# Whether a TorchFunctionMode is on (2.x; 1.13 never has ours on below its handler).
_function_mode_on = getattr(torch._C, "_is_torch_function_mode_enabled", lambda: False)


def run_op(func, args, kwargs):
    """An aten op on SimTensors, to the running simulation. The simulation's TorchFunctionMode
    is on while autograd's engine runs (Simulation._run_backward, for the Python hooks it
    calls): the simulation's own torch calls go on without it, as they do in the forward."""
    if _function_mode_on():
        with torch._C.DisableTorchFunction():
            return current_simulation().run_op(func, args, kwargs)
    return current_simulation().run_op(func, args, kwargs)


class SimTensor(torch.Tensor):
    """A data-less CUDA tensor; `_elem` is the meta tensor it wraps (with values="cpu", a CPU
    tensor with the values); `device`: what C++ sees (_device.py; None: elem's device)."""

    @staticmethod
    def __new__(cls, elem, device=None):
        r = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, layout=elem.layout, device=device or elem.device,
            requires_grad=elem.requires_grad)
        r._elem = elem
        return r

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return run_op(func, args, kwargs or {})

    @property
    def device(self):
        return CUDA

    @property
    def is_cuda(self):
        return True

    @property
    def is_meta(self):
        return False

    # A gradient is a meta tensor to C++ while autograd's engine computes it (_device.py); the
    # one left in .grad is read as the tensor's own kind, so that code comparing C++ devices
    # (the optimizers' foreach grouping) sees a parameter and its gradient on one device.
    @property
    def grad(self):
        g = TENSOR_BASE.grad.__get__(self)
        if (isinstance(g, SimTensor) and _simulation is not None
                and TENSOR_BASE.device.__get__(g) != TENSOR_BASE.device.__get__(self)):
            g = _simulation.as_device_of(g, self)
            TENSOR_BASE.grad.__set__(self, g)
        return g

    @grad.setter
    def grad(self, value):
        TENSOR_BASE.grad.__set__(self, value)

    @grad.deleter
    def grad(self):
        TENSOR_BASE.grad.__set__(self, None)

    def get_device(self):
        return 0

    # nn.Parameter(t) of a tensor subclass sets t._is_param (1.13 and 2.x): the simulation
    # notes the block as a parameter's.
    @property
    def _is_param(self):
        return getattr(self, "_sim_is_param", False)

    @_is_param.setter
    def _is_param(self, value):
        self._sim_is_param = value
        if value and _simulation is not None:
            _simulation.note_parameter(self)

    def __repr__(self, *, tensor_contents=None):
        extra = ""
        if self.dtype != torch.get_default_dtype():
            extra += f", dtype={self.dtype}"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{type(self.grad_fn).__name__}>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor(..., device='cuda:0', size={tuple(self.shape)}{extra})"

    def __deepcopy__(self, memo):
        """copy.deepcopy (nn.TransformerEncoder's copies of its layer, EMA models): a clone, a
        new block of the same size as on a GPU (torch/_tensor.py, Tensor.__deepcopy__, copies
        the storage), with the same requires_grad, gradient and attributes. PyTorch's own
        version would deep-copy `_elem` too, leaving the clone on a storage no block holds."""
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            return torch.Tensor.__deepcopy__(self, memo)  # PyTorch's error for a non-leaf
        with torch.no_grad():
            new = self.clone()
        if self.requires_grad:
            new.requires_grad_()
        memo[id(self)] = new
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        for name, value in self.__dict__.items():
            if name == "_sim_is_param":
                new._is_param = value  # a parameter's copy is a parameter's block too
            elif name != "_elem":
                setattr(new, name, copy.deepcopy(value, memo))
        return new

    def untyped_storage(self):
        """The storage as a SimStorage: its size, and resize_() as FSDP2 frees and re-allocates
        its unsharded parameters' storages (torch/distributed/fsdp/_fully_shard/_fsdp_param.py,
        free_storage, alloc_storage)."""
        return SimStorage(self)

    def __reduce_ex__(self, proto):
        """torch.save / pickle: as a CUDA tensor with its values (values="cpu"), or as a meta
        tensor of its sizes (simulate/_checkpoints.py)."""
        from matmulviz.simulate import _checkpoints
        return _checkpoints.reduce(self, proto)


class SimStorage:
    """The untyped storage of a SimTensor: nbytes()/size() its meta storage's, resize_(n) frees
    the storage's block and, for n > 0, allocates one of n bytes (a CUDA storage's resize_ frees
    its memory and takes new memory from the caching allocator: aten/src/ATen/native/cuda/
    Resize.cpp, resize_bytes_cuda). data_ptr() is an id of the storage, nonzero and equal for
    tensors on one storage (a simulated storage has no address); the rest is the meta
    storage's."""

    def __init__(self, t):
        self._tensor = t
        self._storage = t._elem.untyped_storage()

    def size(self):
        return self._storage.size()

    def nbytes(self):
        return self._storage.nbytes()

    def resize_(self, nbytes):
        current_simulation().resize_storage(self._tensor, nbytes)
        return self

    def data_ptr(self):
        return self._storage._cdata

    @property
    def device(self):
        return CUDA

    @property
    def is_cuda(self):
        return True

    def __getattr__(self, name):
        return getattr(self._storage, name)
