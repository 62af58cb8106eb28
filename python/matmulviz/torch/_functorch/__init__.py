"""torch._functorch: the config of AOTAutograd's partitioner (`torch._functorch.config`) and the
machinery behind `torch.compile(f, backend="aot_eager_decomp_partition")` (docs/compile.md)."""

from matmulviz.torch._functorch import config  # noqa: F401
