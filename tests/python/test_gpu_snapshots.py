"""Each program of tests/reference/gpu/programs, run on matmulviz.torch, against the real H200
snapshot of the same statements (tests/reference/gpu/snapshots, PyTorch 2.11.0+cu130): `matmulviz-cli
compare RUN.json SNAPSHOT.pickle` aligns the two allocation sequences event by event. A program
that matches must show no divergence, and its totals must differ by no more than they did at the
start; a program changed on purpose must have its extra event named as the first divergence."""

import json
import os
import subprocess
import sys

import pytest

import matmulviz

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = os.path.join(HERE, "..", "reference", "gpu")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
ENV = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
CLI = os.environ.get("MATMULVIZ_CLI")

# Programs whose events equal the H200's one by one. What made them so: topk's buffers and the
# softmax backward's tmp (core/memory/kernel_temporaries.h); the reduction kernel's staging
# buffers (core/memory/reduction_temporaries.h); a node's gradients in the sorted order of its
# formulas' names, mm's column-major rule, the incoming gradients freed before the saved tensors
# and the graph torn down as deleteNode does (core/autograd, core/ops/matmul.cpp).
MATCHING = ["softmax_topk", "mlp_backward", "attention_backward", "forum_held1_s3",
            "gather_backward"]
# gather_backward matches since index_put_'s sort is modelled: the backward of c[q] sorts the
# indices with CUB's radix sort, which takes three index buffers and CUB's temporary storage
# (53759 B for 3000 indices of 10 bits on sm_90; core/memory/sort_temporaries.h). A program
# added with its snapshot must match too (test_every_program_has_its_snapshot_and_a_verdict).


def compare(program, snapshot, tmp_path):
    if not CLI:
        pytest.skip("MATMULVIZ_CLI is not set (CTest sets it to this build's matmulviz-cli)")
    report = tmp_path / (program + ".json")
    run = subprocess.run([sys.executable, "-m", "matmulviz",
                          os.path.join(GPU, "programs", program + ".py"), "--report", str(report)],
                         env=ENV, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = subprocess.run([CLI, "compare", str(report),
                          os.path.join(GPU, "snapshots", snapshot + ".pickle"), "--json", "-"],
                         env=ENV, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["kind"] == "compare"
    assert len(doc["sequences"]) == 1
    return doc["sequences"][0]


def test_every_program_has_its_snapshot_and_a_verdict():
    programs = sorted(f[:-3] for f in os.listdir(os.path.join(GPU, "programs")) if f.endswith(".py"))
    assert sorted(MATCHING + ["mlp_backward_extra_temporary"]) == programs
    for name in MATCHING:
        assert os.path.isfile(os.path.join(GPU, "snapshots", name + ".pickle")), name


@pytest.mark.parametrize("program", MATCHING)
def test_program_matches_its_snapshot(program, tmp_path):
    s = compare(program, program, tmp_path)
    assert s["first_divergence"] is None, s["first_divergence"]["text"]
    assert s["matched"] == s["a"]["events"] == s["b"]["events"] > 0
    # The run starts where the real recording did: after _record_memory_history.
    assert "_record_memory_history" in s["a"]["start"]
    # The live requests differ by what was alive at the start (the GPU's cuBLAS workspace of
    # the warm-up matmul) and by nothing else, at every matched event.
    assert s["first_requested_drift_row"] is None


def test_one_more_temporary_is_named_as_the_first_divergence(tmp_path):
    """mlp_backward with one statement more, against the H200's snapshot of mlp_backward."""
    s = compare("mlp_backward_extra_temporary", "mlp_backward", tmp_path)
    d = s["first_divergence"]
    assert d is not None
    assert d["kind"] == "only in A"
    assert d["b"] is None
    assert d["a"]["action"] == "alloc" and d["a"]["bytes"] == 4000
    assert "mlp_backward_extra_temporary.py" in d["a"]["where"]
    assert "extra = torch.empty(1000" in d["a"]["where"]
    # Its free is the only other event on one side only: the rest still aligns.
    only = [r for r in s["rows"] if r["kind"] != "match"]
    assert [(r["kind"], r["a"]["action"], r["a"]["bytes"]) for r in only] == [
        ("only in A", "alloc", 4000), ("only in A", "free", 4000)]
    assert s["matched"] == s["b"]["events"]
