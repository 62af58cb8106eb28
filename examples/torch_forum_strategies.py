# The four strategies of the PyTorch forum post "Many weird phenomena about torch.matmul()"
# (examples/forum_strategies.py runs them on matmulviz.torch), written in plain PyTorch. On a GPU:
# `python3 torch_forum_strategies.py`; without one, the installed PyTorch runs it with its CUDA
# memory simulated:
#   scripts/python -m matmulviz.simulate examples/torch_forum_strategies.py --report forum.json
# The seed's full size is --n 131072 (the two Python loops then take minutes); the default is
# smaller. Prints curMem (memory_allocated after `out = strategy(...)`) and maxMem in MiB.
import argparse

import torch

N_MATS, DIM, BATCH = 2048, 64, 256


def strategy1(a, c):
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[i, :, :]) for i in range(a.shape[0])],
                     dim=0)


def strategy2(a, c, q):
    return torch.cat([torch.matmul(a[i:i + 1, :, :], c[q[i]]) for i in range(a.shape[0])], dim=0)


def strategy3(a, c, q, b=BATCH):
    n_batches = (a.shape[0] + b - 1) // b
    return torch.cat([torch.matmul(a[i * b:(i + 1) * b], c[q[i * b:(i + 1) * b]])
                      for i in range(n_batches)], dim=0)


def direct(a, c, q):
    return torch.matmul(a, c[q])


def run_table(n, requires_grad):
    torch.manual_seed(0)
    a = torch.rand(n, 1, DIM, device="cuda")
    c = torch.rand(N_MATS, DIM, DIM, device="cuda")
    q = torch.randint(0, N_MATS, (n,))  # on the CPU, as in the post
    if requires_grad:
        a.requires_grad_()
    print(f"== a {'requires grad' if requires_grad else 'plain'} (a [{n}, 1, {DIM}]) ==")
    for name, run in [("strategy1", lambda: strategy1(a, c[q])),
                      ("strategy2", lambda: strategy2(a, c, q)),
                      ("strategy3", lambda: strategy3(a, c, q)),
                      ("direct", lambda: direct(a, c, q))]:
        torch.cuda.reset_peak_memory_stats()
        out = run()
        print(f"{name:<10} curMem {torch.cuda.memory_allocated() // 2**20:>6} MiB  "
              f"maxMem {torch.cuda.max_memory_allocated() // 2**20:>6} MiB")
        del out


parser = argparse.ArgumentParser(description="The forum post's strategies in plain PyTorch.")
parser.add_argument("--n", type=int, default=4096, help="rows of a (the post: 131072)")
args = parser.parse_args()
run_table(args.n, requires_grad=False)
run_table(args.n, requires_grad=True)
