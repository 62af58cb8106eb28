"""torch.distributed in a simulation: the program runs as one rank of the job torchrun would start,
on PyTorch's own torch.distributed with its fake process group.

torchrun's options (--nnodes, --nproc-per-node, --node-rank) and the rank simulated give the
environment torchrun gives each worker (torch/distributed/elastic/agent/server/
local_elastic_agent.py, LocalElasticAgent._start_workers: RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT and the rest below).

init_process_group(backend, ...) and the groups DeviceMesh and new_group make get PyTorch's
fake backend (torch/testing/_internal/distributed/fake_pg.py: FakeProcessGroup over a
FakeStore; no store is served and no port opened): every collective completes at once and
leaves its outputs' values as they were. Their memory is what PyTorch allocates around them
(the outputs the program or its library allocate, the functional collectives' outputs), through
the simulated caching allocator; what NCCL itself allocates outside it (its channels' buffers,
about a few hundred MiB a GPU, set by NCCL_BUFFSIZE and the topology) is not modelled.

DistributedDataParallel's Reducer allocates its gradient buckets in C++ with at::empty on the
parameters' device (torch/csrc/distributed/c10d/reducer.cpp, Reducer::initialize_buckets), which
no tensor argument routes to the simulation: from the first DDP on, a TorchDispatchMode sends
such factory calls there (CppFactories)."""

import collections
import importlib
import os
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from matmulviz.simulate import _device
from matmulviz.simulate._tensor import SimTensor, run_op

MASTER_ADDR = "127.0.0.1"
MASTER_PORT = 29500  # torchrun's default (torch/distributed/run.py, --master-port)


class World:
    """The job: `nnodes` nodes of `nproc_per_node` processes, this process rank `rank` (global),
    on node `rank // nproc_per_node` (torchrun's static rendezvous numbers nodes in order)."""

    def __init__(self, nnodes=1, nproc_per_node=1, rank=0):
        if nnodes < 1 or nproc_per_node < 1:
            raise ValueError("--nnodes and --nproc-per-node need whole numbers from 1")
        self.nnodes, self.nproc_per_node = nnodes, nproc_per_node
        if not 0 <= rank < self.world_size:
            raise ValueError(f"--rank {rank}: the job has ranks 0 to {self.world_size - 1} "
                             f"({nnodes} node(s) of {nproc_per_node} processes)")
        self.rank = rank

    @property
    def world_size(self):
        return self.nnodes * self.nproc_per_node

    @property
    def local_rank(self):
        return self.rank % self.nproc_per_node

    @property
    def node_rank(self):
        return self.rank // self.nproc_per_node

    def environment(self):
        """The variables torchrun sets for this worker (strings)."""
        env = {"RANK": self.rank, "LOCAL_RANK": self.local_rank, "WORLD_SIZE": self.world_size,
               "LOCAL_WORLD_SIZE": self.nproc_per_node, "GROUP_RANK": self.node_rank,
               "GROUP_WORLD_SIZE": self.nnodes, "ROLE_RANK": self.rank,
               "ROLE_WORLD_SIZE": self.world_size, "ROLE_NAME": "default",
               "MASTER_ADDR": MASTER_ADDR, "MASTER_PORT": MASTER_PORT,
               "TORCHELASTIC_RESTART_COUNT": 0, "TORCHELASTIC_MAX_RESTARTS": 0,
               "TORCHELASTIC_RUN_ID": "matmulviz", "TORCHELASTIC_USE_AGENT_STORE": "False",
               "TORCH_NCCL_ASYNC_ERROR_HANDLING": 1}
        return {k: str(v) for k, v in env.items()}

    def describe(self):
        return (f"rank {self.rank} of {self.world_size} ({self.nnodes} node(s) x "
                f"{self.nproc_per_node}; local rank {self.local_rank})")

    def report(self):
        return {"rank": self.rank, "world_size": self.world_size, "local_rank": self.local_rank,
                "nnodes": self.nnodes, "nproc_per_node": self.nproc_per_node,
                "backend": "fake (torch.distributed's FakeProcessGroup)",
                "not_modelled": "NCCL's own buffers, allocated outside the caching allocator"}


def available():
    """Whether this PyTorch has the fake process group (2.x)."""
    try:
        import torch.distributed as dist
        return dist.is_available() and hasattr(dist.Backend, "FAKE")
    except ImportError:
        return False


class CppFactories(TorchDispatchMode):
    """Sends factory calls on the CUDA device made by PyTorch's C++ without a tensor argument
    (DDP's buckets) to the simulation; everything else goes on as without the mode."""

    def __init__(self, sim):
        super().__init__()
        self.sim = sim

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if SimTensor not in types:
            flat = tree_flatten((args, kwargs))[0]
            if any(isinstance(x, torch.device) and x.type == "cuda" for x in flat):
                # Meta to C++, as the gradients the buckets hold are (_device.py).
                self.sim.factory_device = _device.META
                try:
                    return run_op(func, args, kwargs)
                finally:
                    self.sim.factory_device = None
        return func(*args, **kwargs)


def _fake_backend(backend):
    """What a group of the simulated job gets instead of `backend` ("nccl", "cuda:nccl,cpu:gloo",
    None): PyTorch's fake backend (registered when fake_pg is imported)."""
    importlib.import_module("torch.testing._internal.distributed.fake_pg")  # registers "fake"
    return "fake"


def install(sim, world):
    """Patches torch.distributed for the run (see the module's docstring); returns what
    uninstall() needs."""
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d
    from torch.testing._internal.distributed.fake_pg import FakeStore
    saved = []
    original_init = c10d.init_process_group
    original_new_group = c10d.new_group

    def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                           store=None, group_name="", pg_options=None, device_id=None, **kwargs):
        sim.distributed_requested = backend
        kw = {"timeout": timeout} if timeout is not None else {}
        return original_init(_fake_backend(backend), store=FakeStore(),
                             world_size=world.world_size if world_size == -1 else world_size,
                             rank=world.rank if rank == -1 else rank, group_name=group_name, **kw)

    def new_group(ranks=None, timeout=None, backend=None, pg_options=None, *args, **kwargs):
        return original_new_group(ranks, timeout, _fake_backend(backend) if backend else None,
                                  None, *args, **kwargs)

    modules = [dist, c10d]
    try:
        import torch.distributed.device_mesh as device_mesh
        modules.append(device_mesh)
    except ImportError:
        pass
    for module in modules:
        for name, fn in (("init_process_group", init_process_group), ("new_group", new_group)):
            if name in module.__dict__:
                saved.append((module, name, module.__dict__[name]))
                setattr(module, name, fn)
    if hasattr(dist, "_verify_params_across_processes"):
        saved.append((dist, "_verify_params_across_processes",
                      dist._verify_params_across_processes))
        dist._verify_params_across_processes = verify_params_across_processes
    # DDP's Reducer: from the first DDP on, C++ factories on the device are simulated.
    from torch.nn.parallel import DistributedDataParallel as DDP
    ddp_init = DDP.__init__

    def init_ddp(self, *args, **kwargs):
        sim.enter_cpp_factories()
        ddp_init(self, *args, **kwargs)

    saved.append((DDP, "__init__", ddp_init))
    DDP.__init__ = init_ddp
    pre_forward = DDP._pre_forward

    def pre_forward_without_timer(self, *args, **kwargs):
        reducer = self.reducer
        self.reducer = _WithoutTimer(reducer)
        try:
            return pre_forward(self, *args, **kwargs)
        finally:
            self.reducer = reducer

    saved.append((DDP, "_pre_forward", pre_forward))
    DDP._pre_forward = pre_forward_without_timer
    return saved


class CompletedWork(torch.distributed.Work if torch.distributed.is_available() else object):
    """The Work of a simulated collective: done at once, its future's value the collective's
    outputs, as NCCL's (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, WorkNCCL::getFuture,
    whose value DDP's communication hooks read; the fake group's future holds None)."""

    def __init__(self, outputs):
        super().__init__()
        # Weak references: the Work outlives the call in _WORKS, the tensors must not (they are
        # the caller's, alive while it waits).
        self._outputs = [weakref.ref(t) for t in outputs]

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def get_future(self):
        future = torch.futures.Future()
        future.set_result([t for t in (r() for r in self._outputs) if t is not None])
        return future


# The Python objects of the Works handed to C++: a boxed Work keeps only the C++ half alive, and
# without its Python object its wait() would be Work's own, which waits forever.
_WORKS = collections.deque(maxlen=65536)


def _boxed(work):
    _WORKS.append(work)
    return work.boxed()


def collective(sim, func, args, kwargs):
    """A torch.distributed collective (a c10d op; its tensors SimTensors) in the simulation: run
    by the fake group on the meta tensors, which completes it at once. Its outputs are the
    program's own tensors (allocated before the call, as NCCL needs); its Work is a
    CompletedWork whose future holds them."""
    flat, spec = tree_flatten((args, kwargs))
    wrapped = {id(x._elem): x for x in flat if isinstance(x, SimTensor)}
    from torch.utils._pytree import tree_map, tree_unflatten
    uargs, ukwargs = tree_unflatten([x._elem if isinstance(x, SimTensor) else x for x in flat],
                                    spec)
    out = func(*uargs, **ukwargs)

    def back(o):
        if isinstance(o, torch.Tensor):
            if id(o) in wrapped:
                return wrapped[id(o)]
            return sim.wrap(o, f"{func.overloadpacket.__name__} {list(o.shape)}")
        return o

    out = tree_map(back, out)
    parts = out if isinstance(out, tuple) else (out,)
    tensors = [p for p in parts if not isinstance(p, torch.ScriptObject)]
    value = tree_flatten(tensors)[0]
    parts = tuple(_boxed(CompletedWork(value)) if isinstance(p, torch.ScriptObject) else p
                  for p in parts)
    return parts if isinstance(out, tuple) else parts[0]


class _WithoutTimer:
    """DDP's Reducer as DDP._pre_forward sees it in a simulation: prepare_for_forward, which
    only counts the iteration and, for the first ten and every sampled one, records a CUDA
    event for DDP's runtime statistics (reducer.cpp, Reducer::prepare_for_forward and
    should_collect_runtime_stats: CudaTimer needs the driver), does nothing. With the count left
    at 0 no timer event is recorded in backward either; the statistics are not simulated."""

    def __init__(self, reducer):
        self._reducer = reducer

    def prepare_for_forward(self):
        pass

    def __getattr__(self, name):
        return getattr(self._reducer, name)


def verify_params_across_processes(process_group, params, logger=None):
    """DDP's check that every rank has the model of rank 0 (torch/csrc/distributed/c10d/
    reducer.cpp, verify_params_across_processes), with its allocations: the parameter count on
    the device, one copy of it per rank for the all-gather, and the sizes and strides copied to
    the device for the broadcast. Its comparisons read the collectives' values, which the fake
    group does not move; every simulated rank runs the same program, so they hold and are not
    made."""
    if not params:
        return
    device = params[0].device
    count = torch.tensor([len(params)], dtype=torch.long, device=device)
    gathered = [torch.empty_like(count) for _ in range(process_group.size())]
    metadata = torch.empty(sum(2 * t.dim() for t in params), dtype=torch.long).clone().to(device)
    del count, gathered, metadata


def uninstall(saved):
    import torch.distributed as dist
    for module, name, value in reversed(saved):
        setattr(module, name, value)
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def set_environment(world):
    """Sets torchrun's variables for `world` in os.environ; returns the old values to restore."""
    old = {k: os.environ.get(k) for k in world.environment()}
    os.environ.update(world.environment())
    return old


def restore_environment(old):
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
