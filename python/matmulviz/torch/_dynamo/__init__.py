"""torch._dynamo: reset() forgets every compiled function's plans (matmulviz has no Dynamo: a
compiled function traces its Python function on each call, docs/compile.md)."""

from matmulviz.torch._functorch import _compile


def reset():
    """Clears the plans of every compiled function, as torch._dynamo.reset() clears its caches."""
    _compile.clear_plans()
