"""Models from the libraries people use, built from their configurations (no weights
downloaded) and trained for a step with AdamW under matmulviz.simulate, unchanged: Hugging Face
transformers' GPT-2, Llama (grouped-query attention) and BERT, torchvision's ResNet-50 and
VisionTransformer, timm's resnet18; and a 7B-parameter Llama configuration, built on the device,
which runs out of memory on an 80 GB H100 at AdamW's step with PyTorch's message, and the same
built on the host first under --host meta (no RAM for its 27 GB of weights). They run where
the libraries are installed (scripts/setup pins them in the PyTorch 2.11 environment)."""


import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch")

from simulate_cli import ENV, simulate_source  # noqa: E402

STEP = """\
import torch
{build}
model = model.cuda()
n = sum(p.numel() * p.element_size() for p in model.parameters())
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    {loss}
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(n, torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated())
"""

TEXT = "ids = torch.randint(0, 1000, (4, 128), device='cuda'); loss = model(input_ids=ids, labels=ids).loss"
IMAGE = ("x = torch.randn(2, 3, 64, 64, device='cuda'); "
         "loss = torch.nn.functional.cross_entropy(model(x), torch.randint(0, 10, (2,), device='cuda'))")

MODELS = {
    "gpt2": ("transformers", "from transformers import GPT2Config, GPT2LMHeadModel\n"
             "model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=128, n_head=4, "
             "vocab_size=1000, n_positions=256))", TEXT),
    "llama": ("transformers", "from transformers import LlamaConfig, LlamaForCausalLM\n"
              "model = LlamaForCausalLM(LlamaConfig(hidden_size=128, intermediate_size=344, "
              "num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, "
              "vocab_size=1000))", TEXT),
    "bert": ("transformers", "from transformers import BertConfig, BertForMaskedLM\n"
             "model = BertForMaskedLM(BertConfig(hidden_size=128, num_hidden_layers=2, "
             "num_attention_heads=4, intermediate_size=512, vocab_size=1000))", TEXT),
    "resnet50": ("torchvision", "import torchvision\n"
                 "model = torchvision.models.resnet50(num_classes=10)", IMAGE),
    "vit": ("torchvision", "import torchvision\n"
            "model = torchvision.models.VisionTransformer(image_size=64, patch_size=16, "
            "num_layers=2, num_heads=4, hidden_dim=128, mlp_dim=256, num_classes=10)", IMAGE),
    "timm_resnet18": ("timm", "import timm\n"
                      "model = timm.create_model('resnet18', pretrained=False, num_classes=10)",
                      IMAGE),
}


def simulate(tmp_path, source, *args):
    return simulate_source(tmp_path, source, *args, name="train.py",
                           env=dict(ENV, HF_HUB_OFFLINE="1"), timeout=900)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_library_model_trains(tmp_path, name):
    library, build, loss = MODELS[name]
    pytest.importorskip(library, reason=f"{library} is not installed with this PyTorch")
    p = simulate(tmp_path, STEP.format(build=build, loss=loss), "--gpu", "h200")
    assert p.returncode == 0, p.stderr
    params, after, peak = (int(v) for v in p.stdout.split())
    # After a step: the parameters, AdamW's two states per parameter (the gradients are set to
    # None), and the two cuBLAS workspaces; the peak holds the gradients and activations too.
    assert after >= 3 * params
    assert peak > after + params
    assert "Tensor.item()" not in p.stderr  # nothing read a value


LLAMA_7B = """\
import torch
from transformers import LlamaConfig, LlamaForCausalLM
config = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                     num_attention_heads=32, num_key_value_heads=32, vocab_size=32000)
with torch.device("cuda"):  # built on the device: no 27 GB of weights on the host
    model = LlamaForCausalLM(config)
print(sum(p.numel() for p in model.parameters()))
opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
ids = torch.randint(0, 32000, (1, 2048), device="cuda")
model(input_ids=ids, labels=ids).loss.backward()
print(torch.cuda.max_memory_allocated())
opt.step()
"""


def test_a_7b_llama_runs_out_of_memory_on_an_80gb_gpu(tmp_path):
    pytest.importorskip("transformers", reason="transformers is not installed with this PyTorch")
    p = simulate(tmp_path, LLAMA_7B, "--gpu", "h100")
    assert p.returncode == 1, p.stderr
    params, backward_peak = (int(v) for v in p.stdout.split())
    assert params == 6_738_415_616  # Llama 2 7B's count
    assert backward_peak > 2 * 4 * params  # float32 weights and gradients
    assert "OutOfMemoryError: CUDA out of memory. Tried to allocate" in p.stderr, p.stderr
    assert "GPU 0 has a total capacity of 79.65 GiB" in p.stderr
    assert 'train.py", line 12' in p.stderr  # AdamW's first step makes its state


LLAMA_7B_ON_THE_HOST = LLAMA_7B.replace(
    'with torch.device("cuda"):  # built on the device: no 27 GB of weights on the host\n'
    '    model = LlamaForCausalLM(config)\n',
    "model = LlamaForCausalLM(config).cuda()  # 27 GB of float32 weights on the host first\n")


def test_a_7b_llama_built_on_the_host_needs_no_ram_with_host_meta(tmp_path):
    """--host meta: the weights made on the CPU before .cuda() are simulated too, their bytes
    counted as host memory (the 27 GB this 24 GiB machine could not hold), and the device's
    numbers are those of the model built on the device."""
    pytest.importorskip("transformers", reason="transformers is not installed with this PyTorch")
    assert LLAMA_7B_ON_THE_HOST != LLAMA_7B
    p = simulate(tmp_path, LLAMA_7B_ON_THE_HOST, "--gpu", "h100", "--host", "meta")
    assert p.returncode == 1, p.stderr
    params, backward_peak = (int(v) for v in p.stdout.split())
    assert params == 6_738_415_616
    assert backward_peak > 2 * 4 * params
    assert "GPU 0 has a total capacity of 79.65 GiB" in p.stderr
    assert 'train.py", line 11' in p.stderr  # AdamW's first step (one line shorter)
    host = next(line for line in p.stderr.splitlines() if "host tensors (--host meta" in line)
    peak_mib = float(host.split("peak ")[1].split(" MiB")[0])
    assert peak_mib * 2**20 >= 4 * params, host  # the whole float32 model at once

