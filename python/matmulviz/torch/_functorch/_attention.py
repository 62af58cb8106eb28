"""The fused attention ops of a traced joint graph: rows of _decompositions.OPS and BACKWARD.

torch.nn.functional.scaled_dot_product_attention is CompositeImplicitAutograd: AOTAutograd's
joint graph records the fused op it dispatches to (aten/src/ATen/native/transformers/
attention.cpp: _fused_sdp_choice; matmulviz picks as core/ops/attention.h does), a tuple value
read by getitem nodes, and in the backward that op's derivative (tools/autograd/
derivatives.yaml), also a tuple with getitems. Argument lists are native_functions.yaml's:

  _scaled_dot_product_efficient_attention(query, key, value, attn_bias, compute_log_sumexp,
      dropout_p, is_causal, *, scale) -> (output, log_sumexp, philox_seed, philox_offset)
  _scaled_dot_product_efficient_attention_backward(grad_out, query, key, value, attn_bias, out,
      logsumexp, philox_seed, philox_offset, dropout_p, grad_input_mask, is_causal, *, scale)
      -> (grad_query, grad_key, grad_value, grad_attn_bias)
  _scaled_dot_product_flash_attention(query, key, value, dropout_p, is_causal,
      return_debug_mask, *, scale) -> (output, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
      philox_seed, philox_offset, debug_attn_mask)
  _scaled_dot_product_flash_attention_backward(grad_out, query, key, value, out, logsumexp,
      cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *,
      scale) -> (grad_query, grad_key, grad_value)

The logsumexp is float32 [batch, heads, rows]: flash L rows, efficient ceil(L / 32) * 32 (0 when
compute_log_sumexp is False, i.e. no input requires grad); philox_seed and philox_offset are
0-dim int64 tensors (8 bytes each for the partitioner's _size_of; host tensors on the engine, as
PyTorch creates them without dropout). FLOPs: torch/utils/flop_counter.py's sdpa_flop_count
2 * b * h * L * S * (E + Ev) and sdpa_backward_flop_count 2 * b * h * L * S * (3 * E + 2 * Ev).
The graph holds getitems of the outputs the backward reads: efficient 0 to 3, flash 0, 1, 6, 7.
"""

from matmulviz import _C
from matmulviz.torch._functorch._op import TupleOp

EFFICIENT = "_scaled_dot_product_efficient_attention"
FLASH = "_scaled_dot_product_flash_attention"
# The outputs a joint graph reads (getitem nodes), per forward op.
READ_OUTPUTS = {EFFICIENT: (0, 1, 2, 3), FLASH: (0, 1, 6, 7)}


def _flops(q, k, v, *rest):
    b, h, l, e = q
    return 2 * b * h * l * k[2] * (e + v[3])


def _backward_flops(g, q, k, v, *rest):
    b, h, l, e = q
    return 2 * b * h * l * k[2] * (3 * e + 2 * v[3])


def _out(q, v):
    return (q[:3] + [v[3]], None)


def _efficient_items(q, k, v, bias, compute_lse, *rest):
    rows = (q[2] + 31) // 32 * 32 if compute_lse else 0
    return [_out(q, v), (q[:2] + [rows], _C.dtype.float32), ([], _C.dtype.int64),
            ([], _C.dtype.int64)]


def _flash_items(q, k, v, *rest):
    return [_out(q, v), (q[:3], _C.dtype.float32), None, None, None, None,
            ([], _C.dtype.int64), ([], _C.dtype.int64), None]


def _grad_items(g, q, k, v, *rest):
    return [(q, None), (k, None), (v, None)]


def _with_scale(fn):
    return lambda *args: fn(*args[:-1], scale=args[-1])


OPS = {
    EFFICIENT: TupleOp(_efficient_items, _with_scale(_C._scaled_dot_product_efficient_attention),
                       _flops),
    EFFICIENT + "_backward": TupleOp(
        lambda *a: _grad_items(*a) + [None],
        _with_scale(_C._scaled_dot_product_efficient_attention_backward), _backward_flops),
    FLASH: TupleOp(_flash_items, _with_scale(_C._scaled_dot_product_flash_attention), _flops),
    FLASH + "_backward": TupleOp(
        _grad_items, _with_scale(_C._scaled_dot_product_flash_attention_backward),
        _backward_flops),
}


def _efficient_backward(e, n, grad):
    q, k, v, bias, _, dropout, causal, scale = n.args
    out = n.outputs
    mask = [a.requires_grad for a in (q, k, v)] + [False]
    return e(EFFICIENT + "_backward", grad, q, k, v, bias, e.result(out[0]), out[1], out[2],
             out[3], dropout, mask, causal, scale)


def _flash_backward(e, n, grad):
    q, k, v, dropout, causal, _, scale = n.args
    out = n.outputs
    return e(FLASH + "_backward", grad, q, k, v, e.result(out[0]), out[1], None, None,
             q.shape[2], k.shape[2], dropout, causal, out[6], out[7], scale)


def _grad_of(backward, index):
    """The formula for query (0), key (1) or value (2): one backward op per forward node (made at
    the first argument that needs a gradient), then its getitem. `grads` maps output index to
    gradient; only the output (0) is differentiable."""
    def formula(e, n, grads):
        node = e.memo(n, lambda: backward(e, n, grads[0]))
        return e.getitem(node, index)
    return formula


BACKWARD = {
    EFFICIENT: {i: _grad_of(_efficient_backward, i) for i in range(3)},
    FLASH: {i: _grad_of(_flash_backward, i) for i in range(3)},
}
