"""Runs `python3 -m matmulviz.simulate` in a process of its own, as a user does, for the tests:
on the module's default model (PyTorch 2.x on an H200: a cuBLAS workspace per thread), whatever
the caller's environment says (conftest pins the forum post's rules for in-process tests)."""

import os
import subprocess
import sys

import matmulviz

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(matmulviz.__file__)))
ENV = {k: v for k, v in os.environ.items()
       if k not in ("CUBLAS_WORKSPACE_CONFIG", "MATMULVIZ_PYTORCH", "MATMULVIZ_GPU")}
ENV.update(PYTHONPATH=PACKAGE_ROOT, OPENBLAS_NUM_THREADS="1")


def simulate(args, cwd, env=ENV, timeout=600):
    """The finished process of matmulviz.simulate with `args` in folder `cwd`."""
    return subprocess.run([sys.executable, "-m", "matmulviz.simulate", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def simulate_source(tmp_path, source, *args, name="script.py", env=ENV, timeout=600):
    """Writes `source` to tmp_path/name and runs it under matmulviz.simulate with `args`."""
    (tmp_path / name).write_text(source)
    return simulate([str(tmp_path / name), *args], tmp_path, env, timeout)
