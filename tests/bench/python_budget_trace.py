"""Benchmark of issue 13, requirement 8, for TRACED graphs (not a test): the joint graph comes from
the real tracer (matmulviz.torch._functorch._trace, what torch.compile runs), then the
partitioner plans the 21 budgets 0, 0.05, ..., 1.

Graphs:
- the 5-layer mm+cos chain of [512, 512] float32 (issue 13's snippet);
- a 48-layer transformer-like chain, float16, batch 4, sequence 1024, width 1024, 16 heads,
  ffn 4096: per layer q = k = v = x viewed as heads, scaled_dot_product_attention (the flash
  kernel: float16, no mask), its output viewed back, two matmuls with a relu between, and a
  residual add (tests/bench/bench_partitioner's built-in graph, traced instead of hand-written).

The simulated CUDA device runs in meta mode (sizes, strides and memory; no values), so tracing
costs the tracer and the engine's bookkeeping, not the arithmetic. Printed separately, medians of
--repeats: the trace (f run under the tracer, the backward formulas, the partitioner's graph and
FX names), the sweep in the partitioner (a fresh _C._JointGraph each repeat, so the three
budget-independent cuts are included: 21 plans), and the sweep as the compiled function plans
(the same plus the Python side of each plan: the forward and backward node lists, the backward's
reordering). Goal: the 48-layer sweep under one second.

    PYTHONPATH=build/release/python /usr/bin/python3 tests/bench/python_budget_trace.py \
        [--repeats 5] [--layers 48]
"""

import argparse
import os
import statistics
import time

import matmulviz
import matmulviz.torch as torch
import matmulviz.torch.nn.functional as F
from matmulviz import _C
from matmulviz.torch._functorch import _compile, _trace

BUDGETS = [i / 20 for i in range(21)]


def chain(layers=5, n=512):
    x = torch.randn(n, n, requires_grad=True)
    ws = [torch.randn(n, n, requires_grad=True) for _ in range(layers)]

    def f():
        y = x.cos()
        for w in ws:
            y = torch.mm(y, w).cos()
        return y.sum()
    return f


def transformer(layers=48, batch=4, seq=1024, dim=1024, heads=16, ffn=4096):
    half = torch.float16
    x = torch.randn(batch * seq, dim, dtype=half, requires_grad=True)
    ws = [(torch.randn(dim, ffn, dtype=half, requires_grad=True),
           torch.randn(ffn, dim, dtype=half, requires_grad=True)) for _ in range(layers)]

    def f():
        y = x
        for w1, w2 in ws:
            q = y.view(batch, seq, heads, dim // heads).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, q, q)
            o = a.transpose(1, 2).reshape(batch * seq, dim)
            y = y + torch.mm(torch.mm(o, w1).relu(), w2)
        return y.sum()
    return f


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def sweep_partitioner(graph):
    graph._partitioner = None  # a fresh C++ graph and planner: the cuts are solved again
    planner = graph.partitioner()
    return [planner.plan(b, "dp") for b in BUDGETS]


def sweep_compiled(graph):
    graph._partitioner = None
    return [_compile.Plan(graph, b, "dp") for b in BUDGETS]


def report(label, f, repeats):
    traces, sweeps, plans = [], [], []
    for _ in range(repeats):
        seconds, graph = timed(lambda: _trace.trace(f))
        traces.append(seconds)
        graph.primal_tensors = []
        sweeps.append(timed(lambda: sweep_partitioner(graph))[0])
        seconds, result = timed(lambda: sweep_compiled(graph))
        plans.append(seconds)
    mid = result[6]  # budget 0.3
    print(f"{label:<34} {len(graph.nodes):5d} nodes"
          f"  trace {1e3 * statistics.median(traces):8.1f} ms"
          f"  sweep of 21 budgets {1e3 * statistics.median(sweeps):7.1f} ms"
          f"  with the compiled plans {1e3 * statistics.median(plans):7.1f} ms")
    print(f"{'':<34} b=0.3: {mid.route}, {len(mid.info['candidates'])} candidates, "
          f"{len(mid.saved)} saved, {len(mid.recomputed)} recomputed, "
          f"{mid.info['activation_bytes'] / 2**20:.1f} MiB kept")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--layers", type=int, default=48)
    args = parser.parse_args()
    matmulviz.set_cuda_mode("meta")
    torch.set_default_device("cuda")
    print(f"load average {os.getloadavg()[0]:.1f}, median of {args.repeats}")
    report("mm+cos chain, 5 layers [512, 512]", chain(), args.repeats)
    report(f"transformer-like, {args.layers} layers", transformer(args.layers), args.repeats)
    assert _C.cuda_mode() == "meta"


if __name__ == "__main__":
    main()
