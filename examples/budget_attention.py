"""Activation memory against recomputation: attention or the linear layer after it? (issue 13)

One block, float32 on the simulated CUDA device, for a sequence of L tokens of width D (heads of
64 channels, H = D / 64):
    a = scaled_dot_product_attention(x, x, x)      x [1, H, L, 64] requires grad
    o = a.transpose(1, 2).reshape(L, D)             a view (the kernel writes [1, L, H, 64])
    loss = cos(o @ w).sum()                         w [D, D] requires grad
The backward needs the attention's output and its logsumexp (saved by the memory-efficient
kernel, which never stores the L x L matrix) and the linear layer's output o @ w (cos's input).
Each costs about 4 * L * D bytes; recomputing them costs 4 * L^2 * D FLOPs (the attention) or
2 * L * D^2 (the matmul). Under torch._functorch.config.activation_memory_budget the
partitioner's knapsack keeps what is dearer to recompute: the attention when 2 * L > D (long
sequences), the linear layer otherwise. The budget is a fraction of the bytes the default plan
saves beyond the inputs, counted as PyTorch 2.11 counts them (each saved view of the attention's
output by itself): the matmul output and the attention are about one third each, so 0.25 keeps
nothing, 0.5 one of the two, 0.75 both.

    scripts/python examples/budget_attention.py [--budgets 0,0.5,0.75,1]
    matmulviz-cli budget examples/budget_attention.py --function f --budgets 0:1:0.25
prints, per sequence length and width, per budget: the activation memory measured the PyTorch
way (requested bytes after the compiled forward, minus those after a full step), the backward
FLOPs (FlopCounterMode, recomputation included) and which of the two was recomputed."""

import sys

import matmulviz.torch as torch
import matmulviz.torch._functorch.config as config
import matmulviz.torch.nn.functional as F
from matmulviz.torch.utils.flop_counter import FlopCounterMode

HEAD_DIM = 64
SEQ_LENS, WIDTHS = (32, 256), (128, 256)
BUDGETS = (0.0, 0.5, 0.75, 1.0)

torch.set_default_device("cuda")


def make_block(seq_len, width, seed=0):
    """The block's loss function (no arguments) for L = seq_len, D = width."""
    torch.manual_seed(seed)
    x = torch.randn(1, width // HEAD_DIM, seq_len, HEAD_DIM, requires_grad=True)
    w = torch.randn(width, width, requires_grad=True)

    def block():
        a = F.scaled_dot_product_attention(x, x, x)
        o = a.transpose(1, 2).reshape(seq_len, width)
        return torch.mm(o, w).cos().sum()
    return block


f = make_block(256, 128)  # the function matmulviz-cli budget sweeps


def requested():
    return torch.cuda.memory_stats()["requested_bytes.all.current"]


def measure(fn):
    """(activation bytes, backward FLOPs): a full step, then the forward alone."""
    fn().backward()
    base = requested()
    out = fn()
    activation = requested() - base
    with FlopCounterMode(display=False) as mode:
        out.backward()
    return activation, mode.get_total_flops()


def sweep(seq_len, width, budgets):
    """Prints one line per budget for one block."""
    block = make_block(seq_len, width)
    activation, flops = measure(block)
    print(f"L={seq_len} D={width}: eager activation {activation} backward FLOPs {flops}")
    for budget in budgets:
        torch._dynamo.reset()
        with config.patch(activation_memory_budget=budget):
            g = torch.compile(block, backend="aot_eager_decomp_partition")
            activation, flops = measure(g)
        recomputed = {v.op for v in g.last_plan.recomputed}
        heavy = [name for op, name in (("_scaled_dot_product_efficient_attention", "attention"),
                                       ("mm", "linear")) if op in recomputed]
        print(f"  budget {budget:.2f}: activation {activation} backward FLOPs {flops} "
              f"recomputed {'+'.join(heavy) or 'nothing'}")


def main(argv):
    budgets = BUDGETS
    if "--budgets" in argv:
        budgets = [float(b) for b in argv[argv.index("--budgets") + 1].split(",")]
    for seq_len in SEQ_LENS:
        for width in WIDTHS:
            sweep(seq_len, width, budgets)


if __name__ == "__main__":
    main(sys.argv[1:])
