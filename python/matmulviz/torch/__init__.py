"""matmulviz.torch: PyTorch's API over matmulviz's engine (`import matmulviz.torch as torch`).

Same names, signatures, defaults and exception types as PyTorch for the part matmul code uses
(docs/python.md lists it; `supported()` returns it). Anything else raises NotImplementedError
naming the function. Differences from PyTorch, on purpose:
- "cuda" is a simulated CUDA device: values are computed on this machine, memory is accounted
  by a model of PyTorch's CUDA caching allocator (or sizes only: matmulviz.set_cuda_mode("meta")).
- Random numbers (rand, randn, randint) are not PyTorch's: the same seed gives other values.
- from_numpy() and Tensor.numpy() copy (PyTorch shares the array's memory).
This module is glue: argument forms and names. Every op is the engine's (matmulviz._C).
"""

import builtins as _builtins
import math as _math

import numpy as _np

from matmulviz import _C
from matmulviz.torch import _tensor
from matmulviz.torch._dtypes import (bfloat16, bool, double, dtype, float, float16, float32,
                                     float64, half, int64, long)
from matmulviz.torch._device import device
from matmulviz.torch._size import Size
from matmulviz.torch._grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                                        set_grad_enabled)
from matmulviz.torch import autograd, cuda
from matmulviz.torch._unsupported import supported, unsupported_getattr as _unsupported_getattr

Tensor = _C.Tensor
_tensor.install(Tensor)

__all__ = [name for name in dir() if not name.startswith("_")]


def __getattr__(name):
    return _unsupported_getattr(name)


def _dtype_or(dtype_, default):
    return default if dtype_ is None else dtype_


def _dev(device_):
    return _device.normalize(device_)


from matmulviz.torch import _device  # noqa: E402  (after Tensor exists)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---- creation ----

def empty(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_C.empty(_size_args(size, "empty"), _dtype_or(dtype, float32), _dev(device)),
                   requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_C.full(_size_args(size, "zeros"), 0.0, _dtype_or(dtype, float32),
                           _dev(device)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_C.full(_size_args(size, "ones"), 1.0, _dtype_or(dtype, float32),
                           _dev(device)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = bool if isinstance(fill_value, _builtins.bool) else \
            int64 if isinstance(fill_value, int) else float32
    return _finish(_C.full(_size_args((size,), "full"), _builtins.float(fill_value), dtype,
                           _dev(device)), requires_grad)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False):
    return zeros(t.shape, dtype=dtype or t.dtype, device=device or t.device,
                 requires_grad=requires_grad)


def ones_like(t, *, dtype=None, device=None, requires_grad=False):
    return ones(t.shape, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)


def empty_like(t, *, dtype=None, device=None, requires_grad=False):
    return empty(t.shape, dtype=dtype or t.dtype, device=device or t.device,
                 requires_grad=requires_grad)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)


def from_numpy(ndarray):
    if not isinstance(ndarray, _np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _C.from_numpy(ndarray)


def _infer_dtype(array):
    kind = array.dtype.kind
    if kind == "b":
        return bool
    if kind in "iu":
        return int64
    return float32


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    if isinstance(data, Tensor):
        t = data.detach().clone()
    else:
        array = _np.asarray(data)
        if array.dtype == object:
            raise TypeError("tensor(): data must be numbers or nested sequences of numbers")
        target = _dtype_or(dtype, _infer_dtype(array))
        t = _C.from_numpy(array.astype(_NUMPY_OF[target], order="C"))  # 0-d stays 0-d
        if _NUMPY_OF[target] is _np.float32 and target is not float32:
            t = t._to(None, target)
    t = t._to(_dev(device), dtype) if (device is not None or dtype is not None) else t
    return _finish(t, requires_grad)


_NUMPY_OF = {float32: _np.float32, float64: _np.float64, float16: _np.float16,
             bfloat16: _np.float32, int64: _np.int64, bool: _np.bool_}


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = int64 if all(isinstance(v, int) for v in (start, end, step)) else float32
    if step == 0:
        raise RuntimeError("step must be nonzero")
    values = _np.arange(start, end, step, dtype=_np.float64)
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


_generator = _np.random.default_rng(0)


def manual_seed(seed):
    """Seeds matmulviz's generator (NumPy's PCG64): rand/randn/randint then repeat, but their
    numbers are not PyTorch's for the same seed."""
    global _generator
    _generator = _np.random.default_rng(int(seed))


class _MetaShape:
    """Stands for random values on the meta CUDA mode: only the shape is kept (no data)."""

    def __init__(self, shape):
        self.shape = tuple(shape)


def _random_values(shape, device, make):
    if _C.cuda_mode() == "meta" and _dev(device) != "cpu":
        return _MetaShape(shape)
    return make(tuple(shape))


def _random(values, dtype, device, requires_grad):
    if isinstance(values, _MetaShape):
        return _finish(_C.empty(list(values.shape), dtype, _dev(device)), requires_grad)
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False):
    shape = _size_args(size, "rand")
    values = _random_values(shape, device, lambda s: _generator.random(s, dtype=_np.float32))
    return _random(values, _dtype_or(dtype, float32), device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False):
    shape = _size_args(size, "randn")
    values = _random_values(shape, device,
                            lambda s: _generator.standard_normal(s, dtype=_np.float32))
    return _random(values, _dtype_or(dtype, float32), device, requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional arguments: \"size\"")
    shape = _size_args((size,), "randint")
    values = _random_values(shape, device, lambda s: _generator.integers(low, high, s))
    return _random(values, _dtype_or(dtype, int64), device, requires_grad)


def _size_args(size, fn):
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    try:
        return [int(s) if isinstance(s, int) else _bad_size(s, fn) for s in size]
    except TypeError:
        raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, but found element of "
                        f"type {type(size).__name__}") from None


def _bad_size(s, fn):
    raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, but found element of type "
                    f"{type(s).__name__} at pos 0")


# ---- math ----

def matmul(input, other):
    return _C.matmul(input, other)


def mm(input, mat2):
    return _C.mm(input, mat2)


def bmm(input, mat2):
    return _C.bmm(input, mat2)


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C.einsum(equation, list(operands))


def cat(tensors, dim=0):
    return _C.cat(list(tensors), dim)


concat = cat


def stack(tensors, dim=0):
    return _tensor.stack(list(tensors), dim)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    return input.sum(dim, keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return input.mean(dim, keepdim)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a = input.detach().cpu().double().numpy()
    b = other.detach().cpu().double().numpy()
    return _builtins.bool(_np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


for _name in ("add", "sub", "mul", "div", "neg", "cos", "sin", "exp", "relu", "softmax",
              "topk", "transpose", "permute", "reshape", "flatten", "unsqueeze", "squeeze",
              "narrow", "select", "split", "chunk", "clone", "t", "diagonal", "detach",
              "eq", "ne", "lt", "le", "gt", "ge", "nonzero"):
    globals()[_name] = _tensor.function_form(_name)

__all__ = [name for name in globals() if not name.startswith("_")]
