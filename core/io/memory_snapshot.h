#pragma once
// PyTorch CUDA memory snapshots, as torch.cuda.memory._dump_snapshot() pickles them (PyTorch
// 2.0 and later), read into typed, columnar storage. The pickle is parsed by the strict reader
// of core/io/pickle_reader.h (no Python object is ever built), then checked field by field.
//
// The snapshot is a dict (torch/csrc/cuda/Module.cpp, memorySnapshot):
//   segments: [{device, address, total_size, allocated_size, active_size, requested_size,
//               stream, segment_type: 'small'|'large', segment_pool_id (or pool_id): (a, b),
//               is_expandable, frames, blocks: [{address, size, requested_size, state, frames,
//               history (2.0): [{addr, real_size, frames}]}]}]
//   device_traces: one list per device of {action, addr (device_free for 'oom'), size, stream,
//               time_us (2.2+), frames, compile_context, user_metadata}
//   allocator_settings, external_annotations (optional)
// frames: [{filename, line, name}]. Keys may come in any order; unknown keys are ignored.
// Sizes and addresses are bytes; times are microseconds.

#include "core/io/pickle_document.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace matmulviz::snapshot {

/// A file that is not a snapshot, or a snapshot with a wrong value. what() names the file (when
/// read from one) and the key path, e.g.
/// "'s.pickle': device_traces[0][17].size: expected an int, got a string".
class SnapshotError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class TraceAction : uint8_t {
  Alloc,          // 'alloc': a block handed out
  FreeRequested,  // 'free_requested': freed by the program, may still be in use by a stream
  FreeCompleted,  // 'free_completed': back in the cache
  SegmentAlloc,   // 'segment_alloc': cudaMalloc
  SegmentFree,    // 'segment_free': cudaFree
  SegmentMap,     // 'segment_map': expandable segment grown
  SegmentUnmap,   // 'segment_unmap': expandable segment shrunk
  Snapshot,       // 'snapshot': the moment memory_snapshot() was taken
  Oom,            // 'oom': an allocation failed; addr holds the device's free bytes
};
/// PyTorch's spelling: "alloc", "free_requested", ...
const char* actionName(TraceAction action);

enum class BlockState : uint8_t {
  ActiveAllocated,
  ActivePendingFree,
  ActiveAwaitingFree,
  Inactive
};
const char* stateName(BlockState state);

/// One source frame of a stack (interned: each distinct frame once).
struct Frame {
  std::string filename;
  int64_t line = 0;
  std::string name;
};

/// Stack ids index MemorySnapshot::stacks; stack 0 is the empty stack (no frames recorded).
using StackId = uint32_t;

struct Block {
  uint32_t segment = 0;  // index in MemorySnapshot::segments
  int64_t address = 0;   // bytes; in 2.0 (no 'address') the segment's address plus the sizes
                         // of the blocks before it, as PyTorch lays them out
  int64_t size = 0;
  int64_t requestedSize = 0;  // 'requested_size', or 'real_size' of the 2.0 history; else size
  BlockState state = BlockState::Inactive;
  StackId stack = 0;  // 'frames', or (2.0) those of the last 'history' entry
};

struct Segment {
  int64_t device = 0;
  int64_t address = 0;
  int64_t totalSize = 0;
  int64_t allocatedSize = 0;
  int64_t activeSize = 0;
  int64_t requestedSize = 0;
  int64_t stream = 0;
  bool large = false;       // segment_type 'large'
  bool expandable = false;  // is_expandable
  int64_t poolId[2] = {0, 0};
  StackId stack = 0;
  uint32_t firstBlock = 0;  // its blocks are blocks[firstBlock, firstBlock + blockCount)
  uint32_t blockCount = 0;
};

/// One device's trace, in recording order, as parallel columns (row i across all of them).
struct DeviceTrace {
  std::vector<TraceAction> action;
  std::vector<int64_t> addr;    // bytes; for Oom the device's free bytes ('device_free')
  std::vector<int64_t> size;    // bytes
  std::vector<int64_t> stream;  // the CUDA stream handle as an int
  std::vector<int64_t> timeUs;  // microseconds; -1 when not recorded (before PyTorch 2.2)
  std::vector<StackId> stack;
  size_t count() const { return action.size(); }
};

struct MemorySnapshot {
  std::vector<Segment> segments;
  std::vector<Block> blocks;
  std::vector<DeviceTrace> traces;  // index: the position in device_traces (the device)
  std::vector<Frame> frames;
  std::vector<std::vector<uint32_t>> stacks;  // frame ids, innermost first; stacks[0] is empty
  std::string allocatorConf;                  // allocator_settings['PYTORCH_CUDA_ALLOC_CONF']
  size_t externalAnnotations = 0;             // entries of external_annotations

  size_t eventCount() const;
};

struct LoadOptions {
  /// (bytes consumed, total bytes), about every 4 MiB while parsing, and (total, total) when
  /// the snapshot is ready; called on the loading thread.
  std::function<void(uint64_t done, uint64_t total)> progress;
  /// When it becomes true the load stops by throwing pickle::Cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

/// Converts a parsed pickle into a snapshot. Throws SnapshotError (key path, problem) when the
/// root is not a dict with 'segments' ("not a PyTorch memory snapshot: ..."), a required key is
/// missing, a known key holds a value of the wrong type, a size or address is negative, or a
/// string enum (action, state, segment_type) has an unknown value, or a non-empty list or dict
/// other than a frame or a frame list appears at two places (PyTorch writes each once; a memo
/// reference costs 2 bytes, so repeating one would let a small file describe billions of events).
/// Frames and frame lists are interned. The work is linear in the document's size. Progress:
/// only the final (total, total); the conversion takes about as long as the parse.
/// Throws pickle::Cancelled.
MemorySnapshot toMemorySnapshot(const pickle::Document& doc, const LoadOptions& options = {});

/// Parses the pickle `bytes` and converts it, taking the trace's entries while parsing
/// (pickle::ParseOptions::takeItems) so that the tree never holds them: what
/// readMemorySnapshot does with a file's bytes. Same result and errors as toMemorySnapshot of
/// pickle::parse, except where a file memo-refers to a trace entry already taken (that entry is
/// None there); throws pickle::PickleError, SnapshotError, pickle::Cancelled.
MemorySnapshot parseMemorySnapshot(std::span<const uint8_t> bytes, const LoadOptions& options = {});

/// The most bytes a gzip-compressed snapshot may inflate to (16 GiB): beyond it the file is
/// refused, so that a small crafted file cannot claim all of memory.
inline constexpr uint64_t kMaxInflatedSnapshotBytes = uint64_t{16} << 30;

/// Memory-maps and reads the snapshot file at `path`: a pickle, or a gzip-compressed one
/// (recognised by gzip's magic number, whatever the file's name; "snapshot.pickle.gz" as
/// `gzip` leaves it), which is inflated into memory first. Throws SnapshotError naming the file
/// for everything toMemorySnapshot() and pickle::readPickleFile() refuse (an empty file, a
/// truncated one, a refused opcode, ...), a corrupt or truncated gzip stream, one that inflates
/// past kMaxInflatedSnapshotBytes, and pickle::Cancelled.
MemorySnapshot readMemorySnapshot(const std::string& path, const LoadOptions& options = {});

/// Whether the file at `path` starts as a snapshot readMemorySnapshot reads: a pickle's PROTO
/// opcode (0x80) or gzip's magic number (0x1f 0x8b). False for a file that cannot be read.
bool looksLikeSnapshotFile(const std::string& path);

}  // namespace matmulviz::snapshot
