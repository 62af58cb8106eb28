#!/usr/bin/python3
"""Writes tests/reference/golden/python_api.json with the real PyTorch.

Run once (needs Debian's python3-torch and python3-numpy: `scripts/setup --reference`):

    /usr/bin/python3 tests/reference/make_python_golden.py

and commit the JSON file. CI never runs this script: tests/python/test_golden.py reads the
fixture and checks matmulviz.torch against it without PyTorch.

Every case of tests/python/cases.py runs with DEV = "cpu" (the only device this PyTorch
has). For each case the file holds either {"result": summary} (see tests/python/summary.py)
or {"error": {"type": ..., "message": first line}}. The script stops if a case gives
different answers on two runs (it would not be a deterministic case) or raises
NotImplementedError (the test reads that exception as "not supported by matmulviz").
"""

import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from cases import CASES  # noqa: E402
from summary import run_case  # noqa: E402

OUT = os.path.join(HERE, "golden", "python_api.json")

# Tensor.untyped_storage() arrived in PyTorch 2.0; 1.13 reaches the same bytes through
# storage().untyped(). The cases use the newer name, which matmulviz.torch provides.
if not hasattr(torch.Tensor, "untyped_storage"):
    torch.Tensor.untyped_storage = lambda self: self.storage().untyped()


def _sdpa_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """torch.nn.functional.scaled_dot_product_attention (PyTorch 2.0) for PyTorch 1.13, which
    lacks it: PyTorch 2.x's math formulation (aten/src/ATen/native/transformers/attention.cpp:
    _scaled_dot_product_attention_math) in 1.13's ops. float16/bfloat16 inputs are computed in
    float32 and the result cast back, as that function does; a bool mask masks out where False
    (convert_boolean_attn_mask), a float mask is added; is_causal is a lower-triangular mask.
    Only the values the cases use: no dropout, no argument checks (test_attention.py checks
    the error messages)."""
    if dropout_p != 0.0:
        raise NotImplementedError("the golden's scaled_dot_product_attention has no dropout")
    dtype = query.dtype
    acc = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = query.to(acc), key.to(acc), value.to(acc)
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    if is_causal:
        attn_mask = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()
    attn = q @ k.transpose(-2, -1) * scale
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn = attn.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            attn = attn + attn_mask.to(acc)
    return (attn.softmax(-1) @ v).to(dtype)


if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
    torch.nn.functional.scaled_dot_product_attention = _sdpa_math


def main():
    names = [name for name, _ in CASES]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SystemExit(f"duplicate case names: {duplicates}")
    cases = {}
    for name, code in CASES:
        first = run_case(torch, "cpu", code)
        again = run_case(torch, "cpu", code)
        if first != again:
            raise SystemExit(f"{name}: two runs differ:\n{first}\n{again}")
        if first.get("error", {}).get("type") == "NotImplementedError":
            raise SystemExit(f"{name}: PyTorch raised NotImplementedError: {first['error']}")
        cases[name] = {"code": code, **first}
    payload = {"generator": "tests/reference/make_python_golden.py", "torch": torch.__version__,
               "device": "cpu", "cases": cases}
    with open(OUT, "w") as f:
        json.dump(payload, f, indent=1, allow_nan=False)
        f.write("\n")
    errors = sum(1 for c in cases.values() if "error" in c)
    print(f"wrote {os.path.relpath(OUT)}: {len(cases)} cases ({errors} expected errors), "
          f"{os.path.getsize(OUT)} bytes")


if __name__ == "__main__":
    main()
