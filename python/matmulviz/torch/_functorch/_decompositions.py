"""The one table of aten ops a traced joint graph may hold: for each op its output shape, its FLOPs
(as FlopCounterMode counts them), how the engine runs it, and its backward formula decomposed
into ops of this same table, as AOTAutograd's joint graph has them after
`aot_eager_decomp_partition` decomposed it.

The backward formulas are PyTorch's tools/autograd/derivatives.yaml (the 2.x entries):
  mm                self: mm_mat1_backward = grad.mm(mat2.t());  mat2: mm_mat2_backward =
                    self.t().mm(grad)
  bmm               self: grad.bmm(mat2.transpose(1, 2));  mat2: self.transpose(1, 2).bmm(grad)
                    (transpose decomposes to permute)
  cos               self: grad * -self.sin()
  sin               self: grad * self.cos()
  exp               self: grad * result
  neg               self: grad.neg()
  relu              self: threshold_backward(grad, result, 0)
  add / sub         self: grad;  other: grad / -grad (at::sum_to the operand's shape)
  mul               self: grad * other;  other: grad * self (summed to shape); mul.Scalar:
                    grad * other
  div.Scalar        self: grad / other
  div.Tensor        self: div_tensor_self_backward = grad / other;  other:
                    div_tensor_other_backward = -grad * ((self / other) / other) (summed to shape)
  _softmax          self: _softmax_backward_data(grad, result, dim, self.scalar_type()), which
                    inductor's decomposition (torch/_inductor/decomposition.py) writes as
                    mul(grad, result), sum([dim], keepdim), neg(result), prims.fma(neg, sum, mul)
  _scaled_dot_product_efficient_attention   query, key, value:
                    _scaled_dot_product_efficient_attention_backward(grad, query, key, value,
                    attn_bias, output, log_sumexp, philox_seed, philox_offset, dropout_p,
                    grad_input_mask, is_causal, scale) (output_differentiability: output only)
  _scaled_dot_product_flash_attention       query, key, value:
                    _scaled_dot_product_flash_attention_backward(grad, query, key, value, output,
                    logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
                    philox_seed, philox_offset, scale)
  sum               self: grad.expand(self.sizes()); sum.dim_IntList: sum_backward = unsqueeze
                    each reduced dim (without keepdim), then expand
  mean              self: mean_backward = grad.expand(self.sizes()) / numel (dims: unsqueeze first)
  t                 self: grad.t()
  (t decomposes to permute [1, 0] (torch/_refs: t is transpose, transpose is permute), in the
  formulas above too.) A formula that reads the op's own differentiable result (exp, relu,
  _softmax, the attention's output) reads it through two alias nodes, as AOTAutograd records a
  saved result: alias(result) after the op in the forward, alias(alias) where the backward
  unpacks it (_Emitter.result; PyTorch 2.11's joint graphs, e.g. test_compile_attention_vs_linear)
  view / expand     self: grad.reshape(self.sizes()) / at::sum_to(grad, self.sizes())
  permute           self: permute_backwards = grad.permute(inverse dims)
  unsqueeze         self: grad.squeeze(dim)
  clone             self: grad
and the decompositions of torch/_decomp/decompositions.py: at::sum_to (sum_to_size) is
`sum(grad, dims, keepdim=True)` then `view` to the operand's shape; reshape of a tensor whose
strides allow it is `view`; `_softmax` is `amax([dim], keepdim)`, `sub`, `exp`,
`sum([dim], keepdim)`, `div` (torch/_decomp/decompositions.py: _softmax), differentiated as the
one op autograd sees. A new op joins by adding its row here. Multi-output ops (the fused
attention ops) have a tuple value (`TupleOp`: one item per output, None for a non-tensor or
undefined one) read by `getitem` nodes, as FX has them.
"""

import math

from matmulviz import _C
from matmulviz.torch._functorch import _attention
from matmulviz.torch._functorch._op import Op

_ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "bool": 1}


def itemsize(dtype):
    return _ITEMSIZE[str(dtype).replace("torch.", "")]


def broadcast(a, b):
    """The broadcast shape of two shapes (as at::infer_size)."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        out.append(y if x == 1 else x)
    return list(reversed(out))


def _reduced(shape, dims, keepdim):
    dims = {d % max(len(shape), 1) for d in dims}
    if keepdim:
        return [1 if i in dims else s for i, s in enumerate(shape)]
    return [s for i, s in enumerate(shape) if i not in dims]


def _is_tensor(v):
    return isinstance(v, _C.Tensor)


def _binary(tensor_op, scalar_op):
    def run(a, b):
        return getattr(_C, tensor_op)(a, b) if _is_tensor(b) else getattr(_C, scalar_op)(a, b)
    return run


def _sum(x, dims=None, keepdim=False):
    return _C.sum(x) if dims is None else _C.sum_dims(x, list(dims), keepdim)


def _mean(x, dims=None, keepdim=False):
    return _C.mean(x) if dims is None else _C.mean_dims(x, list(dims), keepdim)


def _same(a, *rest):
    return list(a)


def _binary_shape(a, b):
    return broadcast(a, b) if isinstance(b, list) else list(a)


# The forward and backward ops. Arguments: a tensor argument's shape (a list) for shape/flops,
# its value for run; other arguments as they are.
OPS = {
    "mm": Op(lambda a, b: [a[0], b[1]], _C.mm, lambda a, b: 2 * a[0] * a[1] * b[1]),
    "bmm": Op(lambda a, b: [a[0], a[1], b[2]], _C.bmm,
              lambda a, b: 2 * a[0] * a[1] * a[2] * b[2]),
    "cos": Op(_same, _C.cos),
    "sin": Op(_same, _C.sin),
    "exp": Op(_same, _C.exp),
    "neg": Op(_same, _C.neg),
    "relu": Op(_same, _C.relu),
    "threshold_backward": Op(_same, _C.threshold_backward),
    "add": Op(_binary_shape, _binary("add", "add_scalar")),
    "sub": Op(_binary_shape, _binary("sub", "sub_scalar")),
    "mul": Op(_binary_shape, _binary("mul", "mul_scalar")),
    "div": Op(_binary_shape, _binary("div", "div_scalar")),
    "sum": Op(lambda a, dims=None, keepdim=False: [] if dims is None else
              _reduced(a, dims, keepdim), _sum),
    "mean": Op(lambda a, dims=None, keepdim=False: [] if dims is None else
               _reduced(a, dims, keepdim), _mean),
    "t": Op(lambda a: list(reversed(a)), lambda x: x.t()),
    "alias": Op(_same, lambda x: x.view(list(x.shape))),
    "view": Op(lambda a, sizes: list(sizes), lambda x, sizes: x.reshape(list(sizes))),
    "expand": Op(lambda a, sizes: list(sizes), lambda x, sizes: x.expand(list(sizes))),
    "permute": Op(lambda a, dims: [a[d] for d in dims], lambda x, dims: x.permute(list(dims))),
    "unsqueeze": Op(lambda a, d: a[:d] + [1] + a[d:], lambda x, d: x.unsqueeze(d)),
    "squeeze": Op(lambda a, d: a[:d] + a[d + 1:], lambda x, d: x.squeeze(d)),
    "clone": Op(_same, lambda x: x.clone()),
    "amax": Op(lambda a, dims, keepdim: _reduced(a, dims, keepdim),
               lambda x, dims, keepdim: _C.amax(x, dims[0], keepdim)),
    "fma": Op(lambda a, b, c: broadcast(broadcast(a, b), c), _C.fma),
    "getitem": Op(None, lambda t, i: t[i]),
}
OPS.update(_attention.OPS)


def sum_to(e, grad, shape):
    """at::sum_to(grad, shape) decomposed: sum over the broadcast dims (keepdim) then view."""
    gshape = e.shape(grad)
    if list(gshape) == list(shape):
        return grad
    lead = len(gshape) - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and gshape[lead + i] != 1]
    reduced = e("sum", grad, dims, True) if dims else grad
    return e("view", reduced, list(shape)) if e.shape(reduced) != list(shape) else reduced


def _unsqueeze_dims(e, grad, shape, dims, keepdim):
    if dims is None or keepdim:
        return grad
    for d in sorted(x % len(shape) for x in dims):
        grad = e("unsqueeze", grad, d)
    return grad


def _sum_backward(e, n, grad):
    x, dims, keepdim = (n.args + [None, False])[:3]
    return e("expand", _unsqueeze_dims(e, grad, e.shape(x), dims, keepdim), e.shape(x))


def _mean_backward(e, n, grad):
    x, dims, keepdim = (n.args + [None, False])[:3]
    shape = e.shape(x)
    count = math.prod(shape) if dims is None else math.prod(shape[d] for d in dims)
    return e("div", _sum_backward(e, n, grad), count)


def _mul_grad(other_index):
    def formula(e, n, grad):
        this = n.args[1 - other_index]
        other = n.args[other_index]
        return sum_to(e, e("mul", grad, other), e.shape(this))
    return formula


def _inverse(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return inv


def _t(e, x):
    """t() as PyTorch 2.x's decompositions write it: permute(x, [1, 0])."""
    return e("permute", x, [1, 0])


def _bmm_t(e, x):
    return e("permute", x, [0, 2, 1])


def _div_other(e, n, g):
    """div_tensor_other_backward: -grad * ((self / other) / other), summed to other's shape."""
    self, other = n.args
    ratio = e("div", e("div", self, other), other)  # before neg, as 2.11's joint graph has it
    neg = e("neg", g)
    return sum_to(e, e("mul", neg, ratio), e.shape(other))


def _softmax_backward(e, n, g):
    """_softmax_backward_data(grad, result, dim) as inductor decomposes it:
    fma(-result, sum(grad * result, [dim], keepdim=True), grad * result)."""
    dim = n.autograd[1][1]
    result = e.result(n)
    mul = e("mul", g, result)
    total = e("sum", mul, [dim], True)
    return e("fma", e("neg", result), total, mul)


# Per op, per tensor argument position: the formula giving that argument's gradient from the
# node `n` (its args are graph values or constants), the incoming gradient `grad`, and `e`, the
# emitter: e(op, *args) adds a backward node and returns it. Emitted only for arguments that
# need a gradient, in argument order (as autograd's generated code checks needs_input_grad).
BACKWARD = {
    "mm": {0: lambda e, n, g: e("mm", g, _t(e, n.args[1])),
           1: lambda e, n, g: e("mm", _t(e, n.args[0]), g)},
    "bmm": {0: lambda e, n, g: e("bmm", g, _bmm_t(e, n.args[1])),
            1: lambda e, n, g: e("bmm", _bmm_t(e, n.args[0]), g)},
    "cos": {0: lambda e, n, g: e("mul", g, e("neg", e("sin", n.args[0])))},
    "sin": {0: lambda e, n, g: e("mul", g, e("cos", n.args[0]))},
    "exp": {0: lambda e, n, g: e("mul", g, e.result(n))},
    "neg": {0: lambda e, n, g: e("neg", g)},
    "relu": {0: lambda e, n, g: e("threshold_backward", g, e.result(n))},
    "add": {0: lambda e, n, g: sum_to(e, g, e.shape(n.args[0])),
            1: lambda e, n, g: sum_to(e, g, e.shape(n.args[1]))},
    "sub": {0: lambda e, n, g: sum_to(e, g, e.shape(n.args[0])),
            1: lambda e, n, g: sum_to(e, e("neg", g), e.shape(n.args[1]))},
    "mul": {0: _mul_grad(1), 1: _mul_grad(0)},
    "div": {0: lambda e, n, g: sum_to(e, e("div", g, n.args[1]), e.shape(n.args[0])),
            1: _div_other},
    "_softmax": {0: _softmax_backward},
    "sum": {0: _sum_backward},
    "mean": {0: _mean_backward},
    "t": {0: lambda e, n, g: _t(e, g)},
    "view": {0: lambda e, n, g: e("view", g, e.shape(n.args[0]))},
    "expand": {0: lambda e, n, g: sum_to(e, g, e.shape(n.args[0]))},
    "permute": {0: lambda e, n, g: e("permute", g, _inverse(n.args[1]))},
    "unsqueeze": {0: lambda e, n, g: e("squeeze", g, n.args[1])},
    "clone": {0: lambda e, n, g: g},
}
BACKWARD.update(_attention.BACKWARD)

# The names of an op's tensor arguments (native_functions.yaml). Autograd's generated backward
# computes a node's gradients in the sorted order of these names (tools/autograd/
# load_derivatives.py sorts a function's derivatives by the names of the inputs they are for):
# mm's mat2 before self, add's other before self. Ops not listed have one differentiable input.
ARGUMENT_NAMES = {"mm": ["self", "mat2"], "bmm": ["self", "mat2"], "add": ["self", "other"],
                  "sub": ["self", "other"], "mul": ["self", "other"], "div": ["self", "other"]}


def gradient_order(op, positions):
    """`positions` (an op's argument positions with a formula) in the order its gradients are
    computed."""
    names = ARGUMENT_NAMES.get(op)
    if names is None:
        return sorted(positions)
    return sorted(positions, key=lambda i: names[i] if i < len(names) else "")
