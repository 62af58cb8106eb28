# forum_held1_s3: the forum workload's strategy3 with a shorter last batch, `a` requiring
# grad: the program of the real snapshot
# ../snapshots/forum_held1_s3.pickle (README.md there), with the same statements. Run it with
#   python3 -m matmulviz THIS --report run.json
#   matmulviz-cli compare run.json tests/reference/gpu/snapshots/forum_held1_s3.pickle
import matmulviz.torch as torch
import numpy as np

dev = "cuda"
# One matmul first, as on the GPU: there its cuBLAS workspace exists before the recording starts.
w = torch.randn(64, 64, device=dev)
(w @ w).sum().item()
del w
# And one backward through a matmul: the GPU's process had run mlp_backward before this
# program, so the autograd thread's cuBLAS workspace existed too.
w = torch.randn(64, 64, device=dev, requires_grad=True)
(w @ w).sum().backward()
del w
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()
torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python")


def forum_held1_s3():
    np.random.seed(0)
    q = torch.from_numpy(np.random.randint(0, 300, size=10000)).long()
    a = torch.rand([10000, 3, 48]).cuda().requires_grad_()
    c = torch.rand([300, 48, 40]).cuda()
    out = torch.cat([torch.matmul(a[i:i + 300], c[q[i:i + 300]])
                     for i in range(0, 10000, 300)], dim=0)
    # The GPU's Python (3.12) inlines the comprehension and releases the function's locals in
    # the order q, a, c, out when it returns; 3.11 keeps a, c and q in cells, released after
    # out. Releasing them here gives 3.12's order on either.
    del q, a, c


forum_held1_s3()
