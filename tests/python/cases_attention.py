"""The cases of torch.nn.functional.scaled_dot_product_attention (appended to cases.CASES).

PyTorch 1.13, which writes the golden, has no scaled_dot_product_attention:
tests/reference/make_python_golden.py gives it PyTorch 2.x's math formulation
(attention.cpp: _scaled_dot_product_attention_math), softmax(q @ k^T * scale + mask) @ v in
float32 for 16-bit inputs, so the golden holds the values and gradients PyTorch 2.x computes.
The output is compared detached: its grad_fn is the fused kernel's node on PyTorch 2.x on a GPU
(and matmulviz), not the math formulation's. Inputs are sines of arange (deterministic, every
row of every mask keeps at least one key). Error messages are checked in test_attention.py.
"""

import textwrap

CASES = []

_INPUTS = """
    F = torch.nn.functional

    def inp(*shape, phase, grad=True):
        n = 1
        for s in shape:
            n *= s
        x = (torch.arange(n, dtype=torch.float32, device=DEV) * 0.37 + phase).sin()
        x = x.view(*shape).to({dtype})
        return x.requires_grad_() if grad else x
"""


def sdpa_case(name, shapes, call, dtype="torch.float32", setup=""):
    """q, k, v of `shapes` ((B, H, L, E), (B, H, S, E), (B, H, S, Ev)); `call` the arguments
    after q, k, v; the result: the output and the three gradients of sum(out * w)."""
    (qs, ks, vs) = shapes
    code = textwrap.dedent(_INPUTS.format(dtype=dtype)) + textwrap.dedent(f"""
        q = inp(*{qs}, phase=0.1)
        k = inp(*{ks}, phase=0.7)
        v = inp(*{vs}, phase=1.3)
        {setup}
        out = F.scaled_dot_product_attention(q, k, v{call})
        w = inp(*out.shape, phase=2.0, grad=False)
        (out * w).sum().backward()
        result = (out.detach(), q.grad, k.grad, v.grad)
    """)
    CASES.append((name, code.strip() + "\n"))


def _bool_tensor(rows):
    """A bool mask as a literal (the cases' torch has no % or tril): torch.tensor([[...]])."""
    return f"torch.tensor({rows!r}, device=DEV)"


SELF = ((1, 2, 5, 8), (1, 2, 5, 8), (1, 2, 5, 8))
CROSS = ((1, 1, 4, 8), (1, 1, 7, 8), (1, 1, 7, 12))  # L != S, Ev != E
BATCH = ((2, 1, 4, 4), (2, 1, 7, 4), (2, 1, 7, 4))  # a mask per batch entry
TALL = ((1, 2, 7, 4), (1, 2, 5, 4), (1, 2, 5, 4))  # L > S

sdpa_case("sdpa_self", SELF, "")
sdpa_case("sdpa_cross_lengths", CROSS, "")
sdpa_case("sdpa_scale", CROSS, ", scale=0.5")
sdpa_case("sdpa_causal_square", SELF, ", is_causal=True")
sdpa_case("sdpa_causal_cross", CROSS, ", is_causal=True")
sdpa_case("sdpa_causal_tall", TALL, ", is_causal=True")
sdpa_case("sdpa_causal_positional", SELF, ", None, 0.0, True")
sdpa_case("sdpa_bool_mask_2d", CROSS, ", attn_mask=mask",
          setup="mask = " + _bool_tensor([[(i * 7 + j) % 3 != 1 for j in range(7)]
                                             for i in range(4)]))
sdpa_case("sdpa_bool_mask_4d_broadcast", BATCH, ", attn_mask=mask",
          setup="mask = " + _bool_tensor([[[[(b * 28 + i * 7 + j) % 4 != 2 for j in range(7)]
                                              for i in range(4)]] for b in range(2)]))
sdpa_case("sdpa_bool_mask_transposed", CROSS, ", attn_mask=mask.t()",
          setup="mask = " + _bool_tensor([[(i * 7 + j) % 4 != 3 for i in range(4)]
                                             for j in range(7)]))
sdpa_case("sdpa_float_mask", CROSS, ", attn_mask=mask",
          setup="mask = (torch.arange(28., device=DEV).view(4, 7) * 0.3).cos() * 2")
sdpa_case("sdpa_float_mask_aligned", ((1, 2, 3, 4), (1, 2, 8, 4), (1, 2, 8, 4)),
          ", attn_mask=mask, scale=0.3",
          setup="mask = (torch.arange(24., device=DEV).view(3, 8) * 0.7).sin()")
sdpa_case("sdpa_bfloat16_flash", SELF, "", dtype="torch.bfloat16")
sdpa_case("sdpa_bfloat16_flash_causal", SELF, ", is_causal=True", dtype="torch.bfloat16")
sdpa_case("sdpa_bfloat16_efficient", ((1, 2, 4, 8), (1, 2, 7, 8), (1, 2, 7, 16)), "",
          dtype="torch.bfloat16")
sdpa_case("sdpa_bfloat16_causal_mask", SELF, ", attn_mask=mask", dtype="torch.bfloat16",
          setup="mask = " + _bool_tensor([[j <= i for j in range(5)] for i in range(5)]))
