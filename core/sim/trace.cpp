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

void Trace::append(Trace&& later) {
  const std::size_t room = capEvents_ - std::min(capEvents_, events_.size());
  const std::size_t take = std::min(room, later.events_.size());
  dropped_ += later.dropped_ + (later.events_.size() - take);
  if (events_.empty() && take == later.events_.size()) {
    events_ = std::move(later.events_);  // the usual case of a single range: no copy
  } else {
    events_.insert(events_.end(), later.events_.begin(),
                   later.events_.begin() + static_cast<std::ptrdiff_t>(take));
  }
  later.events_ = {};
  later.dropped_ = 0;
}

}  // namespace matmulviz::sim
