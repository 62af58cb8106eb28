"""The joint forward+backward graph of a traced function, as AOTAutograd's joint graph after
`aot_eager_decomp_partition` decomposed it: placeholders (primals_*, then tangents_1), the
forward's aten ops, then each forward op's backward formula (the table in _decompositions.py)
from the last op to the first, gradients meeting at one value summed with `add`, and an output
of the forward output followed by one gradient per primal (None where it needs none).

Each node keeps its sizes, dtype and FLOPs (FlopCounterMode's formulas), so the partitioner
(core/partitioner, through matmulviz._C._JointGraph) sees _size_of and estimate_runtime as
PyTorch's does."""

import math

from matmulviz import _C
from matmulviz.torch._functorch import _decompositions as _dec
from matmulviz.torch._functorch._op import TupleOp

# fx_graph_cse never merges these (compile_utils.py: rand_ops, and aten.empty).
_CSE_KEEPS = frozenset({
    "dropout", "_fused_dropout", "_standard_gamma", "bernoulli", "multinomial", "native_dropout",
    "normal", "poisson", "binomial", "rrelu", "rand_like", "rand", "randint", "randn", "randperm",
    "empty"})


class Value:
    """One node: kind "primal", "tangent" or "call"; `op` the aten op of a call; `args` graph
    values and constants in positional order; `shape` a list; `stride` the engine's strides of a
    traced value (primals and forward calls; None for backward nodes, which get theirs when they
    run); `line` "file:line: code" of the script line that ran it (forward calls only).
    A multi-output op's value is a tuple: `items` lists per output (shape, dtype) or None (a
    non-tensor or undefined output), `outputs` maps an output index to its getitem node, and
    `shape` is []. `autograd` is (op, args) when the node ends the decomposition of an op that
    autograd differentiates as one (softmax: BACKWARD["_softmax"] with args [input, dim])."""

    __slots__ = ("id", "kind", "op", "args", "shape", "dtype", "flops", "requires_grad", "line",
                 "name", "stride", "items", "outputs", "autograd", "merged_into")

    def __init__(self, kind, op, args, shape, dtype, flops=0, requires_grad=False, line=None):
        self.kind, self.op, self.args = kind, op, list(args)
        self.shape, self.dtype, self.flops = list(shape), dtype, flops
        self.requires_grad, self.line = requires_grad, line
        self.id = -1
        self.name = None
        self.stride = None
        self.items = None
        self.merged_into = None  # the equal earlier node cse kept in this one's place
        self.outputs = {}
        self.autograd = None

    @property
    def nbytes(self):
        """_size_of: numel * itemsize (an expanded view counts its expanded numel, as PyTorch's);
        a tuple the sum over its tensors."""
        if self.items is not None:
            return sum(math.prod(shape) * _dec.itemsize(dtype)
                       for shape, dtype in (i for i in self.items if i is not None))
        return math.prod(self.shape) * _dec.itemsize(self.dtype)

    def tensor_args(self):
        return [a for a in self.args if isinstance(a, Value)]

    def __repr__(self):
        return self.name or f"<{self.kind} {self.op}>"


class JointGraph:
    """The traced joint graph. `primals` and `primal_tensors` in discovery order; `forward` and
    `backward` the call nodes of each part in execution order; `output` the forward output;
    `gradients` one Value or None per primal. `nodes` (after finish()) is graph order."""

    def __init__(self):
        self.primals, self.primal_tensors = [], []
        self.forward, self.backward = [], []
        self.tangent = None
        self.output = None
        self.gradients = []
        self.nodes = []
        self._traced = []  # every node as traced, cse's merged ones included (their names)
        self._partitioner = None

    # -- building --
    def primal(self, tensor):
        v = Value("primal", None, [], list(tensor.shape), tensor.dtype,
                  requires_grad=tensor.requires_grad)
        v.stride = list(tensor.stride())
        self.primals.append(v)
        self.primal_tensors.append(tensor)
        return v

    def call(self, op, args, line=None, requires_grad=None, part="forward"):
        """Adds a call node of `op` (a key of _decompositions.OPS); shape and FLOPs by its rules."""
        spec = _dec.OPS[op]
        shapes = [a.shape if isinstance(a, Value) else a for a in args]
        tensors = [a for a in args if isinstance(a, Value)]
        if requires_grad is None:
            requires_grad = any(a.requires_grad for a in tensors)
        dtype = tensors[0].dtype
        if isinstance(spec, TupleOp):
            v = Value("call", op, args, [], dtype, spec.flops(*shapes), requires_grad, line)
            v.items = [None if i is None else (list(i[0]), i[1] or dtype)
                       for i in spec.items(*shapes)]
        else:
            v = Value("call", op, args, spec.shape(*shapes), dtype, spec.flops(*shapes),
                      requires_grad, line)
        getattr(self, part).append(v)
        return v

    def getitem(self, tuple_value, index, requires_grad=False, part="forward"):
        """operator.getitem(tuple_value, index): one tensor output of a multi-output op."""
        shape, dtype = tuple_value.items[index]
        v = Value("call", "getitem", [tuple_value, index], shape, dtype, 0, requires_grad,
                  tuple_value.line)
        tuple_value.outputs[index] = v
        getattr(self, part).append(v)
        return v

    def differentiate(self):
        """Adds tangents_1 and the backward nodes for the scalar output `self.output`."""
        out = self.output
        self.tangent = Value("tangent", None, [], out.shape, out.dtype)
        emit = _Emitter(self)
        grads = {id(out): self.tangent}
        for node in reversed(self.forward):
            grad = grads.get(id(node))
            if grad is None or not node.requires_grad:
                continue
            if node.op == "getitem":  # a tuple's output: to its op, by output index
                tuple_value, index = node.args
                grads.setdefault(id(tuple_value), {})[index] = grad
                continue
            op, args = node.autograd or (node.op, node.args)
            formulas = _dec.BACKWARD[op]
            for i in _dec.gradient_order(op, [i for i in formulas if i < len(args)]):
                arg = args[i]
                if isinstance(arg, Value) and arg.requires_grad:
                    g = formulas[i](emit, node, grad)
                    old = grads.get(id(arg))
                    grads[id(arg)] = g if old is None else emit("add", old, g)
        self.gradients = [grads.get(id(p)) if p.requires_grad else None for p in self.primals]

    def finish(self):
        """Puts the nodes in graph order, merges equal ones (cse) and names them as the
        partitioner's builder does: as FX named them when they were traced."""
        self._traced = self.primals + [self.tangent] + self.forward + self.backward
        self._cse()
        self.nodes = self.primals + [self.tangent] + self.forward + self.backward
        for i, v in enumerate(self.nodes):
            v.id = i
        for v, name in zip(self.nodes, self.partitioner().names()):
            v.name = name

    def _cse(self):
        """Common-subexpression elimination as AOTAutograd runs it on the joint graph before
        partitioning (torch/_functorch/compile_utils.py, fx_graph_cse; config.cse, on by
        default): a call with the same op and arguments (1 and 1.0 differ) as an earlier one is
        dropped and its users read the earlier one (three branches' permute(x) become one).
        Random ops, empty and the values that share a storage with an output of the joint graph
        (its forward output and the gradients) are kept."""
        keep = {id(v) for v in self._output_storages()}
        seen, merged = {}, {}
        for part in (self.forward, self.backward):
            kept = []
            for v in part:
                v.args = [merged.get(id(a), a) if isinstance(a, Value) else a for a in v.args]
                if v.op in _CSE_KEEPS or id(self._storage(v)) in keep:
                    kept.append(v)
                    continue
                key = (v.op, tuple(("v", id(a)) if isinstance(a, Value) else
                                   (type(a).__name__, repr(a)) for a in v.args))
                if key in seen:
                    merged[id(v)] = v.merged_into = seen[key]
                    continue
                seen[key] = v
                kept.append(v)
            part[:] = kept
        for v in self.primals + self.forward + self.backward:  # a tuple's outputs
            if v.outputs:
                v.outputs = {i: merged.get(id(o), o) for i, o in v.outputs.items()}
        self.gradients = [merged.get(id(g), g) if g is not None else None
                          for g in self.gradients]
        self.output = merged.get(id(self.output), self.output)

    @staticmethod
    def _storage(v):
        """The value whose storage v lives in: a view's base (a tuple's outputs each have one)."""
        while v.kind == "call" and v.args and isinstance(v.args[0], Value) and \
                _C._partitioner_is_view_op(v.op):
            v = v.args[0]
        return v

    def _output_storages(self):
        outs = [self.output] + [g for g in self.gradients if g is not None]
        return [self._storage(v) for v in outs if isinstance(v, Value)]

    # -- for the partitioner --
    def partitioner(self):
        """matmulviz._C._JointGraph over this graph (core/partitioner's planner)."""
        if self._partitioner is None:
            specs = self._specs()
            grads = [-1 if g is None else g.id for g in self.gradients]
            self._partitioner = _C._JointGraph(specs, [self.output.id], grads)
        return self._partitioner

    def _specs(self):
        """The builder's node specs in traced order. A node cse merged, and an output of a tuple
        with no getitem here, only take their names: FX traced a getitem for each output of a
        tuple right after it (proxy_tensor's track_tensor_tree) and dropped the unused ones
        later, so flash attention's philox seed, output 6, is getitem_6."""
        specs, tuple_value, next_index = [], None, 0

        def skip_getitems(up_to):
            specs.extend([("cse", "getitem", [], 0, 0, False)] * max(0, up_to - next_index))
        for v in self._traced or self.nodes:
            if tuple_value is not None and not (v.op == "getitem" and v.args[0] is tuple_value):
                skip_getitems(len(tuple_value.items))
                tuple_value = None
            if v.op == "getitem" and v.args[0] is tuple_value:
                skip_getitems(v.args[1])
                next_index = v.args[1] + 1
            if v.merged_into is not None:
                specs.append(("cse", v.op, [], 0, 0, False))
                continue
            kind = "call" if v.kind == "call" else v.kind
            specs.append((kind, v.op or "", [a.id for a in v.tensor_args()], v.nbytes, v.flops,
                          v.items is not None))
            if v.items is not None:
                tuple_value, next_index = v, 0
        if tuple_value is not None:
            skip_getitems(len(tuple_value.items))
        return specs

    def signature(self):
        """What a cached plan is keyed on: every node's kind, op, arguments and sizes."""
        def arg_key(a):
            return ("v", a.id) if isinstance(a, Value) else ("c", repr(a))
        return tuple((v.kind, v.op, tuple(arg_key(a) for a in v.args), tuple(v.shape),
                      str(v.dtype), v.requires_grad) for v in self.nodes)


class _Emitter:
    """e(op, *args) adds a backward node; e.getitem(t, i) reads output i of a backward tuple;
    e.memo(node, make) is make() once per forward node (one backward op for several inputs);
    e.result(v) reads forward value v that its own node saved (its differentiable result);
    e.shape(v) is a value's sizes."""

    def __init__(self, graph):
        self._graph = graph
        self._memo = {}
        self._saved = {}  # id of a forward value -> its forward alias

    def result(self, v):
        """A saved result, as AOTAutograd's joint graph has it: alias(v) in the forward right
        after v (after the last getitem of v's tuple), once per value; alias of that where the
        backward reads it."""
        fw = self._saved.get(id(v))
        if fw is None:
            forward = self._graph.forward
            at = forward.index(v) + 1
            if v.op == "getitem":
                tuple_value = v.args[0]
                while at < len(forward) and forward[at].op == "getitem" and \
                        forward[at].args[0] is tuple_value:
                    at += 1
            fw = self._graph.call("alias", [v], requires_grad=False, part="forward")
            forward.insert(at, forward.pop())
            self._saved[id(v)] = fw
        return self("alias", fw)

    def __call__(self, op, *args):
        return self._graph.call(op, list(args), part="backward", requires_grad=False)

    def getitem(self, tuple_value, index):
        return self._graph.getitem(tuple_value, index, part="backward")

    def memo(self, node, make):
        if id(node) not in self._memo:
            self._memo[id(node)] = make()
        return self._memo[id(node)]

    @staticmethod
    def shape(v):
        return list(v.shape)
