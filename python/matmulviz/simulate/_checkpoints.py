"""torch.save and torch.load of simulated CUDA tensors (state dicts, optimizer states,
checkpoints) during a simulation.

Saving (SimTensor.__reduce_ex__ calls reduce()): with values="cpu" a simulated tensor is written
with its values as a CUDA tensor is, its storage tagged "cuda:0" (torch/serialization.py,
location_tag), so the file is the checkpoint a GPU run would write and loads on a GPU machine.
With values="none" there are no values to write: it is written as a meta tensor of its sizes,
strides and dtype (PyTorch's own reduction of a meta tensor, torch/_tensor.py), a checkpoint a
later simulated run loads, and a plain torch.load outside a simulation reads as meta tensors.

Loading (torch.load during a simulation): a storage whose location is a CUDA device (the file's
own tag, or map_location="cuda") stays on the CPU while PyTorch unpickles, then every tensor on
it becomes a simulated CUDA tensor: one new block per storage, labelled "torch.load", in the
order the file's tensors come, as a GPU's torch.load allocates them; with values="cpu" it keeps
the file's values. A meta tensor in the file (a values="none" checkpoint) becomes a simulated
CUDA tensor of its own block, unless map_location puts it on the CPU. Tensors mapped to the CPU
stay CPU tensors. Containers are walked as state dicts are built: dicts (changed in place, so
an OrderedDict keeps its `_metadata`), lists, tuples and named tuples; other objects in a file
(a whole pickled nn.Module) are left as PyTorch loads them."""

import torch

from matmulviz.simulate import _tensor
from matmulviz.simulate._version import storage_of

_PRIORITY = 1  # before PyTorch's own taggers (cpu 10, cuda 20, meta 22 ...)
_saving = set()  # data pointers of CPU storages written for simulated tensors (values="cpu")
_loaded = set()  # data pointers of storages torch.load found on a CUDA location


def reduce(t, proto):
    """SimTensor.__reduce_ex__: the reduction of what it wraps (a CPU tensor with its values,
    its storage marked to be tagged "cuda:0"; or a meta tensor)."""
    elem = t._elem.detach()
    if elem.device.type == "cpu":
        _saving.add(storage_of(elem).data_ptr())
    if t.requires_grad and elem.device.type == "meta":
        elem.requires_grad_(True)
    return elem.__reduce_ex__(proto)


def _tag(storage):
    if _tensor._simulation is not None and storage.device.type == "cpu" and (
            storage.data_ptr() in _saving):
        return "cuda:0"
    return None


def _deserialize(storage, location):
    if _tensor._simulation is not None and str(location).startswith("cuda"):
        _loaded.add(storage.data_ptr())
        return storage  # on the CPU until load() makes its tensors simulated ones
    return None


_registered = False


def _register():
    global _registered
    if not _registered:
        torch.serialization.register_package(_PRIORITY, _tag, _deserialize)
        _registered = True


def _to_host(map_location):
    """Whether `map_location` sends every storage to the CPU or the meta device (then a file's
    meta tensors stay meta)."""
    return isinstance(map_location, (str, torch.device)) and (
        torch.device(map_location).type in ("cpu", "meta"))


class _Loader:
    def __init__(self, sim, map_location):
        self.sim = sim
        self.keep_meta = _to_host(map_location)
        self.bases = {}  # CPU storage pointer -> meta base tensor (values="none")

    def tensor(self, t):
        if isinstance(t, _tensor.SimTensor):
            return t
        param = isinstance(t, torch.nn.Parameter)
        if t.device.type == "meta" and not self.keep_meta:
            elem = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=self.sim._dev)
        elif t.device.type == "cpu" and storage_of(t).data_ptr() in _loaded:
            elem = self._elem(t.detach())
        else:
            return t
        with torch.no_grad():
            out = self.sim.wrap(elem, f"torch.load {list(t.shape)}")
        if param:
            return torch.nn.Parameter(out, requires_grad=t.requires_grad)
        return out.requires_grad_(t.requires_grad) if t.requires_grad else out

    def _elem(self, t):
        """What the simulated tensor over loaded CPU tensor `t` wraps: `t` itself with
        values="cpu"; a meta view of one meta storage per CPU storage otherwise."""
        if self.sim.values == "cpu":
            return t
        storage = storage_of(t)
        base = self.bases.get(storage.data_ptr())
        if base is None:
            base = torch.empty(storage.nbytes(), dtype=torch.uint8, device="meta")
            self.bases[storage.data_ptr()] = base
        try:
            return torch.empty(0, dtype=t.dtype, device="meta").set_(
                base.untyped_storage(), t.storage_offset(), t.size(), t.stride())
        except (AttributeError, RuntimeError, TypeError):  # 1.13: no untyped storages to set
            return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")

    def walk(self, obj):
        if isinstance(obj, torch.Tensor):
            return self.tensor(obj)
        if isinstance(obj, dict):
            for k in list(obj):
                obj[k] = self.walk(obj[k])
            return obj
        if isinstance(obj, list):
            obj[:] = [self.walk(v) for v in obj]
            return obj
        if isinstance(obj, tuple):
            items = [self.walk(v) for v in obj]
            return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
        return obj


def install(sim):
    """Patches torch.save and torch.load; returns what uninstall() restores."""
    _register()
    save, load = torch.save, torch.load

    def saving(*args, **kwargs):
        _saving.clear()
        try:
            return save(*args, **kwargs)
        finally:
            _saving.clear()

    def loading(f, map_location=None, *args, **kwargs):
        _loaded.clear()
        try:
            out = load(f, map_location, *args, **kwargs)
            return _Loader(sim, map_location).walk(out)
        finally:
            _loaded.clear()

    saved = []
    for module in (torch, torch.serialization):
        for name, fn in (("save", saving), ("load", loading)):
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, fn)
    return saved


def uninstall(saved):
    for module, name, fn in reversed(saved):
        setattr(module, name, fn)

