"""torch.compile(f, backend="aot_eager_decomp_partition") over attention blocks: the joint graph
holds the fused attention op as AOTAutograd records it (a tuple node, getitem children, its
_backward op with getitems), softmax as inductor decomposes it, tensor / tensor division; the
compiled function runs the plan (forward keeps only the saved values, backward recomputes) and
its gradients equal eager mode's."""

import gc

import numpy as np
import pytest

import matmulviz.torch as torch
import matmulviz.torch._functorch.config as config
import matmulviz.torch.nn.functional as F
from matmulviz.torch._functorch import _trace
from matmulviz.torch.utils.flop_counter import FlopCounterMode

BACKEND = "aot_eager_decomp_partition"
B, L, H, E = 2, 32, 2, 16
D = H * E


def current():
    return torch.cuda.memory_stats()["requested_bytes.all.current"]


def make_block(seed=0, dtype=torch.float32):
    """Projections, causal attention, an output projection, softmax and a division."""
    torch.manual_seed(seed)
    x = torch.randn(B * L, D, device="cuda", dtype=dtype, requires_grad=True)
    ws = [torch.randn(D, D, device="cuda", dtype=dtype, requires_grad=True) for _ in range(4)]

    def f():
        q, k, v = (torch.mm(x, w).view(B, L, H, E).transpose(1, 2) for w in ws[:3])
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o = torch.mm(a.transpose(1, 2).reshape(B * L, D), ws[3])
        s = o.softmax(-1)
        return (s / (o * o + 1.0)).sum()
    return f, [x] + ws


def grads_of(fn, leaves):
    for t in leaves:
        t.grad = None
    fn().backward()
    return [t.grad.detach().cpu().numpy() for t in leaves]


@pytest.mark.parametrize("budget", [0.0, 0.3, 0.6, 1.0])
def test_gradients_equal_eager(budget):
    f, leaves = make_block()
    eager = grads_of(f, leaves)
    torch._dynamo.reset()
    with config.patch(activation_memory_budget=budget):
        g = torch.compile(f, backend=BACKEND)
        compiled = grads_of(g, leaves)
    for a, b in zip(compiled, eager):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    ops = {v.op for v in g.last_plan.recomputed}
    if budget == 0.0:  # everything from the inputs: both projections and attention recomputed
        assert {"mm", "_scaled_dot_product_efficient_attention", "amax", "exp"} <= ops
    if budget == 1.0:
        assert not ops & {"mm", "_scaled_dot_product_efficient_attention"}


def node(graph, name):
    return next(v for v in graph.nodes if v.name == name)


def names(values):
    return [getattr(a, "name", a) for a in values]


def test_joint_graph_has_the_fused_op_and_its_backward():
    f, _ = make_block()
    graph = _trace.trace(f)
    sdpa = node(graph, "_scaled_dot_product_efficient_attention")
    # (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, scale)
    assert names(sdpa.args) == ["permute", "permute_1", "permute_2", None, True, 0.0, True, None]
    assert sdpa.items is not None and sdpa.flops == 2 * B * H * L * L * (E + E)
    outs = [node(graph, n) for n in ("getitem", "getitem_1", "getitem_2", "getitem_3")]
    assert [o.args[1] for o in outs] == [0, 1, 2, 3]
    assert [o.shape for o in outs] == [[B, H, L, E], [B, H, 32], [], []]
    assert [o.nbytes for o in outs] == [B * H * L * E * 4, B * H * 32 * 4, 8, 8]
    assert sdpa.nbytes == sum(o.nbytes for o in outs)
    bw = node(graph, "_scaled_dot_product_efficient_attention_backward")
    # the output as the backward reads it: alias(alias(getitem)), as in PyTorch 2.11's graph
    assert names(bw.args)[1:] == ["permute", "permute_1", "permute_2", None, "alias_3",
                                  "getitem_1", "getitem_2", "getitem_3", 0.0,
                                  [True, True, True, False], True, None]
    assert bw.args[0].op == "permute" and bw.flops == 2 * B * H * L * L * (3 * E + 2 * E)
    grads = [node(graph, n) for n in ("getitem_4", "getitem_5", "getitem_6")]
    assert [g.args for g in grads] == [[bw, 0], [bw, 1], [bw, 2]]
    forward_ops = [v.op for v in graph.forward]
    i = forward_ops.index("amax")  # softmax: torch/_decomp's _softmax
    assert forward_ops[i:i + 5] == ["amax", "sub", "exp", "sum", "div"]
    backward_ops = [v.op for v in graph.backward]
    j = backward_ops.index("fma")  # _softmax_backward_data as inductor decomposes it
    assert backward_ops[j - 3:j + 1] == ["mul", "sum", "neg", "fma"]


@pytest.mark.parametrize("budget", [0.0, 1.0])
def test_forward_keeps_the_saved_values_and_backward_counts_the_plan(budget):
    f, leaves = make_block()
    grads_of(f, leaves)
    torch._dynamo.reset()
    with config.patch(activation_memory_budget=budget):
        g = torch.compile(f, backend=BACKEND)
        g().backward()
        gc.collect()
        base = current()
        out = g()
        activation = current() - base
        with FlopCounterMode(display=False) as mode:
            out.backward()
    info, saved, graph = g.last_plan.info, g.last_plan.saved, g.last_plan.graph
    # The plan's activation: the saved values not on an input's storage, each counted
    assert info["activation_bytes"] == sum(v.nbytes for v in saved
                                           if graph._storage(v).kind != "primal")
    # In memory: one storage per saved value's base (at 1.0, alias_3 and permute_4 both view
    # the attention's output), none for the philox seed and offset (host tensors), + the loss.
    bases = {id(b): b for b in (graph._storage(v) for v in saved)
             if b.kind != "primal" and b.name not in ("getitem_2", "getitem_3")}
    assert activation == sum(b.nbytes for b in bases.values()) + 4
    assert mode.get_total_flops() == info["backward_flops"]
    sdpa_bw = torch.ops.aten._scaled_dot_product_efficient_attention_backward
    assert mode.get_flop_counts()["Global"][sdpa_bw] == 2 * B * H * L * L * 5 * E
    if budget == 0.0:
        assert activation == 4
        sdpa = torch.ops.aten._scaled_dot_product_efficient_attention
        assert mode.get_flop_counts()["Global"][sdpa] == 2 * B * H * L * L * 2 * E


def test_flash_kernel_for_half_precision():
    torch.manual_seed(3)
    q, k, v = (torch.randn(1, 2, 16, 64, device="cuda", dtype=torch.float16, requires_grad=True)
               for _ in range(3))

    def f():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return (out * out).sum()
    graph = _trace.trace(f)
    sdpa = node(graph, "_scaled_dot_product_flash_attention")
    assert names(sdpa.args) == ["primals_1", "primals_2", "primals_3", 0.0, True, False, None]
    assert [o.args[1] for o in sdpa.outputs.values()] == [0, 1, 6, 7]
    assert sdpa.outputs[1].shape == [1, 2, 16]  # flash's logsumexp: L rows
    bw = node(graph, "_scaled_dot_product_flash_attention_backward")
    # FX named a getitem for each of the nine outputs: the philox seed and offset are 6 and 7
    assert names(bw.args)[1:] == ["primals_1", "primals_2", "primals_3", "alias_1", "getitem_1",
                                  None, None, 16, 16, 0.0, True, "getitem_6", "getitem_7",
                                  None]
    eager = grads_of(f, [q, k, v])
    for budget in (0.0, 1.0):
        torch._dynamo.reset()
        with config.patch(activation_memory_budget=budget):
            compiled = grads_of(torch.compile(f, backend=BACKEND), [q, k, v])
        for a, b in zip(compiled, eager):
            np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=1e-3,
                                       atol=1e-3)


def test_softmax_and_division_alone():
    torch.manual_seed(4)
    x = torch.randn(8, 6, device="cuda", requires_grad=True)
    w = torch.randn(6, 6, device="cuda", requires_grad=True)

    def f():
        y = torch.mm(x, w)
        p = y.t().softmax(0)  # a non-contiguous input: contiguous() first, a clone
        return (p / y.sum(1, keepdim=True).t()).sum()
    graph = _trace.trace(f)
    assert [v.op for v in graph.forward][2:8] == ["clone", "amax", "sub", "exp", "sum", "div"]
    eager = grads_of(f, [x, w])
    for budget in (0.0, 0.5, 1.0):
        torch._dynamo.reset()
        with config.patch(activation_memory_budget=budget):
            compiled = grads_of(torch.compile(f, backend=BACKEND), [x, w])
        for a, b in zip(compiled, eager):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_attention_with_a_mask_is_refused_by_name():
    q = torch.randn(1, 1, 4, 8, device="cuda", requires_grad=True)
    mask = torch.randn(4, 4, device="cuda")

    def f():
        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask).sum()
    with pytest.raises(NotImplementedError, match="scaled_dot_product_attention with an "
                                                  "attn_mask .*test_compile_attention.py"):
        torch.compile(f, backend=BACKEND)()


def test_display_table_of_the_compiled_backward(capsys):
    """FlopCounterMode(display=True) prints PyTorch's table on exit. At budget 1 the backward of
    the block recomputes nothing: eight matmul gradients of [64, 32] x [32, 32] (or its
    transpose, 2 * 64 * 32 * 32 = 131072 each) and the attention's backward,
    2 * B * H * L^2 * (3E + 2E) = 655360; 1703936 in all, shown in K (7 digits)."""
    f, _ = make_block()
    torch._dynamo.reset()
    with config.patch(activation_memory_budget=1.0):
        out = torch.compile(f, backend=BACKEND)()
        capsys.readouterr()
        with FlopCounterMode(display=True):
            out.backward()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Module", "FLOP", "%", "Total"]
    rows = [line.rsplit(None, 2) for line in lines[2:]]
    assert [(name.strip(), flops, pct) for name, flops, pct in rows] == [
        ("Global", "1703.936K", "100.00%"),
        ("- aten.mm", "1048.576K", "61.54%"),
        ("- aten._scaled_dot_product_efficient_attention_backward", "655.360K", "38.46%")]
