"""The budget examples (examples/budget_chain.py, examples/budget_branches.py,
examples/budget_attention.py) run as a user runs them, and `matmulviz-cli budget` over them: one
row per budget with the engine's numbers.

Branches example, derived by hand: x [2048, 256] (no gradient), hidden widths 128, 512, 2048;
h_i = relu(x @ a_i), o_i = h_i @ b_i [2048, 256], loss = cos(o_1 + o_2 + o_3).sum(). A
branch's matmul costs 2 * 2048 * 256 * width FLOPs (U = 2 * 2048 * 256 = 1048576 per unit of
width); its hidden activation 2048 * width * 4 bytes (width / 128 MiB).
- eager: each relu output is saved once (by ReluBackward0 and by the next MmBackward0: 1 + 4 +
  16 MiB), cos saves its 2 MiB input: 23 MiB; backward: three matmuls per branch (grad of a_i,
  of h_i, of b_i): 3 * U * 2688 = 8455716864;
- budget 1: the same 23 MiB (the relu outputs and -sin(sum)) and FLOPs;
- budget 0.5: relu_1 (the 512-wide branch, 4 MiB) and neg (2 MiB) saved; the 128- and 2048-wide
  branches' first matmuls recomputed: + U * (128 + 2048) = 10737418240;
- budget 0: only inputs; every forward matmul recomputed: + 2 * U * 2688 = 14092861440;
- budget 0.5 with the greedy solver: items taken by FLOPs per byte, so the o_i matmuls (2 MiB
  each, FLOPs growing with the width) come first and the h_i ones (equal FLOPs per byte) in
  size order; the 16 MiB h_3 no longer fits: only x @ a_3 is recomputed (+ U * 2048 =
  10603200512) and relu, relu_1 (5 MiB) and neg (2 MiB) are saved: 7 MiB.
"""

import json
import math
import os
import re
import subprocess
import sys

import pytest

import matmulviz

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(REPO, "examples")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
# The budget examples print activation memory: no cuBLAS workspace (PyTorch 2.x's 32 MiB per
# thread, counted by default since issue 24) in their totals.
ENV = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, CUBLAS_WORKSPACE_CONFIG=":0:0")
CLI = os.environ.get("MATMULVIZ_CLI")
MIB, MM = 2**20, 2 * 512**3
U = 2 * 2048 * 256


def run_example(name, *args):
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], cwd=REPO,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def number(text, label):
    return int(re.search(re.escape(label) + r"\s*(\d+)", text).group(1))


def run_cli(*args):
    if not CLI:
        pytest.skip("MATMULVIZ_CLI is not set (CTest sets it to this build's matmulviz-cli)")
    return subprocess.run([CLI, "budget", *args], cwd=REPO, env=ENV, capture_output=True,
                          text=True, timeout=300)


ISSUE_SNIPPET = """\
import matmulviz.torch as torch
from matmulviz.torch.utils.flop_counter import FlopCounterMode
import matmulviz.torch._functorch.config as config

torch.set_default_device("cuda")
x = torch.randn(512, 512, requires_grad=True)
ws = [torch.randn(512, 512, requires_grad=True) for _ in range(5)]
def f():
    y = x.cos()
    for w in ws:
        y = torch.mm(y, w).cos()
    return y.sum()

with config.patch(activation_memory_budget=0.3):
    g = torch.compile(f, backend="aot_eager_decomp_partition")
    out = g()                                                   # forward keeps only what the partitioner saved
    print(torch.cuda.memory_stats()["requested_bytes.all.current"])
    with FlopCounterMode(display=False) as mode:
        out.backward()                                          # backward recomputes the rest
    print(mode.get_total_flops(), mode.get_flop_counts()["Global"][torch.ops.aten.mm])
"""


def test_issue_snippet_verbatim(tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text(ISSUE_SNIPPET)
    proc = subprocess.run([sys.executable, str(script)], env=ENV, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    # 6 MiB of inputs + 3 saved mm outputs + the 4-byte loss; 12 mm of 2 * 512^3 FLOPs
    assert proc.stdout.split("\n") == ["9437188", "3221225472 3221225472", ""]


def test_chain_example_prints_the_plan_for_0_3():
    out = run_example("budget_chain.py")
    # 6 MiB of inputs + 3 saved mm outputs + the 4-byte loss; 10 gradient mm + 2 recomputed
    assert number(out, "after the forward:") == 9 * MIB + 4
    assert number(out, "backward FLOPs:") == 12 * MM
    assert number(out, "of which mm:") == 12 * MM
    assert "recomputed: cos cos_1 cos_2 cos_3 mm_3 cos_4 mm_4" in out


def test_branches_example_at_0_5():
    out = run_example("budget_branches.py", "--budget", "0.5")
    inputs = (2048 * 256 + 2 * 256 * (128 + 512 + 2048)) * 4
    assert number(out, "after the forward:") == inputs + 6 * MIB + 4
    assert number(out, "backward FLOPs:") == 10737418240 == U * (3 * 2688 + 128 + 2048)
    assert "saved: primals_1 primals_2 primals_6 relu_1 neg permute_1 permute_4 permute_7" in out
    assert "recomputed: mm relu mm_4 relu_2" in out


def test_cli_budget_chain_one_row_per_budget_json():
    proc = run_cli("examples/budget_chain.py", "--function", "f", "--budgets", "0:1:0.25",
                   "--json", "-")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["format"], report["version"], report["kind"]) == ("matmulviz-report", 1,
                                                                      "budget")
    assert report["eager"]["activation_bytes"] == 10 * MIB + 4
    assert report["eager"]["backward_flops"] == 10 * MM
    rows = report["rows"]
    assert [r["budget"] for r in rows] == [0, 0.25, 0.5, 0.75, 1]
    # 0.25: the knapsack keeps floor(10 * 0.25) = 2 of the five forward mm
    assert [r["activation_bytes"] - 4 for r in rows] == [0, 2 * MIB, 5 * MIB, 5 * MIB, 10 * MIB]
    assert [r["activation_mib"] for r in rows][-1] == pytest.approx(10 + 4 / MIB)
    assert [r["backward_flops"] for r in rows] == [15 * MM, 13 * MM, 10 * MM, 10 * MM, 10 * MM]
    assert [r["route"] for r in rows] == [
        "budget 0: save the inputs", "knapsack",
        "cut without the far-apart/chain/materialized bans",
        "cut without the far-apart/chain/materialized bans", "budget 1: default cut"]
    assert rows[1]["saved"] == ["primals_1", "primals_4", "primals_5", "primals_6", "mm", "mm_1",
                                "permute_7", "permute_9"]
    assert rows[4]["recomputed"] == []
    for r in rows:
        assert r["activation_bytes"] - 4 == r["planned_activation_bytes"]


def test_cli_budget_branches_text_and_greedy():
    proc = run_cli("examples/budget_branches.py", "--budgets", "0,0.5,1", "--solver", "greedy")
    assert proc.returncode == 0, proc.stderr
    lines = [line.split() for line in proc.stdout.splitlines()
             if re.match(r"\s+[01]\.\d{3}\s", line)]
    assert [(float(c[0]), int(c[1]), int(c[3])) for c in lines] == [
        (0.0, 4, 14092861440), (0.5, 7 * MIB + 4, 10603200512), (1.0, 23 * MIB + 4, 8455716864)]


def test_cli_budget_bad_input():
    proc = run_cli("examples/budget_chain.py", "--budgets", "0:1.5:0.5")
    assert proc.returncode == 2
    assert ("The valid ranges for memory budget are 0 <= m <= 1. The provided value is 1.5"
            in proc.stderr)
    proc = run_cli("examples/budget_chain.py", "--function", "nope")
    assert proc.returncode == 2 and "defines no function 'nope'" in proc.stderr
    proc = run_cli("no_such_script.py")
    assert proc.returncode == 2 and "no such script" in proc.stderr


def test_cli_budget_refuses_what_it_cannot_trace(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(
        "import matmulviz.torch as torch\n"
        "w = torch.randn(8, 8, device='cuda', requires_grad=True)\n"
        "x = torch.randn(8, 8, device='cuda')\n"
        "def uses_topk():\n"
        "    return torch.mm(x, w).topk(2, 1).values.sum()\n"
        "def constant():\n"
        "    return torch.mm(x, x).sum()\n"
        "def matrix():\n"
        "    return torch.mm(x, w)\n")
    proc = run_cli(str(script), "--function", "uses_topk")
    assert proc.returncode == 2
    assert "does not support torch.topk, called at" in proc.stderr
    assert "model.py:5: return torch.mm(x, w).topk(2, 1).values.sum()" in proc.stderr
    proc = run_cli(str(script), "--function", "constant")
    assert proc.returncode == 2 and "f is not differentiable" in proc.stderr
    proc = run_cli(str(script), "--function", "matrix")
    assert proc.returncode == 2 and "got shape [8, 8]" in proc.stderr


def test_cli_budget_graph_out_writes_the_traced_graph(tmp_path):
    graph_file = tmp_path / "chain-graph.json"
    proc = run_cli("examples/budget_chain.py", "--budgets", "0.25", "--json", "-",
                   "--graph-out", str(graph_file))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    from matmulviz import report as report_module
    graph = report_module.load(str(graph_file))
    assert (graph["format"], graph["version"], graph["kind"]) == ("matmulviz-report", 1,
                                                                  "budget-graph")
    assert (graph["title"], graph["function"]) == ("budget_chain.py: f", "f")
    nodes = graph["nodes"]
    names = [n["name"] for n in nodes]
    assert names[:7] == [f"primals_{i}" for i in range(1, 7)] + ["tangents_1"]
    assert nodes[-1]["kind"] == "output" and graph["forward_outputs"] == 1
    # the output: the loss, then one gradient per primal
    assert len(nodes[-1]["args"]) == 1 + 6
    mms = [n for n in nodes if n["op"] == "mm"]
    assert len(mms) == 15 and all(n["flops"] == MM for n in mms)
    assert all(n["bytes"] == MIB for n in nodes[:6])
    for n in nodes:  # ids name earlier nodes
        assert all(a is None or 0 <= a < names.index(n["name"]) for a in n["args"])
    # the plan's names are the graph's
    assert set(report["rows"][0]["saved"]) <= set(names)
    # --no-sweep: only the graph, the same one
    again = tmp_path / "again.json"
    proc = run_cli("examples/budget_chain.py", "--graph-out", str(again), "--no-sweep")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(again.read_text())["nodes"] == nodes
    proc = run_cli("examples/budget_chain.py", "--no-sweep")
    assert proc.returncode == 2 and "--no-sweep needs --graph-out" in proc.stderr


def attention_numbers(L, D):
    """examples/budget_attention.py's block, derived by hand: x [1, H, L, 64] (H = D / 64),
    a = sdpa(x, x, x) on the memory-efficient kernel (float32), o = a viewed as [L, D],
    loss = cos(o @ w).sum(). T = 4 * L * D bytes (the output a, the matmul output h = o @ w);
    the logsumexp is float32 [1, H, ceil(L / 32) * 32]; philox seed and offset are 0-dim int64
    host tensors (8 bytes each for the partitioner, none on the device).
    - Eager autograd saves x (an input), a, the logsumexp (the attention node), o (a view of a)
      and w (an input) for the matmul, h for cos: 2T + lse + the 4-byte loss. Its backward: the
      attention's (sdpa_backward_flop_count 2 * H * L^2 * (3 * 64 + 2 * 64) = 10 * L^2 * D) and
      two matmuls (2 * L * D^2 each).
    - Budget 1, the default cut: the attention's logsumexp, seed and offset, alias(a) (what its
      backward reads), permute(a) (the matmul's backward reads o's transpose), h, permute(w)
      (a view of an input): 2T + lse in memory, 3T + lse + 16 to the partitioner, which counts
      each view's bytes (_size_of per node); nothing recomputed: the same FLOPs.
    - Budget 0: inputs only; the backward recomputes the attention (4 * L^2 * D) and the matmul.
    - In between, the knapsack (its candidates: the attention's tuple node, T + lse + 16 bytes,
      and the matmul, T) normalises by the default cut's 3T + lse + 16: each item about one
      third (PyTorch 2.11: 0.337 and 0.331 at L = 32, D = 128). 0.25 keeps neither; 0.5 one,
      the one with more FLOPs to recompute: the attention when 4 * L^2 * D > 2 * L * D^2, i.e.
      2L > D; 0.75 both, as the default cut."""
    T = 4 * L * D
    lse = 4 * (D // 64) * math.ceil(L / 32) * 32
    base = 10 * L * L * D + 2 * 2 * L * D * D
    attention, linear = 4 * L * L * D, 2 * L * D * D
    keep_attention = 2 * L > D
    return {
        "eager": (2 * T + lse + 4, base),
        0.0: (4, base + attention + linear, "attention+linear"),
        0.25: (4, base + attention + linear, "attention+linear"),
        0.5: (T + lse + 4, base + linear, "linear") if keep_attention else
             (T + 4, base + attention, "attention"),
        0.75: (2 * T + lse + 4, base, "nothing"),
        1.0: (2 * T + lse + 4, base, "nothing"),
    }


def test_attention_example_against_the_rules():
    out = run_example("budget_attention.py")
    blocks = re.findall(r"L=(\d+) D=(\d+): eager activation (\d+) backward FLOPs (\d+)\n"
                        r"((?:  budget .*\n)+)", out)
    assert [(int(L), int(D)) for L, D, *_ in blocks] == [(32, 128), (32, 256), (256, 128),
                                                          (256, 256)]
    for L, D, activation, flops, lines in blocks:
        want = attention_numbers(int(L), int(D))
        assert (int(activation), int(flops)) == want["eager"]
        rows = re.findall(r"budget (\S+): activation (\d+) backward FLOPs (\d+) recomputed "
                          r"(\S+)", lines)
        assert [(float(b), int(a), int(f), r) for b, a, f, r in rows] == [
            (b, *want[b]) for b in (0.0, 0.5, 0.75, 1.0)]


def test_cli_budget_attention_rows():
    proc = run_cli("examples/budget_attention.py", "--budgets", "0:1:0.25", "--json", "-")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    want = attention_numbers(256, 128)  # f is the L = 256, D = 128 block
    assert (report["eager"]["activation_bytes"], report["eager"]["backward_flops"]) == \
        want["eager"]
    rows = report["rows"]
    expected = [want[b] for b in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert [(r["activation_bytes"], r["backward_flops"]) for r in rows] == \
        [(a, f) for a, f, _ in expected]
    assert [r["route"] for r in rows] == ["budget 0: save the inputs", "knapsack", "knapsack",
                                          "knapsack", "budget 1: default cut"]
    assert rows[4]["saved"] == ["primals_1", "getitem_1", "getitem_2", "getitem_3", "mm",
                                "permute_1", "permute_2", "alias_1"]
    assert rows[2]["recomputed"] == ["mm"] and rows[3]["recomputed"] == []
    # the plan counts the seed and offset (16 bytes, host tensors on the engine) and each view
    # of the attention's output (two of them: T more), not the loss
    T = 4 * 256 * 128
    for r in rows:
        saves_attention = "getitem_1" in r["saved"]
        assert r["planned_activation_bytes"] == \
            r["activation_bytes"] - 4 + (16 + T if saves_attention else 0)
