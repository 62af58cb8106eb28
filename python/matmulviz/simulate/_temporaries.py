"""The per-op temporaries of the simulation: blocks an aten op allocates besides its outputs
and frees before it returns, consulted in one place (Simulation.run_op) for every op. The rules
are the engine's (core/), read through the matmulviz module, so that a program that both
matmulviz.torch and real PyTorch run allocates the same blocks either way.

Modelled:
- mm, addmm, bmm, baddbmm: a matrix operand whose strides cuBLAS cannot take (an expanded
  gradient, a non-contiguous slice) is copied contiguous inside the op, after the output is
  allocated (PyTorch: aten/src/ATen/native/cuda/Blas.cpp, prepare_matrix_for_cublas /
  prepare_batch_matrix_for_cublas; the engine: core/ops/matmul.cpp blasReady, its stride rule
  core/ops/gemm_kernel.h blasCompatible).
- A CPU tensor of one or more dims passed to an op on CUDA tensors (the index of `c[q]`) is
  copied to the device for the op and freed right after it (PyTorch's advanced indexing moves
  the indices to self's device): Simulation.run_op makes these copies itself, before the op.

Not modelled yet (the engine's rules for them are being added to core; once the matmulviz
module exposes them, this table reads them rather than keeping its own):
- the cuBLAS workspace that PyTorch 2.x allocates through the caching allocator on a thread's
  first matmul (aten/src/ATen/cuda/CublasHandlePool.cpp; 32 MiB on sm_90),
- temporaries of backward kernels (softmax/div backward) and of topk.
"""

from matmulviz import _C

# op name -> positions of its two matrix operands among the op's flattened arguments
_MATRIX_OPERANDS = {"mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2)}


def _blas_copy_bytes(t):
    """Bytes of the contiguous copy the op makes of matrix operand `t`, or 0 when none."""
    if t.dim() < 2:
        return 0
    if _C._blas_compatible(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1)):
        return 0
    return t.numel() * t.element_size()


def temporaries(op_name, inputs, outputs):
    """[(label, bytes)]: the temporaries op `op_name` (an aten overload packet name, "mm")
    allocates after its outputs and frees before it returns. `inputs`: the op's flattened
    arguments (meta tensors for CUDA tensors); `outputs`: its new meta outputs."""
    out = []
    positions = _MATRIX_OPERANDS.get(op_name)
    if positions is not None:
        for i in positions:
            nbytes = _blas_copy_bytes(inputs[i])
            if nbytes:
                out.append((f"{op_name}: operand copied for cuBLAS", nbytes))
    return out
