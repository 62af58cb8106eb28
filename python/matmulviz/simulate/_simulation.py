"""Simulation: real PyTorch runs a program whose CUDA tensors are SimTensors; their storages'
bytes live in matmulviz's caching-allocator model (the simulated CUDA device of the matmulviz
module, core/memory/caching_allocator.h).

Hooks used, all kept by PyTorch 2.x: a TorchFunctionMode routes "cuda" (factory device=,
Tensor.cuda(), Tensor.to()) to meta tensors wrapped as SimTensors; SimTensor.__torch_dispatch__
sees every aten op (forward, backward, optimizer) and calls run_op; saved_tensors_hooks say which
autograd node keeps which block; torch.cuda's memory functions are replaced during the run.

A block is allocated when the op making a new storage runs and freed when the last SimTensor
on that storage dies (views share it: blocks are keyed by the storage)."""

import os
import sys
import weakref

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from matmulviz import _C
from matmulviz.simulate import (_categories, _checkpoints, _composite, _cuda_api, _device,
                                _host, _pinned, _streams, _tensor, _value_reads)
from matmulviz.simulate._temporaries import (CUBLAS_HANDLE, CUBLASLT_HANDLE, OUTPUTS,
                                             accumulates, temporaries)
from matmulviz.simulate._meta_cache import MetaCache
from matmulviz.simulate._flat import flatten_args, flatten_result, unflatten_args, unflatten_result
from matmulviz.simulate._tensor import SimTensor
from matmulviz.simulate._version import out_of_memory_error, storage_key, storage_nbytes

# What autograd's engine calls to run a custom torch.autograd.Function's backward
# (torch/autograd/function.py; PyNode::apply looks it up by name).
_Function = torch.autograd.function.BackwardCFunction

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_META = torch.device("meta")

# aten ops whose output sizes depend on the values (overload packet names): no placeholder
# has the right size, so they stop the run without values.
DATA_DEPENDENT = {
    "nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_consecutive",
    "unique_dim", "repeat_interleave", "bincount", "argwhere",
}
# aten ops that read values into a Python scalar (C++ code calling item(), torch.equal): a
# placeholder, noted as a read (_value_reads.py): 0 of the tensor's kind, False, True.
SCALAR_READS = {"_local_scalar_dense": "item()", "is_nonzero": "bool()", "equal": "equal()"}


_DROPOUT = {torch.nn.functional.dropout, torch.dropout}
_LIKE = {torch.empty_like, torch.zeros_like, torch.ones_like, torch.full_like, torch.rand_like,
         torch.randn_like}
# The C++ .grad property, whose __set__ the TorchFunctionMode sees for `t.grad = g`.
_GRAD = _device.TENSOR_BASE.__dict__["grad"]


class DataDependentError(RuntimeError):
    """A step needs tensor values, which simulated CUDA tensors do not have."""


def user_frame():
    """"file:line: code" of the innermost frame outside PyTorch and matmulviz (the user's)."""
    import linecache
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith(_TORCH_DIR) and not name.startswith(_PACKAGE_DIR):
            code = linecache.getline(name, f.f_lineno).strip()
            return f"{name}:{f.f_lineno}: {code}"
        f = f.f_back
    return "(no Python frame)"


def _is_cuda(device):
    """True for a device argument that names CUDA: "cuda", "cuda:0", torch.device("cuda"), an
    int (a CUDA index)."""
    if device is None or isinstance(device, bool):
        return False
    if isinstance(device, int):
        return True
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return isinstance(device, torch.device) and device.type == "cuda"


class _Block:
    """One block of the model: its allocation id (-1: none, an empty storage), how many
    SimTensors view its storage, its size as memory_allocated counts it."""
    __slots__ = ("id", "refs", "bytes")

    def __init__(self, block_id, nbytes):
        self.id = block_id
        self.refs = 0
        self.bytes = nbytes


class _Saved:
    """What autograd keeps for a saved SimTensor (saved_tensors_hooks' pack): a detached alias,
    so that a saved output does not keep its own node alive in a cycle."""
    __slots__ = ("tensor", "block", "why", "__weakref__")

    def __init__(self, tensor, block):
        self.tensor = tensor
        self.block = block
        self.why = None

    def __del__(self):
        if self.why is not None and self.block >= 0:
            _C._sim_holder(self.block, self.why, -1)


def _accumulable(t):
    """can_accumulate_inplace's layout condition: a non-overlapping, dense tensor that is not a
    view of another's storage."""
    return not t._is_view() and t.is_contiguous()


# Ops that only update tensors in place (GradScaler's inf check and scale update), by name: what
# each returns (native_functions.yaml).
_UPDATES_IN_PLACE = {
    "_amp_foreach_non_finite_check_and_unscale_": lambda args: None,
    "_amp_update_scale_": lambda args: args[0],
}


class _CudaMode(TorchFunctionMode):
    """Routes the program's "cuda" to SimTensors (see Simulation.function)."""

    def __init__(self, sim):
        super().__init__()
        self.sim = sim

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.sim.function(func, args, kwargs or {})


class Simulation:
    """`with matmulviz.simulate(gpu="h200") as sim:` — see matmulviz.simulate.simulate."""

    def __init__(self, capacity=None, gpu_name=None, values="none", gpu=None, pytorch=None,
                 host="cpu", world=None):
        if values not in ("none", "cpu"):
            raise ValueError(f"values={values!r}: \"none\" (tensors without values) or \"cpu\" "
                             "(the values computed on the CPU too)")
        if host not in ("cpu", "meta"):
            raise ValueError(f"host={host!r}: \"cpu\" (host tensors are real) or \"meta\" "
                             "(simulated too, without values)")
        if host == "meta" and values != "none":
            raise ValueError("host=\"meta\" simulates host tensors without values: it needs "
                             "values=\"none\"")
        self.values = values
        # The distributed job this process is a rank of (_distributed.World), or None.
        self.world = world
        self._cpp_factories = None  # _distributed.CppFactories once a DDP is made
        self.factory_device = None  # set: the C++ device of what factories make (CppFactories)
        # host="meta": the script's CPU tensors are simulated too (_host.py).
        self.host = _host.HostTensors() if host == "meta" else None
        # Whether SimTensors are CUDA tensors to C++ (a CUDA build of 2.x) or meta ones (_device).
        self.cuda_keys = _device.cuda_keys()
        # What a SimTensor wraps: a meta tensor, or with values="cpu" a CPU tensor with the values
        # (ops then run on the CPU: slower, and data-dependent steps work).
        self._dev = _META if values == "none" else torch.device("cpu")
        self.capacity = capacity
        self.gpu_name = gpu_name or "matmulviz simulated GPU"
        # The PyTorch and GPU architecture the allocator rules follow (matmulviz.set_pytorch,
        # set_gpu): None keeps the module's (MATMULVIZ_PYTORCH, MATMULVIZ_GPU; default 2.x, h200).
        self.gpu = gpu
        self.pytorch = pytorch
        self._in_backward = 0  # > 0: the ops run on autograd's thread (see _temporaries)
        self._blocks = {}  # storage key -> _Block
        self._pending_saved = []
        self._active = False
        self.observers = []  # objects with on_alloc(block, requested) and on_free(block)
        # Reads of values that returned placeholders (_value_reads.py).
        self.value_reads = _value_reads.ValueReads()
        self.pinned = _pinned.PinnedHost()  # pinned host memory, counted apart (_pinned.py)
        self.categories = _categories.Categories(self)  # what each block holds
        # What torch.cuda.memory._record_memory_history() records (simulate/_snapshot.py).
        from matmulviz.simulate._snapshot import SnapshotRecorder
        self.history = SnapshotRecorder()
        # scaled_dot_product_attention's kernel choices: {(frame, kernel): why not the others}
        self.sdpa_choices = {}
        self._output_rules_of = {}  # op name -> _output_rules
        self._meta_cache = MetaCache()  # meta kernels' results by their arguments' metadata
        # The autograd node running now and how many have run (_note_node).
        self._current_node = getattr(torch._C, "_current_autograd_node", None)
        self._last_node = None
        self._node_serial = 0

    # ---- the run
    def __enter__(self):
        if _tensor._simulation is not None:
            raise RuntimeError("matmulviz.simulate: a simulation is already running")
        _C.set_cuda_mode("meta")
        if self.cuda_keys:
            _device.prepare()
        self._model = (_C.pytorch(), _C.gpu())
        if self.pytorch is not None:
            _C.set_pytorch(self.pytorch)
        if self.gpu is not None:
            _C.set_gpu(self.gpu)
        _C.set_device_capacity(self.capacity)  # a fresh device: fresh statistics
        self.model = _C.pytorch_model()  # "PyTorch 2.x on h200 (sm_90)"
        _tensor.set_simulation(self)
        self._mode = _CudaMode(self)
        self._mode.__enter__()
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        self._patches = _cuda_api.install(self)
        self._composites = _composite.install(self)
        self._idioms = [(m, m.install(a)) for m, a in ((_pinned, self.pinned), (_streams, self),
                                                        (_checkpoints, self),
                                                        (_categories, self.categories))]
        if self.world is not None:
            from matmulviz.simulate import _distributed
            self._environment = _distributed.set_environment(self.world)
            self._idioms.append((_distributed, _distributed.install(self, self.world)))
        # Module.cuda()/.to() must make new parameters, never swap a CPU parameter's storage
        # for a SimTensor's (with values="cpu" both are CPU tensors to C++, which set_data allows).
        self._overwrite = torch.__future__.get_overwrite_module_params_on_conversion()
        torch.__future__.set_overwrite_module_params_on_conversion(True)
        self._backward, self._grad = torch.autograd.backward, torch.autograd.grad
        torch.autograd.backward = lambda *a, **k: self.in_backward(self._backward, *a, **k)
        torch.autograd.grad = lambda *a, **k: self.in_backward(self._grad, *a, **k)
        self._function_apply = _Function.apply
        self._engine_run_backward = getattr(torch.autograd, "_engine_run_backward", None)
        if self._engine_run_backward is not None:
            torch.autograd._engine_run_backward = self._run_backward
        if self.cuda_keys:
            _Function.apply = lambda ctx, *a: self._meta_gradients(self._function_apply(ctx, *a))
        self._active = True
        return self

    def __exit__(self, *exc):
        self.history.stop()
        self._active = False
        torch.autograd.backward, torch.autograd.grad = self._backward, self._grad
        if self._engine_run_backward is not None:
            torch.autograd._engine_run_backward = self._engine_run_backward
        _Function.apply = self._function_apply
        if self._cpp_factories is not None:
            self._cpp_factories.__exit__(*exc)
            self._cpp_factories = None
        for module, saved in reversed(self._idioms):
            module.uninstall(saved)
        if self.world is not None:
            from matmulviz.simulate import _distributed
            _distributed.restore_environment(self._environment)
        _composite.uninstall(self._composites)
        _cuda_api.uninstall(self._patches)
        torch.__future__.set_overwrite_module_params_on_conversion(self._overwrite)
        self._hooks.__exit__(*exc)
        self._mode.__exit__(*exc)
        _tensor.set_simulation(None)
        # The module's model as it was (replacing the device only if it changed).
        _C.set_pytorch(self._model[0])
        _C.set_gpu(self._model[1])
        return False

    # ---- statistics (torch.cuda's answers)
    def memory_allocated(self):
        return _C.memory_allocated()

    def max_memory_allocated(self):
        return _C.max_memory_allocated()

    def memory_reserved(self):
        return _C.memory_reserved()

    def memory_stats(self):
        return dict(_C.memory_stats())

    # ---- blocks
    def _allocate(self, nbytes, label):
        if nbytes == 0:  # PyTorch's CUDA allocator hands out no block for an empty storage
            return _Block(-1, 0)
        try:
            block_id, block_bytes = _C._sim_allocate(nbytes, label)
        except _C.OutOfMemoryError as e:
            raise out_of_memory_error()(str(e)) from None
        block = _Block(block_id, block_bytes)
        for o in self.observers:
            o.on_alloc(block, nbytes)
        return block

    def _free(self, block):
        # After the simulation ended, the model's device may be another simulation's (whose
        # ids start at 1 again): a tensor that outlived its simulation frees nothing.
        if block.id >= 0 and self._active:
            _C._sim_free(block.id)
            for o in self.observers:
                o.on_free(block)

    def _release(self, key, block):
        block.refs -= 1
        if block.refs == 0:
            if self._blocks.get(key) is block:
                del self._blocks[key]
            self._free(block)

    def wrap(self, elem, label, requires_grad=False, device=None):
        """A SimTensor over meta tensor `elem`, allocating its storage's block if new. `device`:
        what C++ sees (_device.py); None: what a factory makes (output_device)."""
        key = storage_key(elem)
        block = self._blocks.get(key)
        if block is None:
            block = self._allocate(storage_nbytes(elem), label)
            self._blocks[key] = block
        t = SimTensor(elem, device or self.output_device(()))
        if requires_grad:
            t.requires_grad_(True)
        block.refs += 1
        weakref.finalize(t, self._release, key, block).atexit = False
        return t

    def resize_storage(self, t, nbytes):
        """SimTensor `t`'s storage resized to `nbytes` (SimStorage.resize_): its block freed and,
        for nbytes > 0, a new one allocated; the tensors on the storage keep viewing it."""
        key = storage_key(t._elem)
        block = self._blocks.get(key)
        storage = t._elem.untyped_storage()
        if block is None or storage.nbytes() == nbytes:
            storage.resize_(nbytes)
            return
        self._free(block)
        new = self._allocate(nbytes, f"resize_ {nbytes} bytes") if nbytes else _Block(-1, 0)
        block.id, block.bytes = new.id, new.bytes
        storage.resize_(nbytes)

    def as_device_of(self, t, like):
        """SimTensor `t` seen by C++ on `like`'s device: the same block (a gradient, meta to C++
        while autograd's engine made it, as its CUDA parameter's .grad)."""
        if not self._active:
            return t
        return self.wrap(t._elem, "gradient", device=_device.cpp_device(like))

    def block_id(self, t):
        """The allocation id of SimTensor `t`'s storage (-1: none, e.g. empty, or `t` is not a
        simulated tensor)."""
        elem = getattr(t, "_elem", None)
        block = None if elem is None else self._blocks.get(storage_key(elem))
        return -1 if block is None else block.id

    def output_device(self, inputs):
        """The C++ device of an op's new outputs given its arguments `inputs` (flattened): with
        CUDA's keys, meta for a gradient (an input that is meta to C++, or a factory inside a
        backward) and cuda otherwise (_device.py says why); without them, None (the wrapped
        tensor's own device)."""
        if not self.cuda_keys:
            return None
        if self.factory_device is not None:
            return self.factory_device
        simulated = False
        for x in inputs:
            if isinstance(x, SimTensor):
                if _device.is_meta(x):
                    return _device.META
                simulated = True
        return _device.META if self._in_backward and not simulated else _device.CUDA

    def enter_cpp_factories(self):
        """From now on, factories PyTorch's C++ calls on the CUDA device are simulated
        (_distributed.CppFactories: DDP's buckets)."""
        if self._cpp_factories is None:
            from matmulviz.simulate._distributed import CppFactories
            self._cpp_factories = CppFactories(self)
            self._cpp_factories.__enter__()

    def note_parameter(self, t):
        self.categories.parameter(t)

    # ---- aten ops (SimTensor.__torch_dispatch__)
    def run_op(self, func, args, kwargs):
        name = func.overloadpacket.__name__
        if func.namespace == "c10d":
            from matmulviz.simulate._distributed import collective
            return collective(self, func, args, kwargs)
        if name == "index_put" and self._in_backward > 0 and accumulates(args, kwargs):
            # The backward of t[idx] (index_backward, torch/csrc/autograd/FunctionsManual.cpp)
            # calls the out-of-place index_put on tensor subclasses such as ours, and
            # _index_put_impl_ in place into its zeros on plain CUDA tensors: model the latter,
            # which allocates no copy of the zeros.
            func, name = torch.ops.aten.index_put_.default, "index_put_"
        if self._in_backward:
            self._note_node()
        if name == "add" and self._in_backward and func is torch.ops.aten.add.Tensor:
            summed = self._engine_accumulation(args, kwargs)
            if summed is not None:
                return summed
        if name == "_to_copy" and self.cuda_keys and isinstance(args[0], SimTensor):
            alias = self._device_only_copy(args[0], kwargs)
            if alias is not None:
                return alias
        if name in DATA_DEPENDENT and self.values == "none":
            self._data_dependent(name)
        if name in SCALAR_READS and self.values == "none":
            what = SCALAR_READS[name]
            value = True if what == "equal()" else _value_reads.placeholder(what, args[0], (), {})
            self.value_reads.note(user_frame(), f"aten.{name} ({what})", value)
            return value
        flat, spec = flatten_args(args, kwargs)
        if self.values == "none" and name in ("index", "index_put", "index_put_", "_index_put_impl_"):
            for x in flat[1:]:
                if isinstance(x, torch.Tensor) and x.dtype in (torch.bool, torch.uint8):
                    self._data_dependent(name + " with a boolean mask")
        _C._sim_push_op(name)
        staged = []  # CPU tensors copied to the device for this op
        host_ids = set()  # ids of the arguments that stand for them
        try:
            wrapped = {}
            unwrapped = []
            for x in flat:
                if isinstance(x, SimTensor):
                    wrapped[id(x._elem)] = x
                    unwrapped.append(x._elem)
                elif isinstance(x, torch.Tensor) and x.device.type == "cpu" and x.dim() > 0:
                    # Copied as a new contiguous tensor: its elements, not its whole storage.
                    staged.append(self._allocate(x.numel() * x.element_size(),
                                                 f"{name}: CPU tensor copied to the device"))
                    unwrapped.append(x if self.values == "cpu" else torch.empty_like(x, device=_META))
                    host_ids.add(id(unwrapped[-1]))
                elif isinstance(x, torch.device) and x.type == "cuda":
                    unwrapped.append(self._dev)
                else:
                    unwrapped.append(x)
            uargs, ukwargs = unflatten_args(unwrapped, spec)
            key = self._meta_cache.key(func, uargs, ukwargs) if self.values == "none" else None
            out = self._meta_cache.lookup(key) if key is not None else None
            if out is None:
                try:
                    out = func(*uargs, **ukwargs)
                    if key is not None:
                        self._meta_cache.store(key, out, unwrapped)
                except NotImplementedError as e:
                    if "Meta" not in str(e):
                        raise
                    out = self._without_meta_kernel(func, unwrapped, spec)
            out_flat, out_spec = flatten_result(out)
            host, order = self._output_rules(name)
            new = [i for i, o in enumerate(out_flat)
                   if isinstance(o, torch.Tensor) and id(o) not in wrapped and i not in host
                   and o.device == self._dev]
            steps = temporaries(name, uargs, ukwargs, [out_flat[i] for i in new], host_ids)
            first = steps.index(OUTPUTS) + 1 if OUTPUTS in steps else 0
            blocks = []  # one per step taken: the block it allocated, or None
            try:
                self._take(steps[:first], blocks)  # the buffers an op takes before its outputs
                result = list(out_flat)
                device = self.output_device(flat)
                for i in order or range(len(out_flat)):
                    o = out_flat[i]
                    if isinstance(o, torch.Tensor) and id(o) in wrapped:
                        result[i] = wrapped[id(o)]
                    elif i in host:  # made on the host by the CUDA kernel: no block
                        result[i] = o if o.device.type == "cpu" else torch.empty_like(o, device="cpu")
                    elif i in new:
                        result[i] = self.wrap(o, f"{name} {list(o.shape)}", device=device)
                        if self._in_backward:
                            result[i]._sim_node = self._node_serial
                self._take(steps[first:], blocks)
            finally:
                # The op's own buffers still held are freed last first when it returns, then the
                # CPU tensors it copied to the device, which live as long as the op's outermost
                # locals (index_put_'s linear index outlives its sort buffers).
                staged[:0] = [b for b in reversed(blocks) if b is not None]
            return unflatten_result(result, out_spec)
        finally:
            for block in staged:
                self._free(block)
            _C._sim_pop_op()

    def _output_rules(self, name):
        """(positions of op `name`'s outputs made on the host, the order its kernel allocates
        its outputs in or ()), core's rules (core/memory/op_outputs.h), cached."""
        rules = self._output_rules_of.get(name)
        if rules is None:
            rules = self._output_rules_of[name] = (frozenset(_C.host_output_positions(name)),
                                                  tuple(_C.output_allocation_order(name)))
        return rules

    def _engine_accumulation(self, args, kwargs):
        """Autograd's engine summing two gradients for one input (InputBuffer::accumulate,
        torch/csrc/autograd/input_buffer.cpp: `old_var + var` with grad mode off, while the node
        that produced `var` is still the current one): it adds in place into a buffer it holds
        the last reference to (can_accumulate_inplace), else out of place; a tensor subclass is
        never added into, so for SimTensors PyTorch always takes the out-of-place path. Here the
        GPU's: into old_var (a gradient an earlier node made), else into var, when it is dense
        and not a view (the engine's C++ reference counts are not visible; it holds the only one
        of a gradient it is summing), as `add_`. None where the GPU adds out of place too, or
        where the add is not the engine's (grad mode on, or old_var made by the current node)."""
        if torch.is_grad_enabled() or len(args) != 2 or kwargs.get("alpha", 1) != 1:
            return None
        a, b = args
        if not (isinstance(a, SimTensor) and isinstance(b, SimTensor)) or a.dtype != b.dtype:
            return None
        if getattr(a, "_sim_node", self._node_serial) >= self._node_serial:
            return None
        for into, other in ((a, b), (b, a)):
            if into.shape == torch.broadcast_shapes(a.shape, b.shape) and _accumulable(into):
                return torch.ops.aten.add_.Tensor(into, other)
        return None

    def _note_node(self):
        """Counts the autograd nodes a backward runs (torch._C._current_autograd_node), so that
        a gradient can say which node made it (SimTensor._sim_node)."""
        node = self._current_node() if self._current_node is not None else None
        if node is not self._last_node:
            # Held for the rest of the backward, so that a later node cannot reuse its identity.
            self._last_node = node
            self._node_serial += 1

    def _device_only_copy(self, x, kwargs):
        """_to_copy of SimTensor `x` that changes only what C++ sees (cuda and meta): `x` itself,
        as on the GPU, where the devices are equal (autograd's engine asks for it when a 0-dim
        gradient, meta to C++, feeds a node whose input was cuda); None for any other copy."""
        device = kwargs.get("device")
        if device is None or device.type not in ("cuda", "meta"):
            return None
        if kwargs.get("dtype") not in (None, x.dtype) or kwargs.get("layout") not in (None, torch.strided):
            return None
        if kwargs.get("memory_format") not in (None, torch.preserve_format):
            return None
        return x

    def _take(self, steps, blocks):
        """Takes `steps` (_temporaries.temporaries) on the model, appending to `blocks` the block
        each allocates (None for the others); a free step names its block by its index there."""
        for step in steps:
            label, nbytes, free = step
            if step in (CUBLAS_HANDLE, CUBLASLT_HANDLE):
                self._use_cublas_handle(step == CUBLASLT_HANDLE)
                blocks.append(None)
            elif step == OUTPUTS:
                blocks.append(None)
            elif free >= 0:
                self._free(blocks[free])
                blocks[free] = None
                blocks.append(None)
            else:
                blocks.append(self._allocate(nbytes, label))

    def _use_cublas_handle(self, lt=False):
        """The current thread's cuBLAS handle (`lt`: cuBLASLt; the engine's rule): its workspace
        on first use, and for cuBLASLt the cuBLAS handle's first."""
        news = []
        try:
            if lt:
                news.append(_C._sim_use_cublas_handle(self._in_backward > 0, False))
            news.append(_C._sim_use_cublas_handle(self._in_backward > 0, lt))
        except _C.OutOfMemoryError as e:
            raise out_of_memory_error()(str(e)) from None
        for new in news:
            if new is not None:
                block = _Block(*new)
                block.refs = 1  # PyTorch keeps it for the life of the process
                for o in self.observers:
                    o.on_alloc(block, block.bytes)

    @staticmethod
    def _without_meta_kernel(func, unwrapped, spec):
        """Runs an op that has no meta kernel in the installed PyTorch (1.13: topk among others)
        on uninitialised CPU tensors of the same sizes and strides, and returns its outputs as
        meta tensors: only their sizes, strides and dtypes are used. The caller has excluded
        the ops whose output sizes depend on the values."""
        if func.__name__.split(".")[0] in _UPDATES_IN_PLACE:
            # CUDA-only in 1.13 (no meta or CPU kernel): they change their inputs' values in
            # place and make no tensor; the result is their schema's (None, or `self`).
            uargs, _ = unflatten_args(list(unwrapped), spec)
            return _UPDATES_IN_PLACE[func.__name__.split(".")[0]](uargs)
        meta_of = {}  # id of a CPU stand-in -> the meta tensor (an in-place op returns it)

        def to_cpu(x):
            if isinstance(x, torch.Tensor) and x.device.type == "meta":
                cpu = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype)
                meta_of[id(cpu)] = x
                return cpu
            if isinstance(x, torch.device) and x.type == "meta":
                return torch.device("cpu")
            return x
        cpu_args = [to_cpu(x) for x in unwrapped]
        uargs, ukwargs = unflatten_args(cpu_args, spec)
        out = func(*uargs, **ukwargs)
        flat, out_spec = flatten_result(out)

        def to_meta(o):
            if not isinstance(o, torch.Tensor):
                return o
            if id(o) in meta_of:
                return meta_of[id(o)]
            return torch.empty_strided(o.size(), o.stride(), dtype=o.dtype, device=_META)
        return unflatten_result([to_meta(o) for o in flat], out_spec)

    def _data_dependent(self, what):
        raise DataDependentError(
            f"matmulviz.simulate: {what} needs the values of a CUDA tensor, and simulated CUDA "
            f"tensors have none (at {user_frame()}). Run with --values cpu (values=\"cpu\": "
            "computed on the CPU too, slower), or keep such tensors on the CPU.")

    # ---- torch functions (the TorchFunctionMode)
    def function(self, func, args, kwargs):
        if self.host is not None:
            out = self.host.factory(func, args, kwargs)
            if out is not None:
                return self.host.note(out)
            return self.host.note(self._function(func, args, kwargs))
        return self._function(func, args, kwargs)

    def _function(self, func, args, kwargs):
        self_arg = args[0] if args else None
        if func is torch.Tensor.cuda:
            if isinstance(self_arg, SimTensor):
                return self_arg
            return self._to_device(self_arg, None)
        if func is torch.Tensor.to:
            return self._to(args, kwargs)
        if (self.cuda_keys and getattr(func, "__self__", None) is _GRAD and len(args) == 2
                and func.__name__ == "__set__"):
            args = (args[0], self._gradient_as_device_of(args[1], args[0]))
        if func in _DROPOUT and isinstance(self_arg, SimTensor) and not self.cuda_keys:
            return self._dropout(*args, **kwargs)
        if self.host is not None and func in _value_reads.READS and _host.is_host(self_arg):
            if _value_reads.READS[func] == "cpu()":
                return self_arg  # already on the host
            return self._placeholder(_value_reads.READS[func], self_arg, args, kwargs)
        if isinstance(self_arg, SimTensor) and func in _value_reads.READS:
            if self.values == "none":
                return self._placeholder(_value_reads.READS[func], self_arg, args, kwargs)
            # The values, as a CPU tensor of their own (not linked to autograd's graph).
            return func(self_arg._elem.detach().clone(), *args[1:], **kwargs)
        if ("device" in kwargs and _is_cuda(kwargs["device"]) and func in _LIKE
                and hasattr(self_arg, "__tensor_flatten__") and not isinstance(self_arg, SimTensor)):
            # A tensor subclass over inner tensors (FSDP2's DTensor parameters, Module.to_empty
            # after a meta-device init): the subclass over the inner tensors made on the device.
            names, context = self_arg.__tensor_flatten__()
            inner = {n: self._function(func, (getattr(self_arg, n),) + tuple(args[1:]), kwargs)
                     for n in names}
            return type(self_arg).__tensor_unflatten__(inner, context, self_arg.size(),
                                                       self_arg.stride())
        if "device" in kwargs and _is_cuda(kwargs["device"]):
            kwargs = dict(kwargs, device=self._dev)
            out = func(*args, **kwargs)
            out = self._wrap_factory(out, func.__name__)
        else:
            out = func(*args, **kwargs)
        if self._pending_saved:
            self._name_saved(out)
        return out

    def _gradient_as_device_of(self, grad, t):
        """`grad`, assigned to `t.grad`, seen by C++ on `t`'s device: a gradient made in a
        backward is meta to C++ (_device.py), which the assignment refuses for a CUDA tensor
        (FSDP2 assigns its reduce-scattered gradient shards in a backward hook). A tensor
        subclass over SimTensors (DTensor) is rebuilt over its inner tensors so seen."""
        if not isinstance(grad, torch.Tensor) or not isinstance(t, torch.Tensor):
            return grad
        if not _device.is_meta(grad) or _device.is_meta(t):
            return grad
        if isinstance(grad, SimTensor):
            return self.as_device_of(grad, t)
        flatten = getattr(grad, "__tensor_flatten__", None)
        if flatten is None:
            return grad
        names, context = flatten()
        inner = {n: self._gradient_as_device_of(getattr(grad, n), getattr(t, n, t)) for n in names}
        return type(grad).__tensor_unflatten__(inner, context, grad.size(), grad.stride())

    def _placeholder(self, what, t, args, kwargs):
        """A read of simulated tensor `t`'s values (_value_reads.py): its placeholder, noted.
        On a GPU the copy to the host waits for the current stream."""
        _C._sim_synchronize(torch.cuda.current_stream().stream_id)
        value = _value_reads.placeholder(what, t, args, kwargs)
        if what != "format()" or t.dim() == 0:
            self.value_reads.note(user_frame(), _value_reads.label(what), value)
        return value

    def _dropout(self, input, p=0.5, training=True, inplace=False):
        """Dropout as on a CUDA tensor: PyTorch's C++ picks the fused native_dropout (a bool
        mask saved for backward) only for CUDA inputs (aten/src/ATen/native/Dropout.cpp,
        is_fused_kernel_acceptable); where a SimTensor is meta to C++ (no CUDA keys) it is
        called here."""
        if not training or p == 0 or inplace or not 0 < p < 1:
            with torch._C.DisableTorchFunction():
                return torch.nn.functional.dropout(input, p, training, inplace)
        out = torch.native_dropout(input, p, True)[0]
        if self._pending_saved:
            self._name_saved(out)
        return out

    def _wrap_factory(self, out, name):
        if (isinstance(out, torch.Tensor) and not isinstance(out, SimTensor)
                and out.device == self._dev):
            return self.wrap(out.detach(), f"{name} {list(out.shape)}", out.requires_grad)
        return out

    def _to_device(self, t, dtype):
        """A CPU tensor copied to the device (Tensor.cuda(), .to("cuda")): a new block."""
        _C._sim_push_op("to")
        try:
            if self.values == "cpu":
                meta = t.detach().to(dtype=dtype or t.dtype, copy=True)
            else:
                meta = torch.empty_like(t, device=_META, dtype=dtype or t.dtype)
            # A CPU tensor that requires grad gives a leaf here (PyTorch: a ToCopyBackward0
            # node back to the CPU tensor, whose .grad the simulation does not fill).
            copy = self.wrap(meta, f"to(cuda) {list(t.shape)}", t.requires_grad)
            self.categories.copied_to_device(t, copy)
            return copy
        finally:
            _C._sim_pop_op()

    def _to(self, args, kwargs):
        t = args[0]
        copy = kwargs.get("copy", False)  # Tensor.to's own argument, which _parse_to refuses
        device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(
            *args[1:], **{k: v for k, v in kwargs.items() if k != "copy"})
        simulated = device is not None and device.type in ("cuda", "meta")
        if len(args) > 1 and isinstance(args[1], SimTensor):
            simulated = True  # .to(other): other's C++ device is the wrapped one's
        if isinstance(t, SimTensor):
            if device is not None and not simulated:
                if self.values == "none":
                    value = self._placeholder("to(cpu)", t, args, kwargs)
                    return value.to(device=device, dtype=dtype)
                return t._elem.detach().to(device=device, dtype=dtype, copy=True)
            fwd = {"dtype": dtype, "non_blocking": non_blocking, "copy": copy}
            if memory_format is not None:
                fwd["memory_format"] = memory_format
            return torch.Tensor.to(t, **fwd)  # to the device it is on: no device argument
        if simulated and isinstance(t, torch.Tensor):
            return self._to_device(t, dtype)
        return torch.Tensor.to(*args, **kwargs)

    def note_sdpa_choice(self, kernel, skipped):
        """Notes that scaled_dot_product_attention at the user's current line runs `kernel`
        (core's rule), and why the backends before it were not taken."""
        self.sdpa_choices.setdefault((user_frame(), kernel), list(skipped))

    # ---- autograd's saved tensors
    def _pack(self, t):
        if not isinstance(t, SimTensor):
            return t
        saved = _Saved(t.detach(), self.block_id(t))
        self._pending_saved.append(saved)
        return saved

    @staticmethod
    def _unpack(saved):
        return saved.tensor if isinstance(saved, _Saved) else saved

    def _name_saved(self, out):
        node = None
        for o in tree_flatten(out)[0]:
            if isinstance(o, torch.Tensor) and o.grad_fn is not None:
                node = type(o.grad_fn).__name__
                break
        why = f"saved for backward by {node}" if node else "saved for backward"
        for saved in self._pending_saved:
            saved.why = why
            if saved.block >= 0:
                _C._sim_holder(saved.block, why, +1)
        self._pending_saved.clear()

    # ---- backward: what it allocates is "gradients"
    def _run_backward(self, *args, **kwargs):
        """autograd's engine (torch.autograd.graph._engine_run_backward) with the
        TorchFunctionMode on again when `loss.backward()` came through it (a mode is off while it
        handles a call): the Python hooks the engine runs (FSDP2's pre-backward all-gathers, a
        checkpoint's recomputation) make their "cuda" tensors as the forward's do."""
        stack = torch.overrides._get_current_function_mode_stack()
        if self._mode in stack:
            return self._engine_run_backward(*args, **kwargs)
        with self._mode:
            return self._engine_run_backward(*args, **kwargs)

    def in_backward(self, fn, *args, **kwargs):
        """Runs autograd's `fn` (backward or grad): what it allocates is "gradients", and its
        ops run on the autograd engine's thread (its own cuBLAS workspace), as PyTorch runs a
        CUDA graph's backward; here they run on the calling thread. With CUDA's keys the root
        gradients are meta tensors to C++ (_device.py)."""
        if not self._in_backward:
            self.categories.before_backward()
        previous = _C._sim_set_default_category("autograd detail")
        self._in_backward += 1
        try:
            if not self.cuda_keys:
                return fn(*args, **kwargs)
            args, kwargs = self._meta_root_gradients(fn, args, kwargs)
            with torch.autograd.set_multithreading_enabled(False):
                return fn(*args, **kwargs)
        finally:
            self._in_backward -= 1
            if not self._in_backward:
                self._last_node = None  # the graph's nodes die with the graph, not with us
                self.categories.after_backward()
            _C._sim_set_default_category(previous)

    def _meta_gradients(self, grads):
        """A custom autograd.Function's backward results, each a meta tensor to C++ (the same
        block): what it returns may be a parameter's .grad or computed from saved CUDA tensors
        only (torch.utils.checkpoint's reentrant backward returns its inputs' .grad)."""
        def meta(g):
            if isinstance(g, SimTensor) and not _device.is_meta(g):
                return self.wrap(g._elem, "gradient", device=_device.META)
            return g
        return tuple(meta(g) for g in grads) if isinstance(grads, tuple) else meta(grads)

    def _meta_root_gradients(self, fn, args, kwargs):
        """`fn`'s arguments with each root gradient a meta tensor to C++: the ones
        torch.autograd's _make_grads would make for a 1-element output (ones_like, made here the
        same way), and the program's own grad_tensors / grad_outputs (the same block)."""
        position, key = (1, "grad_tensors") if fn is self._backward else (2, "grad_outputs")
        args = list(args)
        outputs = args[0] if args else kwargs.get("tensors" if fn is self._backward else "outputs")
        if position < len(args):
            grads = args[position]
        else:
            grads = kwargs.get(key, kwargs.get("grad_variables"))
        single = isinstance(outputs, torch.Tensor)
        outputs = [outputs] if single else list(outputs or ())
        if grads is None:
            grads = [None] * len(outputs)
        elif isinstance(grads, torch.Tensor):
            grads = [grads]
        else:
            grads = list(grads)
        if len(grads) != len(outputs):
            return args, kwargs  # PyTorch says what is wrong
        roots = []
        for out, grad in zip(outputs, grads):
            if (grad is None and isinstance(out, SimTensor) and out.requires_grad
                    and out.numel() == 1):
                grad = torch.ones_like(out, memory_format=torch.preserve_format)
            if isinstance(grad, SimTensor) and not _device.is_meta(grad):
                grad = self.wrap(grad._elem, "gradient", device=_device.META)
            roots.append(grad)
        if position < len(args):
            args[position] = roots
        else:
            kwargs = {k: v for k, v in kwargs.items() if k != "grad_variables"}
            kwargs[key] = roots
        return tuple(args), kwargs
