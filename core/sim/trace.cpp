#include "core/sim/trace.h"

#include <algorithm>

namespace matmulviz::sim {

const char* toString(TraceEventKind kind) {
  switch (kind) {
    case TraceEventKind::GlobalLoad:
      return "global_load";
    case TraceEventKind::GlobalStore:
      return "global_store";
    case TraceEventKind::SharedLoad:
      return "shared_load";
    case TraceEventKind::SharedStore:
      return "shared_store";
    case TraceEventKind::Barrier:
      return "barrier";
    case TraceEventKind::ThreadExit:
      return "thread_exit";
  }
  return "unknown";
}

void Trace::pushSlow(const TraceEvent& event) {
  if (events_.size() >= capEvents_) {
    ++dropped_;
    return;
  }
  const std::size_t grown = std::max<std::size_t>(4096, events_.capacity() * 2);
  events_.reserve(std::min(grown, capEvents_));
  events_.push_back(event);
}

}  // namespace matmulviz::sim
