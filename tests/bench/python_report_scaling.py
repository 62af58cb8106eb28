#!/usr/bin/python3
# Benchmark: how the cost of matmulviz.simulate's report grows with a run's events (issue 35,
# point 5: "a report written in time proportional to its events, at most a few seconds per
# million"). A loop of N small matmuls whose results are all kept (every allocation is a new
# peak, the case that used to cost the square of the events) runs under the simulation, once
# without a report and once with one, for N doubling; prints each run's time, the report's
# share, and its cost per million allocator events. Linear growth: the per-million column stays
# flat as N doubles.
#
# Usage: scripts/python tests/bench/python_report_scaling.py [--sizes 20000,40000,80000]
# Skipped, with the reason printed, where PyTorch is not installed.

import argparse
import json
import os
import sys
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("--sizes", default="20000,40000,80000")
args = parser.parse_args()
try:
    import torch
except ImportError:
    print("skipped: PyTorch is not installed (Debian: python3-torch)")
    sys.exit(0)
import matmulviz
from matmulviz.simulate import _simulation


def program(n):
    a = torch.randn(8, 8, device="cuda")
    kept = []
    for _ in range(n):
        kept.append(a @ a)
    return kept


def run(n, report):
    start = time.perf_counter()
    with matmulviz.simulate(gpu="h200"):
        if report is None:
            program(n)
        else:
            with matmulviz.record(report, skip_dirs=[_simulation._TORCH_DIR]):
                program(n)
    return time.perf_counter() - start


print(f"{'N':>8} {'events':>9} {'no report s':>12} {'report s':>9} {'report part s':>14} "
      f"{'s per M events':>15}")
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "r.json")
    for n in (int(s) for s in args.sizes.split(",")):
        plain = run(n, None)
        recorded = run(n, path)
        with open(path) as f:
            events = len(json.load(f)["events"]["rows"])
        extra = max(recorded - plain, 0.0)
        print(f"{n:>8} {events:>9} {plain:>12.2f} {recorded:>9.2f} {extra:>14.2f} "
              f"{extra / events * 1e6:>15.2f}")
