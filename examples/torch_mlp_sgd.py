# An MLP trained with SGD, in plain PyTorch: run it on a GPU with `python3 torch_mlp_sgd.py`,
# or without one, with its CUDA memory simulated by matmulviz's caching-allocator model:
#   scripts/python -m matmulviz.simulate examples/torch_mlp_sgd.py --report mlp.json
# Each step prints memory_allocated / max_memory_allocated / memory_reserved in MiB.
import argparse

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--batch", type=int, default=512)
args = parser.parse_args()

MiB = 2**20
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(784, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 10),
).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(args.batch, 784, device="cuda")
y = torch.randint(0, 10, (args.batch,), device="cuda")
print(f"{'step':<6}{'allocated MiB':>14}{'peak MiB':>10}{'reserved MiB':>14}")
for step in range(args.steps):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"{step:<6}{torch.cuda.memory_allocated() / MiB:>14.2f}"
          f"{torch.cuda.max_memory_allocated() / MiB:>10.2f}{torch.cuda.memory_reserved() / MiB:>14.2f}")
