#pragma once
// What the simulator reports instead of crashing: out-of-bounds accesses, barrier divergence and
// shared-memory races, each naming the kernel, block, thread, array and index.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/sim/views.h"

namespace matmulviz::sim {

enum class DiagnosticKind : std::uint8_t {
  OutOfBounds,  ///< a global or shared access outside its array (reads give 0, writes dropped)
  BarrierDivergence,  ///< some threads of a block wait at a barrier others never reach
  SharedRace,         ///< two threads touch one shared address between barriers, one writing
};

/// "out_of_bounds", "barrier_divergence", "shared_race" (the JSON spelling).
const char* toString(DiagnosticKind kind);

struct Diagnostic {
  DiagnosticKind kind = DiagnosticKind::OutOfBounds;
  std::string kernel;
  Dim3 block;                       ///< blockIdx of the offending thread
  Dim3 thread;                      ///< threadIdx of the offending thread
  std::string array;                ///< array name; empty for barrier divergence
  std::vector<std::int64_t> index;  ///< coordinates of the access; empty for barriers
  std::string message;              ///< one sentence a person can act on
  /// How many counted occurrences this entry stands for: barrier divergence that repeats phase
  /// after phase at one barrier of one block is listed once (its message says so); else 1.
  std::uint64_t repeats = 1;
};

/// Exact counts for a launch, however many detailed Diagnostic entries were kept.
struct DiagnosticCounts {
  std::uint64_t outOfBounds = 0;        ///< accesses
  std::uint64_t barrierDivergence = 0;  ///< barrier phases where threads diverged
  std::uint64_t sharedRaces = 0;        ///< racing accesses
  std::uint64_t total() const { return outOfBounds + barrierDivergence + sharedRaces; }
};

/// Formats a Dim3 as "(x, y, z)".
std::string toString(const Dim3& d);

}  // namespace matmulviz::sim
