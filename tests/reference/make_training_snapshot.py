#!/usr/bin/python3
"""Writes snapshots/training_step_p4.pickle: a PyTorch memory snapshot (the dict that
torch.cuda.memory._dump_snapshot() pickles, PyTorch 2.6 layout) of three training steps of a
small model, with the stacks PyTorch records (C++ frames innermost, then Python frames): an
embedding gather, two linear layers (addmm, mm), relu, a loss; backward through the autograd
engine; an Adam step whose state stays alive. Parameters are alive before the recording (active
blocks of the segment, never in the trace). Written by hand, not by PyTorch: the fixture for
stacking by allocation and for categories from frames. Uses only the standard library.

Usage: tests/reference/make_training_snapshot.py [OUT_DIR] (default: next to this script)
"""
import os
import pickle
import sys

MiB = 1 << 20
BASE = 0x7F2A00000000
SEGMENT = 160 * MiB
TORCH = "/usr/lib/python3/dist-packages/torch"


def py(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


def cpp(name):
    return {"filename": "??", "line": 0, "name": name}


TRAIN = py("/home/user/train.py", 41, "train_step")
MAIN = py("/home/user/train.py", 77, "main")
MODEL = "/home/user/model.py"
LINEAR = py(f"{TORCH}/nn/modules/linear.py", 125, "forward")
BACKWARD = [cpp("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&)"),
            cpp("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"),
            py(f"{TORCH}/autograd/graph.py", 825, "_engine_run_backward"),
            py(f"{TORCH}/autograd/__init__.py", 347, "backward"),
            py(f"{TORCH}/_tensor.py", 581, "backward"),
            py("/home/user/train.py", 45, "train_step"), MAIN]


def op(name, *outer):
    return [cpp("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(int, unsigned long, CUstream_st*)"),
            cpp("at::_ops::empty_strided::call(c10::ArrayRef<c10::SymInt>, c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>)"),
            cpp(f"at::_ops::{name}::call(at::Tensor const&, at::Tensor const&)")] + list(outer)


def grad_of(node, name):
    return op(name, cpp(f"torch::autograd::generated::{node}::apply(std::vector<at::Tensor>&&)"),
              *BACKWARD)


STACKS = {
    "x": op("embedding", py(f"{TORCH}/nn/functional.py", 2551, "embedding"),
            py(MODEL, 12, "forward"), TRAIN, MAIN),
    "h1": op("addmm", LINEAR, py(MODEL, 13, "forward"), TRAIN, MAIN),
    "a1": op("relu", py(f"{TORCH}/nn/functional.py", 1704, "relu"), py(MODEL, 14, "forward"),
             TRAIN, MAIN),
    "h2": op("mm", LINEAR, py(MODEL, 15, "forward"), TRAIN, MAIN),
    "loss": op("mse_loss", py(f"{TORCH}/nn/functional.py", 3791, "mse_loss"),
               py("/home/user/train.py", 43, "train_step"), MAIN),
    "g_loss": grad_of("MseLossBackward0", "mse_loss_backward"),
    "g_h2": grad_of("MmBackward0", "mm"),
    "g_W2": grad_of("MmBackward0", "mm"),
    "g_a1": grad_of("ReluBackward0", "threshold_backward"),
    "g_h1": grad_of("AddmmBackward0", "mm"),
    "g_W1": grad_of("AddmmBackward0", "mm"),
    "g_emb": grad_of("EmbeddingBackward0", "embedding_dense_backward"),
    "adam_state": op("zeros_like", py(f"{TORCH}/optim/adam.py", 176, "_init_group"),
                     py(f"{TORCH}/optim/adam.py", 226, "step"),
                     py("/home/user/train.py", 47, "train_step"), MAIN),
    "adam_tmp": op("sqrt", py(f"{TORCH}/optim/adam.py", 412, "_single_tensor_adam"),
                   py(f"{TORCH}/optim/adam.py", 247, "step"),
                   py("/home/user/train.py", 47, "train_step"), MAIN),
}
SIZES = {"x": 6 * MiB, "h1": 12 * MiB, "a1": 12 * MiB, "h2": 3 * MiB, "loss": 512,
         "g_loss": 3 * MiB, "g_h2": 3 * MiB, "g_W2": 4 * MiB, "g_a1": 12 * MiB,
         "g_h1": 12 * MiB, "g_W1": 4 * MiB, "g_emb": 8 * MiB}
PARAMS = [("W1", 4 * MiB), ("W2", 4 * MiB), ("emb", 8 * MiB)]


class Allocator:
    """First fit in one segment; records the trace."""

    def __init__(self):
        self.live = {}  # addr -> (size, frames)
        self.trace = []
        self.time = 1_700_000_000_000_000

    def _place(self, size):
        addr = BASE
        for a in sorted(self.live):
            if a - addr >= size:
                return addr
            addr = max(addr, a + self.live[a][0])
        assert addr + size <= BASE + SEGMENT
        return addr

    def _event(self, action, addr, size, frames):
        self.time += 37
        self.trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                           "time_us": self.time, "compile_context": "N/A",
                           "user_metadata": "", "frames": frames})

    def alloc(self, size, frames, record=True):
        addr = self._place(size)
        self.live[addr] = (size, frames)
        if record:
            self._event("alloc", addr, size, frames)
        return addr

    def free(self, addr):
        size, frames = self.live.pop(addr)
        self._event("free_requested", addr, size, frames)
        self._event("free_completed", addr, size, frames)


def step(a, state, first):
    t = {}
    for name in ("x", "h1", "a1", "h2", "loss"):
        t[name] = a.alloc(SIZES[name], STACKS[name])
    t["g_loss"] = a.alloc(SIZES["g_loss"], STACKS["g_loss"])
    t["g_h2"] = a.alloc(SIZES["g_h2"], STACKS["g_h2"])
    a.free(t.pop("g_loss"))
    state["g_W2"] = a.alloc(SIZES["g_W2"], STACKS["g_W2"])
    t["g_a1"] = a.alloc(SIZES["g_a1"], STACKS["g_a1"])
    a.free(t.pop("g_h2"))
    a.free(t.pop("h2"))
    t["g_h1"] = a.alloc(SIZES["g_h1"], STACKS["g_h1"])
    a.free(t.pop("g_a1"))
    a.free(t.pop("a1"))
    state["g_W1"] = a.alloc(SIZES["g_W1"], STACKS["g_W1"])
    state["g_emb"] = a.alloc(SIZES["g_emb"], STACKS["g_emb"])
    for name in ("g_h1", "h1", "x", "loss"):
        a.free(t.pop(name))
    if first:  # Adam's exp_avg and exp_avg_sq, kept for good
        for _, size in PARAMS:
            for _ in range(2):
                a.alloc(size, STACKS["adam_state"])
    for _, size in PARAMS:
        tmp = a.alloc(size, STACKS["adam_tmp"])
        a.free(tmp)
    for name in ("g_W2", "g_W1", "g_emb"):  # zero_grad(set_to_none=True)
        a.free(state.pop(name))


def snapshot():
    a = Allocator()
    for name, size in PARAMS:  # before the recording: active blocks, not in the trace
        a.alloc(size, [py(MODEL, 8, "__init__"), py("/home/user/train.py", 70, "main")],
                record=False)
    state = {}
    for i in range(3):
        step(a, state, i == 0)
    blocks, addr = [], BASE
    for b in sorted(a.live):
        size, frames = a.live[b]
        if b > addr:
            blocks.append({"address": addr, "size": b - addr, "requested_size": 0,
                           "state": "inactive", "frames": []})
        blocks.append({"address": b, "size": size, "requested_size": size,
                       "state": "active_allocated", "frames": frames})
        addr = b + size
    if addr < BASE + SEGMENT:
        blocks.append({"address": addr, "size": BASE + SEGMENT - addr, "requested_size": 0,
                       "state": "inactive", "frames": []})
    active = sum(b["size"] for b in blocks if b["state"] != "inactive")
    segment = {"device": 0, "address": BASE, "total_size": SEGMENT, "allocated_size": active,
               "active_size": active, "requested_size": active, "stream": 0,
               "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
               "frames": [], "blocks": blocks}
    return {"segments": [segment], "device_traces": [a.trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "snapshots")
    with open(os.path.join(out, "training_step_p4.pickle"), "wb") as f:
        pickle.dump(snapshot(), f, protocol=4)
