# mlp_backward_extra_temporary: mlp_backward with one more temporary, on purpose (the line
# marked below): compare must name that event as the first divergence from the snapshot
# ../snapshots/mlp_backward.pickle (README.md there), which mlp_backward.py matches. Run it with
#   python3 -m matmulviz THIS --report run.json
#   matmulviz-cli compare run.json tests/reference/gpu/snapshots/mlp_backward.pickle
import matmulviz.torch as torch

dev = "cuda"
# One matmul first, as on the GPU: there its cuBLAS workspace exists before the recording starts.
w = torch.randn(64, 64, device=dev)
(w @ w).sum().item()
del w
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()
torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python")


def mlp_backward():
    x = torch.randn(256, 1024, device=dev)
    w1 = torch.randn(1024, 4096, device=dev, requires_grad=True)
    w2 = torch.randn(4096, 1024, device=dev, requires_grad=True)
    extra = torch.empty(1000, device=dev)  # the one statement the GPU's program does not have
    del extra
    loss = torch.matmul(torch.matmul(x, w1).relu(), w2).sum()
    loss.backward()
    del loss


mlp_backward()
