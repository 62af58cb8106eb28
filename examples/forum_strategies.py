# The four strategies of the PyTorch forum post "Many weird phenomena about torch.matmul()",
# run on matmulviz's simulated CUDA device, printing the memory numbers the post printed.
#
# The post multiplies each row of a [131072, 1, 64] tensor `a` by one of 2048 [64, 64]
# matrices, chosen by an index q, and finds that the obvious one-liner
# `torch.matmul(a, c[q])` needs 2 GiB more than a Python loop, and that making `a` require
# grad changes which strategies keep that memory. The reason is lifetimes: `c[q]` gathers a
# fresh [131072, 64, 64] copy (2 GiB); it dies as soon as the expression that made it is done,
# unless autograd saves it (as matmul's second operand) to compute a's gradient later.
#
# Usage:
#   scripts/python examples/forum_strategies.py            # full size, meta mode (seconds)
#   scripts/python examples/forum_strategies.py --data     # full size with real values
#   scripts/python examples/forum_strategies.py --n 4096   # a smaller workload
#
# Meta mode (matmulviz.set_cuda_mode("meta")) keeps every tensor's size and the caching
# allocator's accounting but computes no values, so the memory table comes out exactly as with
# data. It is the default here: with data, the gathered copies are real 2 GiB host buffers
# (about 4.5 GiB of RAM at the peak of the requires-grad table) and the two Python loops run
# 131072 iterations each with real products, which takes minutes on a small machine.
import matmulviz.torch as torch

import argparse
import time

import matmulviz

N_ROWS = 131072   # rows of a, one product each
N_MATS = 2048     # matrices in c
DIM = 64          # every matrix is DIM x DIM
BATCH = 256       # rows per batch in strategy3


def strategy1(a, c):
    """The post's first loop: c arrives already gathered (the caller passes c[q])."""
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[i, :, :]) for i in range(a.shape[0])],
                     dim=0)


def strategy2(a, c, q):
    """The same loop, gathering one matrix per iteration instead of all of them up front."""
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[q[i]]) for i in range(a.shape[0])],
                     dim=0)


def strategy3(a, c, q, b=BATCH):
    """Batches of b rows: only b gathered matrices exist at a time."""
    n_batches = (a.shape[0] + b - 1) // b
    return torch.cat([torch.matmul(a[i * b:(i + 1) * b], c[q[i * b:(i + 1) * b]])
                      for i in range(n_batches)], dim=0)


def direct(a, c, q):
    """The one-liner: gathers all of c[q] at once."""
    return torch.matmul(a, c[q])


def mib(nbytes):
    return nbytes // 2**20


def run_table(n, requires_grad):
    torch.manual_seed(0)
    a = torch.rand(n, 1, DIM, device="cuda")
    c = torch.rand(N_MATS, DIM, DIM, device="cuda")
    q = torch.randint(0, N_MATS, (n,))  # stays on the CPU, as in the post
    if requires_grad:
        a.requires_grad_()

    strategies = [
        ("strategy1", lambda: strategy1(a, c[q])),
        ("strategy2", lambda: strategy2(a, c, q)),
        ("strategy3", lambda: strategy3(a, c, q)),
        ("direct", lambda: direct(a, c, q)),
    ]
    title = "a requires grad" if requires_grad else "a plain"
    print(f"== {title} (a [{n}, 1, {DIM}], c [{N_MATS}, {DIM}, {DIM}], q [{n}] on the host) ==")
    print(f"{'strategy':<10} {'curMem MiB':>10} {'maxMem MiB':>10} {'time':>8}")
    for name, run in strategies:
        torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        out = run()
        seconds = time.perf_counter() - start
        cur = mib(torch.cuda.memory_allocated())
        peak = mib(torch.cuda.max_memory_allocated())
        print(f"{name:<10} {cur:>10} {peak:>10} {seconds:>6.2f} s")
        # With `a` requiring grad, `out` holds the graph, and the graph holds what matmul
        # saved; deleting `out` frees both before the next strategy starts.
        del out
    print()


def main():
    parser = argparse.ArgumentParser(
        description="The forum post's four strategies and their CUDA memory.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--meta", action="store_true",
                      help="sizes and memory only, no values (the default)")
    mode.add_argument("--data", action="store_true", help="compute the values too (slow)")
    parser.add_argument("--n", type=int, default=N_ROWS, help=f"rows of a (default {N_ROWS})")
    args = parser.parse_args()

    matmulviz.set_cuda_mode("data" if args.data else "meta")
    print(f"cuda mode: {'data' if args.data else 'meta'}")
    run_table(args.n, requires_grad=False)
    run_table(args.n, requires_grad=True)


if __name__ == "__main__":
    main()
