"""Runs the scripts of examples/ as a user would and checks the numbers they print.

Each script runs in a subprocess with this interpreter and this environment (so the
PYTHONPATH that finds matmulviz is passed on), with flags that keep it to seconds:
- forum_strategies.py --meta at the forum post's full size: the post's table, exactly, for
  a plain `a` and for `a` requiring grad (curMem / maxMem in MiB);
- launch_kernel.py, on "cpu" and on the simulated "cuda": grid and block as the lesson
  computes them, and the emulated kernel's output equal to m @ n;
- multihead.py: every check it prints passes and the gradient norms are finite;
- peak_lines.py (the Program view's example): the peaks of its two steps.
"""

import math
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(REPO, "examples")

try:
    import matmulviz.torch  # noqa: F401
except ImportError as e:
    pytest.skip(f"matmulviz.torch cannot be imported ({e}); build the project and run with "
                f"PYTHONPATH=build/release/python", allow_module_level=True)

# The forum post's numbers: (curMem, maxMem) in MiB after `out = strategy(...)`.
FORUM_PLAIN = {"strategy1": (96, 2208), "strategy2": (96, 160), "strategy3": (96, 128),
               "direct": (96, 2144)}
FORUM_REQUIRES_GRAD = {"strategy1": (2144, 2208), "strategy2": (96, 160),
                       "strategy3": (2144, 2176), "direct": (2144, 2144)}


def run_example(name, *args, timeout=600):
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                          cwd=REPO, env=dict(os.environ), capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, (
        f"{name} {' '.join(args)} exited with {proc.returncode}\n"
        f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc.stdout


def parse_forum_tables(text):
    """{"a plain": {strategy: (cur, max)}, "a requires grad": {...}} from the script's output."""
    tables, current = {}, None
    for line in text.splitlines():
        header = re.match(r"== (a plain|a requires grad) ", line)
        if header:
            current = tables.setdefault(header.group(1), {})
            continue
        row = re.match(r"(strategy1|strategy2|strategy3|direct)\s+(\d+)\s+(\d+)\b", line)
        if row and current is not None:
            current[row.group(1)] = (int(row.group(2)), int(row.group(3)))
    return tables


def test_forum_strategies_meta_full_size():
    out = run_example("forum_strategies.py", "--meta")
    tables = parse_forum_tables(out)
    assert tables.get("a plain") == FORUM_PLAIN, out
    assert tables.get("a requires grad") == FORUM_REQUIRES_GRAD, out


def test_forum_strategies_small_data_run():
    """With data and a small workload the script runs to the end and prints both tables."""
    out = run_example("forum_strategies.py", "--data", "--n", "512")
    tables = parse_forum_tables(out)
    assert set(tables) == {"a plain", "a requires grad"}, out
    for table in tables.values():
        assert set(table) == set(FORUM_PLAIN), out
        for cur, peak in table.values():
            assert 0 <= cur <= peak, out


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_launch_kernel(device):
    out = run_example("launch_kernel.py", "--device", device)
    assert "grid: 1 x 1 blocks (rows x columns: ceil(5/16) x ceil(10/16))" in out, out
    assert "block: 16 x 16 threads; 256 threads for 50 outputs, 206 return" in out, out
    assert "check: torch.allclose(out, m @ n) = True" in out, out


def test_launch_kernel_several_blocks():
    out = run_example("launch_kernel.py", "--tpb", "4", "--rows", "6")
    assert "grid: 2 x 3 blocks" in out, out
    assert "check: torch.allclose(out, m @ n) = True" in out, out


def test_multihead():
    out = run_example("multihead.py")
    assert "check against einsum: True" in out, out
    assert "check against O2[mask]: True" in out, out
    assert "check gradients against einsum's: dA1 True, dW1 True" in out, out
    norms = re.search(r"dA1 \[2, 8, 16\] norm (\S+), dW1 \[16, 4\] norm (\S+)", out)
    assert norms, out
    for value in norms.groups():
        assert math.isfinite(float(value)) and float(value) > 0, out
    t = re.search(r"t = (\d+) important tokens of 16; O3 \[(\d+), 4, 4\]", out)
    assert t and t.group(1) == t.group(2), out
    assert "saved by BmmBackward0" in out, out


def test_peak_lines():
    # The batched gather with a plain `a` peaks at a + c + out + one batch of c[q] (8 MiB):
    # 1 + 4 + 1 + 8 = 14 MiB; the one-liner with `a` requiring grad holds all of c[q] (64 MiB),
    # saved for BmmBackward0, into the backward: 72 MiB.
    out = run_example("peak_lines.py")
    assert "batched: peak 14.0 MiB" in out
    assert "direct:  peak 72.0 MiB" in out
