# A 2-layer nn.TransformerEncoder (d_model 256, 4 heads) with a linear head, three training steps
# with AdamW, in plain PyTorch: the program whose memory on a real H200 (PyTorch 2.11) the docs
# show beside the simulation's (docs/simulate.md). On a GPU: `python3 torch_transformer_adamw.py`;
# without one:
#   scripts/python -m matmulviz.simulate examples/torch_transformer_adamw.py --gpu h200 \
#       --report transformer.json
import argparse
import time

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--batch", type=int, default=16)
parser.add_argument("--seq", type=int, default=128)
args = parser.parse_args()

MiB = 2**20
VOCAB = 1000
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                         batch_first=True)
model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=2),
                            torch.nn.Linear(256, VOCAB)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(args.batch, args.seq, 256, device="cuda")
y = torch.randint(0, VOCAB, (args.batch, args.seq), device="cuda")
start = time.perf_counter()
print(f"{'step':<6}{'allocated MiB':>14}{'peak MiB':>10}{'reserved MiB':>14}")
for step in range(args.steps):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
    loss.backward()
    opt.step()
    print(f"{step:<6}{torch.cuda.memory_allocated() / MiB:>14.2f}"
          f"{torch.cuda.max_memory_allocated() / MiB:>10.2f}{torch.cuda.memory_reserved() / MiB:>14.2f}")
print(f"{args.steps} steps in {time.perf_counter() - start:.2f} s")
