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
import numbers as _numbers

import numpy as _np

from matmulviz import _C
from matmulviz.torch import _tensor
from matmulviz.torch._args import check_tensor as _check_tensor
from matmulviz.torch._args import invalid_combination as _invalid_combination
from matmulviz.torch._args import passed as _passed
from matmulviz.torch._args import size_args as _parse_size
from matmulviz.torch._args import type_name as _type_name
from matmulviz.torch._dtypes import (bfloat16, bool, double, dtype, float, float16, float32,
                                     float64, half, int64, long)
from matmulviz.torch._device import device
from matmulviz.torch._size import Size
from matmulviz.torch._grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                                        set_grad_enabled)
from matmulviz.torch import autograd, cuda, nn, utils
from matmulviz.torch import _dynamo, _functorch  # noqa: F401  (torch._dynamo.reset(), config)
from matmulviz.torch._functorch._compile import compile
from matmulviz.torch import _ops as ops
from matmulviz.torch._unsupported import supported, unsupported_getattr as _unsupported_getattr

Tensor = _C.Tensor
_tensor.install(Tensor)

__all__ = [name for name in dir() if not name.startswith("_")]


def __getattr__(name):
    return _unsupported_getattr(name)


def _dtype_or(dtype_, default):
    return default if dtype_ is None else dtype_


def _dev(device_):
    """The engine's device string for a factory's device= (None: the default device)."""
    return _device.normalize(_device.default_device if device_ is None else device_)


def set_default_device(device):
    """torch.set_default_device: factory functions (empty, zeros, ones, full, tensor, arange,
    rand, randn, randint) called without device= create their tensors on `device` ("cpu",
    "cuda", a torch.device, an int for a CUDA index, or None for the CPU again). The *_like
    functions keep their input's device, as in PyTorch."""
    _device.default_device = None if device is None else _device.normalize(_device.device(device))


def get_default_device():
    """torch.get_default_device: the device factory functions use without device=."""
    return _device.device(_device.default_device or "cpu")


from matmulviz.torch import _device  # noqa: E402  (after Tensor exists)


def _finish(t, requires_grad):
    if requires_grad:
        # the factories' wording (Tensor.requires_grad_ says "only Tensors of floating point")
        if not t.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


def _is_dtype(d):
    return isinstance(d, _C.dtype) or d is bool


# zeros/ones/empty/rand/randn(*size, ...) as PyTorch's parser lists them in its errors.
_FACTORY_SIGNATURES = [
    "(tuple of ints size, *, tuple of names names, torch.dtype dtype, torch.layout layout, "
    "torch.device device, bool pin_memory, bool requires_grad)",
    "(tuple of SymInts size, *, Tensor out, torch.dtype dtype, torch.layout layout, "
    "torch.device device, bool pin_memory, bool requires_grad)"]


def _factory_args(fn, size, dtype, device, requires_grad):
    """The sizes of a factory's *size, after the checks of torch's parser on every argument."""
    kwargs = _passed(dtype=dtype, device=device, requires_grad=requires_grad)
    shape = _parse_size(size, fn, kwargs=kwargs, signatures=_FACTORY_SIGNATURES)
    if dtype is not None and not _is_dtype(dtype):
        raise _invalid_combination(fn, size, kwargs, _FACTORY_SIGNATURES)
    return shape


# ---- creation ----

def empty(*size, dtype=None, device=None, requires_grad=False):
    shape = _factory_args("empty", size, dtype, device, requires_grad)
    return _finish(_C.empty(shape, _dtype_or(dtype, float32), _dev(device)), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    shape = _factory_args("zeros", size, dtype, device, requires_grad)
    return _finish(_C.full(shape, 0.0, _dtype_or(dtype, float32), _dev(device)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    shape = _factory_args("ones", size, dtype, device, requires_grad)
    return _finish(_C.full(shape, 1.0, _dtype_or(dtype, float32), _dev(device)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    kwargs = _passed(dtype=dtype, device=device, requires_grad=requires_grad)
    number = isinstance(fill_value, _numbers.Number) and not isinstance(fill_value, complex) or \
        isinstance(fill_value, Tensor) and fill_value.dim() == 0
    if not number or \
            (dtype is not None and not _is_dtype(dtype)):
        raise _invalid_combination("full", (size, fill_value), kwargs, [
            "(tuple of ints size, Number fill_value, *, tuple of names names, torch.dtype dtype, "
            "torch.layout layout, torch.device device, bool pin_memory, bool requires_grad)",
            "(tuple of SymInts size, Number fill_value, *, Tensor out, torch.dtype dtype, "
            "torch.layout layout, torch.device device, bool pin_memory, bool requires_grad)"])
    if dtype is None:
        dtype = bool if isinstance(fill_value, _builtins.bool) else \
            int64 if isinstance(fill_value, int) else float32
    return _finish(_C.full(_parse_size((size,), "full"), _builtins.float(fill_value), dtype,
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
        try:
            array = _np.asarray(data)
        except ValueError:  # ragged
            array = None
        if array is None or array.dtype.kind not in "biuf":
            raise _data_error(data)
        target = _dtype_or(dtype, _infer_dtype(array))
        # astype(order="C") keeps a 0-d array 0-d (np.ascontiguousarray makes it 1-d)
        t = _C.from_numpy(array.astype(_NUMPY_OF[target], order="C"))
        if _NUMPY_OF[target] is _np.float32 and target is not float32:
            t = t._to(None, target)
    if device is not None or dtype is not None or _device.default_device is not None:
        t = t._to(_dev(device), dtype)
    return _finish(t, requires_grad)


def _data_error(data):
    """torch.tensor's error for data that is not a (nested sequence of) numbers
    (torch/csrc/utils/tensor_new.cpp): the dtype is inferred first (a str is "new(): invalid data
    type 'str'", another object "Could not infer dtype of NoneType"), then the sizes are those of
    the first elements and every sequence must match them ("expected sequence of length 2 at
    dim 1 (got 1)")."""
    def infer(obj):
        if isinstance(obj, str):
            return TypeError(f"new(): invalid data type '{_type_name(obj)}'")
        if isinstance(obj, (list, tuple)):
            for item in obj:
                err = infer(item)
                if err is not None:
                    return err
            return None
        if isinstance(obj, complex):
            return NotImplementedError("complex data is not supported by matmulviz.torch")
        if not isinstance(obj, (_numbers.Number, Tensor)):
            return RuntimeError(f"Could not infer dtype of {_type_name(obj)}")
        return None

    err = infer(data)
    if err is not None:
        return err
    sizes = []
    seq = data
    while isinstance(seq, (list, tuple)):
        sizes.append(len(seq))
        if not seq:
            break
        seq = seq[0]

    def check(seq, dim):
        if dim == len(sizes):
            return TypeError("not a sequence") if isinstance(seq, (list, tuple)) else None
        if not isinstance(seq, (list, tuple)):
            return TypeError("not a sequence")
        if len(seq) != sizes[dim]:
            return ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                              f"(got {len(seq)})")
        for item in seq:
            err = check(item, dim + 1)
            if err is not None:
                return err
        return None

    return check(data, 0) or NotImplementedError(
        "torch.tensor of this data is not supported by matmulviz.torch (numbers or nested "
        "sequences of numbers)")


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
    shape = _factory_args("rand", size, dtype, device, requires_grad)
    values = _random_values(shape, device, lambda s: _generator.random(s, dtype=_np.float32))
    return _random(values, _dtype_or(dtype, float32), device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False):
    shape = _factory_args("randn", size, dtype, device, requires_grad)
    values = _random_values(shape, device,
                            lambda s: _generator.standard_normal(s, dtype=_np.float32))
    return _random(values, _dtype_or(dtype, float32), device, requires_grad)


def randint(*args, size=None, low=None, high=None, dtype=None, device=None,
            requires_grad=False, generator=None):
    """randint(high, size), randint(low, high, size); low, high and size also by keyword."""
    if generator is not None:
        raise NotImplementedError("torch.randint(generator=...) is not supported by "
                                  "matmulviz.torch (torch.manual_seed seeds its one generator)")
    kwargs = _passed(size=size, low=low, high=high, dtype=dtype, device=device,
                     requires_grad=requires_grad)
    signatures = [
        "(int high, tuple of ints size, *, torch.Generator generator, Tensor out, torch.dtype "
        "dtype, torch.layout layout, torch.device device, bool pin_memory, bool requires_grad)",
        "(int low, int high, tuple of ints size, *, torch.Generator generator, Tensor out, "
        "torch.dtype dtype, torch.layout layout, torch.device device, bool pin_memory, "
        "bool requires_grad)"]
    names = ("low", "high", "size") if len(args) == 3 or (len(args) == 2 and size is not None) \
        or low is not None else ("high", "size")
    given = {"low": low, "high": high, "size": size}
    if len(args) > len(names) or any(given[n] is not None for n in names[:len(args)]):
        raise _invalid_combination("randint", args, kwargs, signatures)
    given.update(zip(names, args))
    low = 0 if given["low"] is None else given["low"]
    high, size = given["high"], given["size"]
    if not isinstance(low, int) or not isinstance(high, int) or \
            not isinstance(size, (tuple, list)) or (dtype is not None and not _is_dtype(dtype)):
        raise _invalid_combination("randint", args, kwargs, signatures)
    shape = _parse_size((size,), "randint")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    values = _random_values(shape, device, lambda s: _generator.integers(low, high, s))
    return _random(values, _dtype_or(dtype, int64), device, requires_grad)


# ---- math ----

def _tensor_args(fn, **named):
    for pos, (name, value) in enumerate(named.items(), 1):
        _check_tensor(fn, name, pos, value, Tensor)


def matmul(input, other):
    try:  # the common case first: the argument check costs a microsecond per call
        return _C.matmul(input, other)
    except TypeError:
        pass
    _tensor_args("matmul", input=input, other=other)  # PyTorch's TypeError for a non-tensor argument
    return _C.matmul(input, other)


def mm(input, mat2):
    try:  # the common case first: the argument check costs a microsecond per call
        return _C.mm(input, mat2)
    except TypeError:
        pass
    _tensor_args("mm", input=input, mat2=mat2)  # PyTorch's TypeError for a non-tensor argument
    return _C.mm(input, mat2)


def bmm(input, mat2):
    try:  # the common case first: the argument check costs a microsecond per call
        return _C.bmm(input, mat2)
    except TypeError:
        pass
    _tensor_args("bmm", input=input, mat2=mat2)  # PyTorch's TypeError for a non-tensor argument
    return _C.bmm(input, mat2)


def einsum(equation, *operands):
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{_type_name(equation)}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C.einsum(equation, _tensor_list("einsum", list(operands), 2))


def _tensor_list(fn, tensors, position=1):
    """A sequence of tensors, with the parser's errors for anything else (`position`: the
    argument's, counted from 1)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position {position}) must be tuple of "
                        f"Tensors, not {_type_name(tensors)}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {position - 1}, but got "
                            f"{_type_name(t)}")
    return list(tensors)


def cat(tensors, dim=0):
    return _C.cat(_tensor_list("cat", tensors), dim)


concat = cat


def stack(tensors, dim=0):
    return _tensor.stack(_tensor_list("stack", tensors), dim)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    return input.sum(dim, keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return input.mean(dim, keepdim)


_SCALAR_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16", "int64": "Long", "bool": "Bool"}


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _tensor_args("allclose", input=input, other=other)
    if input.dtype != other.dtype:
        names = [_SCALAR_TYPE.get(str(t.dtype)[len("torch."):], str(t.dtype))
                 for t in (input, other)]
        raise RuntimeError(f"{names[0]} did not match {names[1]}")
    _C._broadcast_shapes(list(input.shape), list(other.shape))
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
              "eq", "ne", "lt", "le", "gt", "ge", "nonzero", "bitwise_not", "bitwise_and",
              "bitwise_or", "bitwise_xor"):
    globals()[_name] = _tensor.function_form(_name)

__all__ = [name for name in globals() if not name.startswith("_")]
