#include "ui/models/kernel_timeline.h"

#include <algorithm>

#include "kernels/matmul_args.h"

namespace matmulviz::ui {
namespace {

using sim::TraceEvent;
using sim::TraceEventKind;

bool isASide(std::uint8_t array) {
  return array == kernels::kArrayA || array == kernels::kArrayAs;
}
bool isBSide(std::uint8_t array) {
  return array == kernels::kArrayB || array == kernels::kArrayBs;
}
std::int64_t pack(std::int32_t row, std::int32_t col) {
  return (std::int64_t{row} << 32) | std::uint32_t(col);
}

}  // namespace

/// One pass over the traced block's events, in execution order.
struct KernelTimeline::Builder {
  KernelTimeline& t;
  const std::vector<TraceEvent>& events;
  int tpb = 1;
  bool tiled = false;
  std::vector<std::uint16_t> barriers;  // per thread: barriers passed
  bool open = false;
  KernelAtom cur;
  bool hasA = false, hasB = false, hasStore = false;

  void begin(const TraceEvent& e, std::uint32_t i) {
    open = true;
    cur = KernelAtom{i, i, e.thread, barriers[e.thread], KernelAtomKind::KStep, false};
    hasA = hasB = hasStore = false;
  }
  void push(KernelAtom atom) {
    const auto index = static_cast<std::int64_t>(t.atoms_.size());
    while (t.phaseBegin_.size() <= atom.phase) t.phaseBegin_.push_back(index);
    if (t.firstAtom_[atom.thread] < 0) t.firstAtom_[atom.thread] = index;
    if (atom.kind == KernelAtomKind::Store || atom.kind == KernelAtomKind::Exit) {
      t.doneAtom_[atom.thread] = index;
    }
    if (atom.kind == KernelAtomKind::Stage) recordStage(atom);
    t.atoms_.push_back(atom);
  }
  void close(KernelAtomKind kind, std::uint32_t end) {
    cur.kind = kind;
    cur.endEvent = end;
    open = false;
    push(cur);
  }
  void recordStage(const KernelAtom& atom) {
    const int tile = t.result_->geometry.tileStagedIn(atom.phase);
    if (tile < 0) return;
    const std::size_t plane = std::size_t(tpb) * tpb;
    if (t.staged_.size() < (tile + 1) * 2 * plane) t.staged_.resize((tile + 1) * 2 * plane, -2);
    std::int64_t a = -1, b = -1;
    for (std::uint32_t i = atom.firstEvent; i < atom.endEvent; ++i) {
      const TraceEvent& e = events[i];
      if (e.kind == TraceEventKind::GlobalLoad) {
        (isASide(e.array) ? a : b) = pack(e.index[0], e.index[1]);
      } else if (e.kind == TraceEventKind::SharedStore) {
        const std::size_t which = e.array == kernels::kArrayBs ? 1 : 0;
        t.staged_[(tile * 2 + which) * plane + std::size_t(e.index[0]) * tpb + e.index[1]] =
            which ? b : a;
      }
    }
  }
  void barrier(const TraceEvent& e, std::uint32_t i) {
    if (open) close(KernelAtomKind::Partial, i);
    if (!t.atoms_.empty() && t.atoms_.back().thread == e.thread && t.atoms_.back().endEvent == i) {
      t.atoms_.back().endEvent = i + 1;
      t.atoms_.back().barrierAfter = true;
    } else {
      push(KernelAtom{i, i + 1, e.thread, barriers[e.thread], KernelAtomKind::Partial, true});
    }
    ++barriers[e.thread];
  }
  void exit(const TraceEvent& e, std::uint32_t i) {
    if (open && hasStore) return close(KernelAtomKind::Store, i + 1);
    if (open) close(KernelAtomKind::Partial, i);
    push(KernelAtom{i, i + 1, e.thread, barriers[e.thread], KernelAtomKind::Exit, false});
  }
  void access(const TraceEvent& e, std::uint32_t i) {
    if (!open) begin(e, i);
    switch (e.kind) {
      case TraceEventKind::GlobalLoad:
      case TraceEventKind::SharedLoad:
        hasA |= isASide(e.array);
        hasB |= isBSide(e.array);
        if ((!tiled || e.kind == TraceEventKind::SharedLoad) && hasA && hasB) {
          close(KernelAtomKind::KStep, i + 1);
        }
        break;
      case TraceEventKind::SharedStore:
        if (e.array == kernels::kArrayBs) close(KernelAtomKind::Stage, i + 1);
        break;
      case TraceEventKind::GlobalStore:
        hasStore = true;
        break;
      default:
        break;
    }
  }
  void run() {
    for (std::uint32_t i = 0; i < events.size(); ++i) {
      const TraceEvent& e = events[i];
      if (e.thread >= barriers.size()) continue;  // not a thread of this block
      if (open && e.thread != cur.thread) close(KernelAtomKind::Partial, i);
      if (e.kind == TraceEventKind::Barrier) {
        barrier(e, i);
      } else if (e.kind == TraceEventKind::ThreadExit) {
        exit(e, i);
      } else {
        access(e, i);
      }
    }
    if (open) close(KernelAtomKind::Partial, std::uint32_t(events.size()));
  }
};

KernelTimeline::KernelTimeline(std::shared_ptr<const KernelLaunchResult> result)
    : result_(std::move(result)) {
  if (!result_) return;
  const KernelGeometry& g = result_->geometry;
  const std::size_t threads = std::size_t(g.threadsPerBlock());
  firstAtom_.assign(threads, -1);
  doneAtom_.assign(threads, -1);
  Builder b{*this, result_->run.report.trace.events(), g.tpb, g.tiled, {}, false, {}};
  b.barriers.assign(threads, 0);
  b.run();
  if (phaseBegin_.empty()) phaseBegin_.push_back(0);
  threadEnds_ = {0};
  phaseEnds_ = {0};
  for (std::size_t a = 0; a < atoms_.size(); ++a) {
    const bool last = a + 1 == atoms_.size();
    const bool newPhase = last || atoms_[a + 1].phase != atoms_[a].phase;
    if (newPhase || atoms_[a + 1].thread != atoms_[a].thread) {
      threadEnds_.push_back(std::int64_t(a + 1));
    }
    if (newPhase) phaseEnds_.push_back(std::int64_t(a + 1));
  }
}

const std::vector<std::int64_t>& KernelTimeline::boundaries(KernelStepUnit unit) const {
  return unit == KernelStepUnit::Thread ? threadEnds_ : phaseEnds_;
}

std::int64_t KernelTimeline::stepCount(KernelStepUnit unit) const {
  if (!result_) return 0;
  if (unit == KernelStepUnit::KStep) return atomCount() + 1;
  return static_cast<std::int64_t>(boundaries(unit).size());
}

std::int64_t KernelTimeline::executedAt(KernelStepUnit unit, std::int64_t step) const {
  const std::int64_t count = stepCount(unit);
  if (count == 0) return 0;
  step = std::clamp<std::int64_t>(step, 0, count - 1);
  if (unit == KernelStepUnit::KStep) return step;
  return boundaries(unit)[std::size_t(step)];
}

std::int64_t KernelTimeline::stepAt(KernelStepUnit unit, std::int64_t executed) const {
  if (!result_) return 0;
  executed = std::clamp<std::int64_t>(executed, 0, atomCount());
  if (unit == KernelStepUnit::KStep) return executed;
  const std::vector<std::int64_t>& ends = boundaries(unit);
  return std::lower_bound(ends.begin(), ends.end(), executed) - ends.begin();
}

int KernelTimeline::tileOfPhase(int phase) const {
  if (!result_) return -1;
  const KernelGeometry& g = result_->geometry;
  const int computed = g.tileComputedIn(phase);
  return computed >= 0 ? computed : g.tileStagedIn(phase);
}

std::int64_t KernelTimeline::threadFirstAtom(int thread) const {
  return thread >= 0 && std::size_t(thread) < firstAtom_.size() ? firstAtom_[thread] : -1;
}

std::int64_t KernelTimeline::threadDoneAtom(int thread) const {
  return thread >= 0 && std::size_t(thread) < doneAtom_.size() ? doneAtom_[thread] : -1;
}

int KernelTimeline::activeThreads() const {
  if (!result_) return 0;
  const KernelGeometry& g = result_->geometry;
  int active = 0;
  for (int t = 0; t < g.threadsPerBlock(); ++t) {
    active += g.inC(g.rowOf(result_->tracedBlock, t), g.colOf(result_->tracedBlock, t));
  }
  return active;
}

std::pair<std::int32_t, std::int32_t> KernelTimeline::stagedSource(int tile, bool bTile, int r,
                                                                   int c) const {
  const int tpb = result_ ? result_->geometry.tpb : 1;
  const std::size_t plane = std::size_t(tpb) * tpb;
  const std::size_t i =
      (std::size_t(tile) * 2 + (bTile ? 1 : 0)) * plane + std::size_t(r) * tpb + c;
  if (tile < 0 || r < 0 || c < 0 || r >= tpb || c >= tpb || i >= staged_.size()) return {-2, -2};
  const std::int64_t v = staged_[i];
  if (v < 0) return {std::int32_t(v), std::int32_t(v)};
  return {std::int32_t(v >> 32), std::int32_t(v & 0xffffffff)};
}

KernelProduct KernelTimeline::productAt(std::int64_t index) const {
  const KernelAtom& atom = atoms_[std::size_t(index)];
  const auto& events = result_->run.report.trace.events();
  const int tpb = result_->geometry.tpb;
  const int tile = result_->geometry.tileComputedIn(atom.phase);
  KernelProduct p;
  p.atom = index;
  for (std::uint32_t i = atom.firstEvent; i < atom.endEvent; ++i) {
    const TraceEvent& e = events[i];
    if (e.kind == TraceEventKind::GlobalLoad) {
      (isASide(e.array) ? p.aRow : p.bRow) = e.index[0];
      (isASide(e.array) ? p.aCol : p.bCol) = e.index[1];
      p.k = isASide(e.array) ? e.index[1] : e.index[0];
    } else if (e.kind == TraceEventKind::SharedLoad) {
      const bool b = e.array == kernels::kArrayBs;
      (b ? p.bsRow : p.asRow) = e.index[0];
      (b ? p.bsCol : p.asCol) = e.index[1];
      const auto [row, col] = stagedSource(tile, b, e.index[0], e.index[1]);
      (b ? p.bRow : p.aRow) = row < 0 ? -1 : row;
      (b ? p.bCol : p.aCol) = col < 0 ? -1 : col;
      if (!b) p.k = tile * tpb + e.index[1];
    }
  }
  return p;
}

std::vector<KernelProduct> KernelTimeline::productsOf(int thread) const {
  std::vector<KernelProduct> out;
  const std::int64_t first = threadFirstAtom(thread);
  if (first < 0) return out;
  for (std::int64_t a = first; a < atomCount(); ++a) {
    const KernelAtom& atom = atoms_[std::size_t(a)];
    if (atom.thread == thread && atom.kind == KernelAtomKind::KStep) out.push_back(productAt(a));
  }
  return out;
}

std::uint64_t KernelTimeline::droppedEvents() const {
  return result_ ? result_->run.report.trace.dropped() : 0;
}

}  // namespace matmulviz::ui
