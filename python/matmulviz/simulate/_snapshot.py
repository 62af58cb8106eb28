"""--snapshot: the simulated run as a PyTorch memory snapshot, the pickle that
torch.cuda.memory._dump_snapshot() writes and memory_viz (pytorch.org/memory_viz) opens.

Written: "device_traces" for device 0, an "alloc" and a "free_completed" entry per block with
the size requested (as PyTorch's trace records it), stream 0, the time in microseconds and the
Python frames (innermost first) that made it, the simulation's own left out; and "segments": [] (the model's segment layout is not
exported yet). Addresses are the model's allocation ids times 512: unique per block, not the
model's virtual addresses. Format as PyTorch 2.x writes it (torch/cuda/_memory_viz.py reads
"device_traces" entries' action, addr, size, stream, frames)."""

import os
import pickle
import sys
import time

from matmulviz.simulate import _tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class SnapshotRecorder:
    """Observes the running simulation while entered (or between start() and stop());
    write(path) pickles what it saw."""

    def __init__(self):
        self.trace = []
        self._start = time.perf_counter()
        self._observing = None
        self._requested = {}  # allocation id -> the request's bytes (what a trace records)

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

    def snapshot(self):
        """The snapshot as torch.cuda.memory._snapshot() returns it."""
        return {"segments": [], "device_traces": [list(self.trace)]}

    def __enter__(self):
        _tensor.current_simulation().observers.append(self)
        return self

    def __exit__(self, *exc):
        sim = _tensor._simulation
        if sim is not None and self in sim.observers:
            sim.observers.remove(self)
        return False

    def _entry(self, action, block, size, frames):
        return {"action": action, "addr": block.id * 512, "size": size, "stream": 0,
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
        self._requested[block.id] = requested
        self.trace.append(self._entry("alloc", block, requested, frames))

    def on_free(self, block):
        requested = self._requested.pop(block.id, block.bytes)
        self.trace.append(self._entry("free_completed", block, requested, []))

    def write(self, path):
        with open(path, "wb") as out:
            pickle.dump(self.snapshot(), out)
