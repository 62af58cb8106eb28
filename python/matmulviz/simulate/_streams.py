"""CUDA streams and events during a simulation: torch.cuda.Stream, Event, current_stream,
default_stream, set_stream, stream(s) (PyTorch's StreamContext over these), Stream.wait_stream,
wait_event, record_event, Event.record / wait / query / synchronize / elapsed_time, and
Tensor.record_stream, so scripts that overlap copies with compute run. PyTorch's own classes ask
the driver for a stream when made (torch/cuda/streams.py), which a machine without a GPU refuses.

The simulation has no timeline: every stream's work is done when asked (query() is True,
synchronize() returns), and Event.elapsed_time() returns 0.0, listed with the run's value reads.
Allocations on a side stream come from the same pool as the default stream's here; PyTorch's
caching allocator keeps a pool per stream and defers reusing a block that record_stream marked
until that stream's work is done (c10/cuda/CUDACachingAllocator.cpp), which the model does not
follow yet."""

import torch

from matmulviz.simulate import _cuda_api
from matmulviz.simulate._cuda_api import saved_attribute


class Stream:
    """A simulated CUDA stream (torch.cuda.Stream's methods); `stream_id` 0 is the default."""

    _next_id = 1

    def __init__(self, device=None, priority=0, stream_id=None, **kwargs):
        self.device = torch.device("cuda", 0)
        self.priority = priority
        if stream_id is None:
            stream_id, Stream._next_id = Stream._next_id, Stream._next_id + 1
        self.stream_id = stream_id
        self.cuda_stream = stream_id
        self.device_index = 0
        self.device_type = 1  # c10::DeviceType::CUDA

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def query(self):
        return True

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self):
        return hash(("matmulviz.simulate.Stream", self.stream_id))

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x} (simulated)>"


class Event:
    """A simulated CUDA event (torch.cuda.Event's methods)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, sim=None):
        self.enable_timing = enable_timing
        self._sim = sim
        self._recorded = False

    def record(self, stream=None):
        self._recorded = True

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        """Milliseconds between two events on a GPU; here 0.0, noted as a read of a value the
        simulation does not have."""
        if self._sim is not None:
            from matmulviz.simulate._simulation import user_frame
            self._sim.value_reads.note(user_frame(), "Event.elapsed_time()", 0.0)
        return 0.0

    def ipc_handle(self):
        raise RuntimeError("matmulviz.simulate: a simulated CUDA event has no IPC handle")

    def __repr__(self):
        return "<torch.cuda.Event (simulated)>"


def install(sim):
    """Patches torch.cuda's stream and event API; returns what uninstall() restores."""
    default = Stream(stream_id=0)
    current = [default]

    def set_stream(stream):
        if stream is not None:
            current[0] = stream

    replacements = {
        "Stream": Stream,
        "Event": lambda enable_timing=False, blocking=False, interprocess=False: Event(
            enable_timing, blocking, interprocess, sim),
        "current_stream": lambda device=None: current[0],
        "default_stream": lambda device=None: default,
        "set_stream": set_stream,
        "_exchange_device": lambda device: 0,
        "_maybe_exchange_device": lambda device: 0,
    }
    saved = []
    for name, fn in replacements.items():
        if hasattr(torch.cuda, name):
            saved.append(saved_attribute(torch.cuda, name))
            setattr(torch.cuda, name, fn)
    saved.append(saved_attribute(torch.Tensor, "record_stream"))
    torch.Tensor.record_stream = lambda self, stream: None
    return saved


uninstall = _cuda_api.uninstall

