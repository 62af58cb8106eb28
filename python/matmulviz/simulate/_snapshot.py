"""--snapshot: the simulated run as a PyTorch memory snapshot, the pickle that
torch.cuda.memory._dump_snapshot() writes and memory_viz (pytorch.org/memory_viz) opens.

Written: "device_traces" for device 0, an "alloc" and a "free_completed" entry per block with
the size requested (as PyTorch's trace records it), stream 0, the time in microseconds and the
Python frames (innermost first) that made it, the simulation's own left out; and "segments":
the model's segments at the moment of the snapshot, each with its blocks in address order
(allocated ones with their request and, where the recording saw them made, their frames), as
torch.cuda.memory_snapshot() lists a real allocator's. Addresses are the model's virtual device
addresses, the same in the trace and the segments, reused as the allocator reuses a block.
The trace has no segment_alloc / segment_free entries (the model's segment events are in the
report). Format as PyTorch 2.x writes it (torch/cuda/_memory_viz.py reads "device_traces"
entries' action, addr, size, stream, frames, and the segments' fields)."""

import os
import pickle
import sys
import time

from matmulviz import _C
from matmulviz.simulate import _tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def segments(frames=None):
    """The model's segments as torch.cuda.memory_snapshot() returns a real allocator's; each
    allocated block's "frames" from `frames` (allocation id -> frames) where it has them."""
    out = _C._sim_segments()
    for segment in out:
        for block in segment["blocks"]:
            block["frames"] = (frames or {}).get(block.pop("allocation_id"), [])
    return out


class SnapshotRecorder:
    """Observes the running simulation while entered (or between start() and stop());
    write(path) pickles what it saw."""

    def __init__(self):
        self.trace = []
        self._start = time.perf_counter()
        self._observing = None
        self._requested = {}  # allocation id -> the request's bytes (what a trace records)
        self._addresses = {}  # allocation id -> its block's address in the model
        self._frames = {}  # allocation id -> the frames that made it, while it lives

    def start(self):
        """Starts observing the running simulation (torch.cuda.memory._record_memory_history),
        unless it already does."""
        if self._observing is None:
            self._observing = _tensor.current_simulation()
            self._observing.observers.append(self)

    def stop(self):
        """Stops observing and forgets the trace, as PyTorch does when the recording is
        switched off (CUDACachingAllocator.cpp, recordHistory: alloc_buffer.clear())."""
        if self._observing is not None and self in self._observing.observers:
            self._observing.observers.remove(self)
        self._observing = None
        self.clear()

    def clear(self):
        self.trace = []
        self._requested = {}
        self._addresses = {}
        self._frames = {}

    def snapshot(self):
        """The snapshot as torch.cuda.memory._snapshot() returns it."""
        return {"segments": segments(self._frames), "device_traces": [list(self.trace)]}

    def __enter__(self):
        _tensor.current_simulation().observers.append(self)
        return self

    def __exit__(self, *exc):
        sim = _tensor._simulation
        if sim is not None and self in sim.observers:
            sim.observers.remove(self)
        return False

    def _entry(self, action, address, size, frames):
        return {"action": action, "addr": address, "size": size, "stream": 0,
                "time_us": int((time.perf_counter() - self._start) * 1e6), "frames": frames}

    def on_alloc(self, block, requested):
        # The program's frames, innermost first, as PyTorch records Python stacks: the
        # simulation's own are not the program's.
        frames = []
        f = sys._getframe(1)
        while f is not None and len(frames) < 64:
            if not f.f_code.co_filename.startswith(_PACKAGE_DIR):
                frames.append({"filename": f.f_code.co_filename, "line": f.f_lineno,
                               "name": f.f_code.co_name})
            f = f.f_back
        address = _C._sim_block_address(block.id)
        if address < 0:
            address = block.id * 512  # not a block of the model's (none is made for 0 bytes)
        self._requested[block.id] = requested
        self._addresses[block.id] = address
        self._frames[block.id] = frames
        self.trace.append(self._entry("alloc", address, requested, frames))

    def on_free(self, block):
        requested = self._requested.pop(block.id, block.bytes)
        address = self._addresses.pop(block.id, block.id * 512)
        self._frames.pop(block.id, None)
        self.trace.append(self._entry("free_completed", address, requested, []))

    def write(self, path):
        with open(path, "wb") as out:
            pickle.dump(self.snapshot(), out)
