"""The family of PyTorch's own budget test of attention against a linear layer
(test/functorch/test_ac.py, MemoryBudgetTest.test_attention_vs_linear), planned and run on the
engine's simulated CUDA device in meta mode (sizes only; the tensors are up to 2048 x 4608).

The block, for x [S * 512, D * 512] and w [D * 512, D * 512], float32, both requiring grad:
    a = scaled_dot_product_attention(x as [1, 1, S * 512, D * 512], same, same) as [S*512, D*512]
    loss = cos(a @ w).sum()
The backward needs the attention's output (plus its logsumexp and philox seed and offset) and the
matmul's output (cos's input), S * D MiB each. Recomputing them costs the attention's FLOPs
(4 * (512 S)^2 * 512 D) or the matmul's (2 * 512 S * (512 D)^2): the attention is dearer when
2 S > D.

What each assertion rests on: PyTorch 2.11's own decisions for this family at every size of
the file and at the budgets 0 to 1, made on the CPU with the GPU's attention op
(tests/reference/gpu/budget_family_torch_2.11_cpu.json, budget_family.py torch-cpu;
tests/python/test_gpu_budget.py compares every entry), and the rules of the installed 2.11's
torch/_functorch/partitioners.py, choose_saved_values_set:
- budget 0.6: PyTorch's test itself: the activation memory halves (S * D MiB) and the backward
  grows by exactly the recomputed op's FLOPs: the matmul's when 2 S > D, the attention's when
  2 S < D.
- budget 0.8: both values are kept (2 S * D MiB, no FLOPs added). The default cut saves the
  view of x, the attention's output (through the two aliases AOTAutograd records for a saved
  result), its logsumexp and philox seed and offset, the matmul's output and the transposes of
  the attention's output and of w, and the normalisation sums _size_of over the saved nodes,
  views counted each: hi - lo is about three outputs, so each knapsack item weighs about 1/3 and
  0.8 holds both, 0.6 (and 0.4) one. The function and the measurement are those of
  tests/reference/gpu/budget_family.py."""

import gc
import importlib.util
import os

import pytest

import matmulviz
import matmulviz.torch as torch
import matmulviz.torch._functorch.config as config

UNIT_FLOPS = 2 * 512**3  # the test's unit: one 512 x 512 x 512 matmul
BACKEND = "aot_eager_decomp_partition"
ATTENTION = "_scaled_dot_product_efficient_attention"


@pytest.fixture(autouse=True)
def meta_cuda():
    matmulviz.set_cuda_mode("meta")
    yield
    matmulviz.set_cuda_mode("data")
    gc.collect()
    torch.cuda.empty_cache()


def _family_program():
    """tests/reference/gpu/budget_family.py, the program that measures this family on a GPU, as
    a module measuring matmulviz.torch: its function and its measurement are the ones here."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference", "gpu",
                        "budget_family.py")
    spec = importlib.util.spec_from_file_location("budget_family", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.load("matmulviz")
    return module


_FAMILY = _family_program()

def block(s, d):
    """PyTorch's test's function for sequence length s * 512, width d * 512."""
    return _FAMILY.family(s, d)[0]


# As the test's get_act_mem and get_bw_flops: a full step, then the forward alone (MiB, rounded
# to 0.1), then its backward (in 512^3 matmuls).
activation_and_backward_flops = _FAMILY.measure


def op_flops(s, d):
    """(matmul, attention) forward FLOPs in the test's unit."""
    mm = 2 * (s * 512) * (d * 512) ** 2
    attention = 4 * (s * 512) ** 2 * (d * 512)
    return mm / UNIT_FLOPS, attention / UNIT_FLOPS


# (S, D, op recomputed at 0.6): PyTorch's seven cases, then other sizes of the family; (1, 2) is
# a tie in FLOPs, where the dp knapsack drops the later (smaller) item, the matmul.
CASES = [(1, 1, "mm"), (1, 3, "attn"), (2, 2, "mm"), (2, 1, "mm"), (2, 5, "attn"), (4, 7, "mm"),
         (4, 9, "attn"), (3, 2, "mm"), (3, 7, "attn"), (1, 2, "mm")]


@pytest.mark.parametrize("s,d,expected", CASES)
@pytest.mark.parametrize("budget", [0.6, 0.8])
def test_attention_vs_linear(s, d, expected, budget):
    f = block(s, d)
    eager_mem, eager_flops = activation_and_backward_flops(f)
    assert eager_mem == s * d * 2
    torch._dynamo.reset()
    with config.patch(activation_memory_budget=budget):
        g = torch.compile(f, backend=BACKEND)
        mem, flops = activation_and_backward_flops(g)
    plan = g.last_plan
    assert plan.route == "knapsack"
    heavy = {v.op for v in plan.recomputed} & {"mm", ATTENTION}
    if budget == 0.8:  # both fit: nothing recomputed
        assert (mem, flops, heavy) == (eager_mem, eager_flops, set())
        return
    assert mem == s * d
    mm_flops, attention_flops = op_flops(s, d)
    assert flops - eager_flops == (attention_flops if expected == "attn" else mm_flops)
    assert heavy == ({ATTENTION} if expected == "attn" else {"mm"})


def test_the_two_items_weigh_a_third_each():
    """Why 0.8 keeps both and 0.6 one: hi - lo is the _size_of of the default cut's saved nodes
    beyond the inputs, which counts the attention's output, the matmul's output and the
    transpose of the attention's output (a view of it) each: three outputs, so each item weighs
    about 1/3; two fit under 0.8, one under 0.6."""
    f = block(2, 5)
    plans = {}
    for budget in (0.6, 0.8, 1.0):
        torch._dynamo.reset()
        with config.patch(activation_memory_budget=budget):
            g = torch.compile(f, backend=BACKEND)
            g()
        plans[budget] = g.last_plan
    nodes = plans[0.8].graph.nodes
    items = [nodes[i] for i in plans[0.8].info["candidates"]]
    assert [v.op for v in items] == [ATTENTION, "mm"]  # by size, descending
    inputs = sum(v.nbytes for v in nodes if v.kind == "primal")
    span = plans[1.0].info["saved_bytes"] - inputs  # hi - lo, in bytes
    output = 2 * 512 * 5 * 512 * 4
    assert span == 3 * output + sum(v.nbytes for v in items) - 2 * output
    # PyTorch 2.11's knapsack saw 0.33342 and 0.33329 (budget_family_torch_2.11_cpu.json)
    assert [round(v.nbytes / span, 5) for v in items] == [0.33342, 0.33329]
    assert plans[0.8].info["knapsack_unbanned"] == []
    # 2 S = 4 < D = 5: the attention is the cheaper to recompute
    assert [nodes[i].op for i in plans[0.6].info["knapsack_unbanned"]] == [ATTENTION]
