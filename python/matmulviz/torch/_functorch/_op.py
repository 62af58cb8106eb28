"""The row type of the op tables (_decompositions.OPS, _attention.OPS)."""


class Op:
    """One aten op: `shape(arg shapes/constants...)` the output's sizes, `run(values...)` the engine
    call, `flops(arg shapes...)` FlopCounterMode's count (0 when it registers no formula)."""

    def __init__(self, shape, run, flops=None):
        self.shape = shape
        self.run = run
        self.flops = flops or (lambda *shapes: 0)


class TupleOp(Op):
    """A multi-output op: `items(arg shapes/constants...)` gives per output (shape, dtype) (dtype
    None: the first tensor argument's) or None for a non-tensor or undefined output."""

    def __init__(self, items, run, flops=None):
        super().__init__(None, run, flops)
        self.items = items
