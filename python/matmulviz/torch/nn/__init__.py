"""torch.nn: only `torch.nn.functional` (scaled_dot_product_attention); no nn.Module."""

from matmulviz.torch.nn import functional  # noqa: F401
