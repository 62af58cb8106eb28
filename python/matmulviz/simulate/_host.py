"""--host meta: host tensors simulated too. A model built on the CPU before .cuda() (a 7B
model's 28 GB of float32 weights) would need that much RAM under the simulation; with
host="meta" the tensors a script makes on the CPU have no values either: the factories
(torch.empty, zeros, ones, full, rand, randn, randint, arange, ..., and their _like forms) make
meta tensors where they would make CPU ones, every op on them gives meta tensors, and
.cuda() / .to("cuda") copy them to simulated CUDA tensors as any CPU tensor. Their bytes are
counted as host memory, a storage's from its first tensor until the last Python tensor over it
is gone (tensors only C++ holds, such as what autograd saved of them, are not seen), and the peak
is printed at the end of the run and written to the report ("host_tensors").

Tensors made from data (torch.tensor, as_tensor, from_numpy) stay real CPU tensors: their values
are the script's. Reads of a host tensor's values (.item(), .tolist(), .numpy()) return
placeholders and are listed, as the device's are."""

import weakref

import torch

from matmulviz.simulate._version import storage_key, storage_nbytes

META = torch.device("meta")

# The factories whose device argument chooses where their tensor lives (torch/_C/_VariableFunctions).
FACTORIES = frozenset(getattr(torch, name) for name in (
    "empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange", "range",
    "linspace", "logspace", "eye", "empty_strided", "tril_indices", "triu_indices",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like") if hasattr(torch, name))


def is_host(t):
    """Whether `t` is one of the script's host tensors under host="meta" (a plain meta tensor:
    the simulation's own CUDA tensors are SimTensors)."""
    return isinstance(t, torch.Tensor) and type(t) in (torch.Tensor, torch.nn.Parameter) and \
        t.device.type == "meta"


def _on_host(device):
    return device is None or torch.device(device).type == "cpu"


class HostTensors:
    """The host tensors of a run with host="meta": made on the meta device, counted by storage."""

    def __init__(self):
        self.current = self.peak = 0
        self.storages = 0  # how many were ever counted
        self._live = {}  # storage key -> [bytes, tensors over it]

    def factory(self, func, args, kwargs):
        """Runs factory `func` on the meta device where it would make a CPU tensor; None when it
        makes a tensor elsewhere (cuda, meta asked for) or `func` is no factory."""
        if func not in FACTORIES:
            return None
        device = kwargs.get("device")
        if device is None and func.__name__.endswith("_like"):
            # where its argument is: a CPU tensor's copy goes to meta, a meta one's is meta
            if not (args and isinstance(args[0], torch.Tensor) and args[0].device.type == "cpu"):
                return None
        elif device is None:
            default = getattr(torch, "get_default_device", lambda: torch.device("cpu"))()
            if default.type != "cpu":  # torch.set_default_device("cuda"): not the host's
                return None
        elif not _on_host(device):
            return None
        kwargs = dict(kwargs, device=META)
        kwargs.pop("pin_memory", None)
        return func(*args, **kwargs)

    def note(self, out):
        """Counts the meta tensors in `out` (a function's result) as host tensors."""
        if isinstance(out, torch.Tensor):
            if is_host(out):
                self._add(out)
        elif isinstance(out, (tuple, list)):
            for o in out:
                self.note(o)
        return out

    def _add(self, t):
        key = storage_key(t)
        entry = self._live.get(key)
        if entry is None:
            entry = self._live[key] = [storage_nbytes(t), 0]
            self.storages += 1
            self.current += entry[0]
            self.peak = max(self.peak, self.current)
        entry[1] += 1
        weakref.finalize(t, self._release, key)

    def _release(self, key):
        entry = self._live.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del self._live[key]
            self.current -= entry[0]

    def report(self):
        """The report's "host_tensors": bytes now and at the peak, storages ever counted."""
        return {"current_bytes": self.current, "peak_bytes": self.peak, "storages": self.storages}

    def summary(self):
        if not self.storages:
            return []
        return [f"matmulviz.simulate: host tensors (--host meta, without values): peak "
                f"{self.peak / 2**20:.2f} MiB, {self.current / 2**20:.2f} MiB at the end, "
                f"{self.storages} storages"]
