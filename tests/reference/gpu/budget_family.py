# The activation-memory-budget partitioner on the family of PyTorch's own attention-versus-linear
# test (test/functorch/test_ac.py, MemoryBudgetTest.test_attention_vs_linear), at its sizes and
# others, over a range of budgets. One file runs on real PyTorch (a GPU, PyTorch 2.4 or later), on
# real PyTorch without a GPU ("torch-cpu", below) and on matmulviz.torch (its simulated "cuda"
# device, meta mode), and writes what each decided:
#
#   python3 budget_family.py torch|torch-cpu|matmulviz OUT.json [--sizes 1x1,2x5,...]
#                            [--budgets 0.6,0.8]
#
# torch-cpu makes PyTorch's own decisions for the GPU without one: fake tensors on the CPU
# (FakeTensorMode; the aot_eager_decomp_partition backend needs no GPU), with the attention as
# the op PyTorch's CUDA dispatch runs for these float32 shapes on an sm_80+ GPU,
# _scaled_dot_product_efficient_attention (a CPU tensor would lower to
# _scaled_dot_product_flash_attention_for_cpu instead, another op with other costs, and another
# plan). The activation memory is the bytes of the tensors the forward saves for the backward,
# on storages the forward made (the CUDA memory a GPU measures after it, but for the 4-byte loss
# and the host-side philox seed and offset); the FLOPs are the backward's, as on a GPU.
#
# For x [512 S, 512 D] and w [512 D, 512 D], float32, both requiring grad:
#   loss = cos(scaled_dot_product_attention(x, x, x) @ w).sum()
# each entry holds, as the test measures them, the activation memory (MiB of requested bytes
# alive after the forward) and the backward's FLOPs (in 512^3 matmuls) of the eager function and
# of torch.compile(backend="aot_eager_decomp_partition") under the budget. On PyTorch it also
# records what the partitioner computed on the way, read by wrapping two functions of
# torch/_functorch/partitioners.py: the knapsack's inputs (normalised sizes, runtimes, capacity)
# and its answer (_optimize_runtime_with_given_memory), and the saved values with their sizes
# (choose_saved_values_set). With --no-reset, torch._dynamo.reset() runs once per budget, not
# between sizes: the same code meets a new size, so from the second size on PyTorch recompiles
# with dynamic shapes (symbolic sizes), which matmulviz does not model; such entries are recorded
# as "reset": false, to tell that case apart.
#
# tests/python/test_gpu_budget.py requires the engine to give each entry's memory and FLOPs of a
# PyTorch measurement made with this program.
import argparse
import json

torch = config = F = FlopCounterMode = None  # the module measured: load()


def load(module):
    """Measures real PyTorch ("torch", "torch-cpu") or matmulviz.torch ("matmulviz", meta
    mode)."""
    global torch, config, F, FlopCounterMode
    if module in ("torch", "torch-cpu"):
        import torch
        import torch._functorch.config as config
        import torch.nn.functional as F
        from torch.utils.flop_counter import FlopCounterMode
    else:
        import matmulviz
        import matmulviz.torch as torch
        import matmulviz.torch._functorch.config as config
        import matmulviz.torch.nn.functional as F
        from matmulviz.torch.utils.flop_counter import FlopCounterMode
        matmulviz.set_cuda_mode("meta")


MIB = 2**20
UNIT = 2 * 512**3
calls = []  # what the wrapped partitioner functions saw during one compile


def wrap_partitioner():
    """On PyTorch: record the knapsack's inputs and answer, and the saved values."""
    import torch._functorch.partitioners as P

    def describe(node):
        return {"name": node.name, "target": str(node.target), "bytes": int(P._size_of(node))}

    knapsack = P._optimize_runtime_with_given_memory

    def recording_knapsack(*a, **kw):
        result = knapsack(*a, **kw)
        lists = [x for x in list(a) + list(kw.values()) if isinstance(x, list)]
        numbers = [x for x in lists if x and all(isinstance(v, (int, float)) for v in x)]
        nodes = [x for x in lists if x and all(hasattr(v, "target") for v in x)]
        capacity = [x for x in list(a) + list(kw.values()) if isinstance(x, float)]
        calls.append({"knapsack": {
            "memory": numbers[0] if numbers else None,
            "runtimes": numbers[1] if len(numbers) > 1 else None,
            "capacity": capacity[0] if capacity else None,
            "candidates": [describe(n) for n in nodes[0]] if nodes else None,
            "saved_idx": list(result[1]), "recomputed_idx": list(result[2])}})
        return result

    choose = P.choose_saved_values_set

    def recording_choose(*a, **kw):
        saved = choose(*a, **kw)
        calls.append({"saved": [describe(n) for n in saved]})
        return saved

    P._optimize_runtime_with_given_memory = recording_knapsack
    P.choose_saved_values_set = recording_choose


def requested():
    return torch.cuda.memory_stats()["requested_bytes.all.current"]


ON_CPU = False  # torch-cpu: fake tensors on the CPU, the GPU's attention op


def measure(fn, inputs=()):
    """As the test's get_act_mem and get_bw_flops: one full step, then the forward alone (MiB),
    then its backward (FLOPs in 512^3 matmuls)."""
    fn().backward()
    if ON_CPU:
        seen = {x.untyped_storage()._cdata for x in inputs}
        saved = {}

        def pack(t):
            # The philox seed and offset (0-dim int64) live on the host on a GPU.
            host = t.dim() == 0 and t.dtype == torch.int64
            if t.device.type == "cpu" and not host and t.untyped_storage()._cdata not in seen:
                saved[t.untyped_storage()._cdata] = t.untyped_storage().nbytes()
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = fn()
        activation = sum(saved.values()) / MIB
    else:
        base = requested()
        out = fn()
        activation = (requested() - base) / MIB
    with FlopCounterMode(display=False) as mode:
        out.backward()
    return round(activation, 1), mode.get_total_flops() / UNIT


def engine_plan(g):
    """On matmulviz: the plan's route, saved values and knapsack items (normalised as PyTorch
    normalises them: by the default cut's bytes beyond the inputs)."""
    plan = g.last_plan
    nodes = plan.graph.nodes
    inputs = sum(v.nbytes for v in nodes if v.kind == "primal")
    span = plan.graph.partitioner().plan(1.0, "dp")["saved_bytes"] - inputs
    items = [nodes[i] for i in plan.info["candidates"]]
    return {"route": plan.route,
            "saved": [{"name": v.name, "target": v.op, "bytes": v.nbytes} for v in plan.saved],
            "knapsack": {"memory": [v.nbytes / span for v in items] if span > 0 else None,
                         "candidates": [{"name": v.name, "target": v.op, "bytes": v.nbytes}
                                        for v in items],
                         "recomputed": [nodes[i].name for i in plan.info["knapsack_unbanned"]]}}


def attention(q, k, v):
    if ON_CPU:  # the op a GPU's dispatch picks: memory-efficient attention, with its logsumexp
        return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0,
                                                                      False)[0]
    return F.scaled_dot_product_attention(q, k, v, is_causal=False)


def family(s, d):
    """PyTorch's test's function for sequence length 512 s and width 512 d: a closure over x
    and w, both requiring grad; and (x, w)."""
    device = "cpu" if ON_CPU else "cuda"
    x = torch.randn(s * 512, d * 512, device=device, requires_grad=True)
    w = torch.randn(d * 512, d * 512, device=device, requires_grad=True)

    def call():
        a = x.reshape(1, 1, x.shape[0], x.shape[1])
        a = attention(a, a, a).reshape(x.shape)
        return torch.mm(a, w).cos().sum()
    return call, (x, w)


def main():
    p = argparse.ArgumentParser(description="the budget partitioner on the attention/linear family")
    p.add_argument("module", choices=["torch", "torch-cpu", "matmulviz"])
    p.add_argument("out")
    p.add_argument("--sizes", default="1x1,1x3,2x2,2x1,2x5,4x7,4x9,3x2,3x7,1x2",
                   help="S x D pairs: x is [512 S, 512 D]")
    p.add_argument("--budgets", default="0,0.2,0.4,0.5,0.6,0.7,0.8,0.9,1")
    p.add_argument("--no-reset", action="store_true",
                   help="do not call torch._dynamo.reset() between sizes (dynamic shapes)")
    args = p.parse_args()
    load(args.module)
    global ON_CPU
    ON_CPU = args.module == "torch-cpu"
    if args.module != "matmulviz":
        wrap_partitioner()
    fake = None
    if ON_CPU:
        from torch._subclasses.fake_tensor import FakeTensorMode
        fake = FakeTensorMode()
        fake.__enter__()
    sizes = [tuple(int(v) for v in pair.split("x")) for pair in args.sizes.split(",")]
    budgets = [float(b) for b in args.budgets.split(",")]
    entries = []
    for budget in budgets:
        torch._dynamo.reset()  # a compiled graph is cached across budgets otherwise
        for s, d in sizes:
            call, inputs = family(s, d)
            eager_mem, eager_flops = measure(call, inputs)
            if not args.no_reset:
                torch._dynamo.reset()
            calls.clear()
            with config.patch(activation_memory_budget=budget):
                g = torch.compile(call, backend="aot_eager_decomp_partition")
                mem, flops = measure(g, inputs)
            entry = {"S": s, "D": d, "budget": budget, "reset": not args.no_reset,
                     "eager_mib": eager_mem, "eager_flops": eager_flops, "mib": mem,
                     "flops": flops}
            if args.module != "matmulviz":
                entry["partitioner"] = list(calls)
            else:
                entry["plan"] = engine_plan(g)
            entries.append(entry)
            print(f"S={s} D={d} budget {budget}: {mem} MiB (eager {eager_mem}), backward "
                  f"{flops:g} (eager {eager_flops:g})", flush=True)
    if fake is not None:
        fake.__exit__(None, None, None)
    result = {"module": args.module, "torch": getattr(torch, "__version__", None),
              "entries": entries}
    if args.module == "torch":
        result["device"] = torch.cuda.get_device_name()
    elif ON_CPU:
        result["device"] = ("cpu, fake tensors, _scaled_dot_product_efficient_attention as a "
                            "GPU's dispatch runs it")
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
