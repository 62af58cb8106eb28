"""What matmulviz.torch provides, and the NotImplementedError for everything else."""

import sys

_DOCS = "docs/python.md"


def supported():
    """The names matmulviz.torch provides: module functions, Tensor methods and torch.cuda."""
    torch = sys.modules["matmulviz.torch"]
    functions = sorted(n for n in vars(torch) if not n.startswith("_") and n not in _MODULES)
    methods = sorted(n for n in dir(torch.Tensor)
                     if not n.startswith("_") or n in _DUNDERS_SHOWN)
    cuda = sorted(n for n in vars(torch.cuda) if not n.startswith("_"))
    return {"torch": functions, "Tensor": methods, "torch.cuda": cuda,
            "torch.autograd": ["backward", "grad"],
            "torch.utils.flop_counter": ["FlopCounterMode"],
            "torch.nn.functional": list(torch.nn.functional.__all__),
            "torch._functorch.config": ["activation_memory_budget",
                                        "activation_memory_budget_solver",
                                        "activation_memory_budget_runtime_estimator", "patch"],
            "torch._dynamo": ["reset"],
            "torch.ops": [f"{ns}.{op}" for ns in ("aten", "matmulviz")
                          for op in getattr(torch.ops, ns)]}


_MODULES = {"autograd", "cuda", "utils", "ops", "nn"}
_DUNDERS_SHOWN = {"__getitem__", "__setitem__", "__matmul__", "__add__", "__sub__", "__mul__",
                  "__truediv__", "__neg__", "__len__", "__eq__", "__ne__", "__lt__", "__le__",
                  "__gt__", "__ge__", "__invert__", "__and__", "__or__", "__xor__"}


def not_supported(what):
    return NotImplementedError(f"{what} is not supported by matmulviz.torch; the supported "
                               f"functions are listed in {_DOCS} (or matmulviz.torch.supported())")


def unsupported_getattr(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise not_supported(f"torch.{name}")
