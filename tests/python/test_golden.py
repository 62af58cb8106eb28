"""matmulviz.torch against the real PyTorch: every case of cases.py, on "cpu" and "cuda".

The expected outcomes are in tests/reference/golden/python_api.json, written by
tests/reference/make_python_golden.py with the real PyTorch on the CPU; this test needs
no PyTorch. For each case and device it runs the snippet with matmulviz.torch and
compares:
- shapes, dtypes, ints, bools, strings, grad_fn names and requires_grad exactly;
- float values within a tolerance per dtype (summary.TOLERANCE);
- an expected exception by its type name and the first line of its message.
A case that raises NotImplementedError (a function matmulviz.torch does not provide) is
reported as xfail with the module's message, so the gaps stay listed in the summary
(`pytest -rx`) instead of passing silently.
"""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from cases import CASES  # noqa: E402
from summary import compare, run_case  # noqa: E402

try:
    import matmulviz
    import matmulviz.torch as mtorch
except ImportError as e:
    pytest.skip(f"matmulviz.torch cannot be imported ({e}); build the project and run with "
                f"PYTHONPATH=build/release/python", allow_module_level=True)

# The values are compared, so the simulated "cuda" must hold data even when the environment
# asks for meta mode (MATMULVIZ_CUDA_MODE=meta).
if hasattr(matmulviz, "set_cuda_mode"):
    matmulviz.set_cuda_mode("data")

GOLDEN_PATH = os.path.join(HERE, "..", "reference", "golden", "python_api.json")
with open(GOLDEN_PATH) as f:
    GOLDEN = json.load(f)["cases"]

DEVICES = ("cpu", "cuda")

# Differences from PyTorch that matmulviz.torch makes on purpose, each documented in
# docs/python.md ("Differences from PyTorch, on purpose"). These cases must keep failing for that
# reason (strict xfail): when one starts to pass, the difference is gone and this entry goes.
DOCUMENTED_DIFFERENCES = {
    "from_numpy_shares_memory": "from_numpy() copies the array (PyTorch shares its memory)",
    "from_numpy_strided": "from_numpy() copies the array into a contiguous tensor",
}


def test_golden_covers_every_case():
    """The fixture was regenerated after the last change to cases.py."""
    names = [name for name, _ in CASES]
    assert sorted(names) == sorted(GOLDEN), (
        "cases.py and golden/python_api.json differ; rerun tests/reference/make_python_golden.py")
    for name, code in CASES:
        assert GOLDEN[name]["code"] == code, f"{name}: code changed since the golden was written"


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name,code", CASES, ids=[name for name, _ in CASES])
def test_case(name, code, dev, request):
    if name in DOCUMENTED_DIFFERENCES:
        request.node.add_marker(pytest.mark.xfail(reason=DOCUMENTED_DIFFERENCES[name],
                                                  strict=True))
    expected = GOLDEN[name]
    got = run_case(mtorch, dev, code)
    error = got.get("error")
    if error and error["type"] == "NotImplementedError":
        pytest.xfail(f"not supported by matmulviz.torch: {error['message']}")
    if "error" in expected:
        want = expected["error"]
        assert error is not None, (
            f"expected {want['type']}: {want['message']!r}, but the case gave {got['result']!r}")
        assert (error["type"], error["message"]) == (want["type"], want["message"])
        return
    assert error is None, f"unexpected {error['type']}: {error['message']}"
    diffs = compare(got["result"], expected["result"])
    assert not diffs, "\n".join(diffs)
