"""Tracing a Python function into a joint graph (docs/compile.md, "Where the tracer lives").

While tracing, the engine's ops that matmulviz.torch calls (the functions of matmulviz._C and the
Tensor methods bound in C++) are wrapped: each call runs for real with grad mode off, and the
wrapper records the aten op it is after decomposition (mm, cos, t, view, ...; torch.matmul of
2-d tensors is mm, Tensor.transpose is permute) with its arguments. A tensor an op reads that no
recorded op made is a primal (a leaf f closes over, or a constant made inside f). Ops outside
the table raise NotImplementedError naming the op and the script line that called it.
FlopCounterMode does not count the tracing run."""

import os
import traceback

from matmulviz import _C
from matmulviz.torch._functorch import _attention
from matmulviz.torch._functorch._graph import JointGraph

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_BACKEND = 'torch.compile(f, backend="aot_eager_decomp_partition")'
SUPPORTED = ("mm, bmm, matmul of two 2-d or two 3-d tensors, cos, sin, exp, neg, relu, + - * / "
             "between tensors, + - * / with a number, sum, mean, softmax, "
             "scaled_dot_product_attention (no attn_mask), t, view, reshape, expand, permute, "
             "transpose, unsqueeze, clone, contiguous, detach")


def script_line():
    """"file:line: code" of the innermost frame outside the matmulviz package."""
    for frame in reversed(traceback.extract_stack()):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR + os.sep):
            return f"{frame.filename}:{frame.lineno}: {(frame.line or '').strip()}"
    return "?"


class _Tracer:
    def __init__(self):
        self.graph = JointGraph()
        self.values = {}   # engine tensor id -> Value
        self.alive = []    # every tensor seen, so that engine ids are not reused while tracing
        self.depth = 0

    def value(self, t):
        v = self.values.get(t._impl_id)
        if v is None:
            v = self.graph.primal(t)
            self.bind(t, v)
        return v

    def bind(self, t, v):
        self.values[t._impl_id] = v
        self.alive.append(t)
        if v.stride is None:
            v.stride = list(t.stride())
        if list(t.shape) != v.shape:  # the table's shape rule disagrees with the engine
            raise AssertionError(f"tracer: {v.op} gave {list(t.shape)}, its rule {v.shape}")

    def arg(self, a):
        return self.value(a) if isinstance(a, _C.Tensor) else a

    def record(self, op, args, result, requires_grad=None):
        v = self.graph.call(op, [self.arg(a) for a in args], script_line(), requires_grad)
        if result is not None:
            self.bind(result, v)
        return v


def unsupported(name):
    return NotImplementedError(
        f"{_BACKEND}: matmulviz's tracer does not support {name}, called at {script_line()} "
        f"(it traces {SUPPORTED})")


def _ints(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return [int(a) for a in args[0]]
    return [int(a) for a in args]


def _matmul(tr, args, result):
    a, b = args
    if a.dim() == 2 and b.dim() == 2:
        tr.record("mm", [a, b], result)
    elif a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0]:
        tr.record("bmm", [a, b], result)
    else:
        raise unsupported(f"torch.matmul of {a.dim()}-d and {b.dim()}-d tensors")


def _reshape(tr, args, result):
    x = args[0]
    if result._storage_id() == x._storage_id():
        tr.record("view", [x, list(result.shape)], result)
    else:  # reshape of a tensor whose strides forbid a view: clone, then view
        clone = tr.record("clone", [x], None)
        tr.bind(result, tr.graph.call("view", [clone, list(result.shape)], clone.line))


def _transpose(tr, args, result):
    x, d0, d1 = args[0], int(args[1]), int(args[2])
    dims = list(range(x.dim()))
    d0, d1 = d0 % x.dim(), d1 % x.dim()
    dims[d0], dims[d1] = dims[d1], dims[d0]
    tr.record("permute", [x, dims], result)


def _softmax(tr, args, result):
    """softmax as torch/_decomp/decompositions.py's _softmax decomposes it (x.contiguous(),
    amax, sub, exp, sum, div), differentiated as the one op autograd sees (`autograd`)."""
    x, dim = args[0], int(args[1])
    if x.dim() == 0 or x.dtype not in (_C.dtype.float32, _C.dtype.float64):
        raise unsupported(f"torch.softmax of a {x.dim()}-d {x.dtype} tensor (traced: float32 or "
                          "float64 with at least one dim; 16-bit softmax decomposes through "
                          "float32 conversions)")
    xv, line, call = tr.value(x), script_line(), tr.graph.call
    src = xv if x.is_contiguous() else call("clone", [xv], line, False)
    peak = call("amax", [src, [dim], True], line, False)
    exp = call("exp", [call("sub", [src, peak], line, False)], line, False)
    out = call("div", [exp, call("sum", [exp, [dim], True], line, False)], line,
               xv.requires_grad)
    out.autograd = ("_softmax", [xv, dim])
    tr.bind(result, out)


def _sdpa(tr, args, result):
    """scaled_dot_product_attention as the fused op it dispatches to, a tuple value, and getitem
    nodes of the outputs the backward reads (_attention.py)."""
    q, k, v, mask, dropout, causal, scale = args
    if mask is not None:
        raise unsupported("torch.nn.functional.scaled_dot_product_attention with an attn_mask "
                          "(is_causal=True is traced)")
    values = [tr.value(t) for t in (q, k, v)]
    needs_grad = any(x.requires_grad for x in values)  # should_compute_logsumexp
    if _C._sdpa_uses_flash(q, k, v, None, float(dropout), bool(causal), scale):
        op, rest = _attention.FLASH, [float(dropout), bool(causal), False, scale]
    else:
        op, rest = _attention.EFFICIENT, [None, needs_grad, float(dropout), bool(causal), scale]
    node = tr.graph.call(op, values + rest, script_line())
    outs = [tr.graph.getitem(node, i, requires_grad=i == 0 and needs_grad)
            for i in _attention.READ_OUTPUTS[op]]
    tr.bind(result, outs[0])


def _same_or(op):
    def handler(tr, args, result):
        if result._is(args[0]):
            tr.bind(result, tr.value(args[0]))
        elif op is None:
            raise unsupported("Tensor.to to another dtype or device (aten._to_copy)")
        else:
            tr.record(op, [args[0]], result)
    return handler


def _sum_dims(op):
    def handler(tr, args, result):
        tr.record(op, [args[0], [int(d) for d in args[1]], bool(args[2])], result)
    return handler


def _plain(op):
    return lambda tr, args, result: tr.record(op, list(args), result)


def _scalar(op):
    return lambda tr, args, result: tr.record(op, [args[0], float(args[1])], result)


# matmulviz._C functions: handler(tracer, args, result).
_C_FUNCTIONS = {
    "mm": _plain("mm"), "bmm": _plain("bmm"), "matmul": _matmul,
    "cos": _plain("cos"), "sin": _plain("sin"), "exp": _plain("exp"), "neg": _plain("neg"),
    "relu": _plain("relu"), "add": _plain("add"), "sub": _plain("sub"), "mul": _plain("mul"),
    "add_scalar": _scalar("add"), "sub_scalar": _scalar("sub"), "mul_scalar": _scalar("mul"),
    "div_scalar": _scalar("div"), "sum": _plain("sum"), "sum_dims": _sum_dims("sum"),
    "mean": _plain("mean"), "mean_dims": _sum_dims("mean"), "contiguous": _same_or("clone"),
    "clone": lambda tr, args, result: tr.record("clone", [args[0]], result),
    "div": _plain("div"), "softmax": _softmax, "scaled_dot_product_attention": _sdpa,
}
# Tensor methods bound in C++.
_METHODS = {
    # t() of a 2-d tensor, as the decompositions write it (permute [1, 0]); of fewer dims: itself
    "t": lambda tr, args, result: (tr.record("permute", [args[0], [1, 0]], result)
                                   if args[0].dim() == 2 else _plain("t")(tr, args, result)),
    "view": lambda tr, args, result: tr.record("view", [args[0], list(result.shape)], result),
    "reshape": _reshape,
    "expand": lambda tr, args, result: tr.record("expand", [args[0], list(result.shape)],
                                                 result),
    "permute": lambda tr, args, result: tr.record("permute", [args[0], _ints(args[1:])], result),
    "transpose": _transpose,
    "unsqueeze": lambda tr, args, result: tr.record(
        "unsqueeze", [args[0], int(args[1]) % (args[0].dim() + 1)], result),
    "clone": lambda tr, args, result: tr.record("clone", [args[0]], result),
    "detach": lambda tr, args, result: tr.record("view", [args[0], list(result.shape)], result,
                                                 requires_grad=False),
    "_to": _same_or(None),
}
_UNSUPPORTED_C = ("rsub_scalar", "rdiv_scalar", "cat", "stack", "einsum", "gather_bmm", "topk",
                  "eq", "ne", "lt", "le", "gt", "ge", "nonzero", "bitwise_not", "bitwise_and",
                  "bitwise_or", "bitwise_xor")
_UNSUPPORTED_METHODS = ("narrow", "select", "split", "chunk", "_split", "_chunk", "view_as",
                        "reshape_as", "expand_as", "flatten", "_flatten", "squeeze", "diagonal",
                        "__getitem__", "__setitem__")


def _wrap(tracer, owner, name, original, handler, qualified):
    def wrapper(*args, **kwargs):
        if tracer.depth:
            return original(*args, **kwargs)
        if handler is None:
            raise unsupported(qualified)
        if kwargs:
            raise unsupported(f"{qualified} with keyword arguments {sorted(kwargs)}")
        tracer.depth += 1
        try:
            result = original(*args)
        finally:
            tracer.depth -= 1
        handler(tracer, args, result)
        return result
    wrapper.__name__ = name
    return wrapper


class _Patched:
    """Wraps the engine's entry points for the duration of a trace."""

    def __init__(self, tracer):
        self._saved = []
        for owner, table, unsupported_names, prefix in (
                (_C, _C_FUNCTIONS, _UNSUPPORTED_C, "torch."),
                (_C.Tensor, _METHODS, _UNSUPPORTED_METHODS, "Tensor.")):
            names = list(table) + list(unsupported_names)
            for name in names:
                original = owner.__dict__.get(name) if owner is _C.Tensor else \
                    getattr(owner, name, None)
                if original is None:
                    continue
                self._saved.append((owner, name, original))
                setattr(owner, name, _wrap(tracer, owner, name, original, table.get(name),
                                           prefix + name.strip("_")))

    def restore(self):
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)


def trace(fn):
    """Runs fn() once with grad mode off, recording its ops; returns the finished JointGraph
    (forward, tangent, backward). Raises TypeError when fn returns no tensor, RuntimeError when
    its output is not a one-element tensor that requires grad, NotImplementedError for an op the
    tracer does not know."""
    tracer = _Tracer()
    patched = _Patched(tracer)
    grad_mode = _C.is_grad_enabled()
    _C.set_grad_enabled(False)
    try:
        with _C._FlopsNotCounted():
            out = fn()
    finally:
        _C.set_grad_enabled(grad_mode)
        patched.restore()
    graph = tracer.graph
    if not isinstance(out, _C.Tensor):
        raise TypeError(f"{_BACKEND}: f must return a tensor (a scalar loss), got "
                        f"{type(out).__name__}")
    if out._impl_id not in tracer.values or tracer.values[out._impl_id].kind != "call":
        raise RuntimeError(f"{_BACKEND}: f returns a tensor it did not compute; nothing to "
                           "differentiate")
    graph.output = tracer.values[out._impl_id]
    if out.numel() != 1:
        raise RuntimeError(f"{_BACKEND}: f must return a scalar (one-element) loss to call "
                           f".backward() on, got shape {list(out.shape)} (PyTorch: grad can be "
                           "implicitly created only for scalar outputs)")
    if not graph.output.requires_grad:
        raise RuntimeError(f"{_BACKEND}: f is not differentiable: its output does not depend on a "
                           "tensor with requires_grad=True, so there is no backward to plan "
                           "(PyTorch: element 0 of tensors does not require grad and does not "
                           "have a grad_fn)")
    graph.differentiate()
    graph.finish()
    return graph

