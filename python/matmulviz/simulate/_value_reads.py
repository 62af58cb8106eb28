"""Reads of a simulated CUDA tensor's values in the default mode (values="none"): .item(),
float(t), int(t), bool(t), format(t, spec), .tolist(), .numpy(), .cpu() and .to("cpu") of a
tensor without values return placeholders of the right type and shape (zeros, False), and the run
goes on. Every read is kept by line (ValueReads), printed at the end of the run and written into
the report ("value_reads"), with the warning that control flow depending on such a value may
differ from a GPU run. Ops whose output sizes depend on the values (nonzero, boolean masks,
unique) still stop the run: no placeholder has the right size (Simulation._data_dependent)."""

import os

import torch

# The Tensor methods that read values, as the TorchFunctionMode sees them: what a read is
# called in the listing.
READS = {
    torch.Tensor.item: "item()",
    torch.Tensor.tolist: "tolist()",
    torch.Tensor.numpy: "numpy()",
    torch.Tensor.cpu: "cpu()",
    torch.Tensor.__bool__: "bool()",
    torch.Tensor.__float__: "float()",
    torch.Tensor.__int__: "int()",
    torch.Tensor.__index__: "index()",
    torch.Tensor.__format__: "format()",
}


# Reads through Python's built-ins (float(t), bool(t), ...) are listed as the script wrote them.
_BUILTINS = {"bool()": "bool(tensor)", "float()": "float(tensor)", "int()": "int(tensor)",
             "index()": "operator.index(tensor)", "format()": "format(tensor)"}


def label(what):
    """How read `what` (a value of READS, or "to(cpu)") is named in the listing and the report:
    "Tensor.item()", "float(tensor)"."""
    return _BUILTINS.get(what, f"Tensor.{what}")


def _scalar(dtype):
    if dtype == torch.bool:
        return False
    if dtype.is_complex:
        return 0j
    return 0.0 if dtype.is_floating_point else 0


def placeholder(what, t, args, kwargs):
    """What read `what` (a value of READS, or "to(cpu)") of simulated tensor `t` returns: a zero
    scalar of t's kind, nested lists of them, or a CPU tensor of zeros of t's shape and dtype
    (.numpy(): its array)."""
    if what in ("item()", "float()", "int()", "index()", "bool()"):
        value = _scalar(t.dtype)
        return {"float()": float, "int()": int, "index()": int, "bool()": bool}.get(
            what, lambda v: v)(value)
    if what == "format()":
        spec = args[1] if len(args) > 1 else kwargs.get("format_spec", "")
        return format(_scalar(t.dtype), spec) if t.dim() == 0 else repr(t)
    zeros = torch.zeros(t.shape, dtype=t.dtype)
    if what == "tolist()":
        return zeros.tolist()
    if what == "numpy()":
        return zeros.numpy()
    return zeros  # cpu(), to(cpu)


def _shown(value):
    if isinstance(value, torch.Tensor):
        return f"zeros{tuple(value.shape)} on the CPU"
    if type(value).__module__ == "numpy":
        return f"a numpy array of zeros {tuple(value.shape)}"
    if isinstance(value, list):
        return "a list of zeros"
    return repr(value)


class ValueReads:
    """Every placeholder read of the run, by line and kind of read, in the order first seen."""

    def __init__(self):
        self._reads = {}  # (where, what) -> [count, what it returned]

    def note(self, where, what, returned):
        """`where`: "file:line: code" (Simulation's user_frame); `what`: label()'s "Tensor.item()"."""
        entry = self._reads.setdefault((where, what), [0, _shown(returned)])
        entry[0] += 1

    def __len__(self):
        return sum(n for n, _ in self._reads.values())

    @staticmethod
    def _split(where):
        file, _, rest = where.partition(":")
        line, _, code = rest.partition(": ")
        return file, int(line) if line.isdigit() else 0, code

    def report(self):
        """The report's "value_reads": [{"file", "line", "code", "read", "count", "returned"}]."""
        out = []
        for (where, what), (n, shown) in self._reads.items():
            file, line, code = self._split(where)
            out.append({"file": file, "line": line, "code": code, "read": what, "count": n,
                        "returned": shown})
        return out

    def summary(self):
        """The lines printed at the end of a run that read values; empty when none did."""
        if not self._reads:
            return []
        out = [f"matmulviz.simulate: {len(self)} read(s) of simulated CUDA values returned "
               "placeholders (no values are simulated; control flow that depends on them may "
               "differ from a GPU run; --values cpu computes them):"]
        for (where, what), (n, shown) in self._reads.items():
            file, line, code = self._split(where)
            times = f" ({n} times)" if n > 1 else ""
            out.append(f"  {os.path.basename(file)}:{line} `{code}`: {what} returned {shown}{times}")
        return out
