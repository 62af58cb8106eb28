"""The H200's own programs, run unchanged under matmulviz.simulate with the PyTorch installed
here, against what they measured on the GPU (PyTorch 2.11.0+cu130 on an NVIDIA H200,
2026-11-28; tests/reference/gpu/README.md):

- snap_cases.py wrote the five snapshots of tests/reference/gpu/snapshots, one program after
  another in one process; simulated, each program's _dump_snapshot() writes the simulated
  snapshot, and `matmulviz-cli compare` finds no divergence from the real one, nor any drift of
  the live requests.
- make_snapshots.py "train" wrote transformer_adamw_3_steps.pickle.gz; the simulated run's report
  equals it event by event, live requests and memory_reserved at every event (PyTorch 2.x only:
  1.13's nn.MultiheadAttention runs the attention as bmm and softmax, another program).
- forum_gpu.py measured pytorch_forum_memory.json; simulated, it gives every row of it: curMem,
  maxMem and memory_reserved (its warm-up's .item() reads a placeholder)."""

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch")

import matmulviz  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = os.path.join(HERE, "..", "reference", "gpu")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
CLI = os.environ.get("MATMULVIZ_CLI")
# The simulated GPU is the H200 under PyTorch 2.x's rules, whatever the caller's environment says.
ENV = {k: v for k, v in os.environ.items()
       if k not in ("CUBLAS_WORKSPACE_CONFIG", "MATMULVIZ_PYTORCH", "MATMULVIZ_GPU")}
ENV.update(PYTHONPATH=PACKAGE_ROOT, OPENBLAS_NUM_THREADS="1")
SNAPSHOT_CASES = ["mlp_backward", "attention_backward", "softmax_topk", "gather_backward",
                  "forum_held1_s3"]


def simulate(args, cwd, timeout=600):
    p = subprocess.run([sys.executable, "-m", "matmulviz.simulate", *args], cwd=cwd, env=ENV,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p


def compare(a, b):
    if not CLI:
        pytest.skip("MATMULVIZ_CLI is not set (CTest sets it to this build's matmulviz-cli)")
    out = subprocess.run([CLI, "compare", str(a), str(b), "--json", "-"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["sequences"]) == 1
    return doc["sequences"][0]


def test_snapshot_programs_match_their_snapshots(tmp_path):
    simulate([os.path.join(GPU, "snap_cases.py"), str(tmp_path), *SNAPSHOT_CASES], tmp_path)
    for case in SNAPSHOT_CASES:
        s = compare(tmp_path / (case + ".pickle"), os.path.join(GPU, "snapshots", case + ".pickle"))
        assert s["first_divergence"] is None, (case, s["first_divergence"]["text"])
        assert s["matched"] == s["a"]["events"] == s["b"]["events"] > 0, case
        assert s["first_requested_drift_row"] is None, case


@pytest.mark.skipif(not hasattr(torch.nn.functional, "scaled_dot_product_attention"),
                    reason="this PyTorch's nn.MultiheadAttention has no fused attention "
                           "(1.13 runs bmm and softmax): not the H200's program")
def test_transformer_matches_its_snapshot(tmp_path):
    p = simulate([os.path.join(GPU, "make_snapshots.py"), "train", "sim.pickle",
                  "--report", "run.json"], tmp_path)
    assert "train events: 1154" in p.stdout, p.stdout
    real = os.path.join(GPU, "snapshots", "transformer_adamw_3_steps.pickle.gz")
    s = compare(tmp_path / "run.json", real)
    assert s["first_divergence"] is None, s["first_divergence"]["text"]
    assert s["matched"] == s["a"]["events"] == s["b"]["events"] == 1154
    assert "_dump_snapshot" in s["a"]["start"]
    assert s["first_requested_drift_row"] is None
    assert s["first_reserved_drift_row"] is None
    # The simulated snapshot the program wrote itself says the same.
    s = compare(tmp_path / "sim.pickle", real)
    assert s["first_divergence"] is None, s["first_divergence"]["text"]


def test_forum_program_gives_every_row_of_its_measurement(tmp_path):
    """About 400,000 aten ops: minutes under the simulation."""
    p = simulate([os.path.join(GPU, "forum_gpu.py"), "rows.json"], tmp_path, timeout=1800)
    assert "Tensor.item() returned 0.0" in p.stderr  # the warm-up's read
    with open(os.path.join(GPU, "pytorch_forum_memory.json")) as f:
        h200 = json.load(f)
    ours = json.loads((tmp_path / "rows.json").read_text())
    assert ours["baseline_allocated"] == h200["baseline_allocated"]

    def key(r):
        return r["N"], r["dtype"], r["grad"], r["strategy"]
    rows = {key(r): r for r in ours["rows"]}
    differences = [(key(r), field, rows[key(r)][field], r[field])
                   for r in h200["rows"] for field in ("cur", "max", "reserved")
                   if rows[key(r)][field] != r[field]]
    assert len(h200["rows"]) == 24
    assert differences == []
