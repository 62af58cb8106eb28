#!/usr/bin/python3
"""Writes PyTorch CUDA memory snapshots the way torch.cuda.memory._dump_snapshot() does
(pickle.dump of a dict), from the structures PyTorch documents, with Python's stdlib pickle
only: no PyTorch needed. Read by tests/core/test_memory_snapshot.cpp and test_pickle_reader.cpp,
and the seeds of tests/fuzz/corpus/snapshot/.

  make_snapshot_fixtures.py [OUT_DIR]            the small fixtures (default: snapshots/ here)
  make_snapshot_fixtures.py --large N PATH [P]   one snapshot of N trace events (protocol P, 4)

The layouts follow torch/csrc/cuda/Module.cpp (memorySnapshot) of each release:
  2.0: blocks without 'address' (they follow one another from the segment's address) and with
       'history' [{addr, real_size, frames}]; trace entries {action, addr, size, stream, frames}.
  2.1: blocks with 'address' and 'frames'; segments with 'frames', 'is_expandable' and the pool id.
  2.6: trace entries with 'time_us', 'compile_context', 'user_metadata'; 'allocator_settings',
       'external_annotations'; the actions segment_map/segment_unmap; 'oom' with 'device_free'.
Dicts are built in a different key order per release, so the reader is checked for order.
Frame dicts and frame lists are shared objects, as PyTorch shares them: pickle writes each once
and refers to it through the memo.
"""
import collections
import copy
import os
import pickle
import sys

A0 = 0x7F3A00000000  # segment addresses (beyond int32: LONG1)
A1 = 0x7F3B00000000
STREAM = 0x5583A1B2C3D0  # a cudaStream_t as an int
MIB = 1 << 20

F_TRAIN = {"filename": "train.py", "line": 42, "name": "forward"}
F_LINEAR = {"filename": "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", "line": 116,
            "name": "forward"}
F_MAIN = {"filename": "train.py", "line": 88, "name": "main"}
STACK_A = [F_TRAIN, F_MAIN]
STACK_B = [F_LINEAR, F_TRAIN, F_MAIN]
NO_FRAMES = []

# (action, addr, size, stream, stack); time_us = 1000 + index.
EVENTS = [
    ("segment_alloc", A0, 2 * MIB, 0, STACK_A),
    ("alloc", A0, 512, 0, STACK_A),
    ("alloc", A0 + 512, 1024, 0, STACK_B),
    ("free_requested", A0 + 512, 1024, 0, STACK_B),
    ("segment_map", A1, 20 * MIB, STREAM, STACK_B),
    ("alloc", A1, 20 * MIB, STREAM, STACK_B),
    ("free_requested", A1, 20 * MIB, STREAM, STACK_B),
    ("oom", 123456, 1 << 34, 0, STACK_A),  # addr: the device's free bytes
    ("segment_unmap", A1, 20 * MIB, STREAM, NO_FRAMES),
    ("free_completed", A0 + 512, 1024, 0, STACK_B),
    ("snapshot", 0, 0, 0, NO_FRAMES),
    ("segment_free", A0, 2 * MIB, 0, NO_FRAMES),
]

# (address, size, requested_size, state, stack) per segment.
SEG0_BLOCKS = [(A0, 512, 500, "active_allocated", STACK_A),
               (A0 + 512, 1024, 1000, "active_pending_free", STACK_B),
               (A0 + 1536, 2 * MIB - 1536, 0, "inactive", NO_FRAMES)]
SEG1_BLOCKS = [(A1, 20 * MIB, 20000000, "active_awaiting_free", STACK_B)]
SEGMENTS = [  # (device, address, total, large, pool, expandable, stream, stack, blocks)
    (0, A0, 2 * MIB, False, (0, 0), False, 0, STACK_A, SEG0_BLOCKS),
    (0, A1, 20 * MIB, True, (1, 2), True, STREAM, STACK_B, SEG1_BLOCKS),
]


def sums(blocks):
    allocated = sum(b[1] for b in blocks if b[3] == "active_allocated")
    active = sum(b[1] for b in blocks if b[3] != "inactive")
    requested = sum(b[2] for b in blocks if b[3] != "inactive")
    return allocated, active, requested


def snapshot_2_0():
    segments = []
    for device, address, total, large, _, _, stream, _, blocks in SEGMENTS:
        allocated, active, requested = sums(blocks)
        out_blocks = []
        for addr, size, req, state, stack in blocks:
            b = {"size": size, "requested_size": req, "state": state}
            if state != "inactive":
                b["history"] = [{"addr": addr, "real_size": req, "frames": stack}]
            out_blocks.append(b)
        # 'blocks' first: the block addresses must not depend on the key order.
        segments.append({"blocks": out_blocks, "device": device, "address": address,
                         "total_size": total, "allocated_size": allocated,
                         "active_size": active, "requested_size": requested, "stream": stream,
                         "segment_type": "large" if large else "small"})
    trace = []
    for action, addr, size, stream, stack in EVENTS:
        if action in ("segment_map", "segment_unmap"):
            continue  # not in 2.0
        e = {"action": action, ("device_free" if action == "oom" else "addr"): addr,
             "size": size, "stream": stream}
        if stack:
            e["frames"] = stack
        trace.append(e)
    return {"segments": segments, "device_traces": [trace]}


def snapshot_2_1():
    segments = []
    for device, address, total, large, pool, expandable, stream, stack, blocks in SEGMENTS:
        allocated, active, requested = sums(blocks)
        out_blocks = [{"frames": s, "state": st, "requested_size": r, "size": z, "address": a}
                      for a, z, r, st, s in blocks]
        segments.append({"frames": stack, "blocks": out_blocks, "is_expandable": expandable,
                         "pool_id": pool, "segment_type": "large" if large else "small",
                         "stream": stream, "requested_size": requested, "active_size": active,
                         "allocated_size": allocated, "total_size": total, "address": address,
                         "device": device})
    trace = [{"frames": stack, "action": action,
              ("device_free" if action == "oom" else "addr"): addr, "size": size,
              "stream": stream} for action, addr, size, stream, stack in EVENTS]
    return {"device_traces": [trace, []], "segments": segments}


def snapshot_2_6():
    segments = []
    for device, address, total, large, pool, expandable, stream, stack, blocks in SEGMENTS:
        allocated, active, requested = sums(blocks)
        segments.append({
            "device": device, "address": address, "total_size": total,
            "allocated_size": allocated, "active_size": active, "requested_size": requested,
            "stream": stream, "segment_type": "large" if large else "small",
            "segment_pool_id": pool, "is_expandable": expandable, "frames": stack,
            "blocks": [{"address": a, "size": z, "requested_size": r, "state": st, "frames": s}
                       for a, z, r, st, s in blocks]})
    trace = [{"action": action, ("device_free" if action == "oom" else "addr"): addr,
              "size": size, "stream": stream, "time_us": 1000 + i,
              "compile_context": "N/A", "user_metadata": "", "frames": stack}
             for i, (action, addr, size, stream, stack) in enumerate(EVENTS)]
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "max_split_size": -1,
                "garbage_collection_threshold": 0.0, "expandable_segments": True,
                "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
                "pinned_use_cuda_host_register": False,
                "roundup_power2_divisions": {"1": 0, "2": 0, "4": 0}}
    annotations = [{"stage": "forward", "device": 0, "time_us": 1003}]
    return {"segments": segments, "device_traces": [trace, []], "allocator_settings": settings,
            "external_annotations": annotations}


def large(n):
    """n trace events on device 0: 500 distinct frames in 64 shared stacks, alloc /
    free_requested / free_completed in turn; one segment of one block."""
    frames = [{"filename": f"model/layer{i % 50}.py", "line": i, "name": f"fn{i}"}
              for i in range(500)]
    stacks = [[frames[(s * 8 + k) % 500] for k in range(8)] for s in range(64)]
    actions = ("alloc", "free_requested", "free_completed")
    trace = [{"action": actions[i % 3], "addr": A0 + 512 * (i // 3), "size": 512, "stream": 0,
              "time_us": 1_700_000_000_000_000 + i, "frames": stacks[(i // 3) % 64]}
             for i in range(n)]
    seg = {"device": 0, "address": A0, "total_size": 2 * MIB, "allocated_size": 0,
           "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
           "segment_pool_id": (0, 0), "is_expandable": False, "frames": stacks[0],
           "blocks": [{"address": A0, "size": 2 * MIB, "requested_size": 0, "state": "inactive",
                       "frames": []}]}
    return {"segments": [seg], "device_traces": [trace]}


def write(path, obj, protocol):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


def write_small(out):
    os.makedirs(out, exist_ok=True)
    for name, make in (("2_0", snapshot_2_0), ("2_1", snapshot_2_1), ("2_6", snapshot_2_6)):
        for protocol in (2, 4, 5):
            write(os.path.join(out, f"snapshot_{name}_p{protocol}.pickle"), make(), protocol)
    # Refused files.
    write(os.path.join(out, "bad_list_p4.pickle"), snapshot_2_6()["segments"], 4)
    write(os.path.join(out, "bad_class_p2.pickle"), {"segments": [], "x": collections.Counter}, 2)
    write(os.path.join(out, "bad_class_p4.pickle"), {"segments": [], "x": collections.Counter}, 4)
    write(os.path.join(out, "bad_reduce_p4.pickle"),
          collections.OrderedDict(segments=[], device_traces=[]), 4)
    negative = snapshot_2_6()
    negative["device_traces"][0][3]["size"] = -1024
    write(os.path.join(out, "bad_negative_size_p4.pickle"), negative, 4)
    wrong_type = snapshot_2_6()
    wrong_type["device_traces"][0][5]["size"] = "20971520"
    write(os.path.join(out, "bad_string_size_p4.pickle"), wrong_type, 4)
    no_action = snapshot_2_1()
    del no_action["device_traces"][0][2]["action"]
    write(os.path.join(out, "bad_missing_action_p2.pickle"), no_action, 2)
    for name, change in (
            ("bad_action_p4", lambda d: d["device_traces"][0][4].update(action="malloc")),
            ("bad_state_p4", lambda d: d["segments"][1]["blocks"][0].update(state="free")),
            ("bad_segment_type_p4", lambda d: d["segments"][0].update(segment_type="huge")),
            ("bad_pool_id_p4", lambda d: d["segments"][0].update(segment_pool_id=(0, "a"))),
            ("bad_frame_line_p4", lambda d: d["segments"][0]["frames"][0].update(line=4.5)),
            ("bad_no_segments_p4", lambda d: d.pop("segments"))):
        d = copy.deepcopy(snapshot_2_6())  # the frames are shared module objects: copy them too
        change(d)
        write(os.path.join(out, name + ".pickle"), d, 4)
    write(os.path.join(out, "bad_int_p4.pickle"), 42, 4)
    # One trace list written once and referred to twice through the memo: refused, since a
    # file of a few bytes per reference could otherwise describe a trace of billions of events.
    trace = snapshot_2_6()["device_traces"][0]
    write(os.path.join(out, "bad_shared_trace_p4.pickle"),
          {"segments": [], "device_traces": [trace, trace]}, 4)
    with open(os.path.join(out, "bad_os_system.pickle"), "wb") as f:
        f.write(b"\x80\x02cos\nsystem\nX\x07\x00\x00\x00echo hi\x85R.")


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "--large":
        write(sys.argv[3], large(int(sys.argv[2])), int(sys.argv[4]) if len(sys.argv) == 5 else 4)
    elif len(sys.argv) <= 2:
        here = os.path.dirname(os.path.abspath(__file__))
        write_small(sys.argv[1] if len(sys.argv) == 2 else os.path.join(here, "snapshots"))
    else:
        sys.exit(__doc__)
