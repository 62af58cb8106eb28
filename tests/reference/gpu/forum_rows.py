# The forum workload's strategies, row by row, in the format of pytorch_forum_memory.json: for each
# shape, requires_grad setting and strategy, memory_allocated after `out = strategy(...)` (out
# held), max_memory_allocated since a and c were made, memory_reserved, and the time. One file
# runs on real PyTorch (a GPU) and on matmulviz.torch (its simulated "cuda" device, meta mode).
#
# Usage: python3 forum_rows.py torch|matmulviz OUT.json [--cached-mib MIB] [--shapes seed,held]
#
# --cached-mib MIB: before each row, after empty_cache(), allocate and free one tensor of MIB
# MiB, so that the caching allocator holds one free segment of that size when a and c are made.
# The H200's rows in pytorch_forum_memory.json were taken in a process whose allocator held one
# free, cached 32 MiB segment at that moment: with --cached-mib 32 the engine gives all 72 of
# its numbers (24 rows x curMem, maxMem, reserved); from a fresh allocator (the default, 0) the
# held-out shape's reserved is 12 MiB lower in 10 rows and strategy3 with grad keeps 89088
# bytes more, which is what a fresh process on the GPU keeps (snapshots/forum_held1_s3.pickle).
# The program that wrote the H200's file is not kept; this is a reconstruction, so the next GPU
# run should write its rows with this program, both ways.
import argparse
import json
import time

import numpy as np

p = argparse.ArgumentParser(description="the forum workload's curMem/maxMem/reserved per row")
p.add_argument("module", choices=["torch", "matmulviz"])
p.add_argument("out")
p.add_argument("--cached-mib", type=int, default=0)
p.add_argument("--shapes", default="seed,held")
args = p.parse_args()
if args.module == "torch":
    import torch
else:
    import matmulviz
    import matmulviz.torch as torch
    matmulviz.set_cuda_mode("meta")

# N, M, I, J, K, batch: the forum post's shape, and a held-out one whose last batch is shorter
SHAPES = {"seed": (131072, 2048, 1, 64, 64, 256), "held": (10000, 300, 3, 48, 40, 300)}
GRADS = ["none", "a", "a,c"]


def strategy1(a, c, q):
    cq = c[q]
    return torch.cat([torch.matmul(a[i:i + 1], cq[i]) for i in range(a.shape[0])], dim=0)


def strategy2(a, c, q):
    return torch.cat([torch.matmul(a[i:i + 1], c[q[i]]) for i in range(a.shape[0])], dim=0)


def strategy3(a, c, q, batch):
    return torch.cat([torch.matmul(a[i:i + batch], c[q[i:i + batch]])
                      for i in range(0, a.shape[0], batch)], dim=0)


def direct(a, c, q):
    return torch.matmul(a, c[q])


STRATEGIES = {"strategy1": lambda a, c, q, b: strategy1(a, c, q),
              "strategy2": lambda a, c, q, b: strategy2(a, c, q),
              "strategy3": strategy3,
              "direct": lambda a, c, q, b: direct(a, c, q)}


def one_row(shape, grad, name):
    n, m, i, j, k, batch = shape
    torch.cuda.empty_cache()
    if args.cached_mib:  # allocated and freed at once: its segment stays cached
        torch.empty(args.cached_mib * (1 << 20) // 4, device="cuda")
    np.random.seed(0)
    q = torch.from_numpy(np.random.randint(0, m, size=n)).long()
    a = torch.rand([n, i, j]).cuda()
    c = torch.rand([m, j, k]).cuda()
    if "a" in grad.split(","):
        a.requires_grad_()
    if "c" in grad.split(","):
        c.requires_grad_()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.synchronize()
    t = time.perf_counter()
    out = STRATEGIES[name](a, c, q, batch)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t
    row = {"N": n, "M": m, "I": i, "J": j, "K": k, "batch": batch, "dtype": "float32",
           "grad": grad, "strategy": name, "cur": torch.cuda.memory_allocated(),
           "max": torch.cuda.max_memory_allocated(), "reserved": torch.cuda.memory_reserved(),
           "time_s": seconds}
    del out, a, c, q
    return row


def main():
    # one matmul first: a GPU's main-thread cuBLAS workspace is then in every row's numbers
    w = torch.randn(64, 64, device="cuda")
    x = w @ w
    del w, x
    torch.cuda.empty_cache()
    baseline = torch.cuda.memory_allocated()
    rows = []
    for key in args.shapes.split(","):
        for grad in GRADS:
            for name in STRATEGIES:
                row = one_row(SHAPES[key], grad, name)
                row["cur_above"], row["max_above"] = row["cur"] - baseline, row["max"] - baseline
                rows.append(row)
    result = {"module": args.module, "torch": getattr(torch, "__version__", None),
              "cached_mib": args.cached_mib, "baseline_allocated": baseline, "rows": rows}
    if args.module == "torch":
        result["device"] = torch.cuda.get_device_name()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("forum_rows:", len(rows), "rows written to", args.out)


main()
