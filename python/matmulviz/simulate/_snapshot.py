"""--snapshot: the simulated run as a PyTorch memory snapshot, the pickle that
torch.cuda.memory._dump_snapshot() writes and memory_viz (pytorch.org/memory_viz) opens.

Written: "device_traces" for device 0, an "alloc" and a "free_completed" entry per block with
its size (as memory_allocated counts it), stream 0, the time in microseconds and the Python
frames (innermost first) that made it; and "segments": [] (the model's segment layout is not
exported yet). Addresses are the model's allocation ids times 512: unique per block, not the
model's virtual addresses. Format as PyTorch 2.x writes it (torch/cuda/_memory_viz.py reads
"device_traces" entries' action, addr, size, stream, frames)."""

import pickle
import sys
import time

from matmulviz.simulate import _tensor


class SnapshotRecorder:
    """Observes the running simulation while entered; write(path) pickles what it saw."""

    def __init__(self):
        self.trace = []
        self._start = time.perf_counter()

    def __enter__(self):
        _tensor.current_simulation().observers.append(self)
        return self

    def __exit__(self, *exc):
        sim = _tensor._simulation
        if sim is not None and self in sim.observers:
            sim.observers.remove(self)
        return False

    def _entry(self, action, block, frames):
        return {"action": action, "addr": block.id * 512, "size": block.bytes, "stream": 0,
                "time_us": int((time.perf_counter() - self._start) * 1e6), "frames": frames}

    def on_alloc(self, block, requested):
        frames = []
        f = sys._getframe(2)
        while f is not None and len(frames) < 64:
            frames.append({"filename": f.f_code.co_filename, "line": f.f_lineno,
                           "name": f.f_code.co_name})
            f = f.f_back
        self.trace.append(self._entry("alloc", block, frames))

    def on_free(self, block):
        self.trace.append(self._entry("free_completed", block, []))

    def write(self, path):
        with open(path, "wb") as out:
            pickle.dump({"segments": [], "device_traces": [self.trace]}, out)
