#include "core/sim/diagnostics.h"

#include <string>

#include "core/sim/block_state.h"

namespace matmulviz::sim {

const char* toString(DiagnosticKind kind) {
  switch (kind) {
    case DiagnosticKind::OutOfBounds:
      return "out_of_bounds";
    case DiagnosticKind::BarrierDivergence:
      return "barrier_divergence";
    case DiagnosticKind::SharedRace:
      return "shared_race";
  }
  return "unknown";
}

std::string toString(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

LaunchCounters& LaunchCounters::operator+=(const LaunchCounters& o) {
  globalLoads += o.globalLoads;
  globalStores += o.globalStores;
  globalLoadBytes += o.globalLoadBytes;
  globalStoreBytes += o.globalStoreBytes;
  sharedLoads += o.sharedLoads;
  sharedStores += o.sharedStores;
  fmas += o.fmas;
  barrierWaits += o.barrierWaits;
  activeThreads += o.activeThreads;
  outOfBoundsOnlyThreads += o.outOfBoundsOnlyThreads;
  return *this;
}

namespace {

std::string bracketed(const std::int64_t* index, int rank) {
  std::string s = "[";
  for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

}  // namespace

Diagnostic DiagnosticCollector::start(DiagnosticKind kind, const Dim3& block,
                                      const Dim3& thread) const {
  Diagnostic d;
  d.kind = kind;
  d.kernel = kernel_;
  d.block = block;
  d.thread = thread;
  return d;
}

void DiagnosticCollector::outOfBounds(const Dim3& block, const Dim3& thread,
                                      const PendingFault& fault) {
  counts_.outOfBounds += fault.count;
  if (!keep()) return;
  Diagnostic d = start(DiagnosticKind::OutOfBounds, block, thread);
  d.array = fault.array;
  d.index.assign(fault.index, fault.index + fault.rank);
  const std::string where = std::string(fault.array) + bracketed(fault.index, fault.rank);
  d.message = std::string(fault.store ? "writes " : "reads ") +
              (fault.shared ? "shared " : "global ") + where;
  if (fault.tile == TileFault::OutsideBuffer) {
    d.message += ", which lies outside the block's dynamic shared memory";
  } else if (fault.tile == TileFault::Misaligned) {
    d.message +=
        ", whose tile is not aligned to its element size (a GPU faults with a "
        "misaligned address)";
  } else {
    d.message += " outside its shape " + bracketed(fault.sizes, fault.rank);
  }
  d.message += fault.store ? " (write dropped" : " (read gives 0";
  if (fault.count > 1) d.message += "; " + std::to_string(fault.count - 1) + " more by this thread";
  d.message +=
      "). Guard the access with a bounds check as the naive kernel's `if (i < M && j < N)`";
  d.message = "kernel " + kernel_ + ", block " + toString(block) + ", thread " + toString(thread) +
              ": " + d.message;
  diagnostics_.push_back(std::move(d));
}

void DiagnosticCollector::race(const Dim3& block, const Dim3& thread, const Dim3& blockDim,
                               const PendingRace& race) {
  counts_.sharedRaces += race.count;
  if (!keep()) return;
  Diagnostic d = start(DiagnosticKind::SharedRace, block, thread);
  d.array = race.array;
  d.index = {race.row, race.col};
  std::string other = "several threads";
  if (race.other >= 0) {
    const unsigned o = static_cast<unsigned>(race.other);
    other = "thread " + toString(Dim3{o % blockDim.x, (o / blockDim.x) % blockDim.y,
                                      o / (blockDim.x * blockDim.y)});
  }
  const std::string cell = std::string(race.array) + "[" + std::to_string(race.row) + ", " +
                           std::to_string(race.col) + "]";
  switch (race.kind) {
    case RaceKind::ReadAfterWrite:
      d.message = "reads shared " + cell + " written by " + other;
      break;
    case RaceKind::WriteAfterRead:
      d.message = "writes shared " + cell + " read by " + other;
      break;
    case RaceKind::WriteAfterWrite:
      d.message = "writes shared " + cell + " also written by " + other;
      break;
  }
  d.message = "kernel " + kernel_ + ", block " + toString(block) + ", thread " + toString(thread) +
              ": " + d.message + " with no __syncthreads() between them";
  if (race.count > 1)
    d.message += " (" + std::to_string(race.count - 1) +
                 (race.count == 2 ? " more race" : " more races") + " by this thread)";
  diagnostics_.push_back(std::move(d));
}

void DiagnosticCollector::divergence(const Dim3& block, const Dim3& waitingThread,
                                     const std::string& message) {
  ++counts_.barrierDivergence;
  const std::string text = "kernel " + kernel_ + ", block " + toString(block) + ": " + message;
  if (const auto seen = divergenceSeen_.find(text); seen != divergenceSeen_.end()) {
    Diagnostic& kept = diagnostics_[seen->second];
    kept.message =
        text + " (the same in " + std::to_string(++kept.repeats) + " barrier phases of this block)";
    return;
  }
  if (!keep()) return;
  Diagnostic d = start(DiagnosticKind::BarrierDivergence, block, waitingThread);
  d.message = text;
  divergenceSeen_.emplace(text, diagnostics_.size());
  diagnostics_.push_back(std::move(d));
}

}  // namespace matmulviz::sim
