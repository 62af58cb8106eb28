"""Functions whose C++ (CompositeImplicitAutograd, above the dispatch to SimTensors) takes another
path for a simulated tensor than for a plain CUDA tensor on a GPU. While a simulation runs they
replace torch.nn.functional's (install/uninstall), so that torch.nn.functional's own callers
(multi_head_attention_forward, which the TorchFunctionMode cannot see into) reach them too, and
run them as PyTorch runs them on a GPU: the same aten ops, called through the dispatcher (so
autograd records the same nodes), in the same order. Where PyTorch's own code already takes the
GPU's path (no simulated tensor among the arguments, a 2-d linear, ...), PyTorch's function runs.

- torch.nn.functional.linear (aten/src/ATen/native/Linear.cpp, linear): where the input is
  neither 2-d nor a contiguous 3-d tensor, it runs matmul and adds the bias, out of place when
  the bias is a tensor subclass (isTensorSubclassLike, for composite compliance) and in place on
  a GPU's plain tensors: a whole output's block more for a moment.
- torch.nn.functional.scaled_dot_product_attention (transformers/attention.cpp,
  scaled_dot_product_attention): its kernel choice (_fused_sdp_choice_stub, cuda/sdp_utils.cpp)
  asks the CUDA runtime for the device's properties and, without a GPU, picks the math
  formulation. The choice here is core's rule for the simulated GPU (matmulviz._C.sdpa_backend,
  core/ops/sdpa_choice.h), and the chosen kernel's op runs with the arguments that function
  gives it: the boolean mask made additive (convert_boolean_attn_mask), the memory-efficient
  kernel's mask padded and expanded (preprocess_mask), flash's head dim padded to a multiple of 8
  (pad_last_dim); under autocast, the casts of autocast's lower-precision list first
  (aten/src/ATen/autocast_mode.cpp: scaled_dot_product_attention). The math choice, an error, and
  grouped-query attention with unequal heads go to PyTorch's own function."""

import math
import os

import torch

from matmulviz import _C
from matmulviz.simulate._tensor import SimTensor

_ORIGINAL_SDPA = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
_ORIGINAL_LINEAR = torch.nn.functional.linear

_FLASH, _EFFICIENT, _CUDNN = 1, 2, 3


def install(sim):
    """Replaces torch.nn.functional's linear and scaled_dot_product_attention; returns what
    uninstall needs."""
    saved = []

    def linear(input, weight, bias=None):
        out = _linear(input, weight, bias)
        return _ORIGINAL_LINEAR(input, weight, bias) if out is NotImplemented else out

    saved.append(("linear", _ORIGINAL_LINEAR))
    torch.nn.functional.linear = linear
    if _ORIGINAL_SDPA is not None:
        def scaled_dot_product_attention(*args, **kwargs):
            out = _sdpa(sim, *args, **kwargs)
            return _ORIGINAL_SDPA(*args, **kwargs) if out is NotImplemented else out

        saved.append(("scaled_dot_product_attention", _ORIGINAL_SDPA))
        torch.nn.functional.scaled_dot_product_attention = scaled_dot_product_attention
    return saved


def uninstall(saved):
    for name, fn in saved:
        setattr(torch.nn.functional, name, fn)


def _linear(input, weight, bias=None):
    if not isinstance(bias, SimTensor) or input.dim() == 2 or (
            input.dim() == 3 and input.is_contiguous()):
        return NotImplemented  # addmm, or the fused path of a contiguous 3-d input
    if torch.is_autocast_enabled():
        return NotImplemented  # autocast casts the bias first: PyTorch's own function
    out = _ORIGINAL_LINEAR(input, weight)
    return out.add_(bias)


def _describe(t):
    return {"dtype": str(t.dtype).replace("torch.", ""), "sizes": list(t.shape),
            "strides": list(t.stride()), "storage_offset": t.storage_offset(),
            "element_size": t.element_size(), "requires_grad": t.requires_grad}


def _settings():
    backends = torch.backends.cuda
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else 0
    priority = getattr(torch._C, "_get_sdp_priority_order", lambda: [])()
    default = [_FLASH, _EFFICIENT, 0, _CUDNN, 4]
    return {"flash": backends.flash_sdp_enabled(),
            "mem_efficient": backends.mem_efficient_sdp_enabled(),
            "math": backends.math_sdp_enabled(),
            "cudnn": getattr(backends, "cudnn_sdp_enabled", lambda: False)(),
            "deterministic": torch.are_deterministic_algorithms_enabled(),
            "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
            # PyTorch's default order is replaced by cuDNN's preference (priority_order); an
            # order the program set (sdpa_kernel(..., set_priority=True)) is kept.
            "priority": [] if list(priority) == default else [b for b in priority if b != 4],
            "cudnn_version": cudnn or 0,
            "cudnn_deprioritized": os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED", "") in
            ("1", "true", "TRUE", "ON", "on", "y", "Y", "yes", "YES")}


def _autocast_casts(tensors):
    """autocast's lower_precision_fp policy (cached_cast): each floating-point CUDA tensor in
    another dtype cast to the autocast dtype."""
    dtype = torch.get_autocast_dtype("cuda")
    return [t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point()
            and t.dtype != dtype else t for t in tensors]


def _sdpa(sim, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    tensors = [query, key, value] + ([attn_mask] if attn_mask is not None else [])
    if (not all(isinstance(t, SimTensor) for t in (query, key, value))
            or any(t.dim() < 2 for t in (query, key, value))
            or len({query.dtype, key.dtype, value.dtype}) != 1):
        return NotImplemented  # PyTorch's function says what is wrong
    if torch.is_autocast_enabled("cuda") if _autocast_takes_device() else torch.is_autocast_enabled():
        casts = _autocast_casts(tensors)
        query, key, value = casts[:3]
        attn_mask = casts[3] if attn_mask is not None else None
        with torch.autocast("cuda", enabled=False):
            return _sdpa(sim, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    gqa = enable_gqa and query.dim() >= 3 and query.size(-3) != key.size(-3)
    backend, name, skipped = _C.sdpa_backend(
        _describe(query), _describe(key), _describe(value),
        _describe(attn_mask) if attn_mask is not None else None, float(dropout_p),
        bool(is_causal), bool(enable_gqa), torch.is_grad_enabled(), _settings())
    sim.note_sdpa_choice(name, skipped)
    aten = torch.ops.aten
    if backend not in (_FLASH, _EFFICIENT, _CUDNN):
        if not gqa:
            return NotImplemented
        # The math kernel with grouped-query attention: PyTorch's C++ repeats key's and value's
        # heads (pre_process_group_query_attention_input, repeat_interleave over dim -3), in
        # ways that make tensors on the real device; the same copies, made here op by op (the
        # index tensors repeat_interleave makes on a GPU, a few small blocks, are not).
        key, value = (_repeat_heads(t, query.size(-3) // t.size(-3)) for t in (key, value))
        return aten._scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p,
                                                       is_causal, scale=scale)[0]
    compute_lse = torch.is_grad_enabled() and (query.requires_grad or key.requires_grad
                                               or value.requires_grad)
    if backend == _FLASH:
        head_dim = query.size(-1)
        og_scale = scale if scale is not None else 1.0 / math.sqrt(head_dim)
        q, k, v = (_pad_last_dim(t, 8) for t in (query, key, value))
        out = aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, False,
                                                       scale=og_scale)[0]
        return out[..., :head_dim] if out.size(-1) != head_dim else out
    mask = _additive_mask(attn_mask, query.dtype)
    if backend == _EFFICIENT:
        if gqa:  # its kernel has no grouped heads: C++ repeats them first, as for math
            key, value = (_repeat_heads(t, query.size(-3) // t.size(-3)) for t in (key, value))
        if mask is not None:
            mask = _preprocess_mask(mask, query, key)
        return aten._scaled_dot_product_efficient_attention(query, key, value, mask, compute_lse,
                                                            dropout_p, is_causal,
                                                            scale=scale)[0]
    return aten._scaled_dot_product_cudnn_attention(query, key, value, mask, compute_lse,
                                                    dropout_p, is_causal, False, scale=scale)[0]


def _repeat_heads(t, groups):
    """t.repeat_interleave(groups, dim=-3): each head `groups` times, a new contiguous tensor."""
    shape = list(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], groups, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * groups, *shape[-2:])


def _autocast_takes_device():
    try:
        torch.is_autocast_enabled("cuda")
        return True
    except TypeError:  # before 2.4
        return False


def _additive_mask(mask, dtype):
    """convert_boolean_attn_mask: a boolean mask as 0 where it is True and -inf elsewhere, in the
    query's dtype; a float mask as it is."""
    if mask is None or mask.dtype != torch.bool:
        return mask
    return torch.where(mask, 0.0, torch.scalar_tensor(-math.inf, dtype=dtype, device=mask.device))


def _pad_last_dim(t, alignment):
    """pad_last_dim<alignment, false>: the last dim zero-padded to a multiple of `alignment`."""
    size = t.size(-1)
    if size % alignment == 0:
        return t
    return torch.nn.functional.pad(t, [0, alignment - size % alignment])


def _preprocess_mask(mask, query, key):
    """preprocess_mask: a mask whose strides (but the last, which must be 1) are not multiples of
    8 is zero-padded by 8 - size % 8 in its last dim and sliced back (pad_bias); then expanded to
    [batch, heads, L, S]."""
    aligned = mask.stride(-1) == 1 and all(s % 8 == 0 for s in mask.stride()[:-1])
    if not aligned:
        size = mask.size(-1)
        mask = torch.nn.functional.pad(mask, [0, 8 - size % 8])[..., :size]
    return mask.expand(query.size(0), query.size(1), query.size(2), key.size(2))
