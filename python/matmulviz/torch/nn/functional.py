"""torch.nn.functional: scaled_dot_product_attention on the engine (core/ops/attention.h).

It runs as PyTorch 2.x runs it on a CUDA GPU with the memory-efficient kernel
(aten/src/ATen/native/transformers/cuda/attention.cu): values by the math formulation
softmax(q @ k^T * scale + mask) @ v, memory of the fused kernel (the L x S attention matrix is
never allocated; autograd's ScaledDotProductEfficientAttentionBackward0 saves query, key,
value, the output and a float32 logsumexp [batch, heads, ceil(L / 32) * 32], and backward
recomputes the attention), FLOPs under torch.ops.aten._scaled_dot_product_efficient_attention
and its _backward.
"""

from matmulviz import _C
from matmulviz.torch._args import check_tensor as _check_tensor

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query @ key.transpose(-2, -1) * scale + attn_mask) @ value.

    query [batch, heads, L, E], key [batch, heads, S, E], value [batch, heads, S, Ev], one
    floating dtype and device; returns [batch, heads, L, Ev]. `attn_mask` broadcasts to
    [batch, heads, L, S]: bool (False masks a key out) or float of the query's dtype (added).
    `is_causal`: query i attends to keys j <= i (not with attn_mask). `scale` defaults to
    1 / sqrt(E). PyTorch's errors for mismatched dtypes, a bad mask dtype and a mask with
    is_causal; NotImplementedError for inputs that are not 4-d, dropout_p != 0 (no Philox
    generator) and enable_gqa with fewer key/value heads.
    """
    fn = "scaled_dot_product_attention"
    Tensor = _C.Tensor
    for pos, (name, t) in enumerate((("query", query), ("key", key), ("value", value)), 1):
        _check_tensor(fn, name, pos, t, Tensor)
    if attn_mask is not None:
        _check_tensor(fn, "attn_mask", 4, attn_mask, Tensor)
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3 and \
            (key.shape[-3] != query.shape[-3] or value.shape[-3] != query.shape[-3]):
        raise NotImplementedError("scaled_dot_product_attention(enable_gqa=True) with fewer key "
                                  "or value heads than query heads is not supported by "
                                  "matmulviz.torch")
    return _C.scaled_dot_product_attention(query, key, value, attn_mask, float(dropout_p),
                                           bool(is_causal),
                                           None if scale is None else float(scale))
