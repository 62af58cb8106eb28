#pragma once
// Per-block and per-thread state of a simulated launch, shared by the thread context (inline,
// hot) and the block runner (fibers, in block_runner.cpp). Not part of a kernel's interface.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/sim/diagnostics.h"
#include "core/sim/launch_config.h"
#include "core/sim/trace.h"
#include "core/sim/views.h"

namespace matmulviz::sim {

class BlockRunner;

/// Exact per-launch counts of what the threads did (elements, not transactions).
struct LaunchCounters {
  std::uint64_t globalLoads = 0;
  std::uint64_t globalStores = 0;
  std::uint64_t globalLoadBytes = 0;
  std::uint64_t globalStoreBytes = 0;
  std::uint64_t sharedLoads = 0;
  std::uint64_t sharedStores = 0;
  std::uint64_t fmas = 0;           ///< fused multiply-adds (2 FLOPs each)
  std::uint64_t barrierWaits = 0;   ///< per thread: how many times a thread waited at a barrier
  std::uint64_t activeThreads = 0;  ///< threads that touched global memory at all
  /// Threads whose every global access was out of bounds (reported and neutralised): neither
  /// active nor idle.
  std::uint64_t outOfBoundsOnlyThreads = 0;

  LaunchCounters& operator+=(const LaunchCounters& o);
};

/// Race-detection shadow of one 4-byte word of shared memory: who wrote it and who read it in
/// the current barrier epoch, packed in one word so that the common case is one compare:
/// bits 63..32 epoch, 31..16 writer, 15..0 reader (linear thread index, kNone, or kMany for
/// two or more readers).
struct ShadowCell {
  static constexpr std::int16_t kNone = -1;
  static constexpr std::int16_t kMany = -2;
  static constexpr std::uint64_t pack(std::uint32_t epoch, std::int16_t writer,
                                      std::int16_t reader) {
    return (std::uint64_t{epoch} << 32) |
           (std::uint64_t{static_cast<std::uint16_t>(writer)} << 16) |
           std::uint64_t{static_cast<std::uint16_t>(reader)};
  }
  std::uint32_t epoch() const { return static_cast<std::uint32_t>(bits >> 32); }
  std::int16_t writer() const { return static_cast<std::int16_t>((bits >> 16) & 0xFFFF); }
  std::int16_t reader() const { return static_cast<std::int16_t>(bits & 0xFFFF); }

  std::uint64_t bits = 0;
};

/// Why a shared access faulted although (row, col) lies inside its tile's shape.
enum class TileFault : std::uint8_t {
  None,           ///< it does not: (row, col) is outside the shape
  OutsideBuffer,  ///< the tile reaches past the block's dynamic shared memory
  Misaligned,     ///< the tile does not start at a multiple of its element's alignment
};

/// The first out-of-bounds access of a thread since its last report, and how many there were.
struct PendingFault {
  std::uint32_t count = 0;
  bool shared = false;
  bool store = false;
  TileFault tile = TileFault::None;  ///< shared: the tile itself is at fault
  const char* array = "";
  int rank = 0;
  std::int64_t index[3] = {0, 0, 0};
  std::int64_t sizes[3] = {0, 0, 0};
};

enum class RaceKind : std::uint8_t { ReadAfterWrite, WriteAfterRead, WriteAfterWrite };

/// The first shared-memory race a thread took part in since its last report.
struct PendingRace {
  std::uint32_t count = 0;
  RaceKind kind = RaceKind::ReadAfterWrite;
  const char* array = "";
  std::int64_t row = 0;
  std::int64_t col = 0;
  int other = -1;  ///< linear thread index of the other party; -1 when several threads read
};

/// One simulated thread's slot in the block runner. The fields a thread touches at every barrier
/// share the first cache line; the parked reports, touched only after a fault or race, follow.
struct alignas(64) ThreadSlot {
  enum class State : std::uint8_t { Ready, Running, AtBarrier, Exited };
  State state = State::Ready;
  bool reportsPending = false;  ///< fault or race below holds something to report
  unsigned linear = 0;
  unsigned barrierLine = 0;
  Dim3 threadIdx;
  const char* barrierFile = "";
  BlockRunner* runner = nullptr;
  /// Written by the thread context's cold paths and reported at the next barrier or exit. They
  /// live here rather than in the context so that the context's address never escapes.
  PendingFault fault;
  PendingRace race;

  /// Suspends this thread at a barrier until the runner releases the block. Defined in
  /// block_runner.cpp.
  void waitAtBarrier(const char* file, unsigned line);
};

/// Reports diagnostics for a launch: exact counts, details for the first `maxDetailed`.
class DiagnosticCollector {
 public:
  DiagnosticCollector(std::string kernel, std::size_t maxDetailed)
      : kernel_(std::move(kernel)), maxDetailed_(maxDetailed) {}

  void outOfBounds(const Dim3& block, const Dim3& thread, const PendingFault& fault);
  void race(const Dim3& block, const Dim3& thread, const Dim3& blockDim, const PendingRace& race);
  /// Barrier divergence in `block`, counted once per barrier phase; a message identical to one
  /// already kept (the same barrier of the same block, phase after phase) is not listed again:
  /// the kept one says in how many phases it happened.
  void divergence(const Dim3& block, const Dim3& waitingThread, const std::string& message);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  std::vector<Diagnostic> takeDiagnostics() { return std::move(diagnostics_); }
  const DiagnosticCounts& counts() const { return counts_; }

 private:
  bool keep() const { return diagnostics_.size() < maxDetailed_; }
  /// A diagnostic of `kind` for this kernel, block and thread; the caller adds the rest.
  Diagnostic start(DiagnosticKind kind, const Dim3& block, const Dim3& thread) const;

  std::string kernel_;
  std::size_t maxDetailed_;
  std::vector<Diagnostic> diagnostics_;
  DiagnosticCounts counts_;
  /// Kept divergence diagnostics by their message: index into diagnostics_.
  std::unordered_map<std::string, std::size_t> divergenceSeen_;
};

/// The block being simulated.
struct BlockState {
  LaunchConfig config;
  Dim3 blockIdx;
  std::uint64_t blockLinear = 0;
  std::byte* shared = nullptr;   ///< the block's dynamic shared memory (config.sharedBytes)
  ShadowCell* shadow = nullptr;  ///< one cell per 4 bytes of shared memory
  std::uint32_t epoch = 1;       ///< barrier epoch, launch-wide, increases at every barrier
  Trace* trace = nullptr;        ///< null when this block is not traced
  DiagnosticCollector* diagnostics = nullptr;
  LaunchCounters counters;  ///< merged from the block's threads as they exit
};

}  // namespace matmulviz::sim
