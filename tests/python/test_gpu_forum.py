"""The forum workload's strategies (matmulviz-cli strategies, meta device, PyTorch 2.x on an
H200) against what PyTorch 2.11 printed on an H200 (tests/reference/gpu/pytorch_forum_memory.json):
curMem and maxMem of every strategy and requires_grad setting, at the seed's shape and the
held-out shape. Each GPU row was taken after a warm-up matmul, so its numbers include the main
thread's 32 MiB cuBLAS workspace, which the engine's 2.x model allocates at the strategy's first
matmul. The same run with --pytorch forum is 32 MiB less: the forum post's table.

test_forum_rows_equal_the_gpu runs the rows' own program (tests/reference/gpu/forum_rows.py) on
matmulviz.torch from the allocator state the measuring process was in, and requires memory_reserved
too."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TRUTH = os.environ.get("MATMULVIZ_GPU_FORUM_TRUTH") or os.path.join(
    HERE, "..", "reference", "gpu", "pytorch_forum_memory.json")
ROWS_PROGRAM = os.path.join(HERE, "..", "reference", "gpu", "forum_rows.py")
CLI = os.environ.get("MATMULVIZ_CLI")
# The architecture the measurement's GPU has (matmulviz.set_gpu's keys); the stored file's: h200.
GPU_KEY = os.environ.get("MATMULVIZ_GPU_TRUTH_GPU") or "h200"
# A fresh allocator, as `strategies` runs each strategy, keeps 89088 bytes more than the H200's
# row for strategy3 with a last, shorter batch and `a` requiring grad: three gathers of 2304000
# bytes end a 20 MiB segment with 235520 bytes to spare, which the caching allocator's
# should_split keeps in the block. A fresh process on the GPU does the same (its snapshot of these
# statements, snapshots/forum_held1_s3.pickle, equals the engine's run event by event:
# test_gpu_snapshots.py). The row's own process held one free, cached 32 MiB segment when a and c
# were made; from that state the engine gives every row of the file, reserved included
# (test_forum_rows_equal_the_gpu below).
FRESH_ALLOCATOR_DIFFERS = {(10000, "a", "strategy3"), (10000, "a,c", "strategy3")}


def rows():
    return json.load(open(TRUTH))["rows"]


def shapes():
    return sorted({(r["N"], r["M"], r["I"], r["J"], r["K"], r["batch"], r["grad"]) for r in rows()})


@pytest.mark.parametrize("shape", shapes(), ids=lambda s: f"N{s[0]}-grad-{s[6]}")
@pytest.mark.parametrize("pytorch", ["2.x", "forum"])
def test_forum_strategies_equal_the_gpu(shape, pytorch):
    if not CLI:
        pytest.skip("MATMULVIZ_CLI is not set (CTest sets it to this build's matmulviz-cli)")
    n, m, i, j, k, batch, grad = shape
    want = {r["strategy"]: r for r in rows() if (r["N"], r["M"], r["I"], r["J"], r["K"],
                                                  r["batch"], r["grad"]) == shape}
    done = subprocess.run(
        [CLI, "strategies", "--device", "meta", "--repeats", "1", "--pytorch", pytorch,
         "--gpu", GPU_KEY, "--n", str(n), "--m", str(m), "--i", str(i), "--j", str(j),
         "--k", str(k), "--batch", str(batch), "--requires-grad", grad,
         "--strategies", ",".join(sorted(want)), "--json", "-"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["pytorch"]["version"] == pytorch
    workspace = 0 if pytorch == "forum" else json.load(open(TRUTH))["baseline_allocated"]
    diffs = []
    for run in report["runs"]:
        truth = want[run["strategy"]]
        if (n, grad, run["strategy"]) in FRESH_ALLOCATOR_DIFFERS:
            continue
        for ours, gpu in (("cur_mem_bytes", "cur_above"), ("max_mem_bytes", "max_above")):
            if run[ours] != truth[gpu] + workspace:
                diffs.append(f"{run['strategy']}: {ours} {run[ours]} "
                             f"(GPU {truth[gpu] + workspace})")
    assert not diffs, "\n".join(diffs)


def test_forum_rows_equal_the_gpu(tmp_path):
    """tests/reference/gpu/forum_rows.py on matmulviz.torch (meta mode, PyTorch 2.x, the GPU key)
    against every row of the measurement: curMem, maxMem and memory_reserved, both shapes, every
    requires_grad setting and strategy. The allocator starts each row as the measuring process
    did: the file's `cached_mib` (written by forum_rows.py), else 32 for the H200's file, whose
    program is not kept (one free 32 MiB segment reproduces all 72 numbers; none, or one of 24,
    30, 40 or 64 MiB, does not). Another measurement is a file: MATMULVIZ_GPU_FORUM_TRUTH=FILE."""
    import matmulviz

    truth = json.load(open(TRUTH))
    shapes = {(131072, 2048, 1, 64, 64, 256): "seed", (10000, 300, 3, 48, 40, 300): "held"}
    measured = {(r["N"], r["M"], r["I"], r["J"], r["K"], r["batch"]) for r in truth["rows"]}
    assert measured <= set(shapes), f"forum_rows.py has no shape for {measured - set(shapes)}"
    keys = sorted(shapes[s] for s in measured)
    out = tmp_path / "rows.json"
    env = dict(os.environ, MATMULVIZ_GPU=GPU_KEY, MATMULVIZ_PYTORCH="2.x",
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__))))
    env.pop("CUBLAS_WORKSPACE_CONFIG", None)
    done = subprocess.run([sys.executable, ROWS_PROGRAM, "matmulviz", str(out), "--cached-mib",
                           str(truth.get("cached_mib", 32)), "--shapes", ",".join(keys)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    ours = {(r["N"], r["grad"], r["strategy"]): r for r in json.loads(out.read_text())["rows"]}
    diffs = []
    for want in truth["rows"]:
        got = ours[(want["N"], want["grad"], want["strategy"])]
        for field in ("cur", "max", "reserved"):
            if got[field] != want[field]:
                diffs.append(f"N={want['N']} grad {want['grad']} {want['strategy']}: {field} "
                             f"{got[field]} (GPU {want[field]})")
    assert len(truth["rows"]) > 0
    assert not diffs, f"{len(diffs)} differences:\n" + "\n".join(diffs)
