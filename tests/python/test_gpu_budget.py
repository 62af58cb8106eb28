"""The activation-memory-budget partitioner on the attention-versus-linear family against a
PyTorch measurement written by tests/reference/gpu/budget_family.py.

No such measurement is stored yet: issue 24 reports that PyTorch 2.11 on an H200 keeps both the
attention's and the matmul's outputs at budget 0.8 where the engine recomputes one
(docs/partitioner.md, "PyTorch 2.11"), but the measured values did not come with it. The next GPU
run makes the file:
    python3 tests/reference/gpu/budget_family.py torch budget_family_torch.json
(and once more with --no-reset, which lets PyTorch compile with dynamic shapes), and this test
reads it from MATMULVIZ_GPU_BUDGET_TRUTH=FILE, or from tests/reference/gpu/budget_family_torch.json
once it is stored there. Every entry compiled after torch._dynamo.reset() must then give the
engine's activation MiB and backward FLOPs; a difference prints both sides' knapsack items.

test_budget_family_program_runs_on_the_engine keeps the program itself working: on matmulviz it
must reproduce what PyTorch's own test asserts at budget 0.6, and the ends of the range."""

import json
import os
import subprocess
import sys

import pytest

import matmulviz

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = os.path.join(HERE, "..", "reference", "gpu")
PROGRAM = os.path.join(GPU, "budget_family.py")
STORED = os.path.join(GPU, "budget_family_torch.json")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))


def run_on_engine(tmp_path, sizes, budgets):
    out = tmp_path / "budget_family.json"
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    done = subprocess.run(
        [sys.executable, PROGRAM, "matmulviz", str(out), "--sizes",
         ",".join(f"{s}x{d}" for s, d in sizes), "--budgets", ",".join(str(b) for b in budgets)],
        env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return {(e["S"], e["D"], e["budget"]): e for e in json.loads(out.read_text())["entries"]}


def test_budget_family_program_runs_on_the_engine(tmp_path):
    sizes = [(1, 1), (1, 3), (2, 5), (4, 7)]
    ours = run_on_engine(tmp_path, sizes, [0.0, 0.6, 1.0])
    for s, d in sizes:
        mm, attention = s * d * d, 2 * s * s * d  # forward FLOPs in 512^3 matmuls
        at_one, at_six, at_zero = (ours[(s, d, b)] for b in (1.0, 0.6, 0.0))
        assert at_one["eager_mib"] == at_one["mib"] == 2 * s * d
        assert at_one["flops"] == at_one["eager_flops"]
        # PyTorch's test: 0.6 recomputes the op that is cheaper to recompute
        assert at_six["mib"] == s * d
        assert at_six["flops"] - at_six["eager_flops"] == (mm if 2 * s > d else attention)
        assert at_six["plan"]["route"] == "knapsack"
        # budget 0 saves the inputs only: both ops are recomputed
        assert at_zero["mib"] == 0.0
        assert at_zero["flops"] - at_zero["eager_flops"] >= mm + attention


def truth_file():
    path = os.environ.get("MATMULVIZ_GPU_BUDGET_TRUTH")
    if path:
        return path
    return STORED if os.path.exists(STORED) else None


def knapsack_items(entry):
    """Normalised sizes of the knapsack's items, by candidate target, from either side."""
    found = [entry["plan"]["knapsack"]] if "plan" in entry else [
        c["knapsack"] for c in entry.get("partitioner", []) if "knapsack" in c]
    if not found or not found[0].get("candidates"):
        return "no knapsack"
    k = found[0]
    return ", ".join(f"{c['target']} {m:.4f}" for c, m in zip(k["candidates"], k["memory"] or []))


def test_budget_family_equals_the_gpu(tmp_path):
    path = truth_file()
    if path is None:
        pytest.skip("no PyTorch measurement of the budget family is stored: run "
                    "tests/reference/gpu/budget_family.py torch OUT.json on a GPU and point "
                    "MATMULVIZ_GPU_BUDGET_TRUTH at it")
    truth = json.load(open(path))
    entries = [e for e in truth["entries"] if e["reset"]]
    assert entries, f"{path} has no entry compiled after torch._dynamo.reset()"
    sizes = sorted({(e["S"], e["D"]) for e in entries})
    ours = run_on_engine(tmp_path, sizes, sorted({e["budget"] for e in entries}))
    diffs = []
    for want in entries:
        got = ours[(want["S"], want["D"], want["budget"])]
        for field in ("eager_mib", "eager_flops", "mib", "flops"):
            if got[field] != want[field]:
                diffs.append(f"S={want['S']} D={want['D']} budget {want['budget']}: {field} "
                             f"{got[field]} (PyTorch {truth.get('torch')}: {want[field]}); "
                             f"knapsack items here: {knapsack_items(got)}; "
                             f"there: {knapsack_items(want)}")
    assert not diffs, f"{len(diffs)} differences from {os.path.basename(path)}:\n" + "\n".join(diffs)
