"""The per-op temporaries of the simulation: what an aten op does to the caching allocator
besides allocating its outputs, consulted in one place (Simulation.run_op, after the outputs
exist) for every op. The rules are the engine's (core/memory/cublas_workspace.h,
core/memory/kernel_temporaries.h, core/ops/gemm_kernel.h), read through the matmulviz module's
bindings, so that a program that both matmulviz.torch and real PyTorch run allocates the same
blocks either way. They follow the PyTorch and GPU of the run (matmulviz.set_pytorch,
matmulviz.set_gpu; simulate(gpu=, pytorch=), --gpu, --pytorch), as the engine's do.

Modelled, in the order an op takes them:
- mm, addmm, bmm, baddbmm: a matrix operand whose strides cuBLAS cannot take (an expanded
  gradient, a non-contiguous slice) is copied contiguous inside the op, after the output is
  allocated, and freed when the op returns (PyTorch: aten/src/ATen/native/cuda/Blas.cpp,
  prepare_matrix_for_cublas / prepare_batch_matrix_for_cublas; the engine's stride rule:
  _C._blas_compatible).
- The cuBLAS workspace: an op that calls cuBLAS (mm, addmm, bmm, baddbmm, addbmm, mv, addmv,
  dot, vdot, with a non-empty result and a non-empty inner dimension) takes its thread's handle
  just before the library call; under PyTorch 2.x the first such op on a thread allocates that
  thread's workspace (32 MiB on sm_90, CUBLAS_WORKSPACE_CONFIG honoured) and keeps it for the
  life of the process: empty_cache() cannot release it. The threads are the main thread and,
  inside a backward, the autograd engine's device thread (PyTorch runs a CUDA graph's backward
  there). A CPU-only PyTorch (1.13 here) runs backward on the calling thread, so the simulation
  says which thread it models: inside torch.autograd.backward / grad (Tensor.backward calls the
  former), the autograd thread (_C._sim_use_cublas_handle decides, as the engine's matmuls do).
  With the forum post's PyTorch (1.x) nothing is allocated. An addmm with a bias vector runs on
  cuBLASLt (_C.addmm_uses_cublaslt), whose first call on a thread also allocates that thread's
  cuBLASLt workspace (1 MiB, CUBLASLT_WORKSPACE_SIZE honoured), kept as the cuBLAS one.
- _softmax_backward_data: `tmp = grad * output`, allocated after grad_input and freed before
  the op returns (_C.softmax_backward_temporaries).
- topk: the multi-block radix select's buffers and CUB's scan storage, sized by the GPU's SM
  count (_C.topk_temporaries); the single-block path takes none.
- sum, mean (all or some dims; also the sums autograd makes to undo broadcasting): the reduction
  kernel's staging buffer and semaphores when it splits one output's inputs across thread
  blocks, allocated after the output and freed before the op returns
  (_C.reduction_temporaries; core/memory/reduction_temporaries.h).
- _scaled_dot_product_efficient_attention_backward: grad_out's contiguous copy (before the
  outputs), delta and its float32 intermediates, the kernel's workspace
  (_C.efficient_attention_backward_temporaries; core/memory/attention_temporaries.h).
- index_put_ / _index_put_impl_ with accumulate=True and one int64 index into the first dim (the
  backward of `c[q]`): the sort of the linear indices, its three index buffers and CUB's radix
  sort storage, and for an index already on the device the linear index computeLinearIndex
  makes (_C.index_put_sort_temporaries; core/memory/sort_temporaries.h). Other index patterns
  take none here, nor does the range check (aminmax) of a call of one's own with a CUDA index:
  the backward skips it (unsafe=True).
- A CPU tensor of one or more dims passed to an op on CUDA tensors (the index of `c[q]`) is
  copied to the device for the op and freed right after it (PyTorch's advanced indexing moves
  the indices to self's device): Simulation.run_op makes these copies itself, before the op.

Not modelled: the temporaries of other kernels (the engine has no rule for them either).
"""

import torch

from matmulviz import _C

# op name -> positions of its two matrix operands among the op's positional arguments
_MATRIX_OPERANDS = {"mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2)}
# op name -> position of the operand whose last dimension is the inner (summed) one, for the ops
# that call cuBLAS (at::cuda::blas gemm, gemv, dot); aten/src/ATen/native/cuda/Blas.cpp.
_CUBLAS_OPS = {"mm": 0, "bmm": 0, "addmm": 1, "baddbmm": 1, "addbmm": 1, "_addmm_activation": 1,
               "mv": 0, "addmv": 1, "dot": 0, "vdot": 0}

# A step: (label, bytes, free_step) as core/memory/kernel_temporaries.h's TemporaryStep (free_step
# >= 0: free that earlier step's block), or CUBLAS_HANDLE: take the current thread's cuBLAS
# handle (its workspace on first use). Blocks still held at the end are freed, last first.
CUBLAS_HANDLE = ("cuBLAS handle", 0, -2)
# Or CUBLASLT_HANDLE: take the current thread's cuBLASLt handle (its workspace on first use).
CUBLASLT_HANDLE = ("cuBLASLt handle", 0, -3)
# Or OUTPUTS: the op's outputs are allocated here (core's kOutputsStep); without it, first.
OUTPUTS = ("outputs", 0, -4)


def _blas_copy_bytes(t):
    """Bytes of the contiguous copy the op makes of matrix operand `t`, or 0 when none."""
    if t.dim() < 2:
        return 0
    if _C._blas_compatible(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1)):
        return 0
    return t.numel() * t.element_size()


def _calls_cublas(op_name, args, outputs):
    """Whether `op_name` reaches the cuBLAS call: PyTorch returns early (or fills zeros) for an
    empty result or an empty inner dimension (addmm_out_cuda_impl, bmm_out_cuda_impl), and the
    engine's batchedGemm takes the handle under the same condition."""
    pos = _CUBLAS_OPS.get(op_name)
    if pos is None or pos >= len(args) or not hasattr(args[pos], "dim"):
        return False
    if any(o.numel() == 0 for o in outputs):
        return False
    a = args[pos]
    return a.dim() > 0 and a.size(-1) > 0


def _addmm_uses_cublaslt(args, kwargs, outputs):
    """addmm(self, mat1, mat2, beta=1, alpha=1) on cuBLASLt (_C.addmm_uses_cublaslt)."""
    if len(args) < 3 or not outputs:
        return False
    bias, mat2, result = args[0], args[2], outputs[0]
    beta = args[3] if len(args) > 3 else kwargs.get("beta", 1)
    if not hasattr(bias, "dim") or mat2.dim() != 2 or result.dim() != 2:
        return False
    return _C.addmm_uses_cublaslt(bias.dim(), bias.size(0) if bias.dim() == 1 else 0,
                                  bias.is_contiguous(), result.is_contiguous(), float(beta),
                                  result.dtype in (torch.float16, torch.bfloat16, torch.float32,
                                                   torch.float64),
                                  mat2.size(0), mat2.size(1))


def _topk_steps(args, kwargs):
    t = args[0]
    dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
    if t.dim() == 0:
        n = 1
    else:
        n = t.size(dim)
    if n == 0:
        return []
    return _C.topk_temporaries(t.numel() // n, n, t.element_size(), _C.gpu())


def _reduction_steps(args, kwargs):
    """sum / mean of args[0] over the dims of args[1] (all when absent, None or empty)."""
    t = args[0]
    if not hasattr(t, "dim") or t.numel() == 0:
        return []
    dims = args[1] if len(args) > 1 and not hasattr(args[1], "dtype") else kwargs.get("dim")
    if isinstance(dims, int):
        dims = [dims]
    nd = t.dim()
    reduced = [True] * nd
    if dims:
        reduced = [False] * nd
        for d in dims:
            reduced[d % max(nd, 1)] = True
    dtype = kwargs.get("dtype") or t.dtype
    accumulate = 8 if dtype == torch.float64 or not dtype.is_floating_point else 4
    return _C.reduction_temporaries(list(t.shape), list(t.stride()), reduced, accumulate,
                                    t.storage_offset(), _C.gpu())


def _efficient_attention_backward_steps(args):
    """_scaled_dot_product_efficient_attention_backward(grad_out, query, key, value, ...): the
    grad_out copy, delta and workspace (_C.efficient_attention_backward_temporaries)."""
    grad_out, q, k, v = args[:4]
    if q.dim() != 4:
        return []
    b, h, lq, dqk = q.shape
    return _C.efficient_attention_backward_temporaries(
        b, h, lq, k.size(2), dqk, v.size(3), q.element_size(),
        grad_out.transpose(1, 2).is_contiguous())


def accumulates(args, kwargs):
    """index_put's accumulate argument (its fourth)."""
    return bool(args[3] if len(args) > 3 else kwargs.get("accumulate", False))


def _index_put_steps(args, kwargs, host_ids):
    """index_put_(self, indices, values, accumulate) with accumulate=True and one int64 index
    into dim 0: the sort's steps (index_put_with_sort_kernel); none for other patterns."""
    if not accumulates(args, kwargs) or len(args) < 2:
        return []
    self_, indices = args[0], list(args[1])
    defined = [i for i in indices if i is not None]
    if len(defined) != 1 or indices[0] is None or indices[0].dtype != torch.int64:
        return []
    n = indices[0].numel()
    if n == 0 or self_.dim() == 0 or self_.numel() == 0:
        return []
    # largestIndex of the contiguous self over the slice size: size(0) - 1
    return _C.index_put_sort_temporaries(n, self_.size(0) - 1, id(indices[0]) not in host_ids,
                                         _C.gpu())


def temporaries(op_name, args, kwargs, outputs, host_ids=frozenset()):
    """The steps (see CUBLAS_HANDLE) op `op_name` (an aten overload packet name, "mm") takes
    after its outputs exist, in PyTorch's order. `args`, `kwargs`: the op's arguments (meta
    tensors for CUDA tensors); `outputs`: its new meta outputs; `host_ids`: the ids of the
    arguments that stand for CPU tensors copied to the device for the op."""
    steps = []
    positions = _MATRIX_OPERANDS.get(op_name)
    if positions is not None:
        for i in positions:
            nbytes = _blas_copy_bytes(args[i])
            if nbytes:
                steps.append((f"{op_name}: operand copied for cuBLAS", nbytes, -1))
    if _calls_cublas(op_name, args, outputs):
        lt = op_name == "addmm" and _addmm_uses_cublaslt(args, kwargs, outputs)
        steps.append(CUBLASLT_HANDLE if lt else CUBLAS_HANDLE)
    kernel = []
    if op_name == "_softmax_backward_data":
        g = args[0]
        kernel = _C.softmax_backward_temporaries(g.numel(), g.element_size())
    elif op_name == "topk":
        kernel = _topk_steps(args, kwargs)
    elif op_name in ("sum", "mean"):
        kernel = _reduction_steps(args, kwargs)
    elif op_name in ("index_put_", "index_put", "_index_put_impl_"):
        kernel = _index_put_steps(args, kwargs, host_ids)
    elif op_name == "_scaled_dot_product_efficient_attention_backward":
        kernel = _efficient_attention_backward_steps(args)
    base = len(steps)  # the engine's steps count from their own first one
    steps.extend((label, nbytes, free + base if free >= 0 else -1) for label, nbytes, free in kernel)
    return steps
