"""Tensor methods whose argument forms are easiest in Python: shape/size/device, .to(), the
dtype shortcuts, arithmetic operators with scalars, reductions, printing. Each calls one engine
op of matmulviz._C."""

import builtins

import numpy as np

from matmulviz import _C
from matmulviz.torch._device import device as _device_cls
from matmulviz.torch._device import normalize as _normalize
from matmulviz.torch._size import Size
from matmulviz.torch._unsupported import not_supported

_Tensor = _C.Tensor


def _op(name):
    fn = getattr(_C, name, None)
    if fn is None:
        def missing(*args, **kwargs):
            raise not_supported(f"torch.{name}")
        return missing
    return fn


def _binary(tensor_op, scalar_op, reverse_scalar_op=None, symbol=""):
    def forward(self, other):
        if isinstance(other, _Tensor):
            return _op(tensor_op)(self, other)
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return _op(scalar_op)(self, float(other))
        return NotImplemented

    def reverse(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return _op(reverse_scalar_op or scalar_op)(self, float(other))
        return NotImplemented
    return forward, reverse


def _compare(name):
    """Tensor.eq/ne/lt/le/gt/ge and their operators: a tensor or a number on the right; anything
    else is NotImplemented (so `t == "a"` is False, as in PyTorch)."""
    def compare(self, other):
        if isinstance(other, (_Tensor, int, float)):
            return getattr(_C, name)(self, other)
        return NotImplemented
    compare.__name__ = name
    return compare


def _size(self, dim=None):
    sizes = self._sizes
    if dim is None:
        return Size(sizes)
    n = len(sizes)
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                         f"{max(n, 1) - 1}], but got {dim})")
    return sizes[dim]


def _to(self, *args, **kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, _Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device_cls, int)):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    return self._to(None if device is None else _normalize(device), dtype, copy)


def _cuda(self, device=None, non_blocking=False):
    return self._to("cuda" if device is None else _normalize(device), None)


def _sum(self, dim=None, keepdim=False, *, dtype=None):
    t = self if dtype is None else self.to(dtype)
    if dim is None:
        return _C.sum(t)
    dims = [dim] if isinstance(dim, int) else list(dim)
    return _C.sum_dims(t, dims, keepdim)


def _mean(self, dim=None, keepdim=False, *, dtype=None):
    t = self if dtype is None else self.to(dtype)
    if dim is None:
        return _op("mean")(t)
    dims = [dim] if isinstance(dim, int) else list(dim)
    return _op("mean_dims")(t, dims, keepdim)


def _repr(self):
    extras = []
    if self.is_cuda:
        extras.append("device='cuda:0'")
    if self.dtype not in (_C.dtype.float32, _C.dtype.int64, _C.dtype.bool):
        extras.append(f"dtype={self.dtype}")
    if self.grad_fn is not None:
        extras.append(f"grad_fn=<{self.grad_fn.name()}>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    if self.is_cuda and _C.cuda_mode() == "meta":
        body = f"..., size={tuple(self.shape)}"
    else:
        values = np.array(self.detach().cpu().tolist(), dtype=np.float64)
        if self.dtype == _C.dtype.int64:
            values = values.astype(np.int64)
        elif self.dtype == _C.dtype.bool:
            values = values.astype(np.bool_)
        body = np.array2string(values, separator=", ", prefix="tensor(", precision=4,
                               floatmode="maxprec_equal")
    return "tensor(" + body + ("".join(", " + e for e in extras)) + ")"


class _UntypedStorage:
    def __init__(self, t):
        self._t = t

    def nbytes(self):
        return self._t._storage_nbytes()

    def data_ptr(self):
        return self._t.data_ptr() - self._t.storage_offset() * self._t.element_size()

    def size(self):
        return self.nbytes()


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


def _scalar_convert(kind):
    def convert(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               "Scalar" if kind is not builtins.bool else
                               "Boolean value of Tensor with more than one value is ambiguous")
        return kind(self.item())
    return convert


def stack(tensors, dim=0):
    op = getattr(_C, "stack", None)
    if op is not None:
        return op(tensors, dim)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    return _C.cat([t.unsqueeze(dim) for t in tensors], dim)


def function_form(name):
    """torch.<name>(tensor, ...) as tensor.<name>(...)."""
    def fn(input, *args, **kwargs):
        method = getattr(_Tensor, name, None)
        if method is None:
            raise not_supported(f"torch.{name}")
        return method(input, *args, **kwargs)
    fn.__name__ = name
    return fn


def install(T):
    T.shape = property(lambda self: Size(self._sizes))
    T.size = _size
    T.device = property(lambda self: _device_cls(self._device_name))
    T.to = _to
    T.cuda = _cuda
    T.cpu = lambda self: self._to("cpu", None)
    T.float = lambda self: self._to(None, _C.dtype.float32)
    T.half = lambda self: self._to(None, _C.dtype.float16)
    T.bfloat16 = lambda self: self._to(None, _C.dtype.bfloat16)
    T.double = lambda self: self._to(None, _C.dtype.float64)
    T.long = lambda self: self._to(None, _C.dtype.int64)
    T.bool = lambda self: self._to(None, _C.dtype.bool)
    T.type_as = lambda self, other: self._to(None, other.dtype)
    T.is_floating_point = lambda self: self.dtype.is_floating_point
    T.untyped_storage = lambda self: _UntypedStorage(self)
    T.sum = _sum
    T.mean = _mean
    T.__repr__ = _repr
    T.__str__ = _repr
    T.__iter__ = _iter
    T.__float__ = _scalar_convert(float)
    T.__int__ = _scalar_convert(int)
    T.__bool__ = _scalar_convert(builtins.bool)
    T.__index__ = lambda self: int(self) if self.dtype == _C.dtype.int64 else \
        (_ for _ in ()).throw(TypeError("only integer tensors of a single element can be "
                                        "converted to an index"))
    T.__matmul__ = lambda self, other: _C.matmul(self, other) if isinstance(other, _Tensor) \
        else NotImplemented
    T.matmul = lambda self, other: _C.matmul(self, other)
    T.mm = lambda self, other: _C.mm(self, other)
    T.bmm = lambda self, other: _C.bmm(self, other)
    T.__add__, T.__radd__ = _binary("add", "add_scalar")
    T.__sub__, T.__rsub__ = _binary("sub", "sub_scalar", "rsub_scalar")
    T.__mul__, T.__rmul__ = _binary("mul", "mul_scalar")
    T.__truediv__, T.__rtruediv__ = _binary("div", "div_scalar", "rdiv_scalar")
    T.add = T.__add__
    T.sub = T.__sub__
    T.mul = T.__mul__
    T.div = T.__truediv__
    T.__neg__ = lambda self: _op("neg")(self)
    T.neg = T.__neg__
    for name in ("cos", "sin", "exp", "relu"):
        setattr(T, name, (lambda n: lambda self: _op(n)(self))(name))
    T.softmax = lambda self, dim, dtype=None: _op("softmax")(self if dtype is None
                                                              else self.to(dtype), dim)
    T.topk = lambda self, k, dim=-1, largest=True, sorted=True: _op("topk")(self, k, dim,
                                                                            largest, sorted)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(T, name, _compare(name))
        setattr(T, f"__{name}__", getattr(T, name))
    T.nonzero = lambda self: _C.nonzero(self)
    T.__hash__ = object.__hash__  # after __eq__: PyTorch keeps id-based hashing
