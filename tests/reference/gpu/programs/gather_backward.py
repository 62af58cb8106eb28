# gather_backward: the program of the real snapshot
# ../snapshots/gather_backward.pickle (README.md there), with the same statements. Run it with
#   python3 -m matmulviz THIS --report run.json
#   matmulviz-cli compare run.json tests/reference/gpu/snapshots/gather_backward.pickle
import matmulviz.torch as torch

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


def gather_backward():
    c = torch.randn(1000, 64, 64, device=dev, requires_grad=True)
    a = torch.randn(3000, 1, 64, device=dev, requires_grad=True)
    q = torch.randint(0, 1000, (3000,))
    out = torch.matmul(a, c[q])
    out.sum().backward()
    qd = q.cuda(); out2 = torch.matmul(a, c[qd])
    out2.sum().backward()


gather_backward()
