"""torch.utils: flop_counter (FlopCounterMode)."""

from matmulviz.torch.utils import flop_counter  # noqa: F401
