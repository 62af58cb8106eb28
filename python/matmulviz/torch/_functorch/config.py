"""torch._functorch.config: the partitioner's settings that matmulviz reads, as PyTorch names them
(torch/_functorch/config.py), read when a compiled function plans its graph:

- activation_memory_budget (float, default 1.0): 0 saves only the inputs (everything else is
  recomputed in the backward), 1 the runtime-optimal min cut; in between, PyTorch's knapsack
  (docs/partitioner.md). Outside [0, 1] compiling raises PyTorch's RuntimeError.
- activation_memory_budget_solver ("dp" or "greedy", default "dp"): the knapsack solver.
- activation_memory_budget_runtime_estimator ("flops"): the only estimator matmulviz has.

`config.patch(name=value, ...)` (or `config.patch({"name": value})`, or
`config.patch("name", value)`) sets them for a `with` block or a decorated function and restores
them after, as PyTorch's ConfigModule.patch does; an unknown name raises AttributeError.
"""

import contextlib as _contextlib
import sys as _sys

activation_memory_budget = 1.0
activation_memory_budget_solver = "dp"
activation_memory_budget_runtime_estimator = "flops"

_NAMES = ("activation_memory_budget", "activation_memory_budget_solver",
          "activation_memory_budget_runtime_estimator")


class _Patch(_contextlib.ContextDecorator):
    """The context manager / decorator config.patch returns."""

    def __init__(self, changes):
        module = _sys.modules[__name__]
        for name in changes:
            if name not in _NAMES:
                raise AttributeError(f"{__name__}.{name} does not exist")
        self._module = module
        self._changes = dict(changes)
        self._saved = []

    def __enter__(self):
        self._saved.append({n: getattr(self._module, n) for n in self._changes})
        for name, value in self._changes.items():
            setattr(self._module, name, value)
        return self

    def __exit__(self, *exc):
        for name, value in self._saved.pop().items():
            setattr(self._module, name, value)
        return False


def patch(arg1=None, arg2=None, **kwargs):
    """Sets config values for a `with` block or a decorated function, then restores them."""
    if isinstance(arg1, str):
        changes = {arg1: arg2}
    elif isinstance(arg1, dict):
        changes = dict(arg1)
    elif arg1 is None:
        changes = {}
    else:
        raise TypeError(f"patch() expects a config name, a dict or keyword arguments, got "
                        f"{type(arg1).__name__}")
    changes.update(kwargs)
    return _Patch(changes)


def _snapshot():
    """(budget, solver, estimator) as a compiled function reads them."""
    return (activation_memory_budget, activation_memory_budget_solver,
            activation_memory_budget_runtime_estimator)


