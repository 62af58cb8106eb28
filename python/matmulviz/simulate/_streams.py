"""CUDA streams and events during a simulation: torch.cuda.Stream, Event, current_stream,
default_stream, set_stream, stream(s) (PyTorch's StreamContext over these), Stream.wait_stream,
wait_event, record_event, Event.record / wait / query / synchronize / elapsed_time, and
Tensor.record_stream, so scripts that overlap copies with compute run. PyTorch's own classes ask
the driver for a stream when made (torch/cuda/streams.py), which a machine without a GPU refuses.

Allocations follow the caching allocator's streams (core/memory/caching_allocator.h, after
c10/cuda/CUDACachingAllocator.cpp): a block is made on the current stream and a cached block is
reused only on its own stream; a block that record_stream() marked as used on another stream is
not reused after its free until the host waited for that stream: its synchronize(), an event
recorded on it that the host synchronized or queried, torch.cuda.synchronize(), a read of a
value on the current stream (.item()), or the allocator's own synchronization before it
releases cached segments. The simulation has no clock: every stream's work is done when the
host asks (query() is True, synchronize() returns), and Event.elapsed_time() returns 0.0, listed
with the run's value reads."""

import torch

from matmulviz import _C
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
        _C._sim_synchronize(self.stream_id)  # its work is done: the answer is True
        return True

    def synchronize(self):
        _C._sim_synchronize(self.stream_id)

    def __eq__(self, other):
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self):
        return hash(("matmulviz.simulate.Stream", self.stream_id))

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x} (simulated)>"


class Event:
    """A simulated CUDA event (torch.cuda.Event's methods). A class, as torch.cuda.Event is:
    PyTorch's own code tests isinstance(x, torch.cuda.Event) (torch/_jit_internal.py,
    _TensorExtractor, when a future's value is read)."""

    running = None  # the Simulation whose torch.cuda.Event this is (install)

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, sim=None):
        self.enable_timing = enable_timing
        self._sim = sim or Event.running
        self._stream = None  # the stream it was last recorded on

    def record(self, stream=None):
        self._stream = stream if stream is not None else torch.cuda.current_stream()

    def wait(self, stream=None):
        pass

    def query(self):
        self.synchronize()  # the work before it is done: the answer is True
        return True

    def synchronize(self):
        if self._stream is not None:
            _C._sim_synchronize(self._stream.stream_id)

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
    Event.running = sim

    def set_stream(stream):
        if stream is not None:
            current[0] = stream
            _C._sim_set_stream(stream.stream_id)

    def record_stream(tensor, stream):
        block_id = sim.block_id(tensor)
        if block_id >= 0:
            _C._sim_record_stream(block_id, stream.stream_id)

    replacements = {
        "Stream": Stream,
        "Event": Event,
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
    torch.Tensor.record_stream = record_stream
    _C._sim_set_stream(0)  # a run starts on the default stream
    return saved


uninstall = _cuda_api.uninstall

