"""torch.utils.flop_counter: FLOP counting as PyTorch's FlopCounterMode counts.

The formulas are PyTorch's (torch/utils/flop_counter.py), computed by the engine
(core/ops/flop_counter.h): mm [m, k] @ [k, n] = 2 * m * n * k FLOPs (one multiply-add = 2),
addmm the same, bmm [b, m, k] @ [b, k, n] = 2 * b * m * n * k, baddbmm the same; matmul and
einsum count through the mm/bmm they decompose to (matmul's mv and dot paths count 0, as
PyTorch registers no formula for aten.mv or aten.dot); backward counts through the mm/bmm of
the backward formulas; pointwise ops and reductions count 0.
torch.nn.functional.scaled_dot_product_attention counts as PyTorch's sdpa_flop_count under the
fused kernel that runs it (`torch.ops.aten._scaled_dot_product_efficient_attention` or
`_scaled_dot_product_flash_attention`): 2 * b * h * L * S * (E + Ev), and its backward
(`..._backward`, sdpa_backward_flop_count) 2 * b * h * L * S * (3 * E + 2 * Ev), causal
masking not discounted. matmulviz's own fused
`gather_bmm` counts as the bmm it replaces, under `torch.ops.matmulviz.gather_bmm` (and
`torch.ops.matmulviz.gather_bmm_backward`).
"""

import warnings

from matmulviz import _C
from matmulviz.torch import _ops

__all__ = ["FlopCounterMode"]

_SUFFIXES = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    """PyTorch's suffix choice: 1.01B shows as 1001M (one digit of overflow)."""
    index = max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))
    return _SUFFIXES[index]


def convert_num_with_suffix(number, suffix):
    """`number` in units of `suffix`, three decimals: 2097152, "M" -> "2.097M"."""
    index = _SUFFIXES.index(suffix)
    return f"{number / 1000 ** index:.3f}" + _SUFFIXES[index]


def convert_to_percent_str(num, denom):
    if denom == 0:
        return "0%"
    return f"{num / denom:.2%}"


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _tabulate(rows, headers, colalign):
    """tabulate.tabulate(rows, headers, colalign=...) in its default "simple" format, as
    PyTorch's get_table calls it: a column whose cells are all numbers is reformatted with
    format(float, "g") (so "128.000" shows as "128"); widths are at least the header + 2."""
    columns = [list(c) for c in zip(*rows)]
    for c, column in enumerate(columns):
        if all(_is_number(v) for v in column):
            if all(v.lstrip("-").isdigit() for v in column):
                columns[c] = [str(int(v)) for v in column]
            else:
                columns[c] = [format(float(v), "g") for v in column]
    widths = [max([len(h) + 2] + [len(v) for v in column])
              for h, column in zip(headers, columns)]

    def line(cells):
        return "  ".join(v.ljust(w) if a == "left" else v.rjust(w)
                         for v, w, a in zip(cells, widths, colalign))

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in zip(*columns)]
    return "\n".join(out)


class FlopCounterMode:
    """A context manager that counts the FLOPs of the ops run inside it, as PyTorch's
    `torch.utils.flop_counter.FlopCounterMode` does (same formulas, op handles and table).

        with FlopCounterMode(display=False) as mode:
            torch.mm(a, b).sum().backward()
        mode.get_total_flops(); mode.get_flop_counts()["Global"][torch.ops.aten.mm]

    Differences: counts are kept for the module "Global" only (matmulviz has no nn.Module, so
    `mods` is accepted with PyTorch's warning and `depth` only shapes the table);
    `custom_mapping` (custom formulas) is not supported and raises NotImplementedError when
    not empty. Not reentrant, as in PyTorch.
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        if custom_mapping:
            raise NotImplementedError("FlopCounterMode(custom_mapping=...) is not supported by "
                                      "matmulviz.torch: the FLOP formulas are the engine's")
        self.depth = depth
        self.display = display
        self._counter = _C._FlopCounter()
        # PyTorch keeps a defaultdict: reading the "Global" total creates its (empty) entry.
        self._global_read = False

    def get_total_flops(self):
        """The FLOPs counted, all ops together."""
        self._global_read = True
        return sum(self._global_counts().values())

    def get_flop_counts(self):
        """{"Global": {op handle (torch.ops.aten.mm, ...): FLOPs}}. As in PyTorch, {} until an
        op with a formula ran or get_total_flops()/get_table() read the total."""
        counts = self._global_counts()
        return {"Global": counts} if counts or self._global_read else {}

    def get_table(self, depth=None):
        """The table PyTorch's FlopCounterMode prints: module, FLOPs and % of the total."""
        header = ["Module", "FLOP", "% Total"]
        counts = self._global_counts()
        total = self.get_total_flops()
        suffix = get_suffix_str(total)
        if counts:
            values = [["Global", convert_num_with_suffix(total, suffix),
                       convert_to_percent_str(total, total)]]
            values += [[" - " + str(k), convert_num_with_suffix(v, suffix),
                        convert_to_percent_str(v, total)] for k, v in counts.items()]
        else:
            values = [["Global", "0", "0%"]]
        return _tabulate(values, header, ("left", "right", "right"))

    def _global_counts(self):
        return {_ops._by_name(name): flops for name, flops in self._counter.counts()}

    def __enter__(self):
        self._global_read = False
        self._counter.start()
        return self

    def __exit__(self, *args):
        self._counter.stop()
        if self.display:
            print(self.get_table(self.depth))
        return False
