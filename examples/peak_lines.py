# A short script for the app's Program view (Run, Ctrl+R): the forum post's gathered matmul,
# batched with a plain `a`, then all at once with `a` requiring grad. Run it and the timeline
# shows two humps; the second, higher one is `torch.matmul(a, c[q])`, whose gathered copy c[q]
# (64 MiB) is saved for BmmBackward0 until backward runs. The margin beside each line shows the bytes it
# allocated and the bytes it left alive at the peak.
#
#   scripts/python -m matmulviz examples/peak_lines.py --report run.json
import matmulviz.torch as torch

N, MATS, DIM, BATCH = 4096, 256, 64, 512


def batched(a, c, q):
    """BATCH rows at a time: only BATCH gathered matrices exist at once."""
    parts = [torch.matmul(a[i:i + BATCH], c[q[i:i + BATCH]]) for i in range(0, N, BATCH)]
    return torch.cat(parts, dim=0)


def direct(a, c, q):
    """The one-liner: gathers all N matrices of c[q] at once."""
    return torch.matmul(a, c[q])


torch.manual_seed(0)
a = torch.rand(N, 1, DIM, device="cuda")
c = torch.rand(MATS, DIM, DIM, device="cuda")
q = torch.randint(0, MATS, (N,))

out = batched(a, c, q)
print(f"batched: peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
del out

torch.cuda.reset_peak_memory_stats()
a.requires_grad_()
out = direct(a, c, q)
loss = out.sum()
loss.backward()
print(f"direct:  peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
