"""python3 -m matmulviz._budget SCRIPT --function F --budgets SPEC [--solver dp|greedy] --out PATH
        [--graph-out GRAPH] [--no-sweep]

What `matmulviz-cli budget` runs (the CLI adds the report envelope and the text table): runs
SCRIPT (as a module named "__matmulviz_budget__", so code under `if __name__ == "__main__":`
does not run), takes its function F (no arguments, returns a scalar loss) and, for each budget,
compiles it with torch.compile(F, backend="aot_eager_decomp_partition") under
torch._functorch.config.activation_memory_budget = budget and measures on the engine:
- activation memory the PyTorch way: run F and backward once, note
  memory_stats()["requested_bytes.all.current"], run F again: the difference (the saved values
  plus F's output, a scalar);
- backward FLOPs: FlopCounterMode around out.backward() (recomputation included).
The same for F in eager mode first. Writes JSON to PATH: {"script", "function", "solver",
"budgets", "eager": {...}, "rows": [...]}. Exit status 2 for bad input (budget outside [0, 1],
no such function, F not traceable), 1 when the script itself fails.

--graph-out GRAPH also writes F's traced joint graph as a graph file (report kind "budget-graph",
docs/partitioner.md), which the app's Budget view and `matmulviz-cli export --budget-graph`
read; with --no-sweep nothing is compiled or measured and --out is not needed (the app's
"Trace a function..." runs that)."""

import os
import runpy
import sys

USAGE = ("usage: python3 -m matmulviz._budget SCRIPT --function F --budgets SPEC "
         "[--solver dp|greedy] --out PATH [--graph-out GRAPH] [--no-sweep]")


class BadInput(Exception):
    pass


def parse_budgets(spec):
    """"0:1:0.1" (start:stop:step, stop included), "0,0.3,1" or one number; each checked with
    PyTorch's error text. Budgets are rounded to 12 decimals (0.30000000000000004 is 0.3)."""
    from matmulviz import _C
    try:
        if ":" in spec:
            parts = [float(p) for p in spec.split(":")]
            if len(parts) != 3 or parts[2] <= 0:
                raise ValueError
            start, stop, step = parts
            count = int((stop - start) / step + 1e-9) + 1
            budgets = [round(start + i * step, 12) for i in range(max(count, 0))]
        else:
            budgets = [float(p) for p in spec.split(",")]
    except ValueError:
        raise BadInput(f"--budgets {spec!r}: expected START:STOP:STEP (STEP > 0), a comma list "
                       "or one number") from None
    if not budgets:
        raise BadInput(f"--budgets {spec!r} gives no budget")
    for b in budgets:
        try:
            _C._check_memory_budget(b)
        except RuntimeError as e:
            raise BadInput(str(e)) from None
    return budgets


def _measure(fn):
    """(activation bytes, backward FLOPs, backward FLOPs per op) of fn, measured on the engine."""
    import matmulviz.torch as torch
    from matmulviz.torch.utils.flop_counter import FlopCounterMode

    def current():
        return torch.cuda.memory_stats()["requested_bytes.all.current"]

    fn().backward()
    base = current()
    out = fn()
    activation = current() - base
    with FlopCounterMode(display=False) as mode:
        out.backward()
    del out
    per_op = {str(k): v for k, v in mode.get_flop_counts().get("Global", {}).items()}
    return activation, mode.get_total_flops(), per_op


def _row(budget, solver, fn):
    import matmulviz.torch as torch
    from matmulviz.torch._functorch import config
    torch._dynamo.reset()
    with config.patch(activation_memory_budget=budget, activation_memory_budget_solver=solver):
        g = torch.compile(fn, backend="aot_eager_decomp_partition")
        activation, flops, per_op = _measure(g)
    plan = g.last_plan
    info = plan.info
    return {
        "budget": budget, "route": info["route"],
        "activation_bytes": activation, "activation_mib": activation / 2**20,
        "planned_activation_bytes": info["activation_bytes"],
        "backward_flops": flops, "backward_flops_by_op": per_op,
        "recompute_flops": info["recompute_flops"],
        "memory_ratio": info["memory_ratio"], "saved_bytes": info["saved_bytes"],
        "saved": [v.name for v in plan.saved],
        "recomputed": [v.name for v in plan.recomputed],
    }


def load_function(script, function):
    """Runs SCRIPT and returns its function named `function` (BadInput when there is none)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    namespace = runpy.run_path(script, run_name="__matmulviz_budget__")
    fn = namespace.get(function)
    if not callable(fn):
        raise BadInput(f"{script} defines no function {function!r}")
    return fn


def trace_function(fn):
    """F's joint graph; BadInput for an op the tracer lacks (its name and line), no gradient or a
    result that is not a scalar."""
    from matmulviz.torch._functorch import _trace
    try:
        return _trace.trace(fn)
    except (NotImplementedError, RuntimeError, TypeError) as e:
        raise BadInput(str(e)) from None


def graph_json(graph, script, function):
    """The graph file's text (report kind "budget-graph") of a traced joint graph."""
    title = f"{os.path.basename(script)}: {function}"
    return graph.partitioner().to_json(title, script, function)


def sweep(script, function, budgets, solver, graph_out=None):
    """The report's body (see the module's doc); writes the graph file to `graph_out` if given."""
    if solver not in ("dp", "greedy"):
        raise BadInput(f"--solver must be dp or greedy, got {solver!r}")
    fn = load_function(script, function)
    graph = trace_function(fn)  # F itself is checked first
    if graph_out:
        with open(graph_out, "w") as out:
            out.write(graph_json(graph, script, function))
    rows = [_row(b, solver, fn) for b in budgets]  # failures from here on are the run's (exit 1)
    activation, flops, per_op = _measure(fn)
    return {"script": script, "function": function, "solver": solver, "budgets": budgets,
            "graph": {"nodes": len(graph.nodes), "forward_nodes": len(graph.forward),
                      "backward_nodes": len(graph.backward),
                      "inputs": [{"name": p.name, "shape": p.shape, "stride": p.stride,
                                  "requires_grad": p.requires_grad} for p in graph.primals]},
            "eager": {"activation_bytes": activation, "activation_mib": activation / 2**20,
                      "backward_flops": flops, "backward_flops_by_op": per_op},
            "rows": rows}


def _trace_only(script, function, graph_out):
    """--no-sweep: writes only the graph file. Exit status as main's."""
    print(f"tracing {function} of {script}", file=sys.stderr, flush=True)
    graph = trace_function(load_function(script, function))
    print(f"traced {len(graph.nodes)} nodes", file=sys.stderr, flush=True)
    with open(graph_out, "w") as out:
        out.write(graph_json(graph, script, function))
    return 0


def main(argv):
    import json
    args = {"--function": "f", "--budgets": "0:1:0.1", "--solver": "dp", "--out": None,
            "--graph-out": None}
    rest = list(argv)
    script = None
    no_sweep = False
    while rest:
        a = rest.pop(0)
        if a == "--no-sweep":
            no_sweep = True
        elif a in args and rest:
            args[a] = rest.pop(0)
        elif script is None and not a.startswith("--"):
            script = a
        else:
            print(f"matmulviz-cli budget: unexpected argument {a!r}\n{USAGE}", file=sys.stderr)
            return 2
    if script is None or (args["--out"] is None and not no_sweep) or \
            (no_sweep and args["--graph-out"] is None):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if no_sweep:
            return _trace_only(script, args["--function"], args["--graph-out"])
        budgets = parse_budgets(args["--budgets"])
        report = sweep(script, args["--function"], budgets, args["--solver"],
                       args["--graph-out"])
    except BadInput as e:
        print(f"matmulviz-cli budget: {e}", file=sys.stderr)
        return 2
    except BaseException:
        import traceback
        traceback.print_exc()
        return 1
    with open(args["--out"], "w") as out:
        json.dump(report, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
