"""torch.ops: op handles (`torch.ops.aten.mm`, ...), the keys of FlopCounterMode's counts.

Only handles, not callables: each is hashable, compares by identity and prints as PyTorch's
OpOverloadPacket does (`aten.mm`).
"""


class OpOverloadPacket:
    """An op handle as PyTorch's torch._ops.OpOverloadPacket prints it: `aten.mm`."""

    def __init__(self, namespace, name):
        self._qualified_name = f"{namespace}.{name}"
        self.__name__ = name

    def __repr__(self):
        return self._qualified_name

    def __str__(self):
        return self._qualified_name


class _OpNamespace:
    """torch.ops.<namespace>: one handle per op name."""

    def __init__(self, name, ops):
        self.name = name
        for op in ops:
            setattr(self, op, OpOverloadPacket(name, op))

    def __iter__(self):
        return iter(sorted(n for n in vars(self) if n != "name"))


aten = _OpNamespace("aten", ("mm", "bmm", "addmm", "baddbmm", "matmul", "mv", "dot",
                             "_scaled_dot_product_efficient_attention",
                             "_scaled_dot_product_efficient_attention_backward",
                             "_scaled_dot_product_flash_attention",
                             "_scaled_dot_product_flash_attention_backward"))
# matmulviz's own fused op (core/ops/gather_bmm.cpp), counted as the bmm it replaces.
matmulviz = _OpNamespace("matmulviz", ("gather_bmm", "gather_bmm_backward"))


def _by_name(qualified_name):
    """The handle for "aten.mm" (core's names for counted ops)."""
    namespace, op = qualified_name.split(".", 1)
    return getattr(globals()[namespace], op)
