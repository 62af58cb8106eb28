#pragma once
// Recording a Python run (matmulviz.record, python3 -m matmulviz --report): every allocation of
// the CUDA device tagged with the Python frame that caused it (file:line and function, the first
// frame outside the matmulviz package), then a report file with the allocator's events, the
// allocations, what keeps the live ones alive, and memory_stats(). Schema: docs/report-format.md.

#include "core/memory/memory_category.h"
#include "core/tensor/device.h"

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace matmulviz::python {

struct PythonFrame {
  std::string file;
  int line = 0;
  std::string function;
};

class Recorder {
 public:
  /// Starts tagging allocations of the current CUDA device; events before now are left out.
  /// `packageDir`: frames whose file starts with it are skipped (the glue's own frames), and so
  /// are those under `otherSkipDirs` (matmulviz.simulate: the installed PyTorch's own files, so
  /// a block made inside nn.Linear names the user's line that called it).
  void start(const std::string& packageDir, std::vector<std::string> otherSkipDirs = {});
  /// Stops tagging. Safe to call when not started.
  void stop();
  bool active() const { return active_; }
  /// Writes the report to `path` atomically. `extra`: a JSON object (as a Python dict) merged in
  /// at the top (script, argv, complete, error, memory_stats).
  void write(const std::string& path, const pybind11::dict& extra) const;
  /// Marks a moment of the timeline (reset_peak_memory_stats, a user's mark).
  void mark(const std::string& name);

 private:
  void onAllocation(int64_t allocationId);
  /// Starts tagging `device`'s allocations (the current CUDA device, or a new one that replaced
  /// it while recording: set_cuda_mode at the top of a script).
  void attach(const DevicePtr& device);
  bool active_ = false;
  DevicePtr device_;
  std::string packageDir_;
  std::vector<std::string> otherSkipDirs_;
  bool skipped(const std::string& file) const;
  size_t firstEvent_ = 0;
  std::vector<PythonFrame> frames_;
  std::unordered_map<std::string, int32_t> frameIds_;
  std::unordered_map<int64_t, int32_t> frameOf_;  // allocation id -> frame
  struct Mark {
    double timeUs;
    std::string name;
    size_t events;  ///< the allocator's event count when it was made
  };
  std::vector<Mark> marks_;
  /// Holder changes while recording, to say what held each block at the peak.
  struct HolderChange {
    size_t events;  ///< the allocator's event count when it happened
    int64_t id;
    int32_t why;  ///< index into holderWhys_
    int32_t delta;
  };
  std::vector<HolderChange> holderLog_;
  /// The blocks autograd saved at some time during the recording (a SavedTensor on them).
  std::unordered_set<int64_t> savedByAutograd() const;
  /// A block's category in the report: the engine's ("gradients" from autograd's backward),
  /// else "saved for backward" for a block in `saved` that no Python variable held (`named`,
  /// the ids of the report's "variables"), else "other".
  static MemoryCategory categoryOf(const AllocationRecord& r,
                                   const std::unordered_set<int64_t>& saved,
                                   const std::unordered_set<int64_t>& named);
  std::vector<std::string> holderWhys_;
  std::unordered_map<std::string, int32_t> holderWhyIds_;
  void onHolder(int64_t id, const std::string& why, int delta);
  /// peak.kept_alive_by: the holders of the blocks in `live` just after event `peakEvent`.
  nlohmann::ordered_json holdersAt(size_t peakEvent, const std::vector<int64_t>& live) const;
};

Recorder& recorder();

}  // namespace matmulviz::python
