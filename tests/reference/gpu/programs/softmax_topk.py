# softmax_topk: the program of the real snapshot
# ../snapshots/softmax_topk.pickle (README.md there), with the same statements. Run it with
#   python3 -m matmulviz THIS --report run.json
#   matmulviz-cli compare run.json tests/reference/gpu/snapshots/softmax_topk.pickle
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


def softmax_topk():
    x = torch.randn(512, 4096, device=dev, requires_grad=True)
    s = torch.softmax(x, dim=-1)
    v, i = torch.topk(s, 10, dim=-1)
    v.sum().backward()


softmax_topk()
