#!/usr/bin/python3
"""Writes a PyTorch CUDA memory snapshot of a small training loop run on a simulation of the
caching allocator, so that its trace and its segments agree as a real torch.cuda.memory
._dump_snapshot() pickle's do (stdlib pickle only: no PyTorch needed). Read by
tests/core/test_allocator_state.cpp (the allocator state at every event replays without a
note), tests/ui/test_segments_panel.cpp and scripts/screenshot (the segments panel).

  make_allocator_snapshot.py [PATH]   (default: snapshots/allocator_sim_p4.pickle here)

The allocator follows c10/cuda/CUDACachingAllocator.cpp as docs/ and core/memory describe it:
requests rounded up to 512 bytes; at most 1 MiB from the small pool (2 MiB segments), larger
from the large pool (20 MiB segments below 10 MiB, else rounded up to 2 MiB); the smallest
cached free block that fits, split when the rest is at least 512 B (small) or more than 1 MiB
(large); freed neighbours merge; empty_cache() releases segments with nothing active. Trace
entries carry the requested size, as the allocator records them. A block used on a second
stream (record_stream) stays pending free until that stream's work completes.
"""
import os
import pickle
import random
import sys

MIB = 1 << 20
STREAM2 = 0x5583A1B2C3D0  # the data loader's stream


def round_size(n):
    return 512 if n < 512 else (n + 511) // 512 * 512


def segment_size(n):
    if n <= MIB:
        return 2 * MIB
    if n < 10 * MIB:
        return 20 * MIB
    return (n + 2 * MIB - 1) // (2 * MIB) * (2 * MIB)


def frame(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


MAIN = frame("train.py", 60, "main")
STEP = frame("train.py", 41, "step")
STACKS = {
    "weight": [frame("model.py", 12, "__init__"), MAIN],
    "act": [frame("torch/nn/modules/linear.py", 125, "forward"), frame("model.py", 30, "forward"),
            STEP, MAIN],
    "attn": [frame("model.py", 34, "attention"), frame("model.py", 31, "forward"), STEP, MAIN],
    "grad": [frame("torch/autograd/graph.py", 825, "_engine_run_backward"), STEP, MAIN],
    "opt": [frame("torch/optim/adam.py", 410, "_single_tensor_adam"), STEP, MAIN],
    "loader": [frame("data.py", 20, "__next__"), STEP, MAIN],
}


class Allocator:
    def __init__(self):
        self.segments = []  # {address, size, large, stream, frames, blocks: [block]}
        self.next_address = 0x7F3A00000000
        self.trace = []
        self.time = 1_700_000_000_000_000

    def record(self, action, addr, size, stream, frames):
        self.time += random.randint(1, 40)
        self.trace.append({"action": action, "addr": addr, "size": size, "stream": stream,
                           "time_us": self.time, "frames": frames, "compile_context": None,
                           "user_metadata": None})

    def find(self, size, large, stream):
        best = None
        for seg in self.segments:
            if seg["large"] != large or seg["stream"] != stream:
                continue
            for b in seg["blocks"]:
                if b["state"] == "inactive" and b["size"] >= size and (
                        best is None or b["size"] < best[1]["size"]):
                    best = (seg, b)
        return best

    def malloc(self, requested, kind, stream=0):
        size = round_size(requested)
        large = size > MIB
        found = self.find(size, large, stream)
        if found is None:
            total = segment_size(size)
            seg = {"address": self.next_address, "size": total, "large": large,
                   "stream": stream, "frames": STACKS[kind],
                   "blocks": [{"address": self.next_address, "size": total, "requested_size": 0,
                               "state": "inactive", "frames": []}]}
            self.next_address += total + 64 * MIB
            self.segments.append(seg)
            self.record("segment_alloc", seg["address"], total, stream, STACKS[kind])
            found = (seg, seg["blocks"][0])
        seg, block = found
        rest = block["size"] - size
        if (large and rest > MIB) or (not large and rest >= 512):
            i = seg["blocks"].index(block)
            seg["blocks"].insert(i + 1, {"address": block["address"] + size, "size": rest,
                                         "requested_size": 0, "state": "inactive", "frames": []})
            block["size"] = size
        block.update(state="active_allocated", requested_size=requested, frames=STACKS[kind])
        self.record("alloc", block["address"], requested, stream, STACKS[kind])
        return block["address"]

    def block(self, addr):
        for seg in self.segments:
            for b in seg["blocks"]:
                if b["address"] == addr:
                    return seg, b
        raise KeyError(addr)

    def free(self, addr, pending=False):
        seg, b = self.block(addr)
        self.record("free_requested", addr, b["requested_size"], seg["stream"], b["frames"])
        b["state"] = "active_pending_free"
        if not pending:
            self.complete(addr)

    def complete(self, addr):
        seg, b = self.block(addr)
        self.record("free_completed", addr, b["requested_size"], seg["stream"], b["frames"])
        b.update(state="inactive", requested_size=0, frames=[])
        blocks = seg["blocks"]
        i = blocks.index(b)
        if i + 1 < len(blocks) and blocks[i + 1]["state"] == "inactive":
            b["size"] += blocks.pop(i + 1)["size"]
        if i > 0 and blocks[i - 1]["state"] == "inactive":
            blocks[i - 1]["size"] += blocks.pop(i)["size"]

    def empty_cache(self):
        for seg in list(self.segments):
            if len(seg["blocks"]) == 1 and seg["blocks"][0]["state"] == "inactive":
                self.record("segment_free", seg["address"], seg["size"], seg["stream"], [])
                self.segments.remove(seg)

    def snapshot(self):
        segments = []
        for seg in self.segments:
            blocks = seg["blocks"]
            active = [b for b in blocks if b["state"] != "inactive"]
            segments.append({
                "device": 0, "address": seg["address"], "total_size": seg["size"],
                "allocated_size": sum(b["size"] for b in active
                                      if b["state"] == "active_allocated"),
                "active_size": sum(b["size"] for b in active),
                "requested_size": sum(b["requested_size"] for b in active),
                "stream": seg["stream"], "segment_type": "large" if seg["large"] else "small",
                "segment_pool_id": (0, 0), "is_expandable": False, "frames": seg["frames"],
                "blocks": [dict(b) for b in blocks]})
        self.record("snapshot", 0, 0, 0, [])
        return {"segments": segments, "device_traces": [self.trace],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": None},
                "external_annotations": []}


def train(a):
    random.seed(16)
    for size in (12 * MIB + 4096, 6 * MIB, 3 * MIB + 1000, 800_000, 300_000, 4096):
        a.malloc(size, "weight")
    for step in range(6):
        batch = a.malloc(1_500_000, "loader", STREAM2)
        acts = [a.malloc(random.choice([262_144, 600_000, 2 * MIB + 512, 5 * MIB, 9 * MIB]),
                         random.choice(["act", "attn"])) for _ in range(7 + step % 3)]
        small = [a.malloc(random.randint(1, 64) * 1024, "act") for _ in range(5)]
        for addr in small[::2]:
            a.free(addr)
        grads = []
        for addr in reversed(acts):
            grads.append(a.malloc(random.choice([300_000, 2 * MIB, 4 * MIB + 7]), "grad"))
            a.free(addr, pending=(addr == acts[0] and step % 2 == 1))
        state = a.malloc(random.choice([3 * MIB, 11 * MIB]), "opt")
        for addr in grads:
            a.free(addr)
        a.free(state)
        a.free(batch, pending=True)
        for addr in small[1::2]:
            a.free(addr)
        for seg in a.segments:  # the side stream's work finished: complete what was pending
            for b in list(seg["blocks"]):
                if b["state"] == "active_pending_free" and step < 5:
                    a.complete(b["address"])
        if step == 3:
            a.empty_cache()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "snapshots",
                                                               "allocator_sim_p4.pickle")
    a = Allocator()
    train(a)
    with open(path, "wb") as f:
        pickle.dump(a.snapshot(), f, protocol=4)
    print(f"{path}: {len(a.trace)} trace events, {len(a.segments)} segments")


if __name__ == "__main__":
    main()
