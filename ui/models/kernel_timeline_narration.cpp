// The narration line of the Kernel view: one sentence for the atom that ran last, in the
// lesson's words ("thread (3,7) of block (0,0): C[3,7] += A[3,12] * B[12,7], k = 12 of 784").
#include "ui/models/kernel_timeline.h"

#include "kernels/matmul_args.h"

namespace matmulviz::ui {
namespace {

QString element(const char* name, std::int64_t row, std::int64_t col) {
  if (row < 0 || col < 0) return QStringLiteral("0");
  return QStringLiteral("%1[%2,%3]").arg(QLatin1String(name)).arg(row).arg(col);
}

QString cell(std::int64_t row, std::int64_t col) {
  return QStringLiteral("(i, j) = (%1, %2)").arg(row).arg(col);
}

}  // namespace

QString KernelTimeline::threadName(int thread) const {
  if (!result_) return {};
  const KernelGeometry& g = result_->geometry;
  return QStringLiteral("thread (%1,%2) of block (%3,%4)")
      .arg(thread % g.tpb)
      .arg(thread / g.tpb)
      .arg(g.blockX(result_->tracedBlock))
      .arg(g.blockY(result_->tracedBlock));
}

QString KernelTimeline::narrate(std::int64_t executed) const {
  if (!result_) return QStringLiteral("No launch yet.");
  const KernelGeometry& g = result_->geometry;
  const std::uint64_t block = result_->tracedBlock;
  if (executed <= 0 || atoms_.empty()) {
    const int active = activeThreads();
    QString s = QStringLiteral(
                    "block (%1,%2) of grid (%3,%4): %5 threads of %6 x %6, %7 inside "
                    "C [%8 x %9] and %10 idle")
                    .arg(g.blockX(block))
                    .arg(g.blockY(block))
                    .arg(g.gridX)
                    .arg(g.gridY)
                    .arg(g.threadsPerBlock())
                    .arg(g.tpb)
                    .arg(active)
                    .arg(g.M)
                    .arg(g.N)
                    .arg(g.threadsPerBlock() - active);
    if (g.tiled) {
      s += QStringLiteral("; it stages %1 tiles of A and B through shared memory")
               .arg(g.tilePhases());
    }
    return s + QStringLiteral(". Press play or step.");
  }
  executed = std::min(executed, atomCount());
  const KernelAtom& atom = atoms_[std::size_t(executed - 1)];
  QString s = narrateAtom(atom);
  if (atom.barrierAfter) {
    s += QStringLiteral("; then waits at __syncthreads() (barrier %1 of %2)")
             .arg(atom.phase + 1)
             .arg(phaseCount() - 1);
  }
  if (executed == atomCount()) {
    s += droppedEvents() > 0
             ? QStringLiteral(". The trace stops here: %1 more events were past its cap.")
                   .arg(droppedEvents())
             : QStringLiteral(". Block done.");
  }
  return s;
}

QString KernelTimeline::narrateAtom(const KernelAtom& atom) const {
  switch (atom.kind) {
    case KernelAtomKind::KStep:
      return narrateKStep(atom);
    case KernelAtomKind::Stage:
      return narrateStage(atom);
    case KernelAtomKind::Store:
    case KernelAtomKind::Exit:
      return narrateEnd(atom);
    case KernelAtomKind::Partial:
      break;
  }
  return threadName(atom.thread) + QStringLiteral(": an incomplete step (the trace was cut)");
}

QString KernelTimeline::narrateKStep(const KernelAtom& atom) const {
  const KernelGeometry& g = result_->geometry;
  const std::uint64_t block = result_->tracedBlock;
  const KernelProduct p = productAt(&atom - atoms_.data());
  QString s = QStringLiteral("%1: C[%2,%3] += ")
                  .arg(threadName(atom.thread))
                  .arg(g.rowOf(block, atom.thread))
                  .arg(g.colOf(block, atom.thread));
  if (!g.tiled) {
    return s + QStringLiteral("%1 * %2, k = %3 of %4")
                   .arg(element("A", p.aRow, p.aCol), element("B", p.bRow, p.bCol))
                   .arg(p.k)
                   .arg(g.K);
  }
  return s + QStringLiteral("%1 * %2 (%3 * %4), k = %5 of %6, tile %7 of %8")
                 .arg(element("As", p.asRow, p.asCol), element("Bs", p.bsRow, p.bsCol),
                      element("A", p.aRow, p.aCol), element("B", p.bRow, p.bCol))
                 .arg(p.k)
                 .arg(g.K)
                 .arg(g.tileComputedIn(atom.phase) + 1)
                 .arg(g.tilePhases());
}

QString KernelTimeline::narrateStage(const KernelAtom& atom) const {
  const auto& events = result_->run.report.trace.events();
  QString a = QStringLiteral("0"), b = QStringLiteral("0"), as, bs;
  for (std::uint32_t i = atom.firstEvent; i < atom.endEvent; ++i) {
    const sim::TraceEvent& e = events[i];
    const bool bSide = e.array == kernels::kArrayB || e.array == kernels::kArrayBs;
    if (e.kind == sim::TraceEventKind::GlobalLoad) {
      (bSide ? b : a) = element(bSide ? "B" : "A", e.index[0], e.index[1]);
    } else if (e.kind == sim::TraceEventKind::SharedStore) {
      (bSide ? bs : as) = element(bSide ? "Bs" : "As", e.index[0], e.index[1]);
    }
  }
  return QStringLiteral("%1 stages %2 into %3 and %4 into %5 (tile %6 of %7)")
      .arg(threadName(atom.thread), a, as, b, bs)
      .arg(result_->geometry.tileStagedIn(atom.phase) + 1)
      .arg(result_->geometry.tilePhases());
}

QString KernelTimeline::narrateEnd(const KernelAtom& atom) const {
  const KernelGeometry& g = result_->geometry;
  const std::uint64_t block = result_->tracedBlock;
  const std::int64_t row = g.rowOf(block, atom.thread);
  const std::int64_t col = g.colOf(block, atom.thread);
  const QString who = threadName(atom.thread);
  if (atom.kind == KernelAtomKind::Store && g.inC(row, col)) {
    const auto& events = result_->run.report.trace.events();
    const std::int32_t fmas = events[atom.endEvent - 1].index[0];
    const float value = result_->run.out[std::size_t(row * g.N + col)];
    return QStringLiteral("%1: stores C[%2,%3] = %4 after %5 multiply-adds")
        .arg(who)
        .arg(row)
        .arg(col)
        .arg(double(value), 0, 'g', 4)
        .arg(fmas);
  }
  if (g.tiled) {
    return QStringLiteral(
               "%1: %2 is outside C [%3 x %4]; it helped stage the tiles and exits "
               "without storing")
        .arg(who, cell(row, col))
        .arg(g.M)
        .arg(g.N);
  }
  return QStringLiteral(
             "%1: %2 is outside C [%3 x %4], so the bounds check fails and the "
             "thread exits idle")
      .arg(who, cell(row, col))
      .arg(g.M)
      .arg(g.N);
}

}  // namespace matmulviz::ui
