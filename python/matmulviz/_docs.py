"""Writes docs/python.md from the bindings themselves: what matmulviz.torch provides.

    scripts/python -m matmulviz._docs > docs/python.md        (scripts/python-docs does this)
"""

import inspect

import matmulviz
import matmulviz.torch as torch

INTRO = """\
# matmulviz.torch: PyTorch's API on matmulviz's engine

<!-- Written by scripts/python-docs from the module itself; edit python/matmulviz/_docs.py. -->

`import matmulviz.torch as torch` instead of `import torch`, and PyTorch matmul code runs on
matmulviz's engine: tensors on `"cuda"` live on a simulated CUDA device whose memory is a model
of PyTorch's CUDA caching allocator, so `torch.cuda.memory_allocated()`,
`max_memory_allocated()` and `memory_stats()` give the numbers a GPU would, on a laptop.
Python's own reference counting decides when a tensor dies, exactly as with PyTorch, so the
lifetimes of temporaries (the forum post's "weird phenomena") come out as they do there.

Use it without installing: `scripts/python SCRIPT` (or
`PYTHONPATH=build/release/python /usr/bin/python3 SCRIPT`). `cmake --install build/release`
puts the package where Debian's `/usr/bin/python3` finds it.

Run a script and record its memory: `scripts/python -m matmulviz SCRIPT [ARGS] --report run.json`
or `matmulviz-cli run SCRIPT [ARGS] --report run.json`; the format is in docs/report-format.md.
A program written for real PyTorch (`import torch`) runs with the installed PyTorch over the same
allocator model: `scripts/python -m matmulviz.simulate SCRIPT [ARGS] --report run.json`
(docs/simulate.md).

## Devices and modes

- `"cpu"`: host tensors, not counted as device memory (as in PyTorch).
- `"cuda"` / `"cuda:0"`: the simulated device. In the default mode `"data"` values are computed
  on this machine (BLAS); `matmulviz.set_cuda_mode("meta")` (or `MATMULVIZ_CUDA_MODE=meta`)
  keeps sizes, strides and the memory accounting but no data, so a workload far larger than
  this machine's memory answers in seconds (then `item()`, `tolist()`, printing values, and
  `t[mask]` and `nonzero()`, whose sizes depend on values, are unavailable). A real GPU through
  the CUDA backend (`"gpu"`) is not available from Python yet.
- `matmulviz.set_device_capacity("80GiB")`: the simulated GPU's memory; beyond it allocation
  raises `torch.cuda.OutOfMemoryError` with PyTorch's message (after releasing cached segments
  and retrying, as PyTorch does). `torch.cuda.set_per_process_memory_fraction(f)` scales it.
- `matmulviz.set_pytorch("2.x"|"forum")` and `matmulviz.set_gpu("h200")` (or `MATMULVIZ_PYTORCH`,
  `MATMULVIZ_GPU`): the PyTorch and GPU the memory model follows, default PyTorch 2.x on an H200.
  In 2.x each thread's first cuBLAS call (mm, bmm, matmul, dot) allocates a cuBLAS workspace
  that stays allocated (32 MiB on sm_90; `CUBLAS_WORKSPACE_CONFIG=:0:0` for none), one for the
  script's thread and one for autograd's backward; "forum" (the forum post's PyTorch) counts none.

## Differences from PyTorch, on purpose

- Random numbers (`rand`, `randn`, `randint`) come from NumPy's generator: `manual_seed` makes
  them repeat, but they are not PyTorch's numbers.
- `from_numpy()` and `Tensor.numpy()` copy (PyTorch shares the array's memory).
- `inference_mode` behaves as `no_grad`.
- `torch.nn.functional.scaled_dot_product_attention` runs as PyTorch 2.x on an sm90 GPU runs it:
  the flash kernel for float16/bfloat16 without a mask, else the memory-efficient one (values
  of the math formulation; memory, saved tensors, autograd node and FLOPs of the fused kernel:
  no L x S attention matrix). Where PyTorch would fall back to the math formulation (float64,
  head dims the kernels do not align) and for `dropout_p` other than 0 it raises
  `NotImplementedError`; inputs must be 4-d `[batch, heads, L, E]`.
- Anything not listed below raises `NotImplementedError` naming it, never a silent wrong
  result. `matmulviz.torch.supported()` returns these lists.
"""


def signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def main():
    lists = torch.supported()
    print(INTRO)
    print("## Functions: `torch.*`\n")
    for name in lists["torch"]:
        obj = getattr(torch, name)
        if callable(obj) and not isinstance(obj, type):
            print(f"- `torch.{name}{signature(obj)}`")
        else:
            print(f"- `torch.{name}`")
    print("\n## Tensor methods and attributes\n")
    print(", ".join(f"`{n}`" for n in lists["Tensor"]))
    print("\n## `torch.cuda`\n")
    print(", ".join(f"`{n}`" for n in lists["torch.cuda"]))
    print("\n## `torch.autograd`\n")
    print(", ".join(f"`{n}`" for n in lists["torch.autograd"]))
    print("\n## `torch.utils.flop_counter`\n")
    flop_counter = torch.utils.flop_counter
    for name in lists["torch.utils.flop_counter"]:
        print(f"- `torch.utils.flop_counter.{name}{signature(getattr(flop_counter, name))}`")
    print("\n## `torch.nn.functional`\n")
    functional = torch.nn.functional
    for name in lists["torch.nn.functional"]:
        print(f"- `torch.nn.functional.{name}{signature(getattr(functional, name))}`")
    print("\n## `torch.compile` and its config (docs/compile.md)\n")
    print("`torch.compile(f, backend=\"aot_eager_decomp_partition\")` for a function of no "
          "arguments that returns a scalar loss: its forward keeps only the values PyTorch's "
          "partitioner saves under the activation memory budget, its backward recomputes the "
          "rest, both run on the engine.\n")
    print(", ".join(f"`torch._functorch.config.{n}`" for n in lists["torch._functorch.config"]))
    from matmulviz.torch._functorch import _trace
    print(f"\nTraced inside the compiled function: {_trace.SUPPORTED}. Anything else raises "
          "NotImplementedError naming the op and its script line.")
    print("\n" + ", ".join(f"`torch._dynamo.{n}()`" for n in lists["torch._dynamo"]))
    print("\n## `torch.ops` (op handles, the keys of FlopCounterMode's counts)\n")
    print(", ".join(f"`torch.ops.{n}`" for n in lists["torch.ops"]))
    print("\n## `matmulviz`\n")
    for name in sorted(n for n in matmulviz.__all__):
        print(f"- `matmulviz.{name}{signature(getattr(matmulviz, name))}`")


if __name__ == "__main__":
    main()
