"""Activation memory against recomputation on parallel branches of different widths (issue 13).

An input x [2048, 256] (no gradient) feeds three branches of hidden widths 128, 512 and 2048:
    h_i = relu(x @ a_i)        [2048, width_i]
    o_i = h_i @ b_i            [2048, 256]
    loss = cos(o_1 + o_2 + o_3).sum()
Each branch's hidden activation costs memory in proportion to its width, while recomputing it
costs one matmul of 2 * 2048 * 256 * width FLOPs: the same ratio for every branch, so the
knapsack under torch._functorch.config.activation_memory_budget keeps what fits, largest first.

    scripts/python examples/budget_branches.py [--budget 0.5]
    matmulviz-cli budget examples/budget_branches.py --function f --budgets 0:1:0.25"""

import sys

import matmulviz.torch as torch
import matmulviz.torch._functorch.config as config
from matmulviz.torch.utils.flop_counter import FlopCounterMode

TOKENS, DIM, WIDTHS = 2048, 256, (128, 512, 2048)

torch.set_default_device("cuda")
torch.manual_seed(1)
x = torch.randn(TOKENS, DIM)
a = [torch.randn(DIM, w, requires_grad=True) for w in WIDTHS]
b = [torch.randn(w, DIM, requires_grad=True) for w in WIDTHS]


def f():
    total = None
    for a_i, b_i in zip(a, b):
        o = torch.mm(torch.mm(x, a_i).relu(), b_i)
        total = o if total is None else total + o
    return total.cos().sum()


def main(argv):
    budget = float(argv[argv.index("--budget") + 1]) if "--budget" in argv else 0.5
    with config.patch(activation_memory_budget=budget):
        g = torch.compile(f, backend="aot_eager_decomp_partition")
        out = g()
        print("requested_bytes.all.current after the forward:",
              torch.cuda.memory_stats()["requested_bytes.all.current"])
        with FlopCounterMode(display=False) as mode:
            out.backward()
        print("backward FLOPs:", mode.get_total_flops())
    plan = g.last_plan
    print("route:", plan.route)
    print("saved:", " ".join(v.name for v in plan.saved))
    print("recomputed:", " ".join(v.name for v in plan.recomputed))


if __name__ == "__main__":
    main(sys.argv[1:])
