"""Every branch PyTorch takes by device takes the GPU's path under matmulviz.simulate: autocast's
casts (PyTorch's own op lists, in its C++) and its cache of cast weights, bfloat16 support from
sm_80, scaled-dot-product attention's kernel for the simulated GPU, dropout's fused kernel, the
optimizers' foreach and fused paths. The C++ branches need a simulated tensor that is a CUDA
tensor to PyTorch's C++: a CUDA build of PyTorch 2.x (simulate/_device.py); on Debian's CPU-only
1.13 the tests of those branches are skipped and say so."""

import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch")

import matmulviz  # noqa: E402
from matmulviz.simulate import _device  # noqa: E402

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
ENV = {k: v for k, v in os.environ.items()
       if k not in ("CUBLAS_WORKSPACE_CONFIG", "MATMULVIZ_PYTORCH", "MATMULVIZ_GPU")}
ENV.update(PYTHONPATH=PACKAGE_ROOT, OPENBLAS_NUM_THREADS="1")

cuda_keys = pytest.mark.skipif(
    not _device.cuda_keys(),
    reason="this PyTorch has no CUDA device type for a simulated tensor to carry (a CPU-only "
           "build, as Debian's 1.13): the C++ device branches take the meta tensors' path")
has_sdpa = pytest.mark.skipif(not hasattr(torch.nn.functional, "scaled_dot_product_attention"),
                              reason="PyTorch before 2.0 has no scaled_dot_product_attention")


def run(code, tmp_path):
    """Runs `code` (which prints its findings, one per line) in a fresh process."""
    script = tmp_path / "case.py"
    script.write_text("import torch\nimport matmulviz\n" + textwrap.dedent(code))
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=ENV,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


@cuda_keys
def test_autocast_float16_casts_as_on_a_gpu_and_caches_the_weight(tmp_path):
    out = run("""
        with matmulviz.simulate(gpu="h200"):
            m = torch.nn.Linear(1024, 1024).cuda()
            x = torch.randn(64, 1024, device="cuda")
            m(x)  # the cuBLAS and cuBLASLt workspaces come with the first linear
            before = torch.cuda.memory_allocated()
            with torch.autocast("cuda", dtype=torch.float16):
                y = m(x)
                after_one = torch.cuda.memory_allocated()
                z = m(x)  # the weight's float16 copy is cached for the region; x is cast again
                after_two = torch.cuda.memory_allocated()
            print(y.dtype, z.dtype, after_one - before, after_two - after_one,
                  torch.cuda.memory_allocated() - after_two)
        """, tmp_path)
    # y: its float16 output (64 x 1024 x 2 B) and the float16 copy of x, which AddmmBackward0
    # saves for the weight's gradient; the cached copies of the weight (1024 x 1024 x 2 B) and
    # the bias (2 KiB: one 2048-byte block).
    weight, bias, rows = 1024 * 1024 * 2, 2048, 64 * 1024 * 2
    assert out[:2] == ["torch.float16", "torch.float16"]
    assert int(out[2]) == 2 * rows + weight + bias
    assert int(out[3]) == 2 * rows  # z and its x: no second copy of the weight
    assert int(out[4]) == -(weight + bias)  # the cache is emptied when the region ends


@cuda_keys
def test_autocast_bfloat16_from_sm_80(tmp_path):
    out = run("""
        for gpu in ("h200", "a100"):
            with matmulviz.simulate(gpu=gpu):
                m = torch.nn.Linear(64, 64).cuda()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    y = m(torch.randn(8, 64, device="cuda"))
                print(gpu, torch.cuda.is_bf16_supported(), y.dtype)
        """, tmp_path)
    assert out == ["h200", "True", "torch.bfloat16", "a100", "True", "torch.bfloat16"]


def test_is_bf16_supported_by_architecture(tmp_path):
    out = run("""
        from matmulviz import _C
        for gpu in ("h200", "a100", "t4"):
            with matmulviz.simulate():
                _C.set_gpu(gpu)
                print(gpu, torch.cuda.is_bf16_supported(including_emulation=False),
                      torch.cuda.get_device_capability())
        """, tmp_path)
    assert out == ["h200", "True", "(9,", "0)", "a100", "True", "(8,", "0)",
                   "t4", "False", "(7,", "5)"]


@has_sdpa
@cuda_keys
def test_attention_kernel_by_gpu_and_dtype(tmp_path):
    out = run("""
        import torch.nn.functional as F
        for gpu, dtype in (("h200", torch.float32), ("h200", torch.float16),
                           ("a100", torch.float16), ("a100", torch.float64)):
            with matmulviz.simulate(gpu=gpu) as sim:
                q = torch.randn(16, 4, 128, 64, device="cuda", dtype=dtype, requires_grad=True)
                before = torch.cuda.memory_allocated()
                o = F.scaled_dot_product_attention(q, q, q)
                kernel = [k for (_, k) in sim.sdpa_choices][0]
                print(gpu, kernel, o.dtype, torch.cuda.memory_allocated() - before)
        """, tmp_path)
    rows = [out[i:i + 4] for i in range(0, len(out), 4)]
    elems = 16 * 4 * 128 * 64
    # float32 on sm_90: memory-efficient attention, its output and a float32 logsumexp of
    # 16 x 4 x 128 (ceil(128 / 32) * 32 rows); the seed and offset are host tensors
    assert rows[0] == ["h200", "efficient_attention", "torch.float32", str(elems * 4 + 32768)]
    # float16 on sm_90 with cuDNN 9.19: cuDNN first; output, a [16, 4, 128, 1] logsumexp, and
    # the seed and offset on the device (512 B each)
    assert rows[1][:3] == ["h200", "cudnn_attention", "torch.float16"]
    assert int(rows[1][3]) == elems * 2 + 32768 + 2 * 512
    # float16 on sm_80: flash attention
    assert rows[2][:3] == ["a100", "flash_attention", "torch.float16"]
    # float64: no fused kernel takes it: the math path's bmm and softmax
    assert rows[3][:3] == ["a100", "math", "torch.float64"]


def test_dropout_runs_the_fused_kernel_and_saves_a_bool_mask(tmp_path):
    """On CUDA's keys PyTorch's C++ chooses native_dropout itself; on the meta path the
    simulation calls it (Simulation._dropout)."""
    out = run("""
        with matmulviz.simulate(gpu="h200"):
            x = torch.randn(1024, 1024, device="cuda", requires_grad=True)
            before = torch.cuda.memory_allocated()
            y = torch.nn.functional.dropout(x, 0.1, training=True)
            print(type(y.grad_fn).__name__, torch.cuda.memory_allocated() - before)
        """, tmp_path)
    assert out == ["NativeDropoutBackward0", str(1024 * 1024 * 4 + 1024 * 1024)]


@cuda_keys
def test_adamw_takes_the_foreach_path_and_fused_runs(tmp_path):
    out = run("""
        import torch.optim.adam as adam
        calls = []
        for name in ("_multi_tensor_adam", "_single_tensor_adam", "_fused_adam"):
            f = getattr(adam, name)
            setattr(adam, name, lambda *a, _f=f, _n=name, **k: (calls.append(_n), _f(*a, **k))[1])
        with matmulviz.simulate(gpu="h200"):
            m = torch.nn.Linear(256, 256).cuda()
            for fused in (None, True):
                opt = torch.optim.AdamW(m.parameters(), fused=fused)
                m(torch.randn(8, 256, device="cuda")).sum().backward()
                opt.step()
        print(*calls)
        """, tmp_path)
    assert out == ["_multi_tensor_adam", "_fused_adam"]
