"""An FSDP2 training step of a small Llama-style decoder (RMSNorm, causal self-attention through
scaled_dot_product_attention, a SwiGLU MLP), written as for torchrun:

    torchrun --nproc-per-node 8 examples/torch_fsdp2_llama.py --batch 8

and, without GPUs, each rank's memory:

    python3 -m matmulviz.simulate examples/torch_fsdp2_llama.py --batch 8 \\
        --nproc-per-node 8 --ranks all --gpu h100
"""

import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=8)
parser.add_argument("--seq", type=int, default=2048)
parser.add_argument("--dim", type=int, default=2048)
parser.add_argument("--layers", type=int, default=8)
parser.add_argument("--heads", type=int, default=16)
parser.add_argument("--vocab", type=int, default=32000)
args = parser.parse_args()


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.attn_norm, self.mlp_norm = nn.RMSNorm(dim), nn.RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        hidden = 4 * dim * 2 // 3
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.attn_norm(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, d))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(args.vocab, args.dim)
        self.blocks = nn.ModuleList(Block(args.dim, args.heads) for _ in range(args.layers))
        self.norm = nn.RMSNorm(args.dim)
        self.head = nn.Linear(args.dim, args.vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


mesh = init_device_mesh("cuda", (int(os.environ["WORLD_SIZE"]),))
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
with torch.device("meta"):
    model = Llama()
for block in model.blocks:
    fully_shard(block, mesh=mesh)
fully_shard(model, mesh=mesh)
model.to_empty(device="cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device="cuda")
with torch.autocast("cuda", dtype=torch.bfloat16):
    logits = model(tokens[:, :-1])
loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
loss.backward()
optimizer.step()
optimizer.zero_grad()
print(f"rank {torch.distributed.get_rank()}: peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
