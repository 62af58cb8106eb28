// The thread-local stack of FlopCounters and the hook the counted ops call.
#include "core/ops/flop_counter.h"

#include <algorithm>

namespace matmulviz {

namespace {
thread_local std::vector<FlopCounter*> activeCounters;
thread_local int notCountedDepth = 0;
}  // namespace

FlopCounter::FlopCounter() {
  activeCounters.push_back(this);
}

FlopCounter::~FlopCounter() {
  auto it = std::find(activeCounters.rbegin(), activeCounters.rend(), this);
  if (it != activeCounters.rend()) activeCounters.erase(std::next(it).base());
}

int64_t FlopCounter::total() const {
  int64_t sum = 0;
  for (const auto& [op, flops] : counts_) sum += flops;
  return sum;
}

int64_t FlopCounter::count(const std::string& op) const {
  for (const auto& [name, flops] : counts_)
    if (name == op) return flops;
  return 0;
}

void FlopCounter::add(const std::string& op, int64_t flops) {
  for (auto& [name, sum] : counts_)
    if (name == op) {
      sum += flops;
      return;
    }
  counts_.emplace_back(op, flops);
}

void countFlops(const char* op, int64_t flops) {
  if (notCountedDepth > 0) return;
  for (FlopCounter* c : activeCounters) c->add(op, flops);
}

FlopsNotCounted::FlopsNotCounted() {
  ++notCountedDepth;
}
FlopsNotCounted::~FlopsNotCounted() {
  --notCountedDepth;
}
bool FlopsNotCounted::active() {
  return notCountedDepth > 0;
}

}  // namespace matmulviz
