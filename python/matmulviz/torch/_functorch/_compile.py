"""torch.compile(f, backend="aot_eager_decomp_partition") on the engine (docs/compile.md).

Each call of the compiled function traces f (_trace.py), plans the joint graph with
core/partitioner for the current torch._functorch.config (the plan is cached per graph and
config until torch._dynamo.reset()), then runs the plan for real:
- the forward runs the forward nodes the output and the saved values need, with grad mode off,
  freeing every other value after its last use, so only the saved values stay alive;
- the output is made the result of a CompiledFunctionBackward node (PyTorch's name) holding the
  saved values; out.backward() runs the backward nodes, recomputing the forward values that were
  not saved from the saved ones, and hands one gradient per primal to autograd, which
  accumulates them into .grad as for any other node.
Memory (torch.cuda.memory_stats) and FLOPs (FlopCounterMode) of both parts are the engine's."""

from matmulviz import _C
from matmulviz.torch._functorch import _decompositions as _dec
from matmulviz.torch._functorch import _trace
from matmulviz.torch._functorch import config
from matmulviz.torch._functorch._graph import Value

BACKEND = "aot_eager_decomp_partition"
_PLANS = {}  # (graph signature, budget, solver) -> Plan


def clear_plans():
    """torch._dynamo.reset(): forget every cached plan."""
    _PLANS.clear()


class Plan:
    """A partitioned joint graph: `graph` (JointGraph), `info` (the partitioner's plan dict with
    node ids), `saved` / `recomputed` (Values), `forward_nodes` / `backward_nodes` (the call
    nodes each part runs, graph order)."""

    def __init__(self, graph, budget, solver):
        self.graph = graph
        self.budget, self.solver = budget, solver
        self.info = graph.partitioner().plan(budget, solver)
        nodes = graph.nodes
        self.saved = [nodes[i] for i in self.info["saved_used"]]
        self.recomputed = [nodes[i] for i in self.info["recomputed"]]
        saved_ids = {v.id for v in self.saved}
        self.forward_nodes = _closure([graph.output] + self.saved, stop=lambda v: False)
        grads = [g for g in graph.gradients if g is not None]
        self.backward_nodes = _mimic_autograd_order(
            _closure(grads, stop=lambda v: v.id in saved_ids), graph.tangent)

    @property
    def route(self):
        return self.info["route"]


def _closure(roots, stop):
    """The call nodes `roots` need, through arguments, not entering nodes where stop(v); graph
    order."""
    seen, pending = {}, [r for r in roots if r.kind == "call"]
    while pending:
        v = pending.pop()
        if v.id in seen:
            continue
        seen[v.id] = v
        pending.extend(a for a in v.tensor_args() if a.kind == "call" and not stop(a))
    return [seen[i] for i in sorted(seen)]


def _mimic_autograd_order(nodes, tangent):
    """PyTorch's reordering_to_mimic_autograd_engine (torch/_functorch/partitioners.py): the
    extracted backward lists the recomputed forward nodes first (joint graph order), which would
    keep them all alive at once; instead, from the first node that reads a tangent on, each node
    is placed after the nodes it needs that are not placed yet (in graph order), so each
    recomputation runs just before its first use."""
    first = next((i for i, n in enumerate(nodes) if tangent in n.tensor_args()), None)
    if first is None:
        return nodes
    members = {n.id: n for n in nodes}
    placed, order = set(), []
    for node in nodes[first:]:
        needed, pending = {}, [node]
        while pending:
            v = pending.pop()
            if v.id in placed or v.id in needed or v.id not in members:
                continue
            needed[v.id] = v
            pending.extend(v.tensor_args())
        for i in sorted(needed):
            order.append(needed[i])
            placed.add(i)
    return order


def plan_for(graph, budget, solver):
    key = (graph.signature(), float(budget), solver)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = Plan(graph, float(budget), solver)
    return plan


def _run(nodes, env, keep):
    """Runs `nodes` in order on the engine, values of `env` (id -> tensor) as inputs; frees
    every value of env after its last use unless its id is in `keep`."""
    last = {}
    for pos, n in enumerate(nodes):
        for a in n.tensor_args():
            last[a.id] = pos
    for pos, n in enumerate(nodes):
        args = [env[a.id] if isinstance(a, Value) else a for a in n.args]
        env[n.id] = _dec.OPS[n.op].run(*args)
        for a in n.tensor_args():
            if last.get(a.id) == pos and a.id not in keep:
                env.pop(a.id, None)
        del args


def run_plan(plan, primal_tensors):
    """The compiled forward: the output tensor, whose backward runs the plan's backward."""
    graph = plan.graph
    env = {p.id: t for p, t in zip(graph.primals, primal_tensors)}
    keep = {v.id for v in plan.saved} | {graph.output.id} | set(env)
    grad_mode = _C.is_grad_enabled()
    _C.set_grad_enabled(False)
    try:
        _run(plan.forward_nodes, env, keep)
    finally:
        _C.set_grad_enabled(grad_mode)
    out = env[graph.output.id]
    saved = [(v.name, env[v.id]) for v in plan.saved]
    env.clear()
    if grad_mode:
        _C._attach_compiled_backward(out, list(primal_tensors), _backward(plan), saved)
    return out


def _backward(plan):
    """The compiled backward: backward(grad, saved values in plan.saved's order)."""
    graph = plan.graph

    def backward(grad, saved):
        env = {v.id: t for v, t in zip(plan.saved, saved)}
        saved.clear()  # without retain_graph env is now their only holder: freed after last use
        env[graph.tangent.id] = grad
        wanted = {g.id for g in graph.gradients if g is not None}
        grad_mode = _C.is_grad_enabled()
        _C.set_grad_enabled(False)
        try:
            _run(plan.backward_nodes, env, wanted)
        finally:
            _C.set_grad_enabled(grad_mode)
        return [None if g is None else env[g.id] for g in graph.gradients]
    return backward


class CompiledFunction:
    """What torch.compile returns: calling it traces, plans (cached) and runs the plan.
    `last_plan` is the Plan of the latest call (for matmulviz-cli budget and tests)."""

    def __init__(self, fn):
        self._fn = fn
        self.last_plan = None
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        if args or kwargs:
            raise NotImplementedError(
                f'torch.compile(f, backend="{BACKEND}") in matmulviz compiles functions without '
                "arguments (f closes over its tensors); got arguments")
        budget, solver, estimator = config._snapshot()
        if estimator != "flops":
            raise NotImplementedError(
                "activation_memory_budget_runtime_estimator: matmulviz estimates runtime by FLOPs "
                f'only ("flops"), got {estimator!r}')
        _C._check_memory_budget(float(budget))
        if solver == "ilp" or callable(solver):
            raise NotImplementedError(
                "activation_memory_budget_solver: matmulviz has the \"dp\" and \"greedy\" "
                f"knapsacks, not {solver!r} (PyTorch's ilp needs scipy's milp)")
        if solver not in ("dp", "greedy"):  # PyTorch's text (partitioners.py)
            raise RuntimeError(f"Not aware of memory budget knapsack solver: {solver}")
        graph = _trace.trace(self._fn)
        tensors, graph.primal_tensors = graph.primal_tensors, []  # a cached plan holds no tensor
        plan = plan_for(graph, budget, solver)
        self.last_plan = plan
        return run_plan(plan, tensors)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile for backend="aot_eager_decomp_partition": a function of no arguments whose
    forward keeps only what PyTorch's partitioner saves under
    torch._functorch.config.activation_memory_budget, and whose backward recomputes the rest
    (docs/compile.md). Used as a decorator too. Other backends raise NotImplementedError."""
    if backend != BACKEND:
        raise NotImplementedError(
            f'torch.compile(backend={backend!r}) is not supported by matmulviz.torch: only '
            f'backend="{BACKEND}" (AOTAutograd with decompositions and the min-cut partitioner)')
    if mode is not None or options:
        raise NotImplementedError("torch.compile(mode=..., options=...) is not supported by "
                                  "matmulviz.torch")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  disable=disable)
    if disable:
        return model
    if not callable(model):
        raise RuntimeError("compile() expects a callable")
    return CompiledFunction(model)
