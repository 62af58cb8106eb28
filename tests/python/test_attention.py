"""torch.nn.functional.scaled_dot_product_attention on the simulated CUDA device: memory as
PyTorch 2.x's fused kernels allocate it, FLOPs as torch/utils/flop_counter.py counts them,
PyTorch's error messages. Values and gradients are checked against the golden (cases_attention.py).

Expected numbers, from PyTorch's sources:
- efficient kernel (float32, or any mask; cuda/attention.cu: _efficient_attention_forward):
  output [B, L, H, Ev], logsumexp float32 [B, H, ceil(L / 32) * 32] only when grad is needed;
  the node ScaledDotProductEfficientAttentionBackward0 saves q, k, v, output, log_sumexp and
  attn_bias; backward allocates grad_q, grad_k, grad_v and a float32 delta [B, H, L].
- flash kernel (float16/bfloat16, no mask; flash_api.cpp: mha_fwd, mha_bwd): output like q,
  softmax_lse float32 [B, H, L] always; backward softmax_d [B, H, L128] and dq_accum
  [B, L128, H, E32] float32 (L128: L rounded up to 128, E32: E rounded up to 32), after
  contiguous [B, L, H, E] copies of grad_out and of the output (_flash_attention_backward).
- both backwards copy a grad_out that is not contiguous in [B, L, H, Ev] order.
- never an L x S matrix: the peak during forward is the output and the logsumexp.
"""

import gc

import pytest

try:
    import matmulviz
    import matmulviz.torch as torch
    import matmulviz.torch.nn.functional as F
    from matmulviz.torch.utils.flop_counter import FlopCounterMode
except ImportError as e:
    pytest.skip(f"matmulviz.torch cannot be imported ({e}); build the project and run with "
                f"PYTHONPATH=build/release/python", allow_module_level=True)

pytestmark = pytest.mark.usefixtures("empty_device")


def stats():
    return torch.cuda.memory_stats()


def requested():
    return stats()["requested_bytes.all.current"]


def block(nbytes):
    """The caching allocator's block for a request (512-byte rounding, test_cuda_memory.py)."""
    return max(512, (nbytes + 511) // 512 * 512)


def qkv(b, h, l, s, e, ev, dtype=None, grad=True):
    dtype = dtype or torch.float32
    return [torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=grad)
            for shape in ((b, h, l, e), (b, h, s, e), (b, h, s, ev))]


def test_efficient_saves_inputs_output_and_logsumexp_only():
    B, H, L, S, E, Ev = 2, 4, 64, 96, 32, 16
    q, k, v = qkv(B, H, L, S, E, Ev)
    base, base_alloc = requested(), torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v)
    out_bytes, lse_bytes = B * H * L * Ev * 4, 4 * B * H * L  # L is a multiple of 32
    assert requested() - base == out_bytes + lse_bytes
    assert stats()["requested_bytes.all.peak"] - base == out_bytes + lse_bytes  # no L x S
    assert torch.cuda.memory_allocated() - base_alloc == block(out_bytes) + block(lse_bytes)
    fn = out.grad_fn
    assert fn.name() == "ScaledDotProductEfficientAttentionBackward0"
    assert fn._saved_query.data_ptr() == q.data_ptr()
    assert fn._saved_value.data_ptr() == v.data_ptr()
    assert fn._saved_output.data_ptr() == out.data_ptr()
    lse = fn._saved_log_sumexp
    assert (tuple(lse.shape), str(lse.dtype)) == ((B, H, L), "torch.float32")
    assert fn._saved_attn_bias is None
    assert out.shape == (B, H, L, Ev) and out.stride() == (L * H * Ev, Ev, H * Ev, 1)


def test_efficient_logsumexp_rows_padded_to_32():
    B, H, L, S, E = 1, 2, 40, 24, 8
    q, k, v = qkv(B, H, L, S, E, E)
    base = requested()
    out = F.scaled_dot_product_attention(q, k, v)
    assert requested() - base == B * H * L * E * 4 + 4 * B * H * 64
    assert tuple(out.grad_fn._saved_log_sumexp.shape) == (B, H, 64)


def test_efficient_backward_recomputes_without_the_attention_matrix():
    B, H, L, S, E, Ev = 1, 2, 128, 256, 16, 16
    q, k, v = qkv(B, H, L, S, E, Ev)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    loss = out.sum()
    before = requested()
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    grads = (B * H * L * E + B * H * S * E + B * H * S * Ev) * 4
    delta = 4 * B * H * L
    grad_out_copy = B * H * L * Ev * 4  # sum()'s expanded gradient made contiguous [B, L, H, Ev]
    peak = stats()["requested_bytes.all.peak"] - before
    expected = grad_out_copy + grads + delta
    assert expected <= peak <= expected + 64  # + the 0-dim grad of the loss
    assert peak < B * H * L * S * 4  # the attention matrix would not even fit
    # after backward the node released its logsumexp; the gradients stay
    assert requested() - before == grads - 4 * B * H * L
    assert q.grad.shape == q.shape and v.grad.shape == v.shape


def test_efficient_without_grad_allocates_only_the_output():
    B, H, L, S, E = 1, 2, 33, 16, 8
    q, k, v = qkv(B, H, L, S, E, E, grad=False)
    base = requested()
    torch.cuda.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v)
    assert out.grad_fn is None
    assert requested() - base == B * H * L * E * 4
    assert stats()["requested_bytes.all.peak"] - base == B * H * L * E * 4


def test_flash_for_bfloat16_without_mask():
    B, H, L, S, E = 2, 3, 40, 40, 64
    q, k, v = qkv(B, H, L, S, E, E, dtype=torch.bfloat16)
    base = requested()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionBackward0"
    lse = out.grad_fn._saved_logsumexp
    assert (tuple(lse.shape), str(lse.dtype)) == ((B, H, L), "torch.float32")
    assert requested() - base == B * H * L * E * 2 + 4 * B * H * L
    assert out.is_contiguous()
    loss = out.float().sum()
    before = requested()
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    bf16 = B * H * L * E * 2
    # float()'s gradient in bfloat16, then the kernel's contiguous copies of it and of the output
    copies = 3 * bf16
    grads = 3 * bf16
    work = 4 * B * H * 128 + 4 * B * 128 * H * 64  # softmax_d, dq_accum
    peak = stats()["requested_bytes.all.peak"] - before
    assert copies + grads + work <= peak <= copies + grads + work + 64


def test_flash_without_grad_frees_its_logsumexp():
    B, H, L, E = 1, 2, 16, 8
    q, k, v = qkv(B, H, L, L, E, E, dtype=torch.float16, grad=False)
    base = requested()
    torch.cuda.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v)
    assert requested() - base == B * H * L * E * 2
    assert stats()["requested_bytes.all.peak"] - base == B * H * L * E * 2 + 4 * B * H * L
    del out


@pytest.mark.parametrize("S,saved_cols", [(96, None), (100, 104)])
def test_bool_mask_becomes_a_saved_float_bias(S, saved_cols):
    """convert_boolean_attn_mask makes a float mask of q's dtype; preprocess_mask pads one whose
    row stride is not a multiple of 8 (S = 100 -> 104 columns) and the padded copy is saved."""
    B, H, L, E = 1, 2, 32, 8
    q, k, v = qkv(B, H, L, S, E, E)
    mask = torch.ones(L, S, dtype=torch.bool, device="cuda")
    base = requested()
    torch.cuda.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    kept = L * (saved_cols or S) * 4
    assert requested() - base == B * H * L * E * 4 + 4 * B * H * L + kept
    bias = out.grad_fn._saved_attn_bias
    assert tuple(bias.shape) == (B, H, L, S) and str(bias.dtype) == "torch.float32"
    if saved_cols:  # the converted mask lived until the padded copy was made
        assert stats()["requested_bytes.all.peak"] - base >= L * S * 4 + kept


def test_float_mask_is_saved_without_a_copy():
    B, H, L, S, E = 1, 2, 8, 16, 4
    q, k, v = qkv(B, H, L, S, E, E)
    mask = torch.zeros(L, S, device="cuda")
    base = requested()
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert requested() - base == B * H * L * E * 4 + 4 * B * H * 32
    assert out.grad_fn._saved_attn_bias.data_ptr() == mask.data_ptr()


@pytest.mark.parametrize("dtype,kernel", [("float32", "efficient"), ("bfloat16", "flash")])
def test_flops_as_flop_counter_registers(dtype, kernel):
    B, H, L, S, E, Ev = 2, 3, 10, 14, 8, 8
    q, k, v = qkv(B, H, L, S, E, Ev, dtype=getattr(torch, dtype))
    with FlopCounterMode(display=False) as mode:
        out = F.scaled_dot_product_attention(q, k, v)
        out.float().sum().backward()
    forward = 2 * B * H * L * S * E + 2 * B * H * L * S * Ev
    backward = 2 * B * H * L * S * (3 * E + 2 * Ev)
    counts = mode.get_flop_counts()["Global"]
    op = getattr(torch.ops.aten, f"_scaled_dot_product_{kernel}_attention")
    op_backward = getattr(torch.ops.aten, f"_scaled_dot_product_{kernel}_attention_backward")
    assert counts == {op: forward, op_backward: backward}
    assert mode.get_total_flops() == forward + backward


def test_meta_mode_accounts_the_same_memory():
    matmulviz.set_cuda_mode("meta")
    B, H, L, S, E = 4, 8, 256, 256, 64
    q, k, v = [torch.empty(B, H, n, E, device="cuda", requires_grad=True) for n in (L, S, S)]
    base = requested()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert requested() - base == B * H * L * E * 4 + 4 * B * H * L
    out.sum().backward()
    assert q.grad.shape == q.shape
    del q, k, v, out
    gc.collect()


ERRORS = [
    ("dtype", lambda q, k, v: F.scaled_dot_product_attention(q, k.double(), v), RuntimeError,
     "Expected query, key, and value to have the same dtype, but got query.dtype: float "
     "key.dtype: double and value.dtype: float instead."),
    ("dim", lambda q, k, v: F.scaled_dot_product_attention(q[0, 0, 0], k, v), RuntimeError,
     "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1 "
     "key.dim: 4 and value.dim: 4 instead."),
    ("mask_dtype", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.zeros(3, 5, dtype=torch.int64, device="cuda")), RuntimeError,
     "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
     "attn_mask.dtype: long int and  query.dtype: float instead."),
    ("causal_and_mask", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.bool, device="cuda"), is_causal=True),
     RuntimeError, "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
     "is_causal=True"),
    ("not_a_tensor", lambda q, k, v: F.scaled_dot_product_attention(1, k, v), TypeError,
     "scaled_dot_product_attention(): argument 'query' (position 1) must be Tensor, not int"),
]


@pytest.mark.parametrize("name,call,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_pytorch_error_messages(name, call, exc, message):
    """validate_sdpa_input's and _scaled_dot_product_attention_math's texts (attention.cpp)."""
    q, k, v = qkv(1, 2, 3, 5, 4, 4)
    with pytest.raises(exc) as info:
        call(q, k, v)
    assert str(info.value) == message


@pytest.mark.parametrize("call,words", [
    (lambda q, k, v: F.scaled_dot_product_attention(q[0], k[0], v[0]), "query.dim: 3"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.1), "dropout_p="),
    (lambda q, k, v: F.scaled_dot_product_attention(q.double(), k.double(), v.double()),
     "math formulation"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v[..., :3]), "multiples of 4"),
    (lambda q, k, v: F.scaled_dot_product_attention(
        *(t.to(torch.bfloat16) for t in (q, k, v))), "pads it to a multiple of 8"),
])
def test_what_matmulviz_does_not_model_is_refused(call, words):
    q, k, v = qkv(1, 2, 3, 5, 4, 4)
    with pytest.raises(NotImplementedError, match=words):
        call(q, k, v)


def test_set_default_device():
    try:
        torch.set_default_device("cuda")
        assert torch.get_default_device() == torch.device("cuda")
        base = torch.cuda.memory_allocated()
        made = [torch.zeros(128), torch.ones(2, 64), torch.empty(128), torch.full((128,), 2.0),
                torch.tensor([1.0] * 128), torch.arange(128.0), torch.randn(128),
                torch.rand(128), torch.randint(0, 5, (64,))]
        assert all(t.device.type == "cuda" for t in made)
        assert torch.cuda.memory_allocated() - base == 9 * 512
        assert torch.zeros(2, device="cpu").device.type == "cpu"
        host = torch.zeros(3, device="cpu")
        assert torch.zeros_like(host).device.type == "cpu"  # *_like keeps its input's device
        del made
    finally:
        torch.set_default_device(None)
    assert torch.get_default_device() == torch.device("cpu")
    assert torch.zeros(2).device.type == "cpu"
