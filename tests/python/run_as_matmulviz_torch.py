"""Runs a plain-PyTorch script on matmulviz.torch instead (its `import torch` gets
matmulviz.torch, meta mode) under matmulviz.record, for the tests that compare matmulviz.simulate
with matmulviz.torch: python3 run_as_matmulviz_torch.py REPORT SCRIPT [ARGS...]."""

import os
import runpy
import sys

import matmulviz
import matmulviz.torch

sys.modules["torch"] = matmulviz.torch
matmulviz.set_cuda_mode("meta")
report, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.argv = [script, *args]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
with matmulviz.record(report, script=script, argv=sys.argv):
    runpy.run_path(script, run_name="__main__")
