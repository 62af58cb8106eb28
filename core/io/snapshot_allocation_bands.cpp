#include "core/io/snapshot_allocation_bands.h"

#include "core/util/saturating.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace matmulviz::snapshot {

namespace {

/// The allocations of the trace and the segments, what is alive at the start (stacked first,
/// bottom first) and the order of allocs and frees (an element's first action adds it, its
/// second removes it). Follows process_alloc_data's first two loops.
struct Inputs {
  std::vector<BandElement> elements;
  std::vector<uint32_t> initial;
  std::vector<uint32_t> actions;
  std::vector<int64_t> actionEvents;
};

Inputs collect(const MemorySnapshot& s, size_t device) {
  Inputs in;
  std::unordered_map<int64_t, uint32_t> live;  // address -> element
  auto act = [&](uint32_t e, int64_t x) {
    in.actions.push_back(e);
    in.actionEvents.push_back(x);
  };
  auto add = [&](BandElement e) {
    in.elements.push_back(e);
    return static_cast<uint32_t>(in.elements.size() - 1);
  };
  const DeviceTrace* trace = device < s.traces.size() ? &s.traces[device] : nullptr;
  for (size_t x = 0; trace && x < trace->count(); ++x) {
    const int64_t addr = trace->addr[x];
    const auto ix = static_cast<int64_t>(x);
    if (trace->action[x] == TraceAction::Alloc) {
      if (const auto it = live.find(addr); it != live.end()) {  // its free is missing
        in.elements[it->second].freeEvent = ix;
        act(it->second, ix);
      }
      const uint32_t e = add({addr, trace->size[x], trace->stack[x], ix, -1});
      live[addr] = e;
      act(e, ix);
    } else if (trace->action[x] == TraceAction::FreeCompleted) {
      if (const auto it = live.find(addr); it != live.end()) {
        in.elements[it->second].freeEvent = ix;
        act(it->second, ix);
        live.erase(it);
      } else {  // allocated before the recording
        const uint32_t e = add({addr, trace->size[x], trace->stack[x], -1, ix});
        in.initial.push_back(e);
        act(e, ix);
      }
    }
  }
  for (const Segment& seg : s.segments) {
    if (seg.device != static_cast<int64_t>(device)) continue;
    for (uint32_t b = seg.firstBlock; b < seg.firstBlock + seg.blockCount; ++b) {
      const Block& block = s.blocks[b];
      if (block.state == BlockState::ActiveAllocated && !live.contains(block.address))
        in.initial.push_back(add({block.address, block.requestedSize, block.stack, -1, -1}));
    }
  }
  std::reverse(in.initial.begin(), in.initial.end());
  if (in.actions.empty() && !in.initial.empty()) {  // show them flat rather than nothing
    act(in.initial.back(), -1);
    in.initial.pop_back();
  }
  return in;
}

/// process_alloc_data's stacking loop for a given cap. Returns false (and leaves `out` partly
/// filled) as soon as the bands need more than `maxPoints` vertices.
class Stacker {
 public:
  Stacker(const Inputs& in, AllocationBands& out) : in_(in), out_(out) {}

  bool run(size_t maxEntries, size_t maxPoints);

 private:
  int64_t size(uint32_t e) const { return in_.elements[e].size; }
  void advance(int steps);
  void addBand(uint32_t e);
  bool removeBand(uint32_t e);

  const Inputs& in_;
  AllocationBands& out_;
  std::vector<uint8_t> drawn_, state_;  // state: 0 not seen, 1 alive, 2 gone
  std::vector<size_t> current_;         // bands alive, bottom first
  double step_ = 0;
  int64_t total_ = 0, summarised_ = 0;
  size_t points_ = 0, maxPoints_ = 0;
};

void Stacker::advance(int steps) {
  out_.summarySteps.push_back(step_);
  out_.summaryOffsets.push_back(total_);
  out_.summarySizes.push_back(summarised_);
  step_ += steps;
  const int64_t now = addSaturating(total_, summarised_);
  for (int i = 0; i < steps; ++i) out_.totalAtStep.push_back(now);
}

void Stacker::addBand(uint32_t e) {
  out_.bands.push_back({e, {step_}, {total_}});
  current_.push_back(out_.bands.size() - 1);
  total_ = addSaturating(total_, size(e));
  ++points_;
}

bool Stacker::removeBand(uint32_t e) {
  size_t idx = current_.size();
  while (idx > 0 && out_.bands[current_[idx - 1]].element != e) --idx;
  --idx;  // found: every alive element has a band in current_
  advance(1);
  AllocationBand& gone = out_.bands[current_[idx]];
  gone.steps.push_back(step_);
  gone.offsets.push_back(gone.offsets.back());
  current_.erase(current_.begin() + static_cast<std::ptrdiff_t>(idx));
  points_ += 1 + 2 * (current_.size() - idx);
  if (points_ > maxPoints_) return false;
  if (idx < current_.size()) {
    for (size_t j = idx; j < current_.size(); ++j) {
      AllocationBand& b = out_.bands[current_[j]];
      const int64_t off = b.offsets.back();
      b.steps.insert(b.steps.end(), {step_, step_ + 3});
      b.offsets.insert(b.offsets.end(), {off, std::max<int64_t>(0, subSaturating(off, size(e)))});
    }
    advance(3);
  }
  total_ = std::max<int64_t>(0, subSaturating(total_, size(e)));  // 0 unless sums saturated
  return true;
}

bool Stacker::run(size_t maxEntries, size_t maxPoints) {
  maxPoints_ = maxPoints;
  const size_t n = in_.elements.size();
  std::vector<uint32_t> bySize(n);
  std::iota(bySize.begin(), bySize.end(), 0u);
  std::stable_sort(bySize.begin(), bySize.end(),
                   [&](uint32_t a, uint32_t b) { return size(a) > size(b); });
  drawn_.assign(n, 0);
  state_.assign(n, 0);
  for (size_t i = 0; i < std::min(maxEntries, n); ++i) drawn_[bySize[i]] = 1;
  for (const uint32_t e : in_.initial) {
    state_[e] = 1;
    if (drawn_[e])
      addBand(e);
    else
      summarised_ = addSaturating(summarised_, size(e));
  }
  for (size_t a = 0; a < in_.actions.size(); ++a) {
    const uint32_t e = in_.actions[a];
    out_.actionSteps.push_back(step_);
    out_.actionEvents.push_back(in_.actionEvents[a]);
    const bool adds = state_[e] == 0;
    state_[e] = adds ? 1 : 2;
    if (!drawn_[e]) {  // as the viewer: an alloc counts before its step, a free after it
      if (adds) summarised_ = addSaturating(summarised_, size(e));
      advance(1);
      if (!adds) summarised_ = std::max<int64_t>(0, subSaturating(summarised_, size(e)));
    } else if (adds) {
      addBand(e);
      advance(1);
    } else if (!removeBand(e)) {
      return false;
    }
    if (points_ > maxPoints_) return false;
  }
  out_.summarySteps.push_back(step_);  // the summary runs to the end
  out_.summaryOffsets.push_back(total_);
  out_.summarySizes.push_back(summarised_);
  for (const size_t b : current_) {
    out_.bands[b].steps.push_back(step_);
    out_.bands[b].offsets.push_back(out_.bands[b].offsets.back());
  }
  return true;
}

}  // namespace

AllocationBands allocationBands(const MemorySnapshot& snapshot, size_t device, size_t maxEntries,
                                size_t maxPoints) {
  const Inputs in = collect(snapshot, device);
  for (;;) {
    AllocationBands out;
    Stacker stacker(in, out);
    if (stacker.run(maxEntries, maxPoints) || maxEntries == 0) {
      out.elements = in.elements;
      out.maxEntries = maxEntries;
      const auto peak = std::max_element(out.totalAtStep.begin(), out.totalAtStep.end());
      if (peak != out.totalAtStep.end()) {
        out.peakBytes = *peak;
        out.peakStep = double(peak - out.totalAtStep.begin());
      }
      return out;
    }
    maxEntries /= 2;
  }
}

double bandOffsetAt(const AllocationBand& band, double step) {
  const auto& s = band.steps;
  if (s.empty() || step < s.front() || step > s.back()) return -1;
  const size_t i = size_t(std::upper_bound(s.begin(), s.end(), step) - s.begin());
  if (i == s.size()) return double(band.offsets.back());
  if (i == 0) return double(band.offsets.front());
  const double x0 = s[i - 1], x1 = s[i];
  const double y0 = double(band.offsets[i - 1]), y1 = double(band.offsets[i]);
  return x1 > x0 ? y0 + (y1 - y0) * (step - x0) / (x1 - x0) : y1;
}

int bandAt(const AllocationBands& bands, double step, double bytes) {
  for (size_t b = 0; b < bands.bands.size(); ++b) {
    const AllocationBand& band = bands.bands[b];
    const double off = bandOffsetAt(band, step);
    if (off < 0) continue;
    // A band's end vertex is shared with the next band starting at the same step: the later
    // band (drawn on top) wins, so keep looking rather than returning at once on an edge.
    if (bytes >= off && bytes < off + double(bands.elements[band.element].size) &&
        step < band.steps.back())
      return static_cast<int>(b);
  }
  const auto& s = bands.summarySteps;
  if (s.empty() || step < s.front()) return -1;
  const size_t i = size_t(std::upper_bound(s.begin(), s.end(), step) - s.begin()) - 1;
  const double off = double(bands.summaryOffsets[i]);
  return bands.summarySizes[i] > 0 && bytes >= off && bytes < off + double(bands.summarySizes[i])
             ? kSummaryBand
             : -1;
}

int64_t eventAtStep(const AllocationBands& bands, double step) {
  const auto& s = bands.actionSteps;
  const auto it = std::upper_bound(s.begin(), s.end(), step);
  if (it == s.begin()) return -1;
  return bands.actionEvents[size_t(it - s.begin()) - 1];
}

}  // namespace matmulviz::snapshot
