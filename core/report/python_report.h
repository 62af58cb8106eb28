#pragma once
// The report of a Python run (kind "python", docs/report-format.md) read back: the allocator's
// events, each allocation with the Python frame that made it, what kept blocks alive, the peak.
// Written by `python3 -m matmulviz SCRIPT --report PATH`; read by the app's Program view.
// Qt-free. Every value is checked (types, sizes >= 0, indices into frames, ops and kinds in
// range); a refusal names the file and the key path ("'run.json': events.rows[3][2] is -5
// (allowed: 0 to ...)"). Keys this reader does not know are skipped and listed.

#include "core/memory/memory_category.h"
#include "core/memory/memory_event.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace matmulviz {

/// The innermost frame outside the matmulviz package when an allocation was made.
struct PythonFrame {
  std::string file;  ///< as Python named it (co_filename): the script's path as it was run
  int64_t line = 0;  ///< 1-based
  std::string function;
  std::string code;  ///< the source line, stripped
};

struct PythonAllocation {
  int64_t id = 0;
  std::string label;  ///< "indexed copy", "mm output"
  int32_t op = 0;     ///< index into PythonReport::ops
  int64_t requestedBytes = 0;
  int64_t blockBytes = 0;  ///< what memory_allocated counts
  bool small = false;      ///< the small pool (<= 1 MiB blocks)
  int32_t frame = -1;      ///< index into PythonReport::frames; -1: no Python frame
  bool alive = false;      ///< still allocated when the recording ended
  /// What it holds (column "category", optional: reports written before it have none, and
  /// read as "other"): "gradients" for what autograd's backward allocated, "saved for
  /// backward" for a block autograd saved that no Python variable held.
  MemoryCategory category = MemoryCategory::Other;
};

/// Something besides a Python variable that keeps a block alive.
struct PythonHolder {
  std::string why;  ///< "saved as mat2 of BmmBackward0 because a requires grad"
  int64_t count = 0;
};

struct PythonPeak {
  int64_t allocatedBytes = 0;  ///< the highest memory_allocated of any event
  size_t event = 0;            ///< index into PythonReport::events
  double timeUs = 0;
  std::vector<int64_t> live;  ///< allocation ids alive at that event
};

/// A moment named during the run (reset_peak_memory_stats, torch.cuda.memory.
/// _record_memory_history).
struct PythonMark {
  double timeUs = 0;
  std::string name;
  /// The number of events recorded before it (reports written before the key have none).
  std::optional<int64_t> event;
};

/// A read of a simulated tensor's values that returned a placeholder (matmulviz.simulate, key
/// "value_reads"): `tensor.item()` at a line, how often, and what it returned.
struct PythonValueRead {
  std::string file;
  int64_t line = 0;  ///< 1-based; 0 when unknown
  std::string code;  ///< the source line, stripped
  std::string read;  ///< "Tensor.item()", "aten._local_scalar_dense (item())"
  int64_t count = 0;
  std::string returned;  ///< the placeholder as Python printed it ("0.0")
};

/// The PyTorch that ran a script under matmulviz.simulate (key "torch"; reports of
/// matmulviz.torch runs and earlier ones have none).
struct PythonTorch {
  std::string version;  ///< torch.__version__: "2.11.0+cu130"
  /// Whether simulated tensors were CUDA tensors to its C++, so that PyTorch's own code took
  /// the GPU's device branches (a CUDA build of 2.x), or meta tensors (1.13, CPU-only builds).
  bool cudaBranches = false;
};

/// Pinned host memory of a matmulviz.simulate run (key "pinned_host"; only where the script
/// pinned memory): host memory, not in the device's numbers. Bytes as PyTorch's
/// CachingHostAllocator holds them (aten/src/ATen/core/CachingHostAllocator.h: each block a power
/// of two).
struct PythonPinnedHost {
  int64_t peakActiveBytes = 0;  ///< the most bytes of blocks handed out at once
  int64_t peakHeldBytes = 0;    ///< the most bytes the allocator owned (handed out and cached)
  int64_t pinnedTensors = 0;    ///< pin_memory() calls that pinned a tensor
};

struct PythonReport {
  std::optional<std::string> script;  ///< as given to the runner; none for matmulviz.record
  std::vector<std::string> argv;
  bool complete = true;  ///< false: the script raised; the report covers what ran
  std::string error;     ///< the traceback when !complete
  std::string deviceName = "cuda:0";
  std::string deviceMode;  ///< "data" or "meta"
  std::optional<int64_t> capacityBytes;
  std::map<std::string, int64_t> memoryStats;  ///< torch.cuda.memory_stats() at the end
  std::vector<PythonFrame> frames;
  std::vector<std::string> ops;
  /// In order. after.requestedBytes is 0: a Python run's report does not carry it.
  std::vector<MemoryEvent> events;
  std::vector<PythonAllocation> allocations;  ///< sorted by id
  /// By allocation id: holders of blocks alive at the end (kept_alive_by).
  std::map<int64_t, std::vector<PythonHolder>> keptAliveBy;
  /// By allocation id: holders of blocks alive at the peak (peak.kept_alive_by), when the
  /// report has them.
  std::map<int64_t, std::vector<PythonHolder>> keptAliveAtPeak;
  /// By allocation id: the script's module-level variables that held the block when it ended
  /// ("c", "a.grad", "parts[3]"); empty for a run that raised or was recorded around a block.
  std::map<int64_t, std::vector<std::string>> variables;
  std::optional<PythonPeak> peak;  ///< none when nothing was allocated
  std::vector<PythonMark> marks;
  std::optional<PythonTorch> torch;
  std::vector<PythonValueRead> valueReads;  ///< in the order of their first read
  std::optional<PythonPinnedHost> pinnedHost;
  /// Key paths present in the file that this reader does not know, skipped.
  std::vector<std::string> ignored;

  /// The allocation with `id`, or nullptr.
  const PythonAllocation* allocation(int64_t id) const;
};

/// Reads a parsed report document (parseReportJson) of kind "python". Throws ReportLoadError
/// ("'<file>': <problem>") for a bad envelope (reportKind), another kind, a missing or mistyped
/// key, a negative size or time, an index out of range, or a table whose columns lack one this
/// reader needs.
PythonReport readPythonReport(const nlohmann::json& doc, const std::string& file);
/// The same from the file's text; also refuses empty, truncated and non-JSON text.
PythonReport parsePythonReport(const std::string& text, const std::string& file);
/// Reads the file at `path`; messages name the file by its name without its folder.
PythonReport readPythonReportFile(const std::string& path);

}  // namespace matmulviz
