"""Activation checkpointing (torch.utils.checkpoint) under matmulviz.simulate, both of its
implementations, and torch.cuda's random-number state, which it saves and restores.

What a block keeps between its forward and its backward, by PyTorch's derivative formulas
(tools/autograd/derivatives.yaml): for Linear(1024, 4096) -> GELU -> Dropout -> Linear(4096, 1024)
on x [64, 1024] float32, GELU saves its input (the first Linear's output, 1 MiB), native_dropout
its bool mask (256 KiB), the second Linear its input (the dropout's output, 1 MiB); the output is
256 KiB: 2.5 MiB in all. Checkpointed (use_reentrant False or True), the block keeps only its
output, and its backward runs the forward again: on a CUDA build of PyTorch that recomputation
takes dropout's fused CUDA kernel (native_dropout, with its mask) as the first forward did."""

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch")

import matmulviz  # noqa: E402
from matmulviz.simulate import _device  # noqa: E402

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
MiB = 2**20

SCRIPT = """\
import torch
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
block = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Dropout(0.1),
                            torch.nn.Linear(4096, 1024)).cuda()
x = torch.randn(64, 1024, device="cuda", requires_grad=True)

state = torch.cuda.get_rng_state()
assert state.dtype == torch.uint8 and state.device.type == "cpu"
torch.cuda.manual_seed(7)
assert torch.cuda.initial_seed() == 7
torch.cuda.set_rng_state(state)
assert torch.equal(torch.cuda.get_rng_state(), state)

for name, run in [("plain", lambda: block(x)),
                  ("non-reentrant", lambda: checkpoint(block, x, use_reentrant=False)),
                  ("reentrant", lambda: checkpoint(block, x, use_reentrant=True))]:
    for step in range(2):
        before = torch.cuda.memory_allocated()
        y = run()
        kept = torch.cuda.memory_allocated() - before
        y.sum().backward()
        del y
    print(name, kept)
"""


def test_checkpointed_block_keeps_only_its_output(tmp_path):
    (tmp_path / "ckpt.py").write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "matmulviz.simulate", "ckpt.py", "--report",
                        "r.json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    kept = dict(line.split() for line in p.stdout.splitlines())
    assert kept == {"plain": str(5 * MiB // 2), "non-reentrant": str(MiB // 4),
                    "reentrant": str(MiB // 4)}
    if not _device.cuda_keys():
        return  # Debian's 1.13: the recomputation's dropout is PyTorch's CPU composite
    report = json.loads((tmp_path / "r.json").read_text())
    allocations = {row[0]: row for row in report["allocations"]["rows"]}
    kinds, ops = report["events"]["kinds"], report["ops"]
    masks = [row for row in report["events"]["rows"] if kinds[row[0]] == "alloc"
             and ops[allocations[row[1]][2]] == "native_dropout" and row[2] == MiB // 4]
    # two steps each: the plain forward; each checkpoint's forward and its recomputation
    assert len(masks) == 2 + 2 * 2 + 2 * 2
