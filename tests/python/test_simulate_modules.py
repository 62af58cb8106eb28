"""How a model comes onto the simulated GPU: copy.deepcopy of simulated modules (what
nn.TransformerEncoder does with its layer, what EMA and teacher models do) and models built in
place on "cuda", beside the same model built on the CPU and moved with .cuda().

A deepcopy on a GPU copies each storage (torch/_tensor.py, Tensor.__deepcopy__): one new block
per parameter, the parameter's size rounded as any block; views of the copy are views. Built on
the device or moved there, a model's training step has the same peak."""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch")

import matmulviz  # noqa: E402

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))

DEEPCOPY = """\
import copy
import torch
lin = torch.nn.Linear(256, 256).cuda()
before = torch.cuda.memory_allocated()
twin = copy.deepcopy(lin)
print("copy", torch.cuda.memory_allocated() - before)
before = torch.cuda.memory_allocated()
w, b = twin.weight.t(), twin.bias.detach()
print("views", torch.cuda.memory_allocated() - before)
assert twin.weight.requires_grad and twin.weight is not lin.weight
twin(torch.randn(8, 256, device="cuda")).sum().backward()
assert twin.weight.grad is not None and lin.weight.grad is None
"""

BUILT_ON_DEVICE = """\
import sys
import torch
import torch.nn.functional as F
torch.manual_seed(0)
if sys.argv[1] == "moved":
    layer = torch.nn.TransformerEncoderLayer(64, 4, 256, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2).cuda()
else:
    with torch.device("cuda"):
        layer = torch.nn.TransformerEncoderLayer(64, 4, 256, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=2)
    del layer  # the encoder holds deep copies of it
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(8, 32, 64, device="cuda")
for step in range(2):
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated())
"""


def run(tmp_path, source, *args):
    script = tmp_path / "model.py"
    script.write_text(source)
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "matmulviz.simulate", str(script), *args],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_deepcopy_copies_each_parameter_once(tmp_path):
    out = dict(line.split() for line in run(tmp_path, DEEPCOPY).splitlines())
    assert out == {"copy": str(256 * 256 * 4 + 1024), "views": "0"}  # 1 KiB bias: 512-rounded


@pytest.mark.skipif(not hasattr(torch.device, "__enter__"),
                    reason="this PyTorch has no torch.device context (1.13)")
def test_a_model_built_on_the_device_trains_as_one_moved_there(tmp_path):
    moved = run(tmp_path, BUILT_ON_DEVICE, "moved").split()
    built = run(tmp_path, BUILT_ON_DEVICE, "built").split()
    assert built == moved
