"""Tensor methods whose argument forms are easiest in Python: shape/size/device, .to(), the
dtype shortcuts, arithmetic operators with scalars, reductions, printing. Each calls one engine
op of matmulviz._C."""

import builtins
import weakref

import numpy as np

from matmulviz import _C
from matmulviz.torch._device import device as _device_cls
from matmulviz.torch._device import normalize as _normalize
from matmulviz.torch._size import Size
from matmulviz.torch._args import invalid_combination, type_name
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
        if isinstance(other, (int, float)):  # bool too: True counts as the int 1
            return _op(scalar_op)(self, other)
        return NotImplemented

    def reverse(self, other):
        if isinstance(other, (int, float)):
            return _op(reverse_scalar_op or scalar_op)(self, other)
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


def _bitwise(name):
    """Tensor.bitwise_and/or/xor and & | ^: a tensor or a number on the right (a float raises
    PyTorch's "not implemented for 'Float'")."""
    def op(self, other):
        if isinstance(other, (_Tensor, int, float)):
            return getattr(_C, name)(self, other)
        return NotImplemented
    op.__name__ = name
    return op


def _same_or(self, result):
    """`self` itself when an op gave back the same tensor (PyTorch returns the very object:
    `x.to(x.dtype) is x`), else the result."""
    return self if result._is(self) else result


def _convert(self, device, dtype, copy=False):
    return _same_or(self, self._to(device, dtype, copy))


def _size(self, dim=None):
    sizes = self._sizes
    if dim is None:
        return Size(sizes)
    n = len(sizes)
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                         f"{max(n, 1) - 1}], but got {dim})")
    return sizes[dim]


_TO_SIGNATURES = [
    "(torch.dtype dtype, bool non_blocking, bool copy, *, torch.memory_format memory_format)",
    "(torch.device device, torch.dtype dtype, bool non_blocking, bool copy, *, "
    "torch.memory_format memory_format)",
    "(Tensor other, bool non_blocking, bool copy, *, torch.memory_format memory_format)"]


def _is_dtype(d):
    return isinstance(d, _C.dtype) or type(d).__name__ == "_NotYetDType"


def _to(self, *args, **kwargs):
    """Tensor.to(dtype), to(device, dtype=None), to(other), each with non_blocking and copy."""
    given = dict(kwargs)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and _is_dtype(rest[0]):
        dtype = rest.pop(0)
    elif rest and isinstance(rest[0], _Tensor):
        other = rest.pop(0)
        dtype, device = other.dtype, other.device
    elif rest and isinstance(rest[0], (str, _device_cls, int)) and \
            not isinstance(rest[0], builtins.bool):
        device = rest.pop(0)
        if rest and _is_dtype(rest[0]):
            dtype = rest.pop(0)
    flags = [a for a in rest[:2] if isinstance(a, builtins.bool)]
    if len(flags) != len(rest) or (dtype is not None and not _is_dtype(dtype)):
        raise invalid_combination("to", args, given, _TO_SIGNATURES)
    if len(flags) == 2:
        copy = flags[1]
    return _convert(self, None if device is None else _normalize(device), dtype, copy)


# PyTorch's signatures of the methods bound in C++, for the parser's TypeErrors on arguments of
# the wrong type (pybind11's own "incompatible function arguments" is replaced by them).
_METHOD_SIGNATURES = {
    "transpose": ["(int dim0, int dim1)", "(name dim0, name dim1)"],
    "narrow": ["(int dim, int start, int length)", "(int dim, Tensor start, int length)"],
    "select": ["(name dim, int index)", "(int dim, int index)"],
    "unsqueeze": [("int", "dim")],
    "squeeze": ["()", "(int dim)", "(tuple of ints dim)", "(name dim)"],
    "flatten": ["(int start_dim, int end_dim)", "(int start_dim, int end_dim, name out_dim)",
                "(name start_dim, name end_dim, name out_dim)",
                "(tuple of names dims, name out_dim)"],
    "chunk": [("int", "chunks"), ("int", "dim")],
    "split": ["(int split_size, int dim)", "(tuple of ints split_size, int dim)"],
    "diagonal": ["(*, name outdim, name dim1, name dim2, int offset)",
                 "(int offset, int dim1, int dim2)"],
    "stride": ["(int dim)", "(name dim)", "()"],
    "expand_as": [("Tensor", "other")],
    "view_as": [("Tensor", "other")],
    "reshape_as": [("Tensor", "other")],
}


def _matches(kind, value):
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, builtins.bool)
    if kind == "bool":
        return isinstance(value, builtins.bool)
    if kind == "Tensor":
        return isinstance(value, _Tensor)
    return True


def _parse_error(name, signatures, args, kwargs):
    """The TypeError PyTorch's parser raises for `name`(*args, **kwargs): for one signature (a
    list of (type, name)) the first argument of the wrong type, else an invalid combination."""
    if signatures and isinstance(signatures[0], tuple):
        params = signatures
        for pos, (value, (kind, pname)) in enumerate(zip(args, params), 1):
            if value is not None and not _matches(kind, value):
                return TypeError(f"{name}(): argument '{pname}' (position {pos}) must be {kind}, "
                                 f"not {type_name(value)}")
        for key, value in kwargs.items():
            kinds = dict((p, k) for k, p in params)
            if key in kinds and value is not None and not _matches(kinds[key], value):
                return TypeError(f"{name}(): argument '{key}' must be {kinds[key]}, not "
                                 f"{type_name(value)}")
        signatures = ["(" + ", ".join(f"{k} {p}" for k, p in params) + ")"]
    return invalid_combination(name, args, kwargs, signatures)


def _parsed(name, method):
    signatures = _METHOD_SIGNATURES[name]

    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except TypeError as e:
            if "incompatible function arguments" not in str(e):
                raise
            raise _parse_error(name, signatures, args, kwargs) from None
    call.__name__ = name
    call.__doc__ = method.__doc__
    return call


def _cuda(self, device=None, non_blocking=False):
    return _convert(self, "cuda" if device is None else _normalize(device), None)


_SUM_SIGNATURES = ["(*, torch.dtype dtype)",
                   "(tuple of ints dim, bool keepdim, *, torch.dtype dtype)",
                   "(tuple of names dim, bool keepdim, *, torch.dtype dtype)"]


def _dims_arg(name, dim, keepdim, dtype, signatures):
    ok = isinstance(dim, int) and not isinstance(dim, builtins.bool) or \
        isinstance(dim, (tuple, list)) and all(isinstance(d, int) for d in dim)
    if not ok or not isinstance(keepdim, builtins.bool) or \
            (dtype is not None and not _is_dtype(dtype)):
        args = (dim,) if keepdim is False else (dim, keepdim)
        kwargs = {} if dtype is None else {"dtype": dtype}
        raise invalid_combination(name, args, kwargs, signatures)


def _sum(self, dim=None, keepdim=False, *, dtype=None):
    if dim is not None or keepdim is not False or dtype is not None:
        _dims_arg("sum", 0 if dim is None else dim, keepdim, dtype, _SUM_SIGNATURES)
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
            if kind is builtins.bool:
                raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
            raise ValueError("only one element tensors can be converted to Python scalars")
        return kind(self.item())
    return convert


def _checked(fn, name, value, op):
    """op, once `value` (a method's first argument) is checked to be a Tensor."""
    if not isinstance(value, _Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")
    return op


def stack(tensors, dim=0):
    op = getattr(_C, "stack", None)
    if op is not None:
        return op(tensors, dim)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    return _C.cat([t.unsqueeze(dim) for t in tensors], dim)


# The Python object of each leaf that requires grad, by its engine tensor, so that
# `grad_fn.next_functions[i][0].variable is a` holds as in PyTorch (the engine's AccumulateGrad
# holds the tensor, not the Python object). Weak: a leaf's entry goes with its object.
_leaves = weakref.WeakValueDictionary()


def _remember_leaf(t):
    if t.requires_grad and t.is_leaf:
        _leaves[t._impl_id] = t


def _install_leaf_registry(T):
    engine_requires_grad_ = T.requires_grad_
    prop = T.requires_grad

    def requires_grad_(self, requires_grad=True):
        engine_requires_grad_(self, requires_grad)
        _remember_leaf(self)
        return self

    def set_requires_grad(self, value):
        prop.fset(self, value)
        _remember_leaf(self)

    T.requires_grad_ = requires_grad_
    T.requires_grad = property(prop.fget, set_requires_grad)
    variable = _C.Node.variable

    def node_variable(node):
        t = variable.fget(node)
        return _leaves.get(t._impl_id, t)

    _C.Node.variable = property(node_variable)


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
    T.cpu = lambda self: _convert(self, "cpu", None)
    T.float = lambda self: _convert(self, None, _C.dtype.float32)
    T.half = lambda self: _convert(self, None, _C.dtype.float16)
    T.bfloat16 = lambda self: _convert(self, None, _C.dtype.bfloat16)
    T.double = lambda self: _convert(self, None, _C.dtype.float64)
    T.long = lambda self: _convert(self, None, _C.dtype.int64)
    T.bool = lambda self: _convert(self, None, _C.dtype.bool)
    T.type_as = lambda self, other: _convert(self, None, other.dtype)
    T.contiguous = lambda self, memory_format=None: _same_or(self, _C.contiguous(self))
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
    T.matmul = lambda self, other: _checked("matmul", "other", other, _C.matmul)(self, other)
    T.mm = lambda self, mat2: _checked("mm", "mat2", mat2, _C.mm)(self, mat2)
    T.bmm = lambda self, mat2: _checked("bmm", "mat2", mat2, _C.bmm)(self, mat2)
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
    T.bitwise_not = T.__invert__ = lambda self: _C.bitwise_not(self)
    for name, symbol in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")):
        method = _bitwise(name)
        setattr(T, name, method)
        setattr(T, f"__{symbol}__", method)
        setattr(T, f"__r{symbol}__", method)  # & | ^ commute
    T.__hash__ = object.__hash__  # after __eq__: PyTorch keeps id-based hashing
    T.allclose = lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: \
        _torch_function("allclose")(self, other, rtol, atol, equal_nan)
    _install_leaf_registry(T)
    for name in _METHOD_SIGNATURES:
        setattr(T, name, _parsed(name, getattr(T, name)))


def _torch_function(name):
    import matmulviz.torch
    return getattr(matmulviz.torch, name)
