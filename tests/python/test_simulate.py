"""matmulviz.simulate: real PyTorch programs, their CUDA memory from the caching-allocator model.
Skipped where PyTorch is not installed (Debian: python3-torch; tried with 1.13).

What is checked: the same program run by real PyTorch under the simulation and by
matmulviz.torch gives the same allocation sequence and the same numbers (memcases.py, the forum
strategies); the examples (an MLP with SGD, a TransformerEncoder with AdamW) run and their
reports hold what the app shows; out of memory at the right line; data-dependent steps named."""

import json
import os
import pickle
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch (python3-torch); "
                                            "it is not installed here")

from simulate_cli import ENV, simulate  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, "examples")
MEMCASES = os.path.join(ROOT, "tests", "reference", "gpu", "memcases.py")
# Both sides follow the module's default model (PyTorch 2.x on an H200: a cuBLAS workspace per
# thread), whatever the caller's environment says (simulate_cli.ENV).
# PyTorch's own switch for the workspace: none at all (the H200's memcases_noworkspace.json).
ENV_NO_WORKSPACE = dict(ENV, CUBLAS_WORKSPACE_CONFIG=":0:0")
MiB = 2**20
WORKSPACE = 32 * MiB  # one cuBLAS workspace on sm_90 (core/memory/cublas_workspace.h)
# The main thread's cuBLASLt workspace, allocated by the first addmm with a bias vector (an
# nn.Linear on a 2-d input; measured in the H200's transformer snapshot).
LT_WORKSPACE = 1 * MiB


def on_matmulviz_torch(args, cwd):
    return subprocess.run([sys.executable, os.path.join(HERE, "run_as_matmulviz_torch.py"),
                           *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)


def events(path):
    """The report's allocation sequence: one entry per alloc or segment event (kind, bytes,
    memory_allocated and memory_reserved after it) followed by the sorted sizes of the blocks
    freed before the next one; and its allocations' (requested, block bytes, pool).

    Frees between two allocations are compared as a set: when a tensor dies, PyTorch's C++
    releases its autograd graph before its storage, while the simulation hears of the tensor
    first (Python clears a tensor's weak references before the C++ tensor), so the order of
    the frees of one release can differ; the counters at every allocation cannot."""
    with open(path) as f:
        r = json.load(f)
    seq, freed = [], []
    for e in r["events"]["rows"]:
        if e[0] == 1:
            freed.append(e[2])
        else:
            seq.append(tuple(sorted(freed)))
            freed = []
            seq.append((e[0], e[2], e[4], e[5]))
    seq.append(tuple(sorted(freed)))
    allocs = [(a[3], a[4], a[5]) for a in r["allocations"]["rows"]]
    return seq, allocs, r


# ---- equal to matmulviz.torch


@pytest.fixture(scope="module")
def memcases_simulated(tmp_path_factory):
    """memcases.py's numbers, real PyTorch under the simulation (run once for the module)."""
    d = tmp_path_factory.mktemp("memcases")
    sim = simulate([MEMCASES, "torch", str(d / "sim.json")], d)
    assert sim.returncode == 0, sim.stderr
    return json.loads((d / "sim.json").read_text())


def test_memcases_equal_matmulviz_torch(tmp_path, memcases_simulated):
    """Every number of every memcases.py point, real PyTorch under the simulation against
    matmulviz.torch (meta mode): equal."""
    ref = subprocess.run([sys.executable, MEMCASES, "matmulviz", str(tmp_path / "mv.json"), "meta"],
                         cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600)
    assert ref.returncode == 0, ref.stderr
    a = memcases_simulated
    b = json.loads((tmp_path / "mv.json").read_text())
    cases = [k for k, v in b.items() if isinstance(v, dict) and "rows" in v]
    assert len(cases) == 14
    for name in cases:
        assert "error" not in a[name], (name, a[name].get("error"))
        assert a[name]["rows"] == b[name]["rows"], name
        assert a[name]["base"] == b[name]["base"], name
    assert a["warm"] == b["warm"]


# 700 rows: two full batches of 256 and a partial one.
@pytest.mark.parametrize("extra", [["--n", "700"]])
def test_forum_strategies_same_allocation_sequence(tmp_path, extra):
    """The forum strategies in plain PyTorch: the allocation sequence (each allocation's and
    segment's bytes, memory_allocated and memory_reserved after it, the blocks freed between) and
    every allocation's request and block are the same under the simulation and on
    matmulviz.torch."""
    script = os.path.join(EXAMPLES, "torch_forum_strategies.py")
    sim = simulate([script, *extra, "--report", "sim.json"], tmp_path)
    assert sim.returncode == 0, sim.stderr
    ref = on_matmulviz_torch(["mv.json", script, *extra], tmp_path)
    assert ref.returncode == 0, ref.stderr
    assert sim.stdout == ref.stdout  # the printed curMem / maxMem table
    sim_events, sim_allocs, _ = events(tmp_path / "sim.json")
    mv_events, mv_allocs, _ = events(tmp_path / "mv.json")
    assert len(sim_events) > 100
    assert sim_events == mv_events
    assert sim_allocs == mv_allocs


def test_index_backward_sort_same_allocation_sequence(tmp_path):
    """The backward of c[q] sorts the indices on CUDA (index_put_ with accumulate): with the
    index on the host and on the device, the simulation takes the sort's buffers and CUB's
    storage as matmulviz.torch does (whose sequence equals the H200's snapshot of the same
    statements, test_gpu_snapshots.py)."""
    script = tmp_path / "gather_backward.py"
    script.write_text("import torch\n"
                      "c = torch.randn(1000, 64, 64, device='cuda', requires_grad=True)\n"
                      "a = torch.randn(3000, 1, 64, device='cuda', requires_grad=True)\n"
                      "q = torch.randint(0, 1000, (3000,))\n"
                      "torch.matmul(a, c[q]).sum().backward()\n"
                      "qd = q.cuda()\n"
                      "torch.matmul(a, c[qd]).sum().backward()\n")
    sim = simulate([str(script), "--report", "sim.json"], tmp_path)
    assert sim.returncode == 0, sim.stderr
    ref = on_matmulviz_torch(["mv.json", str(script)], tmp_path)
    assert ref.returncode == 0, ref.stderr
    sim_events, sim_allocs, _ = events(tmp_path / "sim.json")
    mv_events, mv_allocs, _ = events(tmp_path / "mv.json")
    assert sim_events == mv_events
    assert sim_allocs == mv_allocs
    # 3000 indices of 10 bits: CUB's storage, once per backward (core/memory/sort_temporaries.h)
    cub = [a for a in sim_allocs if a[0] == 53759]
    assert len(cub) == 2, sim_allocs


# ---- H200 measurements

# memcases.py's programs are written so that their aten ops are the same under PyTorch 1.13 and
# 2.11 (plain factories, mm, softmax, topk, sum, backward): so every checkpoint, the numbers at
# each program's start (the workspaces kept from earlier programs) and the warm-up must equal
# what the H200 measured, with the cuBLAS workspace (default settings) and without it.
@pytest.mark.parametrize("truth, env", [("memcases_torch.json", ENV),
                                        ("memcases_noworkspace.json", ENV_NO_WORKSPACE)])
def test_memcases_against_h200(tmp_path, memcases_simulated, truth, env):
    from test_gpu_memcases import checkpoints, differences
    with open(os.path.join(ROOT, "tests", "reference", "gpu", truth)) as f:
        h200 = json.load(f)
    if env is ENV:
        ours = memcases_simulated
    else:
        sim = simulate([MEMCASES, "torch", str(tmp_path / "sim.json")], tmp_path, env)
        assert sim.returncode == 0, sim.stderr
        ours = json.loads((tmp_path / "sim.json").read_text())
    assert checkpoints(h200) == 51
    diffs = differences(h200, ours)
    assert not diffs, f"{len(diffs)} differences from {truth}:\n" + "\n".join(diffs)


def test_workspaces_by_thread(tmp_path):
    """The cuBLAS workspace as the engine's rule has it: the main thread's at the first matmul,
    the autograd thread's at the first backward that runs a matmul, each once, never freed
    (empty_cache keeps them); --pytorch forum counts none; CUBLAS_WORKSPACE_CONFIG sizes them;
    --gpu a100 (sm_80) takes 8320 KiB."""
    script = tmp_path / "ws.py"
    script.write_text("import torch\n"
                      "a = torch.ones(4, 4, device='cuda', requires_grad=True)\n"
                      "s = (a * 2).sum(); s.backward(); del s\n"  # a backward without a matmul
                      "print(torch.cuda.memory_allocated())\n"
                      "b = a @ a\n"
                      "print(torch.cuda.memory_allocated())\n"
                      "c = a @ a\n"
                      "print(torch.cuda.memory_allocated())\n"
                      "b.sum().backward()\n"
                      "print(torch.cuda.memory_allocated())\n"
                      "(a @ a).sum().backward()\n"
                      "del a, b, c; torch.cuda.empty_cache()\n"
                      "print(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())\n")

    def run(*extra, env=ENV):
        p = simulate([str(script), "--report", "ws.json", *extra], tmp_path, env)
        assert p.returncode == 0, p.stderr
        return [[int(v) for v in line.split()] for line in p.stdout.splitlines()], p.stderr

    # a, its gradient (512 B each); b, c; after backward: a.grad kept
    lines, err = run()
    assert lines == [[1024], [1536 + WORKSPACE], [2048 + WORKSPACE], [2048 + 2 * WORKSPACE],
                     [2 * WORKSPACE, 2 * WORKSPACE]]
    assert "PyTorch 2.x on h200 (sm_90)" in err
    report = json.loads((tmp_path / "ws.json").read_text())
    assert report["device"]["pytorch"]["version"] == "2.x"
    labels = sorted((a[1], a[8], a[7]) for a in report["allocations"]["rows"] if a[1].startswith("cuBLAS workspace"))
    assert labels == [("cuBLAS workspace of the autograd thread", "cuBLAS workspace", True),
                      ("cuBLAS workspace of the main thread", "cuBLAS workspace", True)], labels
    lines, err = run("--pytorch", "forum")
    assert lines == [[1024], [1536], [2048], [2048], [0, 0]]
    assert "forum" in json.loads((tmp_path / "ws.json").read_text())["device"]["pytorch"]["version"]
    lines, _ = run("--gpu", "a100")
    assert lines[1] == [1536 + 8320 * 1024]
    lines, _ = run(env=dict(ENV, CUBLAS_WORKSPACE_CONFIG=":1024:2"))
    assert lines[3] == [2048 + 2 * 2 * MiB]
    p = simulate([str(script), "--pytorch", "3.x"], tmp_path)
    assert p.returncode == 2 and "3.x" in p.stderr


# ---- the examples


def test_mlp_sgd_example(tmp_path):
    script = os.path.join(EXAMPLES, "torch_mlp_sgd.py")
    p = simulate([script, "--report", "mlp.json", "--snapshot", "mlp.pickle"], tmp_path)
    assert p.returncode == 0, p.stderr
    _, allocs, raw = events(tmp_path / "mlp.json")
    assert raw["complete"] is True
    # After each step: parameters, their gradients and SGD's momentum buffers (3 copies of
    # 784*2048 + 2048 + 2048*2048 + 2048 + 2048*10 + 10 float32), x [512, 784], y [512] int64
    # and the loss: exactly these requests, in blocks the allocator rounded (and may hand out
    # unsplit: a cached block with less than 1 MiB to spare).
    params = 784 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 10 + 10
    expected_requested = 3 * 4 * params + 512 * 784 * 4 + 512 * 8 + 4
    named = {int(k) for k in raw["variables"]}
    requested = {a[0]: a[3] for a in raw["allocations"]["rows"]}
    assert sum(requested[i] for i in named) == expected_requested
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 4
    block_total = sum(a[4] for a in raw["allocations"]["rows"] if a[0] in named)
    # and the cuBLAS workspaces of the main thread (forward) and of autograd's (backward), and
    # the main thread's cuBLASLt workspace
    for line in lines[1:]:
        assert float(line.split()[1]) == pytest.approx(
            (block_total + 2 * WORKSPACE + LT_WORKSPACE) / MiB, abs=0.005)
    # The report names the example's lines, the parameters and who kept blocks at the peak.
    frames = raw["frames"]
    assert all(f["file"].endswith("torch_mlp_sgd.py") for f in frames), frames
    assert any("loss.backward()" in f["code"] for f in frames)
    names = {n for ns in raw["variables"].values() for n in ns}
    assert {"model.0.weight", "model.0.weight.grad", "x", "y"} <= names
    assert any("momentum_buffer" in n for n in names)
    # PyTorch's memory profiler's categories: the parameters, their .grad, SGD's momentum
    # buffers, what autograd saved, the rest of the backward's blocks
    rows = raw["allocations"]["rows"]
    categories = {a[8] for a in rows}
    assert {"parameter", "gradients", "optimizer state", "activation", "autograd detail",
            "cuBLAS workspace"} <= categories, categories
    category_of = {a[0]: a[8] for a in rows}
    by_name = {n: category_of[int(k)] for k, ns in raw["variables"].items() for n in ns}
    assert by_name["model.0.weight"] == "parameter"
    assert by_name["model.0.weight.grad"] == "gradients"
    assert {c for n, c in by_name.items() if "momentum_buffer" in n} == {"optimizer state"}
    whys = {h["why"] for hs in raw["peak"]["kept_alive_by"].values() for h in hs}
    assert any(w.startswith("saved for backward by AddmmBackward") for w in whys), whys
    # The snapshot: PyTorch's pickle, whose trace records the requests: it replays to the peak
    # of requested_bytes.
    with open(tmp_path / "mlp.pickle", "rb") as f:
        snap = pickle.load(f)
    current = peak = 0
    for e in snap["device_traces"][0]:
        current += e["size"] if e["action"] == "alloc" else -e["size"]
        peak = max(peak, current)
    assert peak == raw["memory_stats"]["requested_bytes.all.peak"]
    # everything freed when the script's names died, but the workspaces (kept by PyTorch)
    assert current == 2 * WORKSPACE + LT_WORKSPACE


def test_transformer_adamw_example(tmp_path):
    script = os.path.join(EXAMPLES, "torch_transformer_adamw.py")
    p = simulate([script, "--gpu", "h200", "--report", "tr.json"], tmp_path)
    assert p.returncode == 0, p.stderr
    _, allocs, raw = events(tmp_path / "tr.json")
    assert raw["complete"] is True
    assert raw["device"]["capacity_bytes"] == 143771 * MiB
    names = {n for ns in raw["variables"].values() for n in ns}
    assert any("['exp_avg_sq']" in n for n in names), names
    # AdamW keeps two float32 states per parameter: after a step, params + grads + 2 states.
    n_params = 2 * (3 * 256 * 256 + 3 * 256 + 256 * 256 + 256 + 1024 * 256 + 1024 + 256 * 1024
                    + 256 + 4 * 256) + 256 * 1000 + 1000
    step_mib = [float(line.split()[1]) for line in p.stdout.splitlines()[1:4]]
    assert step_mib[0] == step_mib[1] == step_mib[2]
    assert step_mib[0] * MiB >= 4 * n_params * 4
    assert raw["peak"]["allocated_bytes"] > step_mib[0] * MiB


# ---- out of memory, values, the in-code API


def test_out_of_memory_at_the_line(tmp_path):
    script = tmp_path / "oom.py"
    script.write_text("import torch\n"
                      "a = torch.empty(256 * 2**20, device='cuda')\n"
                      "b = torch.empty(256 * 2**20, device='cuda')\n"
                      "c = torch.empty(256 * 2**20, device='cuda')\n")
    p = simulate([str(script), "--capacity", "3GiB", "--report", "oom.json"], tmp_path)
    assert p.returncode == 0, p.stderr
    p = simulate([str(script), "--capacity", "2000MiB", "--report", "oom.json"], tmp_path)
    assert p.returncode == 1
    assert "torch.cuda.OutOfMemoryError" in p.stderr or "OutOfMemoryError" in p.stderr
    assert "Tried to allocate 1024.00 MiB" in p.stderr, p.stderr
    # PyTorch 2.x's wording, the simulation's default rules (c10's DeviceCachingAllocator)
    assert ("Tried to allocate 1024.00 MiB. GPU 0 has a total capacity of 1.95 GiB of which "
            "976.00 MiB is free. Of the allocated memory 1024.00 MiB is allocated by PyTorch, and "
            "0 bytes is reserved by PyTorch but unallocated.") in p.stderr, p.stderr
    assert 'oom.py", line 3' in p.stderr
    raw = json.loads((tmp_path / "oom.json").read_text())
    assert raw["complete"] is False


def test_value_reads_return_placeholders_and_are_listed(tmp_path):
    """.item(), float(), bool(), format(), .tolist(), .cpu() and .numpy() of simulated tensors
    return placeholders of the right type and shape, the run goes on, and the terminal and the
    report list each read by line with what it returned."""
    script = tmp_path / "reads.py"
    script.write_text("import torch\n"
                      "x = torch.randn(10, 3, device='cuda')\n"
                      "for step in range(3):\n"
                      "    loss = x.sum()\n"
                      "    print(f'loss {loss.item():.3f} {float(loss)} {loss:.2f}')\n"
                      "assert x.tolist() == [[0.0] * 3] * 10\n"
                      "assert not bool(torch.isnan(loss).any())\n"
                      "h = x.cpu()\n"
                      "assert h.device.type == 'cpu' and h.shape == (10, 3)\n"
                      "assert x.to('cpu').sum() == 0 and x.numpy().shape == (10, 3)\n"
                      "n = torch.ones(4, dtype=torch.long, device='cuda').sum().item()\n"
                      "assert n == 0 and isinstance(n, int)\n")
    p = simulate([str(script), "--report", "reads.json"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "loss 0.000 0.0 0.00"
    assert "placeholders" in p.stderr and "control flow" in p.stderr, p.stderr
    assert ("reads.py:5 `print(f'loss {loss.item():.3f} {float(loss)} {loss:.2f}')`: "
            "Tensor.item() returned 0.0 (3 times)") in p.stderr, p.stderr
    reads = json.loads((tmp_path / "reads.json").read_text())["value_reads"]
    assert all(r["file"].endswith("reads.py") for r in reads)
    kinds = {(r["line"], r["read"]) for r in reads}
    assert {(5, "Tensor.item()"), (5, "float(tensor)"), (5, "format(tensor)"),
            (6, "Tensor.tolist()"), (7, "bool(tensor)"), (8, "Tensor.cpu()"),
            (10, "Tensor.to(cpu)"), (10, "Tensor.numpy()"), (11, "Tensor.item()")} <= kinds


def test_value_dependent_sizes_stop_with_the_line(tmp_path):
    """Ops whose output sizes depend on the values stop the run, naming the line and the op."""
    script = tmp_path / "mask.py"
    script.write_text("import torch\n"
                      "x = torch.randn(10, device='cuda')\n"
                      "y = x[x > 0]\n")
    p = simulate([str(script)], tmp_path)
    assert p.returncode == 1
    assert "boolean mask" in p.stderr and "mask.py:3" in p.stderr, p.stderr
    script.write_text("import torch\n"
                      "x = torch.randn(10, device='cuda')\n"
                      "i = torch.nonzero(x)\n")
    p = simulate([str(script)], tmp_path)
    assert p.returncode == 1
    assert "nonzero" in p.stderr and "mask.py:3" in p.stderr, p.stderr


def test_in_code_api_views_share_a_block(tmp_path):
    script = tmp_path / "api.py"
    script.write_text("""\
import torch
import matmulviz
with matmulviz.simulate(gpu="h200") as sim:
    x = torch.randn(1024, 1024, device="cuda")
    assert x.device == torch.device("cuda", 0) and x.is_cuda, x.device
    assert "device='cuda:0'" in repr(x)
    assert torch.cuda.is_available()
    assert torch.cuda.memory_allocated() == 4 * 2**20
    v = x[::2]
    assert torch.cuda.memory_allocated() == 4 * 2**20
    del x
    assert torch.cuda.memory_allocated() == 4 * 2**20  # the view keeps the storage
    del v
    assert torch.cuda.memory_allocated() == 0
    assert torch.cuda.memory_reserved() == 20 * 2**20
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() == 0
    y = torch.ones(3, 4).cuda()
    assert torch.cuda.memory_allocated() == 512 and y.device.type == "cuda"
    assert torch.cuda.memory_stats()["allocated_bytes.all.current"] == 512
    z = y.to(torch.float16)
    assert torch.cuda.memory_allocated() == 1024 and z.dtype == torch.float16
    assert torch.cuda.max_memory_allocated() == 4 * 2**20
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() == 1024
    c = torch.ones(2)  # CPU tensors stay real
    assert c.sum().item() == 2.0
print("ok", torch.cuda.is_available())
""")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=ENV, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok False"  # torch.cuda is PyTorch's again after the block


def test_values_cpu(tmp_path):
    """--values cpu: data-dependent steps work, with their blocks accounted; the MLP's memory is
    the same as without values."""
    script = tmp_path / "vals.py"
    script.write_text("import torch\n"
                      "x = torch.arange(10.0, device='cuda')\n"
                      "print(x.sum().item(), x.is_cuda)\n"
                      "y = x[x > 4]\n"
                      "print(y.cpu().tolist(), y.device, torch.cuda.memory_allocated())\n"
                      "print(tuple(torch.nonzero(x > 7).shape))\n")
    p = simulate([str(script), "--values", "cpu"], tmp_path)
    assert p.returncode == 0, p.stderr
    # x (40 B) and y (20 B): one 512-byte block each
    assert p.stdout.splitlines() == ["45.0 True", "[5.0, 6.0, 7.0, 8.0, 9.0] cuda:0 1024",
                                     "(2, 1)"]
    script = os.path.join(EXAMPLES, "torch_mlp_sgd.py")
    with_values = simulate([script, "--values", "cpu", "--batch", "64", "--steps", "2"], tmp_path)
    without = simulate([script, "--batch", "64", "--steps", "2"], tmp_path)
    assert with_values.returncode == 0 and without.returncode == 0, with_values.stderr
    assert with_values.stdout == without.stdout
    p = simulate([str(script), "--values", "gpu"], tmp_path)
    assert p.returncode == 2 and "values" in p.stderr


def test_dropout_as_on_cuda(tmp_path):
    """A training-mode dropout keeps a bool mask (1 byte per element) for backward, as CUDA's
    fused native_dropout does, not the float mask of 1.13's path for other devices."""
    script = tmp_path / "dropout.py"
    script.write_text("import torch\n"
                      "x = torch.randn(1024, 1024, device='cuda', requires_grad=True)\n"
                      "y = torch.nn.functional.dropout(x, 0.5)\n"
                      "print(torch.cuda.memory_allocated(), type(y.grad_fn).__name__)\n"
                      "with torch.no_grad():\n"
                      "    z = torch.nn.functional.dropout(x, 0.5, training=False)\n"
                      "print(torch.cuda.memory_allocated())\n")
    p = simulate([str(script)], tmp_path)
    assert p.returncode == 0, p.stderr
    # x and y: 4 MiB each; the mask: 1 MiB of bool; eval-mode dropout returns its input
    assert p.stdout.split() == [str(9 * MiB), "NativeDropoutBackward0", str(9 * MiB)]
