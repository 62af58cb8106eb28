"""Everyday idioms of training scripts, run unchanged under matmulviz.simulate (both PyTorch
versions under test, unless the version lacks the API): pinned host memory (DataLoader's
pin_memory, non-blocking copies; counted apart from the device, as PyTorch's CachingHostAllocator
holds it: each block a power of two, reused by size), GradScaler (its inf checks read a value:
a placeholder, listed), CUDA streams and events (a pool per stream, record_stream's deferred
reuse), memory_summary() in PyTorch's layout, --host meta (what a script builds on the CPU simulated too),
torch.save / torch.load of state dicts (with
values: a GPU checkpoint; without: meta tensors a later simulated run loads), and
torch.cuda.memory_snapshot() with the model's segments."""

import json
import pickle
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="matmulviz.simulate needs PyTorch")

from simulate_cli import simulate_source  # noqa: E402

WORKSPACE = 32 * 2**20  # the main thread's cuBLAS workspace on sm_90


def run(tmp_path, source, *args, name="script.py"):
    """(stdout, stderr) of `source` run under matmulviz.simulate --gpu h200 in tmp_path."""
    p = simulate_source(tmp_path, source, "--gpu", "h200", *args, name=name)
    assert p.returncode == 0, p.stderr
    return p.stdout, p.stderr


PINNED = """\
import torch
a = torch.empty(3000, dtype=torch.uint8).pin_memory()  # a 4096-byte block
b = torch.empty(3000, dtype=torch.uint8).pin_memory()
assert a.is_pinned() and not torch.empty(4).is_pinned() and b.pin_memory() is b
del a
c = torch.empty(2500, dtype=torch.uint8).pin_memory()  # a's block again
d = c.to("cuda", non_blocking=True)
print(torch.cuda.memory_allocated())
"""


def test_pinned_memory_is_host_memory_counted_apart(tmp_path):
    out, err = run(tmp_path, PINNED, "--report", "run.json")
    assert out.split() == ["2560"]  # only the device copy of c: 2500 bytes rounded to 512s
    pinned = json.loads((tmp_path / "run.json").read_text())["pinned_host"]
    assert pinned == {"peak_active_bytes": 8192, "peak_held_bytes": 8192, "pinned_tensors": 3}
    assert "pinned host memory (page-locked, not on the device)" in err, err


LOADER = """\
import sys
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
ds = TensorDataset(torch.randn(256, 32), torch.randint(0, 10, (256,)))
loader = DataLoader(ds, batch_size=64, shuffle=True, pin_memory=sys.argv[1] == "pinned")
model = torch.nn.Linear(32, 10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    x, y = x.cuda(non_blocking=True), y.to("cuda", non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(torch.cuda.max_memory_allocated(), torch.cuda.memory_allocated())
"""


def test_dataloader_pinning_leaves_the_device_numbers_alone(tmp_path):
    pinned, err = run(tmp_path, LOADER, "pinned")
    plain, _ = run(tmp_path, LOADER, "plain")
    assert pinned == plain
    assert "pinned tensor(s)" in err, err


SCALER = """\
import torch
torch.manual_seed(0)
model = torch.nn.Linear(64, 64).cuda()
opt = torch.optim.AdamW(model.parameters())
new_api = hasattr(torch.amp, "GradScaler")
scaler = torch.amp.GradScaler("cuda") if new_api else torch.cuda.amp.GradScaler()
for _ in range(2):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(32, 64, device="cuda")).float().sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
print(len(opt.state), scaler.get_scale())
"""


def test_grad_scaler_steps_and_lists_its_inf_check(tmp_path):
    out, err = run(tmp_path, SCALER)
    assert out.split() == ["2", "0.0"]  # AdamW's state made; the scale is a value read
    assert "scaler.step(opt)`: Tensor.item() returned 0.0 (2 times)" in err, err
    assert "Tensor.item() returned 0.0" in err.split("scaler.get_scale()")[0], err


STREAMS = """\
import torch
side = torch.cuda.Stream()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
a = torch.randn(1024, 1024, device="cuda")
start.record()
with torch.cuda.stream(side):
    assert torch.cuda.current_stream() == side
    b = a @ a
torch.cuda.current_stream().wait_stream(side)
b.record_stream(torch.cuda.current_stream())
assert torch.cuda.current_stream() == torch.cuda.default_stream() != side
end.record()
end.synchronize()
torch.cuda.synchronize()
print(start.elapsed_time(end), side.query(), torch.cuda.max_memory_allocated())
"""


def test_streams_and_events_run(tmp_path):
    out, err = run(tmp_path, STREAMS)
    assert out.split() == ["0.0", "True", str(2 * 4 * 2**20 + WORKSPACE)]
    assert "Event.elapsed_time() returned 0.0" in err, err


STREAM_POOLS = """\
import torch
MiB = 2**20
side = torch.cuda.Stream()
def block():
    return torch.empty(12 * MiB // 4, device="cuda")  # a 12 MiB segment of its own
x = block(); del x  # cached for the default stream
with torch.cuda.stream(side):
    y = block()  # not the default stream's cached block: a second segment
print(torch.cuda.memory_reserved() // MiB)
del y
z = block()  # the default stream's cached block
print(torch.cuda.memory_reserved() // MiB)
z.record_stream(side)
del z  # freed, but side may still be using it
w = block()  # so this takes a third segment
print(torch.cuda.memory_reserved() // MiB, torch.cuda.memory_allocated() // MiB)
side.synchronize()
del w
a, b = block(), block()  # z's and w's blocks, both the default stream's again
print(torch.cuda.memory_reserved() // MiB)
print(sorted({s["stream"] for s in torch.cuda.memory_snapshot()}))
"""


def test_streams_have_their_own_pools_and_record_stream_defers_reuse(tmp_path):
    out, _ = run(tmp_path, STREAM_POOLS)
    lines = out.splitlines()
    assert lines[:4] == ["24", "24", "36 12", "36"], out
    streams = json.loads(lines[4])
    assert len(streams) == 2 and 0 in streams, out


SUMMARY = """\
import torch
a = torch.empty(9 * 2**20 // 4, device="cuda")  # 9 MiB of a 20 MiB segment
b = torch.empty(1000, device="cuda")  # a small block
del b
print(torch.cuda.memory_summary())
s = torch.cuda.memory_stats()
print(s["inactive_split_bytes.all.current"], s["allocation.all.allocated"], s["allocation.all.freed"])
torch.cuda.reset_accumulated_memory_stats()
print(torch.cuda.memory_stats()["allocation.all.allocated"])
"""


def test_memory_summary_is_pytorchs_own(tmp_path):
    """torch.cuda.memory_summary() is PyTorch's function over the model's memory_stats(), which
    has every key PyTorch's has (current, peak, allocated, freed of each statistic)."""
    out, _ = run(tmp_path, SUMMARY)
    lines = out.splitlines()
    assert "PyTorch CUDA memory summary, device ID 0" in out, out
    row = next(line for line in lines if line.startswith("| Allocated memory"))
    # cur usage: 9 MiB in PyTorch's units (1.13 writes KB, 2.x KiB)
    assert row.split("|")[2].strip() in ("9216 KiB", "9216 KB"), row
    assert any(line.startswith("| GPU reserved segments") for line in lines), out
    # the large segment's free 11 MiB cannot be released while a lives (the small segment is
    # whole again: releasable); two allocations made, one freed; the totals restart at the reset
    assert lines[-2].split() == [str(11 * 2**20), "2", "1"], out
    assert lines[-1] == "0", out


HOST_BUILT = """\
import torch
model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(4)])  # on the host
model = model.cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(64, 1024).cuda()
loss = model(x).sum()
loss.backward()
opt.step()
print(loss.item(), torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved())
"""


def test_host_meta_simulates_what_the_script_builds_on_the_cpu(tmp_path):
    """--host meta: the model built on the CPU and the batch made there are meta tensors whose
    bytes are counted as host memory; the device's numbers are those of real CPU tensors."""
    real, _ = run(tmp_path, HOST_BUILT)
    simulated, err = run(tmp_path, HOST_BUILT, "--host", "meta")
    assert simulated.split()[1:] == real.split()[1:]
    params = 4 * (1024 * 1024 + 1024) * 4
    host = next(line for line in err.splitlines() if "host tensors (--host meta" in line)
    # the four layers at once (x is made after .cuda() dropped them), nothing at the end
    assert f"peak {params / 2**20:.2f} MiB, 0.00 MiB at the end" in host, host
    p = simulate_source(tmp_path, HOST_BUILT, "--host", "meta", "--values", "cpu")
    assert p.returncode == 2 and "values" in p.stderr, p.stderr


SAVE = """\
import sys
import torch
torch.manual_seed(0)
model = torch.nn.Linear(256, 256).cuda()
opt = torch.optim.AdamW(model.parameters())
model(torch.randn(8, 256, device="cuda")).sum().backward()
opt.step()
opt.zero_grad(set_to_none=True)
torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, "ck.pt")
before = torch.cuda.memory_allocated()
ck = torch.load("ck.pt", map_location="cuda")
print(torch.cuda.memory_allocated() - before, ck["model"]["weight"].is_cuda)
model.load_state_dict(ck["model"])
opt.load_state_dict(ck["opt"])
del ck
print(torch.cuda.memory_allocated() - before)
"""

LOAD_LATER = """\
import torch
ck = torch.load("ck.pt")
w = ck["model"]["weight"]
print(w.is_cuda, tuple(w.shape), torch.cuda.memory_allocated())
"""


def test_a_checkpoint_without_values_saves_and_loads(tmp_path):
    out, _ = run(tmp_path, SAVE)
    # weight, bias, and AdamW's exp_avg and exp_avg_sq of each: a new block per storage; with
    # map_location="cuda" AdamW's step counters, saved from the CPU, come to the device too,
    # and load_state_dict leaves a step where it is (torch/optim/optimizer.py)
    state = 3 * (256 * 256 * 4 + 1024)
    assert out.split() == [str(state + 2 * 512), "True", str(2 * 512)]
    # Loaded as saved: the simulated tensors (meta in the file) onto the device, the CPU steps
    # on the CPU.
    later, _ = run(tmp_path, LOAD_LATER, name="later.py")
    assert later.split() == ["True", "(256,", "256)", str(state)]
    # Outside a simulation the file holds meta tensors: sizes without values.
    w = torch.load(str(tmp_path / "ck.pt"))["model"]["weight"]
    assert w.device.type == "meta" and tuple(w.shape) == (256, 256)


SAVE_VALUES = """\
import torch
t = torch.arange(6.0, device="cuda")
torch.save({"t": t, "tail": t[2:]}, "values.pt")
before = torch.cuda.memory_allocated()
back = torch.load("values.pt")
print(torch.cuda.memory_allocated() - before, back["tail"].cpu().tolist())
"""


def test_a_checkpoint_with_values_is_a_gpu_checkpoint(tmp_path):
    out, _ = run(tmp_path, SAVE_VALUES, "--values", "cpu")
    assert out.split() == ["512", "[2.0,", "3.0,", "4.0,", "5.0]"]  # one storage, one block
    path = str(tmp_path / "values.pt")
    assert torch.load(path, map_location="cpu")["tail"].tolist() == [2.0, 3.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="CUDA"):  # its storage is tagged cuda:0
        torch.load(path)


SNAPSHOT = """\
import json
import torch
torch.cuda.memory._record_memory_history()
a = torch.randn(1000, 1000, device="cuda")
b = torch.randn(100, device="cuda")
c = torch.randn(300, 1000, device="cuda")
del a
segments = torch.cuda.memory_snapshot()
print(json.dumps([segments, torch.cuda.memory_reserved(), torch.cuda.memory_allocated()]))
torch.cuda.memory._dump_snapshot("snap.pickle")
"""


def test_memory_snapshot_lists_the_segments(tmp_path):
    out, _ = run(tmp_path, SNAPSHOT)
    segments, reserved, allocated = json.loads(out)
    assert sum(s["total_size"] for s in segments) == reserved
    assert sum(s["allocated_size"] for s in segments) == allocated
    for s in segments:  # its blocks cover it, in address order
        assert s["segment_type"] in ("small", "large")
        end = s["address"]
        for block in s["blocks"]:
            assert block["address"] == end
            end += block["size"]
        assert end == s["address"] + s["total_size"]
    live = {(b["address"], b["requested_size"]) for s in segments for b in s["blocks"]
            if b["state"] == "active_allocated"}
    assert {400, 1200000} == {size for _, size in live}
    with open(tmp_path / "snap.pickle", "rb") as f:
        snap = pickle.load(f)
    # The trace's addresses are the segments' blocks', and the live blocks carry their frames.
    allocs = {(e["addr"], e["size"]) for e in snap["device_traces"][0] if e["action"] == "alloc"}
    assert live <= allocs
    frames = [b["frames"] for s in snap["segments"] for b in s["blocks"]
              if b["state"] == "active_allocated"]
    assert all(any(f["filename"].endswith("script.py") for f in fs) for fs in frames), frames


@pytest.mark.skipif(not hasattr(torch.cuda.memory, "_dump_snapshot"),
                    reason="this PyTorch has no memory_viz (1.13)")
def test_memory_viz_plots_the_simulated_snapshot(tmp_path):
    run(tmp_path, SNAPSHOT)
    for plot in ("trace_plot", "segment_plot"):
        p = subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", plot, "snap.pickle",
                            "-o", f"{plot}.html"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr
        assert "MemoryViz" in (tmp_path / f"{plot}.html").read_text()


SIDE_STREAM_MATMUL = """\
import torch
a = torch.randn(64, 64, device="cuda")
b = a @ a  # the default stream's cuBLAS workspace
with torch.cuda.stream(torch.cuda.Stream()):
    c = a @ a  # a side stream: a workspace of its own (one per handle and stream)
print(torch.cuda.memory_allocated())
"""


def test_a_side_stream_has_its_own_cublas_workspace(tmp_path):
    out, _ = run(tmp_path, SIDE_STREAM_MATMUL)
    assert int(out) == 3 * 64 * 64 * 4 + 2 * WORKSPACE
