"""Running a case and turning what it gives into JSON; comparing two such summaries.

Shared by tests/reference/make_python_golden.py (which runs the cases with the real PyTorch)
and tests/python/test_golden.py (which runs them with matmulviz.torch). It needs neither:
a tensor is recognised by its attributes, and read through the part of the API the cases
test anyway (detach, cpu, tolist).

A summary is one of:
  {"tensor": {"dtype": "torch.float32", "shape": [...], "values": [...flat...],
              "requires_grad": bool, "grad_fn": name or None}}
  {"ndarray": {"dtype": "float32", "shape": [...], "values": [...]}}
  {"bool": b}, {"int": i}, {"float": f}, {"str": s}, {"none": None}
  {"list": [summary, ...]}            (tuples, lists, torch.Size, named tuples, sequences)
  {"repr": str(value)}                (anything else, e.g. a dtype)
Floats that JSON cannot hold (nan, inf) are written as the strings "nan", "inf", "-inf".
"""

import math
import textwrap

import numpy as np

# Tolerances for float values, per dtype: |ours - ref| <= atol + rtol * max|ref| over the
# tensor, the rule tests/reference uses. One rounding step of the dtype is allowed, since a
# different summation order may round differently.
TOLERANCE = {
    "torch.float64": (1e-12, 1e-12),
    "torch.float32": (1e-5, 1e-6),
    "torch.float16": (2e-3, 1e-4),
    "torch.bfloat16": (1.6e-2, 1e-3),
    "float": (1e-5, 1e-6),  # a Python float, as item() of a float32 tensor gives
}


def is_tensor(value):
    return all(hasattr(value, a) for a in ("dtype", "shape", "requires_grad", "grad_fn", "detach"))


def _float(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _flat(nested):
    if isinstance(nested, list):
        out = []
        for item in nested:
            out.extend(_flat(item))
        return out
    return [nested]


def _scalar(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    return _float(float(v))


def summarize(value):
    """The JSON summary of a case's result (see the module docstring)."""
    if is_tensor(value):
        grad_fn = value.grad_fn
        values = _flat(value.detach().cpu().tolist())
        return {"tensor": {
            "dtype": str(value.dtype),
            "shape": [int(s) for s in value.shape],
            "values": [_scalar(v) for v in values],
            "requires_grad": bool(value.requires_grad),
            "grad_fn": None if grad_fn is None else grad_fn.name(),
        }}
    if isinstance(value, np.ndarray):
        return {"ndarray": {"dtype": str(value.dtype), "shape": list(value.shape),
                            "values": [_scalar(v) for v in _flat(value.tolist())]}}
    if isinstance(value, (bool, np.bool_)):
        return {"bool": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"int": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"float": _float(float(value))}
    if isinstance(value, str):
        return {"str": value}
    if value is None:
        return {"none": None}
    if isinstance(value, (tuple, list)):
        return {"list": [summarize(v) for v in value]}
    if hasattr(value, "__len__") and hasattr(value, "__iter__") and not isinstance(value, dict):
        # A sequence that is not a tuple: a shape class or a (values, indices) pair type of
        # another library reads the same as PyTorch's torch.Size and named tuples.
        return {"list": [summarize(v) for v in value]}
    return {"repr": str(value)}


def run_case(torch, dev, code):
    """Runs one case's code with `torch` and `DEV` bound; returns {"result": summary} or
    {"error": {"type": name, "message": first line}}. Grad mode is switched back on
    afterwards in case the snippet failed half-way through a set_grad_enabled(False)."""
    scope = {"torch": torch, "DEV": dev, "__name__": "case"}
    try:
        exec(compile(textwrap.dedent(code), "<case>", "exec"), scope)
        outcome = {"result": summarize(scope.get("result"))}
    except Exception as e:  # noqa: BLE001 - the exception is the result being recorded
        outcome = {"error": {"type": type(e).__name__, "message": first_line(e)}}
    finally:
        try:
            torch.set_grad_enabled(True)
        except Exception:  # noqa: BLE001 - a module without it fails its own cases instead
            pass
    return outcome


def first_line(exc):
    return str(exc).split("\n")[0]


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

def _number(v):
    return float(v)  # also parses the strings "nan", "inf" and "-inf"


def _close_values(ours, ref, rtol, atol):
    """None when every value is within atol + rtol * max|ref|, else a description."""
    if len(ours) != len(ref):
        return f"{len(ours)} values, expected {len(ref)}"
    refs = [_number(v) for v in ref]
    finite = [abs(v) for v in refs if math.isfinite(v)]
    scale = max(finite) if finite else 0.0
    bound = atol + rtol * scale
    for i, (o, r) in enumerate(zip(ours, refs)):
        o = _number(o)
        if math.isnan(r) or math.isnan(o):
            if not (math.isnan(r) and math.isnan(o)):
                return f"value {i}: {o} != {r}"
            continue
        if math.isinf(r) or math.isinf(o):
            if o != r:
                return f"value {i}: {o} != {r}"
            continue
        if abs(o - r) > bound:
            return f"value {i}: {o} differs from {r} by {abs(o - r):.3g} (allowed {bound:.3g})"
    return None


def compare(ours, ref, path="result"):
    """A list of differences between two summaries (empty when they match)."""
    if set(ours) != set(ref):
        return [f"{path}: got {_brief(ours)}, expected {_brief(ref)}"]
    kind = next(iter(ref))
    a, b = ours[kind], ref[kind]
    if kind == "list":
        if len(a) != len(b):
            return [f"{path}: {len(a)} items, expected {len(b)}"]
        diffs = []
        for i, (x, y) in enumerate(zip(a, b)):
            diffs += compare(x, y, f"{path}[{i}]")
        return diffs
    if kind in ("tensor", "ndarray"):
        diffs = []
        for key in b:
            if key != "values" and a.get(key) != b[key]:
                diffs.append(f"{path}.{key}: got {a.get(key)!r}, expected {b[key]!r}")
        if diffs:
            return diffs
        dtype = b["dtype"]
        floating = any(isinstance(v, float) or isinstance(v, str) for v in b["values"])
        if kind == "ndarray":
            dtype = "torch." + dtype
        if floating or dtype in TOLERANCE:
            rtol, atol = TOLERANCE.get(dtype, TOLERANCE["torch.float32"])
            why = _close_values(a["values"], b["values"], rtol, atol)
            return [] if why is None else [f"{path} ({dtype}): {why}"]
        if a["values"] != b["values"]:
            return [f"{path}.values: got {a['values']}, expected {b['values']}"]
        return []
    if kind == "float":
        rtol, atol = TOLERANCE["float"]
        why = _close_values([a], [b], rtol, atol)
        return [] if why is None else [f"{path}: {why}"]
    if a != b or type(a) is not type(b):
        return [f"{path}: got {a!r}, expected {b!r}"]
    return []


def _brief(summary):
    text = repr(summary)
    return text if len(text) < 200 else text[:200] + "..."
