"""The allocator programs of tests/reference/gpu/memcases.py on matmulviz.torch's "cuda" device,
meta and data modes, against what PyTorch 2.11 did on an NVIDIA H200 (memcases_torch.json), and
with the cuBLAS workspace switched off by CUBLAS_WORKSPACE_CONFIG=:0:0 (memcases_noworkspace.json).
Every checkpoint must be equal: memory_allocated, its peak, memory_reserved,
requested_bytes.all.current, segment.all.current and inactive_split_bytes.all.current (the free
pieces of segments in use), relative to the program's start, and the
absolute values at each program's start (the workspaces kept from earlier programs).

Another measurement (another GPU, another PyTorch) is a file: MATMULVIZ_GPU_TRUTH=FILE.json (or
pytest --gpu-truth FILE.json) with MATMULVIZ_GPU_TRUTH_GPU=KEY (--gpu-truth-gpu) naming the
architecture to model; the no-workspace file is then MATMULVIZ_GPU_TRUTH_NOWORKSPACE (or
--gpu-truth-noworkspace), skipped when not given."""

import json
import os
import subprocess
import sys

import pytest

import matmulviz

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = os.path.join(HERE, "..", "reference", "gpu")
PROGRAM = os.path.join(GPU, "memcases.py")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
FIELDS = ("allocated", "peak", "reserved", "requested", "segments", "inactive_split")
BASE_FIELDS = ("allocated", "reserved", "requested", "segments", "inactive_split")


def run_memcases(tmp_path, mode, gpu, extra_env=None):
    out = tmp_path / f"memcases-{mode}.json"
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, MATMULVIZ_GPU=gpu, MATMULVIZ_PYTORCH="2.x")
    env.pop("CUBLAS_WORKSPACE_CONFIG", None)
    env.update(extra_env or {})
    done = subprocess.run([sys.executable, PROGRAM, "matmulviz", str(out), mode], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def differences(truth, ours):
    """Every checkpoint where `ours` differs from `truth`, as readable lines."""
    diffs = []
    for field in BASE_FIELDS:
        if ours["warm"][field] != truth["warm"][field]:
            diffs.append(f"warm-up: {field} {ours['warm'][field]} (GPU {truth['warm'][field]})")
    for name, case in truth.items():
        if not isinstance(case, dict) or "rows" not in case:
            continue
        mine = ours.get(name)
        if mine is None or "error" in mine:
            diffs.append(f"{name}: {mine and mine.get('error') or 'missing'}")
            continue
        for field in BASE_FIELDS:
            if mine["base"][field] != case["base"][field]:
                diffs.append(f"{name} @ start: {field} {mine['base'][field]} "
                             f"(GPU {case['base'][field]})")
        assert [r["at"] for r in mine["rows"]] == [r["at"] for r in case["rows"]], name
        for want, got in zip(case["rows"], mine["rows"]):
            for field in FIELDS:
                if got[field] != want[field]:
                    diffs.append(f"{name} @ {want['at']}: {field} {got[field]} "
                                 f"(GPU {want[field]})")
    return diffs


def checkpoints(truth):
    return sum(len(c["rows"]) for c in truth.values() if isinstance(c, dict) and "rows" in c)


@pytest.mark.parametrize("mode", ["meta", "data"])
def test_memcases_equal_the_gpu(tmp_path, mode, gpu_truth):
    path, gpu, _ = gpu_truth
    truth = json.loads(open(path).read())
    assert checkpoints(truth) > 0
    diffs = differences(truth, run_memcases(tmp_path, mode, gpu))
    assert not diffs, f"{len(diffs)} differences from {os.path.basename(path)}:\n" + "\n".join(diffs)


@pytest.mark.parametrize("mode", ["meta", "data"])
def test_memcases_without_workspace_equal_the_gpu(tmp_path, mode, gpu_truth):
    _, gpu, path = gpu_truth
    if path is None:
        pytest.skip("no no-workspace measurement given for this GPU")
    truth = json.loads(open(path).read())
    ours = run_memcases(tmp_path, mode, gpu,
                        {"CUBLAS_WORKSPACE_CONFIG": ":0:0", "CUBLASLT_WORKSPACE_SIZE": "0"})
    diffs = differences(truth, ours)
    assert not diffs, f"{len(diffs)} differences from {os.path.basename(path)}:\n" + "\n".join(diffs)


def test_forum_version_counts_no_workspace(tmp_path):
    """set_pytorch("forum"): the forum post's PyTorch; its warm-up matmul leaves nothing."""
    out = tmp_path / "forum.json"
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, MATMULVIZ_PYTORCH="forum")
    env.pop("CUBLAS_WORKSPACE_CONFIG", None)
    done = subprocess.run([sys.executable, PROGRAM, "matmulviz", str(out), "meta"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    ours = json.loads(out.read_text())
    assert ours["warm"]["allocated"] == 0
    assert ours["mlp_backward"]["rows"][2]["allocated"] == 68157952  # dW1, dW2, x, w1, w2
