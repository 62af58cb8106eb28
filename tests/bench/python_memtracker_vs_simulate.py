#!/usr/bin/python3
# Benchmark: PyTorch's own memory estimator beside matmulviz.simulate, on programs whose memory an
# NVIDIA H200 measured (PyTorch 2.11.0+cu130): the 14 allocator programs of
# tests/reference/gpu/memcases.py (their peaks in memcases_torch.json) and the transformer of
# examples/torch_transformer_adamw.py (three AdamW steps; its H200 snapshot,
# tests/reference/gpu/snapshots/transformer_adamw_3_steps.pickle.gz, read by matmulviz-cli).
#
# PyTorch's estimator is MemTracker (torch.distributed._tools.mem_tracker, PyTorch 2.4 and
# later) over FakeTensorMode: it adds up the storages of the tensors a program makes, rounded to
# 512 bytes. matmulviz.simulate runs the same code on the caching-allocator model. For each
# program the benchmark prints the H200's peak (memcases: max_memory_allocated, relative to the
# program's start; the transformer: the peak of live requests, what its snapshot records), each
# tool's peak and its difference from the H200's, and each tool's wall
# time, measured side by side in this run (best of --repeats). Targets (issue 34): our peaks
# equal the H200's; our time at most MemTracker's.
#
# Usage: scripts/python --torch 2.11 tests/bench/python_memtracker_vs_simulate.py
#            [--repeats 3] [--cli build/release/app/matmulviz-cli]
# Skipped, with the reason printed, where this PyTorch has no MemTracker.

import argparse
import contextlib
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU = os.path.join(ROOT, "tests", "reference", "gpu")
MiB = 2**20

parser = argparse.ArgumentParser()
parser.add_argument("--repeats", type=int, default=3)
parser.add_argument("--side", choices=["simulate", "memtracker"],
                    help="measure one side only and print its JSON (the benchmark runs each side "
                         "in a process of its own: after a simulation PyTorch's accelerator is "
                         "matmulviz's backend, under which FakeTensorMode's CUDA backward fails)")
parser.add_argument("--cli", default=os.environ.get(
    "MATMULVIZ_CLI", os.path.join(ROOT, "build", "release", "app", "matmulviz-cli")))
args = parser.parse_args()
try:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker
except ImportError as e:
    print(f"skipped: this PyTorch has no MemTracker over FakeTensorMode ({e})")
    sys.exit(0)
import torch.nn.functional as F
import warnings

warnings.filterwarnings("ignore", message="Accessing the data pointer of FakeTensor")

import matmulviz


def memcases():
    """memcases.py's programs as functions of a `rec` callback, and the H200's peak of each."""
    sys_argv = sys.argv
    sys.argv = ["memcases", "torch", os.devnull]
    ns = {"__name__": "memcases_lib"}
    with open(os.path.join(GPU, "memcases.py")) as f:
        exec(f.read().replace("\nmain()\n", "\n"), ns)
    sys.argv = sys_argv
    with open(os.path.join(GPU, "memcases_torch.json")) as f:
        h200 = json.load(f)
    def program(f):
        def run(tracker):
            with tracker:
                f(lambda label: None)
        return run
    return [(name, program(f), True, h200[name]["rows"][-1]["peak"])
            for name, f in ns["cases"].items()]


def transformer(tracker):
    """examples/torch_transformer_adamw.py's three steps, in `tracker`'s context (MemTracker
    learns of the model, the optimizer and the batch made before it from track_external)."""
    torch.manual_seed(0)
    with torch.device("cuda"):  # not .cuda(): 2.11's FakeTensorMode cannot swap the parameters
        layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                                 batch_first=True)
        model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=2),
                                    torch.nn.Linear(256, 1000))
    del layer  # the encoder holds copies; the example's prototype stays on the CPU
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(16, 128, 256, device="cuda")
    y = torch.randint(0, 1000, (16, 128), device="cuda")
    if isinstance(tracker, MemTracker):
        tracker.track_external(model, opt, x, y)
    with tracker:
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x).reshape(-1, 1000), y.reshape(-1)).backward()
            opt.step()
            if isinstance(tracker, MemTracker):
                tracker.reset_mod_stats()  # it refuses a module called again otherwise


def transformer_h200_peak():
    """The H200 snapshot's peak of live requests' bytes, as matmulviz-cli reads it (a trace
    records each request's own size, not the block's); None without the CLI."""
    if not os.access(args.cli, os.X_OK):
        return None
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "run.json")
        subprocess.run([sys.executable, "-m", "matmulviz.simulate",
                        os.path.join(ROOT, "examples", "torch_transformer_adamw.py"),
                        "--report", report], capture_output=True, check=True)
        out = subprocess.run([args.cli, "compare", report,
                              os.path.join(GPU, "snapshots", "transformer_adamw_3_steps.pickle.gz"),
                              "--json", "-"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["timelines"][0]["peak_allocated"]["b"]["bytes"]


def simulated(programs):
    """{name: (peak bytes, seconds)} under matmulviz.simulate on an H200. The memcases programs
    run one after another in one simulation, as memcases.py runs them on a GPU: after its
    warm-up matmul (the main thread's cuBLAS workspace), each from an emptied cache, its peak
    relative to its start (so the autograd thread's workspace comes with the first backward);
    the transformer in a simulation of its own, its peak from an empty device."""
    out = {}
    with matmulviz.simulate(gpu="h200"):
        w = torch.randn(64, 64, device="cuda")
        (w @ w).sum()
        del w
        for name, fn, warm, _ in programs:
            if warm:
                out[name] = _simulated_one(fn, "allocated_bytes")
    for name, fn, warm, _ in programs:
        if not warm:
            with matmulviz.simulate(gpu="h200"):
                out[name] = _simulated_one(fn, "requested_bytes")
    gc.collect()
    return out


def _simulated_one(fn, metric):
    """(peak of `metric` relative to the start, seconds): "allocated_bytes" as
    max_memory_allocated, or "requested_bytes", the requests' own sizes, as a snapshot's trace
    records them."""
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_stats()[f"{metric}.all.current"]
    t = time.perf_counter()
    fn(contextlib.nullcontext())
    seconds = time.perf_counter() - t
    gc.collect()
    return torch.cuda.memory_stats()[f"{metric}.all.peak"] - start, seconds


class _OnMeta(torch.overrides.TorchFunctionMode):
    """Puts what a program puts on "cuda" on the meta device (factories' device=, .cuda(),
    .to("cuda")): where MemTracker cannot run a program on fake CUDA tensors."""

    def __torch_function__(self, func, types, a=(), kw=None):
        kw = dict(kw or {})
        if func is torch.Tensor.cuda:
            return a[0].to("meta")
        if "device" in kw and str(kw["device"]).startswith("cuda"):
            kw["device"] = "meta"
        if func is torch.Tensor.to and a[1:] and str(a[1]).startswith("cuda"):
            a = (a[0], "meta") + tuple(a[2:])
        return func(*a, **kw)


def tracked(fn):
    """(peak bytes, seconds, how) under MemTracker over FakeTensorMode, on fake CUDA tensors as
    PyTorch's documentation uses it; where that raises (a backward without a GPU: autograd's
    engine asks CUDA for a primary context), on the meta device, with the error's first line."""
    how = "fake cuda"
    for device in ("cuda", "meta"):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True):
                tracker = MemTracker()
                t = time.perf_counter()
                with _OnMeta() if device == "meta" else contextlib.nullcontext():
                    fn(tracker)
                seconds = time.perf_counter() - t
                snapshot = tracker.get_tracker_snapshot("peak")
            break
        except RuntimeError as e:
            if device == "meta":
                raise
            how = "meta (fake cuda: " + str(e).splitlines()[0].split(", but")[0] + ")"
    gc.collect()
    peak = max((v["Total"] for d, v in snapshot.items() if d.type == device), default=0)
    return peak, seconds, how


def best(measure):
    """measure() --repeats times: the first run's results with the best time of each program."""
    runs = [measure() for _ in range(args.repeats)]
    return {name: [r[0], min(run[name][1] for run in runs)] + list(r[2:])
            for name, r in runs[0].items()}


def tracked_all(programs):
    return {name: tracked(fn) for name, fn, _, _ in programs}


def mib(n):
    return "-" if n is None else f"{n / MiB:.2f}"


def side(name):
    """{program: [peak bytes, best seconds]} of one side, measured in a process of its own."""
    out = subprocess.run([sys.executable, __file__, "--side", name, "--repeats",
                          str(args.repeats)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"the {name} side failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    programs = memcases()
    # The snapshot's peak is the whole program's, from an empty device.
    programs.append(("transformer", transformer, False, None))
    if args.side:
        measure = simulated if args.side == "simulate" else tracked_all
        print(json.dumps(best(lambda: measure(programs))))
        return
    programs[-1] = programs[-1][:3] + (transformer_h200_peak(),)
    ours, theirs = side("simulate"), side("memtracker")
    print(f"PyTorch {torch.__version__}; peaks in MiB; times best of {args.repeats}")
    print(f"{'program':<24}{'H200':>9}{'simulate':>10}{'diff':>8}{'MemTracker':>12}{'diff':>8}"
          f"{'sim s':>9}{'MT s':>9}{'sim/MT':>8}")
    sums = [0.0, 0.0]
    equal, notes = 0, {}
    for name, _, _, h200 in programs:
        (o, o_s), (t, t_s, how) = ours[name], theirs[name]
        if how != "fake cuda":
            notes.setdefault(how, []).append(name)
            name += " *"
        sums[0] += o_s
        sums[1] += t_s
        equal += h200 is not None and o == h200
        diff = (lambda n: "-" if h200 is None else f"{(n - h200) / MiB:+.2f}")
        print(f"{name:<24}{mib(h200):>9}{mib(o):>10}{diff(o):>8}{mib(t):>12}{diff(t):>8}"
              f"{o_s:>9.3f}{t_s:>9.3f}{o_s / t_s:>8.2f}")
    print(f"peaks equal to the H200's: simulate {equal} of {len(programs)}; "
          f"time simulate / MemTracker over all: {sums[0] / sums[1]:.2f} (target <= 1)")
    print("transformer: peaks of requested bytes, the sizes the H200's snapshot records "
          "(MemTracker: its storages rounded to 512 bytes)")
    for how, names in notes.items():
        print(f"* MemTracker on {how}: {', '.join(names)}")


main()
