#!/usr/bin/python3
# Benchmark: the forum post's strategy1 loop through the matmulviz Python module, against the
# same Python code under the real PyTorch on the CPU, in one run.
#
# strategy1 (from the PyTorch forum post "Many weird phenomena about torch.matmul()") runs
# one tiny product per row of a [131072, 1, 64] tensor:
#     torch.cat([torch.matmul(a[i:i+1, :, :], c[i, :, :]) for i in range(a.shape[0])], dim=0)
# so each iteration is a slice, a select, a matmul of [1, 1, 64] by [64, 64], and the list
# is concatenated at the end. At that size the arithmetic is nothing; what is measured is the
# cost of a Python call into each library. The matmulviz engine runs this loop several times
# faster than PyTorch in C++, and the target here is that the Python binding keeps most of
# that: matmulviz.torch on its simulated "cuda" device in at most 0.5x PyTorch's time.
#
# The gathered c[q] ([131072, 64, 64], 2 GiB at full size) is built before the clock starts
# on each side, so only the loop and the cat are timed. The per-op overhead lines time one
# trivial op (a[0:1], a slice that copies nothing; x.view(-1)) in a tight loop.
#
# Usage:
#   scripts/python tests/bench/python_strategy1.py [--n 131072] [--repeat 1] [--check]
#   (or PYTHONPATH=build/release/python /usr/bin/python3 tests/bench/python_strategy1.py)
# --check exits with status 1 when the ratio misses the target. Either half is skipped, with
# the reason printed, when its module cannot be imported (PyTorch: `scripts/setup --reference`
# installs Debian's python3-torch).

import argparse
import time

N_ROWS = 131072
N_MATS = 2048
DIM = 64
TARGET = 0.5


def strategy1(torch, a, c):
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[i, :, :]) for i in range(a.shape[0])],
                     dim=0)


def best_of(repeat, fn):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best


def per_op_us(fn, iterations):
    """Microseconds per call of fn, from a tight loop (best of three loops)."""
    best = None
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(iterations):
            fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best / iterations * 1e6


def measure(torch, device, n, repeat, op_iterations, synchronize=lambda: None):
    """{"loop": seconds, "slice_us": ..., "view_us": ...} for one library."""
    torch.manual_seed(0)
    a = torch.rand(n, 1, DIM, device=device)
    c = torch.rand(N_MATS, DIM, DIM, device=device)
    q = torch.randint(0, N_MATS, (n,))
    cq = c[q]  # the gathered copy, made before timing

    def loop():
        out = strategy1(torch, a, cq)
        synchronize()
        return out

    loop()  # warm-up: the output buffers, the allocator's cache, the code paths
    seconds = best_of(repeat, loop)
    x = a[:8]
    return {
        "loop": seconds,
        "slice_us": per_op_us(lambda: a[0:1], op_iterations),
        "view_us": per_op_us(lambda: x.view(-1), op_iterations),
    }


def report(label, m, n):
    print(f"{label}: strategy1 loop + cat, {n} rows: {m['loop']:.3f} s "
          f"({m['loop'] / n * 1e6:.2f} us per row); per op: a[0:1] {m['slice_us']:.2f} us, "
          f"x.view(-1) {m['view_us']:.2f} us")


def main():
    parser = argparse.ArgumentParser(description="strategy1 through matmulviz.torch vs PyTorch")
    parser.add_argument("--n", type=int, default=N_ROWS, help=f"rows of a (default {N_ROWS})")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many timed runs")
    parser.add_argument("--op-iterations", type=int, default=100000,
                        help="iterations of the per-op loops")
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 when ours / PyTorch exceeds {TARGET}")
    args = parser.parse_args()

    ours = theirs = None
    try:
        import matmulviz
        import matmulviz.torch as mtorch
    except ImportError as e:
        print(f"matmulviz.torch: skipped, it cannot be imported ({e})")
    else:
        matmulviz.set_cuda_mode("data")  # compute the values, as PyTorch does
        ours = measure(mtorch, "cuda", args.n, args.repeat, args.op_iterations,
                       synchronize=mtorch.cuda.synchronize)
        report('matmulviz.torch, simulated "cuda"', ours, args.n)

    try:
        import torch
    except ImportError as e:
        print(f"PyTorch: skipped, `import torch` failed ({e}); "
              f"scripts/setup --reference installs python3-torch")
    else:
        theirs = measure(torch, "cpu", args.n, args.repeat, args.op_iterations)
        report(f"PyTorch {torch.__version__}, cpu", theirs, args.n)

    if ours is None or theirs is None:
        print("ratio: not measured (one side was skipped)")
        return
    ratio = ours["loop"] / theirs["loop"]
    met = ratio <= TARGET
    print(f"ratio ours / PyTorch: {ratio:.2f} (target <= {TARGET}: {'met' if met else 'MISSED'})")
    print(f"binding overhead per op, ours vs PyTorch: a[0:1] {ours['slice_us']:.2f} vs "
          f"{theirs['slice_us']:.2f} us, x.view(-1) {ours['view_us']:.2f} vs "
          f"{theirs['view_us']:.2f} us")
    if args.check and not met:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
