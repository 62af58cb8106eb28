"""torch.compile(f, backend="aot_eager_decomp_partition") with torch._functorch.config's
activation memory budget (issue 13): the traced joint graph, the plan run on the engine (memory
and FLOPs measured, gradients equal to eager mode's), config.patch, torch._dynamo.reset and the
errors for bad input.

The numbers, derived by hand for the chain of the issue (x and five weights, 512 x 512 float32,
1 MiB each; y = cos(x), y = cos(y @ w) five times, loss = y.sum()); one mm is 2 * 512^3 FLOPs:
- eager autograd saves cos's inputs (x, an input, plus the five mm outputs) and mm's left
  operands (five cos outputs; the weights are inputs): 10 MiB, plus the 4-byte loss;
  its backward runs two mm per layer: 10 mm;
- budget 1 (the default cut) keeps the same 10 MiB (5 mm outputs and 5 t(cos) views of the
  cos outputs), recomputing nothing: 10 mm in the backward;
- budget 0.5 keeps the 5 mm outputs only (5 MiB) and recomputes the 5 cheap cos: 10 mm;
- budget 0.3: the knapsack over the five forward mm (0.1 of the budget each) keeps the first
  three (3 MiB) and recomputes mm_3 and mm_4: 12 mm; after the forward, requested bytes are
  the 6 MiB of inputs + 3 MiB + the 4-byte loss = 9437188;
- budget 0 saves only the inputs and recomputes all 5 forward mm: 15 mm.
"""

import gc

import numpy as np
import pytest

import matmulviz.torch as torch
import matmulviz.torch._functorch.config as config
from matmulviz.torch._functorch import _compile
from matmulviz.torch.utils.flop_counter import FlopCounterMode

MIB = 2**20
MM = 2 * 512**3
BACKEND = "aot_eager_decomp_partition"


def current():
    return torch.cuda.memory_stats()["requested_bytes.all.current"]


def make_chain(seed=0):
    torch.manual_seed(seed)
    x = torch.randn(512, 512, device="cuda", requires_grad=True)
    ws = [torch.randn(512, 512, device="cuda", requires_grad=True) for _ in range(5)]

    def f():
        y = x.cos()
        for w in ws:
            y = torch.mm(y, w).cos()
        return y.sum()
    return f, [x] + ws


def measure(fn, leaves):
    """PyTorch's way: f and backward once, note current bytes, f again: the difference; then the
    backward's FLOPs and the gradients."""
    for t in leaves:
        t.grad = None
    fn().backward()
    for t in leaves:
        t.grad = None
    gc.collect()
    base = current()
    out = fn()
    activation = current() - base
    with FlopCounterMode(display=False) as mode:
        out.backward()
    grads = [t.grad.detach().cpu().numpy() for t in leaves]
    return activation, mode.get_total_flops(), grads


def compiled(f, budget, solver="dp"):
    with config.patch(activation_memory_budget=budget, activation_memory_budget_solver=solver):
        g = torch.compile(f, backend=BACKEND)
        g()  # plans under this config
    return g


@pytest.mark.parametrize("budget,activation,mms,recomputed", [
    (1.0, 10 * MIB, 10, []),
    (0.5, 5 * MIB, 10, ["cos", "cos_1", "cos_2", "cos_3", "cos_4"]),
    (0.3, 3 * MIB, 12, ["cos", "cos_1", "cos_2", "cos_3", "mm_3", "cos_4", "mm_4"]),
    (0.0, 0, 15, ["cos", "mm", "cos_1", "mm_1", "cos_2", "mm_2", "cos_3", "mm_3", "cos_4",
                  "mm_4"]),
])
def test_chain_memory_flops_and_gradients_measured_on_the_engine(budget, activation, mms,
                                                                  recomputed):
    f, leaves = make_chain()
    eager_activation, eager_flops, eager_grads = measure(f, leaves)
    assert eager_activation == 10 * MIB + 4
    assert eager_flops == 10 * MM
    with config.patch(activation_memory_budget=budget):
        g = torch.compile(f, backend=BACKEND)
        got_activation, flops, grads = measure(g, leaves)
    assert got_activation == activation + 4
    assert flops == mms * MM
    assert [v.name for v in g.last_plan.recomputed] == recomputed
    assert g.last_plan.info["activation_bytes"] == activation
    for e, c in zip(eager_grads, grads):
        np.testing.assert_allclose(c, e, rtol=1e-6, atol=1e-6)


def test_issue_snippet_prints_the_plan_for_0_3():
    torch._dynamo.reset()
    gc.collect()
    before = current()  # what earlier tests left alive (nothing, on a fresh device)
    f, leaves = make_chain()
    inputs = current()
    assert inputs - before == 6 * MIB
    with config.patch(activation_memory_budget=0.3):
        g = torch.compile(f, backend=BACKEND)
        out = g()
        assert torch.cuda.memory_stats()["requested_bytes.all.current"] - before == 9437188
        with FlopCounterMode(display=False) as mode:
            out.backward()
    assert mode.get_total_flops() == 3221225472 == 12 * MM
    assert mode.get_flop_counts()["Global"][torch.ops.aten.mm] == 12 * MM
    assert g.last_plan.route == "knapsack"
    assert [v.name for v in g.last_plan.saved] == [
        "primals_1", "primals_5", "primals_6", "mm", "mm_1", "mm_2", "permute_5", "permute_7",
        "permute_9"]
    del out
    gc.collect()
    assert current() == inputs + 6 * MIB  # the saved values went with the backward; grads stay


def test_joint_graph_is_aot_autograds_after_decomposition():
    f, _ = make_chain()
    g = compiled(f, 1.0)
    graph = g.last_plan.graph
    assert [v.name for v in graph.primals] == [f"primals_{i}" for i in range(1, 7)]
    assert graph.tangent.name == "tangents_1"
    assert [v.op for v in graph.forward] == ["cos"] + ["mm", "cos"] * 5 + ["sum"]
    # sum's backward expands the tangent; each cos: mul(grad, neg(sin(x))); each mm, its
    # arguments' gradients by name as PyTorch 2.11's graph has them (mat2 first):
    # permute(self, [1, 0]).mm(grad), then grad.mm(permute(mat2, [1, 0]))
    assert [v.op for v in graph.backward[:9]] == [
        "expand", "sin", "neg", "mul", "permute", "mm", "permute", "mm", "sin"]
    assert [v.flops for v in graph.forward if v.op == "mm"] == [MM] * 5
    assert graph.forward[1].nbytes == MIB and graph.forward[-1].shape == []
    assert graph.primals[0].stride == [512, 1] and graph.forward[1].stride == [512, 1]
    assert graph.backward[0].stride is None  # backward values get theirs when they run
    # w5's gradient comes first in the backward (permute(cos_4).mm(grad)), x's last (a mul)
    assert graph.gradients[-1].name == "mm_5" and graph.gradients[0].op == "mul"


def test_relu_add_mul_views_and_broadcast_gradients_match_eager():
    torch.manual_seed(3)
    x = torch.randn(64, 32, device="cuda")
    w = torch.randn(32, 48, device="cuda", requires_grad=True)
    bias = torch.randn(48, device="cuda", requires_grad=True)
    scale = torch.randn(64, 1, device="cuda", requires_grad=True)

    def f():
        h = (torch.mm(x, w) + bias).relu() * scale
        z = h.t().reshape(48 * 64).view(48, 64).transpose(0, 1).unsqueeze(0).expand(2, 64, 48)
        return (z.exp() * 0.5 - h.sin().mean()).sum() / 3.0
    leaves = [w, bias, scale]
    _, _, eager = measure(f, leaves)
    for budget in (0.0, 0.4, 1.0):
        with config.patch(activation_memory_budget=budget):
            _, _, grads = measure(torch.compile(f, backend=BACKEND), leaves)
        for e, c in zip(eager, grads):
            np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-5)


def test_eager_activation_counts_a_value_saved_twice_once_and_input_views_not():
    torch.manual_seed(4)
    x = torch.randn(512, 512, device="cuda", requires_grad=True)
    w = torch.randn(512, 512, device="cuda", requires_grad=True)

    def f():
        h = torch.mm(x.t(), w)        # MmBackward0 saves x.t() (a view of an input) and w
        return (h.cos() + h.sin()).sum()  # h saved by CosBackward0 and SinBackward0: once
    activation, _, eager = measure(f, [x, w])
    assert activation == MIB + 4
    with config.patch(activation_memory_budget=1.0):
        g = torch.compile(f, backend=BACKEND)
        compiled_activation, _, grads = measure(g, [x, w])
    assert compiled_activation == MIB + 4
    # x.t() is column-major: eager's MmBackward0 computes its gradient transposed
    # (mm_mat1_backward), so the same sums of 512 products come in another order.
    for e, c in zip(eager, grads):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-4)


def test_greedy_solver_and_plans_are_deterministic():
    f, leaves = make_chain()
    _, _, eager = measure(f, leaves)
    names = []
    for _ in range(2):
        torch._dynamo.reset()
        g = compiled(f, 0.3, "greedy")
        names.append([v.name for v in g.last_plan.saved])
    assert names[0] == names[1]
    with config.patch(activation_memory_budget=0.3, activation_memory_budget_solver="greedy"):
        _, _, grads = measure(torch.compile(f, backend=BACKEND), leaves)
    for e, c in zip(eager, grads):
        np.testing.assert_allclose(c, e, rtol=1e-6, atol=1e-6)


def test_config_patch_context_decorator_and_reset():
    assert config.activation_memory_budget == 1.0
    assert config.activation_memory_budget_solver == "dp"
    with config.patch(activation_memory_budget=0.25):
        assert config.activation_memory_budget == 0.25
        with config.patch({"activation_memory_budget_solver": "greedy"}):
            assert config.activation_memory_budget_solver == "greedy"
        assert config.activation_memory_budget_solver == "dp"
    assert config.activation_memory_budget == 1.0

    @config.patch("activation_memory_budget", 0.5)
    def inside():
        return config.activation_memory_budget
    assert inside() == 0.5 and config.activation_memory_budget == 1.0
    with pytest.raises(AttributeError, match="activation_memory_bugdet does not exist"):
        config.patch(activation_memory_bugdet=0.5)
    f, _ = make_chain()
    compiled(f, 0.3)
    assert _compile._PLANS
    torch._dynamo.reset()
    assert not _compile._PLANS


def test_set_default_device():
    torch.set_default_device("cuda")
    try:
        assert torch.randn(2, 3).device.type == "cuda"
        assert torch.zeros(2).device.type == "cuda"
        assert torch.get_default_device() == torch.device("cuda")
    finally:
        torch.set_default_device(None)
    assert torch.randn(2).device.type == "cpu"


# ---- bad input (issue 13, requirement 7) ----

@pytest.mark.parametrize("budget,text", [(1.5, "1.5"), (-0.1, "-0.1")])
def test_budget_outside_0_1_raises_pytorchs_error(budget, text):
    f, _ = make_chain()
    g = torch.compile(f, backend=BACKEND)
    with config.patch(activation_memory_budget=budget):
        with pytest.raises(RuntimeError) as e:
            g()
    assert str(e.value) == ("The valid ranges for memory budget are 0 <= m <= 1. The provided "
                            f"value is {text}")


def test_unknown_or_missing_solvers():
    f, _ = make_chain()
    g = torch.compile(f, backend=BACKEND)
    with config.patch(activation_memory_budget=0.5, activation_memory_budget_solver="knap"):
        with pytest.raises(RuntimeError, match="^Not aware of memory budget knapsack solver: "
                                               "knap$"):
            g()
    with config.patch(activation_memory_budget=0.5, activation_memory_budget_solver="ilp"):
        with pytest.raises(NotImplementedError, match="not 'ilp'"):
            g()


def test_not_differentiable_and_non_scalar_outputs_are_refused():
    x = torch.randn(8, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="f is not differentiable: its output does not depend"):
        torch.compile(lambda: torch.mm(x, x).sum(), backend=BACKEND)()
    with pytest.raises(RuntimeError, match=r"scalar \(one-element\) loss .* shape \[8, 8\]"):
        torch.compile(lambda: torch.mm(x, w), backend=BACKEND)()
    with pytest.raises(TypeError, match="must return a tensor"):
        torch.compile(lambda: 3.0, backend=BACKEND)()


def test_unsupported_op_names_the_op_and_the_line():
    w = torch.randn(8, 8, device="cuda", requires_grad=True)

    def f():
        return w.topk(2, 0).values.sum()  # the line the error names
    with pytest.raises(NotImplementedError) as e:
        torch.compile(f, backend=BACKEND)()
    message = str(e.value)
    assert "does not support torch.topk" in message
    assert "test_compile.py:" in message and "return w.topk(2, 0).values.sum()" in message
    assert torch.randn(3).topk(2).values.shape == (2,)  # the engine's ops are restored afterwards


def test_other_backends_and_arguments_are_refused():
    with pytest.raises(NotImplementedError, match="only backend=\"aot_eager_decomp_partition\""):
        torch.compile(lambda: None)
    g = torch.compile(lambda x: x, backend=BACKEND)
    with pytest.raises(NotImplementedError, match="without arguments"):
        g(1)


def test_bmm_decorator_and_a_non_leaf_input_match_eager():
    torch.manual_seed(5)
    base = torch.randn(4, 8, 16, device="cuda", requires_grad=True)
    a = base.transpose(1, 2)  # not a leaf: the gradient flows on into TransposeBackward0
    b = torch.randn(4, 8, 16, device="cuda", requires_grad=True)

    def f():
        return torch.matmul(a, b).detach().sum() + torch.matmul(a, b).cos().sum()
    leaves = [base, b]
    _, eager_flops, eager = measure(lambda: f(), leaves)
    compiled_f = torch.compile(backend=BACKEND)(f)
    _, flops, grads = measure(compiled_f, leaves)
    assert [v.op for v in compiled_f.last_plan.graph.forward][:3] == ["bmm", "view", "sum"]
    assert flops == eager_flops == 2 * (2 * 4 * 16 * 8 * 16)  # grad of a and of b: two bmm
    for e, c in zip(eager, grads):
        np.testing.assert_allclose(c, e, rtol=1e-6, atol=1e-6)


def test_compiled_backward_node_holds_the_saved_values():
    f, _ = make_chain()
    with config.patch(activation_memory_budget=0.3):
        out = torch.compile(f, backend=BACKEND)()
    node = out.grad_fn
    assert node.name() == "CompiledFunctionBackward"
    assert node._saved_names == ["primals_1", "primals_5", "primals_6", "mm", "mm_1", "mm_2",
                                 "permute_5", "permute_7", "permute_9"]
    assert node._saved_mm.shape == (512, 512)
    assert len(node.next_functions) == 6  # one edge per primal, to its AccumulateGrad
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


@pytest.mark.parametrize("budget,saved", [(1.0, 10 * MIB), (0.3, 3 * MIB)])
def test_backward_frees_the_saved_values_unless_retain_graph(budget, saved):
    """Without retain_graph the compiled backward drops each saved value after its last use and
    ends holding only the six 1 MiB gradients; with it the saved values stay. Recomputation runs
    just before each use (PyTorch's reordering_to_mimic_autograd_engine), so the backward's peak
    stays below keeping everything."""
    f, leaves = make_chain()
    peaks = {}
    for retain in (False, True):
        for t in leaves:
            t.grad = None
        with config.patch(activation_memory_budget=budget):
            out = torch.compile(f, backend=BACKEND)()
        gc.collect()
        base = current()
        torch.cuda.reset_peak_memory_stats()
        out.backward(retain_graph=retain)
        peaks[retain] = torch.cuda.memory_stats()["requested_bytes.all.peak"] - base
        assert current() - base == 6 * MIB - (0 if retain else saved)
        del out
    assert peaks[False] <= peaks[True]
    assert peaks[False] < 6 * MIB + saved
