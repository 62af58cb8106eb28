# The repository's budget examples (examples/budget_chain.py, budget_branches.py,
# budget_attention.py, written for matmulviz.torch) planned by real PyTorch's partitioner, for
# the tests to hold the engine to: each example's source runs with `import torch` in place of
# matmulviz.torch, its tensors fake (FakeTensorMode) on the CPU, and scaled_dot_product_attention
# as the op PyTorch's CUDA dispatch runs for float32 on an sm_80+ GPU
# (_scaled_dot_product_efficient_attention), as budget_family.py torch-cpu does. For each example
# function and budget it records what the partitioner saved (choose_saved_values_set), the
# knapsack's normalised sizes, the activation memory (bytes of the tensors the forward saves on
# storages it made, and its output, as a GPU's requested_bytes after the forward counts them: the
# philox seed and offset are host tensors there) and the backward's FLOPs.
#
#   python3 budget_examples.py OUT.json     (PyTorch 2.4 or later; no GPU needed)
import argparse
import json
import os
import sys
import types

import torch
import torch._functorch.config as config
import torch._functorch.partitioners as P
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils.flop_counter import FlopCounterMode

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
EXAMPLES = {"budget_chain.py": [0.0, 0.25, 0.3, 0.5, 0.75, 1.0],
            "budget_branches.py": [0.0, 0.25, 0.5, 0.75, 1.0],
            "budget_attention.py": [0.0, 0.25, 0.5, 0.75, 1.0]}
calls = []


def _record():
    choose, knapsack = P.choose_saved_values_set, P._optimize_runtime_with_given_memory

    def recording_choose(*a, **kw):
        saved = choose(*a, **kw)
        calls.append({"saved": [n.name for n in saved]})
        return saved

    def recording_knapsack(*a, **kw):
        result = knapsack(*a, **kw)
        numbers = [x for x in list(a) + list(kw.values())
                   if isinstance(x, list) and x and all(isinstance(v, (int, float)) for v in x)]
        calls.append({"knapsack": numbers[0] if numbers else None})
        return result
    P.choose_saved_values_set = recording_choose
    P._optimize_runtime_with_given_memory = recording_knapsack


def _efficient_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    assert attn_mask is None and dropout_p == 0.0
    return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0,
                                                                  is_causal, scale=scale)[0]


def _load(name):
    """The example as a module of real PyTorch on the CPU, its main() not run."""
    with open(os.path.join(ROOT, "examples", name)) as f:
        source = f.read()
    source = source.replace("matmulviz.torch", "torch").replace('set_default_device("cuda")',
                                                               'set_default_device("cpu")')
    module = types.ModuleType(name[:-3])
    module.__file__ = name
    sys.modules[module.__name__] = module  # dynamo finds a function's globals by its module
    exec(compile(source.replace('if __name__ == "__main__":', "if False:"), name, "exec"),
         module.__dict__)
    return module


def _leaves(fn):
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    values = cells + list(fn.__globals__.values())
    out = []
    for v in values:
        for t in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(t, torch.Tensor) and all(t is not u for u in out):
                out.append(t)
    return out


def measure(fn, leaves):
    """(activation bytes, backward FLOPs) the PyTorch way, on fake tensors: the bytes of the
    distinct storages the forward saves for the backward that it made itself (not those of
    `leaves`, the function's own tensors)."""
    fn().backward()
    seen = {t.untyped_storage()._cdata for t in leaves}
    saved = {}

    def pack(t):
        # The philox seed and offset (0-dim int64) live on the host on a GPU.
        host = t.dim() == 0 and t.dtype == torch.int64
        if t.device.type == "cpu" and not host and t.untyped_storage()._cdata not in seen:
            saved[t.untyped_storage()._cdata] = t.untyped_storage().nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    saved[out.untyped_storage()._cdata] = out.untyped_storage().nbytes()  # the loss, alive too
    with FlopCounterMode(display=False) as mode:
        out.backward()
    return sum(saved.values()), mode.get_total_flops()


def functions(module):
    """(label, loss function) of an example: its f, or make_block at each size."""
    if hasattr(module, "make_block"):
        return [(f"L={s} D={w}", module.make_block(s, w)) for s in module.SEQ_LENS
                for w in module.WIDTHS]
    return [("f", module.f)]


def main():
    p = argparse.ArgumentParser(description="the budget examples planned by PyTorch")
    p.add_argument("out")
    args = p.parse_args()
    _record()
    torch.nn.functional.scaled_dot_product_attention = _efficient_attention
    entries = []
    with FakeTensorMode(allow_non_fake_inputs=True):
        for name, budgets in EXAMPLES.items():
            module = _load(name)
            for label, fn in functions(module):
                for budget in budgets:
                    torch._dynamo.reset()
                    calls.clear()
                    with config.patch(activation_memory_budget=budget):
                        g = torch.compile(fn, backend="aot_eager_decomp_partition")
                        activation, flops = measure(g, _leaves(fn))
                    saved = [c["saved"] for c in calls if "saved" in c]
                    knapsack = [c["knapsack"] for c in calls if "knapsack" in c]
                    entries.append({"example": name, "function": label, "budget": budget,
                                    "activation_bytes": activation, "backward_flops": flops,
                                    "saved": saved[0] if saved else None,
                                    "knapsack": knapsack[0] if knapsack else None})
                    print(name, label, budget, activation, flops, flush=True)
    with open(args.out, "w") as f:
        json.dump({"torch": torch.__version__, "device": "cpu, fake tensors, "
                   "_scaled_dot_product_efficient_attention as a GPU's dispatch runs it",
                   "entries": entries}, f, indent=1)


if __name__ == "__main__":
    main()
