"""The activation-memory-budget partitioner against PyTorch's own decisions, written by
tests/reference/gpu/budget_family.py and budget_examples.py.

PyTorch 2.11's decisions are stored: budget_family_torch_2.11_cpu.json (the family of PyTorch's
attention-versus-linear test, ten sizes, nine budgets from 0 to 1) and
budget_examples_torch_2.11_cpu.json (the repository's budget examples), made with `budget_family.py torch-cpu` and
`budget_examples.py` on the CPU with fake tensors and the attention as the op a GPU's dispatch
runs (the aot_eager_decomp_partition backend needs no GPU; the files name the PyTorch). Every
entry compiled after torch._dynamo.reset() must give the engine's activation memory and backward
FLOPs, and for the examples the same saved values by name; a difference prints both sides'
knapsack items. MATMULVIZ_GPU_BUDGET_TRUTH=FILE compares with another family measurement (one
made on a GPU: budget_family.py torch OUT.json).

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
STORED = os.path.join(GPU, "budget_family_torch_2.11_cpu.json")
EXAMPLES_TRUTH = os.path.join(GPU, "budget_examples_torch_2.11_cpu.json")
ROOT = os.path.join(HERE, "..", "..")
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


# Runs each example function of a measurement on the engine (matmulviz.torch, meta mode, no
# cuBLAS workspace) at its budgets and prints one JSON line per entry.
ENGINE_EXAMPLES = r"""
import gc, importlib.util, json, os, sys
import matmulviz
import matmulviz.torch as torch
import matmulviz.torch._functorch.config as config
from matmulviz.torch.utils.flop_counter import FlopCounterMode
matmulviz.set_cuda_mode("meta")
root, entries = sys.argv[1], json.load(open(sys.argv[2]))["entries"]
modules = {}
def function(example, label):
    if example not in modules:
        spec = importlib.util.spec_from_file_location(example[:-3], os.path.join(root, "examples", example))
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); modules[example] = m
    m = modules[example]
    if label == "f":
        return m.f
    L, D = (int(part.split("=")[1]) for part in label.split())
    return m.make_block(L, D)
def requested():
    return torch.cuda.memory_stats()["requested_bytes.all.current"]
def measure(fn, budget):
    # The activation (requested bytes the forward leaves, its loss included), the backward's
    # FLOPs and the saved values' names; nothing of it alive afterwards.
    torch._dynamo.reset()
    with config.patch(activation_memory_budget=budget):
        g = torch.compile(fn, backend="aot_eager_decomp_partition")
        g().backward()
        base = requested()
        out = g()
        activation = requested() - base
        with FlopCounterMode(display=False) as mode:
            out.backward()
    return activation, mode.get_total_flops(), [v.name for v in g.last_plan.saved]
functions = {}
for e in entries:
    key = (e["example"], e["function"])
    if key not in functions:
        functions[key] = function(*key)
    gc.collect()
    activation, flops, saved = measure(functions[key], e["budget"])
    print(json.dumps({"example": e["example"], "function": e["function"], "budget": e["budget"],
                      "activation_bytes": activation, "backward_flops": flops, "saved": saved}))
"""


def test_budget_examples_equal_pytorch(tmp_path):
    """Every example function at every budget: the activation memory, the backward FLOPs and
    the saved values by name, as PyTorch 2.11 planned them."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, CUBLAS_WORKSPACE_CONFIG=":0:0")
    done = subprocess.run([sys.executable, "-c", ENGINE_EXAMPLES, ROOT, EXAMPLES_TRUTH], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    ours = [json.loads(line) for line in done.stdout.splitlines()]
    truth = json.load(open(EXAMPLES_TRUTH))
    assert len(ours) == len(truth["entries"]) > 0
    diffs = [f"{want['example']} {want['function']} budget {want['budget']}: {field} "
             f"{got[field]} (PyTorch {truth['torch']}: {want[field]})"
             for want, got in zip(truth["entries"], ours)
             for field in ("activation_bytes", "backward_flops", "saved") if got[field] != want[field]]
    assert not diffs, f"{len(diffs)} differences:\n" + "\n".join(diffs)
