#!/usr/bin/python3
# Benchmark: matmulviz.simulate on examples/torch_transformer_adamw.py (a 2-layer
# nn.TransformerEncoder, d_model 256, 4 heads, and a linear head; three AdamW steps on a
# [16, 128, 256] batch): real PyTorch on data-less CUDA tensors, every storage in the
# caching-allocator model. Prints the wall time of the three steps (the target: under 10 s on a
# 2-core machine) and of the whole run with its report, and how many aten ops it dispatched.
#
# Usage: scripts/python tests/bench/python_simulate_transformer.py [--steps 3]
# Skipped, with the reason printed, where PyTorch is not installed.

import argparse
import os
import runpy
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "torch_transformer_adamw.py")

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
args = parser.parse_args()
try:
    import torch  # noqa: F401
except ImportError:
    print("skipped: PyTorch is not installed (Debian: python3-torch)")
    sys.exit(0)
import matmulviz
from matmulviz.simulate import _simulation

ops = 0
run_op = _simulation.Simulation.run_op


def counting(self, func, a, k):
    global ops
    ops += 1
    return run_op(self, func, a, k)


_simulation.Simulation.run_op = counting
with tempfile.TemporaryDirectory() as d:
    sys.argv = [SCRIPT, "--steps", str(args.steps)]
    start = time.perf_counter()
    with matmulviz.simulate(gpu="h200"), matmulviz.record(os.path.join(d, "r.json"),
                                                          skip_dirs=[_simulation._TORCH_DIR]):
        runpy.run_path(SCRIPT, run_name="__main__")  # prints its steps and their time
    total = time.perf_counter() - start
print(f"whole run with the report: {total:.2f} s, {ops} aten ops dispatched "
      f"({total / max(ops, 1) * 1e6:.0f} us per op)")
