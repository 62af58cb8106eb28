"""Activation memory against recomputation on a chain of matmuls (issue 13).

Five 512 x 512 weights w1..w5 and an input x, all float32 on the simulated CUDA device:
    y = cos(x); then y = cos(y @ w) for each w; loss = y.sum()
Eager autograd keeps ten 1 MiB activations for the backward (each cos saves its input, each mm
saves its left operand). torch.compile(f, backend="aot_eager_decomp_partition") lets PyTorch's
partitioner choose: under torch._functorch.config.activation_memory_budget = b it saves fewer
values and the backward recomputes the others, paying extra matmul FLOPs.

Run it as a script to see the plan for one budget (default 0.3), or sweep every budget:
    scripts/python examples/budget_chain.py [--budget 0.3]
    matmulviz-cli budget examples/budget_chain.py --function f --budgets 0:1:0.1
The numbers are the engine's: memory_stats() after the compiled forward, FlopCounterMode
around the backward."""

import sys

import matmulviz.torch as torch
import matmulviz.torch._functorch.config as config
from matmulviz.torch.utils.flop_counter import FlopCounterMode

N, LAYERS = 512, 5

torch.set_default_device("cuda")
torch.manual_seed(0)
x = torch.randn(N, N, requires_grad=True)
ws = [torch.randn(N, N, requires_grad=True) for _ in range(LAYERS)]


def f():
    y = x.cos()
    for w in ws:
        y = torch.mm(y, w).cos()
    return y.sum()


def main(argv):
    budget = float(argv[argv.index("--budget") + 1]) if "--budget" in argv else 0.3
    with config.patch(activation_memory_budget=budget):
        g = torch.compile(f, backend="aot_eager_decomp_partition")
        out = g()  # the forward keeps only what the partitioner saved
        print("requested_bytes.all.current after the forward:",
              torch.cuda.memory_stats()["requested_bytes.all.current"])
        with FlopCounterMode(display=False) as mode:
            out.backward()  # the backward recomputes the rest
        print("backward FLOPs:", mode.get_total_flops(), " of which mm:",
              mode.get_flop_counts()["Global"][torch.ops.aten.mm])
    plan = g.last_plan
    print("route:", plan.route)
    print("saved:", " ".join(v.name for v in plan.saved))
    print("recomputed:", " ".join(v.name for v in plan.recomputed))


if __name__ == "__main__":
    main(sys.argv[1:])
