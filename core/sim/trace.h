#pragma once
// A bounded record of what each simulated thread did, for the GUI's animation and offline study.
// Events are kept in execution order up to a byte cap; beyond it they are counted, not stored.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace matmulviz::sim {

enum class TraceEventKind : std::uint8_t {
  GlobalLoad,
  GlobalStore,
  SharedLoad,
  SharedStore,
  Barrier,     ///< index[0] = source line of the barrier
  ThreadExit,  ///< index[0] = FMAs this thread performed
};

/// "global_load", "global_store", "shared_load", "shared_store", "barrier", "thread_exit".
const char* toString(TraceEventKind kind);

/// One event: 20 bytes. `block` is the linear block index (x fastest), `thread` the linear
/// thread index within the block (x fastest), `array` the id in the launch's array table,
/// `index` the element coordinates (unused ones 0).
struct TraceEvent {
  std::uint32_t block = 0;
  std::uint16_t thread = 0;
  TraceEventKind kind = TraceEventKind::GlobalLoad;
  std::uint8_t array = 0;
  std::int32_t index[3] = {0, 0, 0};
};
static_assert(sizeof(TraceEvent) == 20, "TraceEvent is part of the trace memory budget");

/// An array a launch touches, as named in diagnostics and traces.
struct ArrayInfo {
  int id = 0;
  std::string name;
  bool shared = false;  ///< a shared-memory tile (per block) rather than global memory
  std::vector<std::int64_t> shape;
  std::size_t elementBytes = 4;
};

/// Events in execution order, at most capBytes / sizeof(TraceEvent) of them; the rest are
/// counted in dropped(). Memory stays within the cap (storage grows geometrically up to it).
class Trace {
 public:
  explicit Trace(std::size_t capBytes = 0) : capEvents_(capBytes / sizeof(TraceEvent)) {}

  void push(const TraceEvent& event) {
    if (events_.size() < events_.capacity()) {
      events_.push_back(event);
    } else {
      pushSlow(event);
    }
  }

  /// Appends `later`'s events and dropped count as if they had been pushed here one by one
  /// after this trace's own: stored up to this trace's cap, counted as dropped beyond it.
  void append(Trace&& later);

  const std::vector<TraceEvent>& events() const { return events_; }
  std::uint64_t dropped() const { return dropped_; }
  std::size_t capBytes() const { return capEvents_ * sizeof(TraceEvent); }

 private:
  void pushSlow(const TraceEvent& event);

  std::size_t capEvents_;
  std::vector<TraceEvent> events_;
  std::uint64_t dropped_ = 0;
};

}  // namespace matmulviz::sim
