// The Kernel canvas's panels: shared-memory tiles or kernel code in the top-left corner,
// diagnostics on the cells, the legend and the "simulating" banner.
#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

#include "kernels/matmul_args.h"
#include "ui/widgets/kernel_painter.h"

namespace matmulviz::ui {
namespace {

/// Which cells of As ([0, T*T)) and Bs ([T*T, 2*T*T)) the trace has filled by atom `limit`
/// in the staging phase `stagePhase`.
std::vector<char> filledCells(const KernelTimeline& t, int tpb, int stagePhase,
                              std::int64_t limit) {
  std::vector<char> filled(std::size_t(2) * tpb * tpb, 0);
  if (stagePhase >= t.phaseCount()) return filled;
  const auto& events = t.result()->run.report.trace.events();
  const std::int64_t end = std::min(
      limit, stagePhase + 1 < t.phaseCount() ? t.phaseBegin(stagePhase + 1) : t.atomCount());
  for (std::int64_t a = t.phaseBegin(stagePhase); a < end; ++a) {
    const KernelAtom& atom = t.atoms()[std::size_t(a)];
    for (std::uint32_t i = atom.firstEvent; i < atom.endEvent; ++i) {
      const sim::TraceEvent& e = events[i];
      if (e.kind != sim::TraceEventKind::SharedStore) continue;
      const std::size_t plane = e.array == kernels::kArrayBs ? std::size_t(tpb) * tpb : 0;
      filled[plane + std::size_t(e.index[0]) * tpb + std::size_t(e.index[1])] = 1;
    }
  }
  return filled;
}

}  // namespace

void KernelPainter::tiles() {
  const KernelLaunchResult& r = *m_.result();
  const KernelGeometry& g = r.geometry;
  const KernelTimeline& t = m_.timeline();
  const int phase = m_.currentPhase();
  int tile = t.tileOfPhase(phase);
  const bool stored = tile < 0;
  if (stored) tile = int(g.tilePhases()) - 1;
  // The phase structure (barriers per tile) is the kernel's, from its registry entry.
  const bool staging = !stored && g.tileComputedIn(phase) < 0;
  const std::int64_t limit = staging ? m_.executed() : t.atomCount();
  const std::vector<char> filled = filledCells(t, g.tpb, g.stagePhase(tile), limit);
  const QRectF box = L_.corner.adjusted(0, 0, -L_.fontPx, -L_.fontPx);
  const double head = 3.4 * L_.fontPx;
  const double cell = std::min((box.width() - L_.fontPx) / (2.0 * g.tpb),
                               (box.height() - head - 2.8 * L_.fontPx) / g.tpb);
  p_.setPen(pal_.text);
  p_.setFont(font(0.95, true));
  const QString state = stored    ? QStringLiteral("all tiles consumed; C stored")
                        : staging ? QStringLiteral("staging: each thread copies one element")
                                  : QStringLiteral("computing: rows of As x columns of Bs");
  p_.drawText(QRectF(box.left(), box.top(), box.width(), head), Qt::AlignLeft | Qt::TextWordWrap,
              QStringLiteral("Shared memory of block (%1,%2)\ntile %3 of %4: %5")
                  .arg(g.blockX(r.tracedBlock))
                  .arg(g.blockY(r.tracedBlock))
                  .arg(tile + 1)
                  .arg(g.tilePhases())
                  .arg(state));
  if (cell < 2) return;
  const double side = cell * g.tpb;
  const QRectF as(box.left(), box.top() + head, side, side);
  const QRectF bs(as.right() + L_.fontPx, as.top(), side, side);
  tileGrid(as, false, tile, filled);
  tileGrid(bs, true, tile, filled);
}

void KernelPainter::tileGrid(const QRectF& r, bool bTile, int tile,
                             const std::vector<char>& filled) {
  const KernelGeometry& g = m_.result()->geometry;
  const KernelTimeline& t = m_.timeline();
  const int T = g.tpb;
  const double cell = r.width() / T;
  QColor full = bTile ? pal_.bLoaded : pal_.aLoaded;
  full.setAlpha(90);
  std::int32_t r0 = INT32_MAX, r1 = -1, c0 = INT32_MAX, c1 = -1;  // source region in A or B
  p_.setFont(font(std::min(0.8, cell / L_.fontPx * 0.6)));
  for (int i = 0; i < T; ++i) {
    for (int j = 0; j < T; ++j) {
      const QRectF c(r.left() + j * cell, r.top() + i * cell, cell, cell);
      const auto [sr, sc] = t.stagedSource(tile, bTile, i, j);
      if (sr >= 0)
        r0 = std::min(r0, sr), r1 = std::max(r1, sr), c0 = std::min(c0, sc), c1 = std::max(c1, sc);
      if (!filled[std::size_t(bTile ? T * T : 0) + std::size_t(i) * T + j]) {
        p_.fillRect(c, pal_.background);
        continue;
      }
      p_.fillRect(c, sr >= 0 ? full : pal_.tileEmpty);
      if (sr < 0 && cell >= L_.fontPx) {
        p_.setPen(pal_.mutedText);
        p_.drawText(c, Qt::AlignCenter, QStringLiteral("0"));
      }
    }
  }
  tileMarks(r, bTile, tile);
  p_.setPen(QPen(pal_.grid.darker(150), 1));
  if (cell >= 5) {
    for (int i = 1; i < T; ++i) {
      p_.drawLine(QPointF(r.left() + i * cell, r.top()), QPointF(r.left() + i * cell, r.bottom()));
      p_.drawLine(QPointF(r.left(), r.top() + i * cell), QPointF(r.right(), r.top() + i * cell));
    }
  }
  p_.setPen(QPen(pal_.text, 1.5));
  p_.drawRect(r);
  p_.setFont(font(0.9, true));
  const QString source = r1 < 0 ? QStringLiteral("zeros")
                                : QStringLiteral("%1[%2:%3, %4:%5]")
                                      .arg(bTile ? "B" : "A")
                                      .arg(r0)
                                      .arg(r1 + 1)
                                      .arg(c0)
                                      .arg(c1 + 1);
  p_.drawText(QRectF(r.left(), r.bottom() + 2, r.width() + L_.fontPx, 3 * L_.fontPx),
              Qt::AlignLeft | Qt::AlignTop,
              QStringLiteral("%1 [%2 x %2]\n= %3").arg(bTile ? "Bs" : "As").arg(T).arg(source));
  if (r1 < 0) return;
  // where the tile came from, outlined on A or B
  QPen dashed(bTile ? pal_.bLoaded.darker(130) : pal_.aLoaded.darker(130), 2, Qt::DashLine);
  p_.setPen(dashed);
  p_.setBrush(Qt::NoBrush);
  p_.drawRect(bTile ? QRectF(L_.b.left() + c0 * L_.cellW, L_.b.top() + r0 * L_.kH,
                             (c1 - c0 + 1) * L_.cellW, (r1 - r0 + 1) * L_.kH)
                    : QRectF(L_.a.left() + c0 * L_.kW, L_.a.top() + r0 * L_.cellH,
                             (c1 - c0 + 1) * L_.kW, (r1 - r0 + 1) * L_.cellH));
}

/// On a tile: the followed thread's reads so far (outlined), this step's read (filled), and
/// shared-memory diagnostics of the traced block (red).
void KernelPainter::tileMarks(const QRectF& r, bool bTile, int tile) {
  const KernelLaunchResult& res = *m_.result();
  const KernelTimeline& t = m_.timeline();
  const double cell = r.width() / res.geometry.tpb;
  const int readPhase = res.geometry.computePhase(tile);
  const std::int64_t done = m_.executed();
  for (const KernelProduct& pr : m_.followedProducts()) {
    if (pr.atom >= done || t.atoms()[std::size_t(pr.atom)].phase != readPhase) continue;
    const int row = bTile ? pr.bsRow : pr.asRow, col = bTile ? pr.bsCol : pr.asCol;
    p_.setPen(QPen(pal_.follow, 1.5));
    p_.drawRect(
        QRectF(r.left() + col * cell, r.top() + row * cell, cell, cell).adjusted(1, 1, -1, -1));
  }
  if (const KernelAtom* atom = m_.currentAtom(); atom && atom->kind == KernelAtomKind::KStep) {
    const KernelProduct now = t.productAt(done - 1);
    const int row = bTile ? now.bsRow : now.asRow, col = bTile ? now.bsCol : now.asCol;
    p_.fillRect(QRectF(r.left() + col * cell, r.top() + row * cell, cell, cell), pal_.current);
  }
  p_.setPen(QPen(pal_.diagnostic, 2.5));
  for (const sim::Diagnostic& d : res.run.report.diagnostics) {
    const bool here = d.array == (bTile ? "Bs" : "As") && d.index.size() == 2 &&
                      res.geometry.linearBlock(d.block.x, d.block.y) == res.tracedBlock;
    if (here) {
      p_.drawRect(QRectF(r.left() + double(d.index[1]) * cell, r.top() + double(d.index[0]) * cell,
                         cell, cell));
    }
  }
}

void KernelPainter::code() {
  const KernelGeometry& g = m_.result()->geometry;
  const QString grid = g.xOverRows ? QStringLiteral("    i, j = cuda.grid(2)   # x: rows")
                                   : QStringLiteral("    j, i = cuda.grid(2)   # x: columns");
  // naive_no_bounds_check is the same code without the bounds check
  const bool unchecked = m_.result()->spec.kernel == QLatin1String("naive_no_bounds_check");
  const QStringList lines = {QStringLiteral("@cuda.jit"),
                             QStringLiteral("def matmul(a, b, c):"),
                             grid,
                             unchecked
                                 ? QStringLiteral("    if True:  # bug: no bounds check")
                                 : QStringLiteral("    if i < c.shape[0] and j < c.shape[1]:"),
                             QStringLiteral("        tmp = 0."),
                             QStringLiteral("        for k in range(a.shape[1]):"),
                             QStringLiteral("            tmp += a[i, k] * b[k, j]"),
                             QStringLiteral("        c[i, j] = tmp")};
  const QRectF box = L_.corner.adjusted(0, L_.fontPx, -L_.fontPx, -L_.fontPx);
  QFont f = font(1.0, false, true);
  const double px = std::min(
      {L_.fontPx * 1.05, box.width() / (0.62 * 44), box.height() / (1.45 * (lines.size() + 1))});
  if (px < 7) return;
  f.setPixelSize(int(px));
  p_.setFont(f);
  int hot = 2;
  bool idle = false;
  if (const KernelAtom* atom = m_.currentAtom()) {
    hot = atom->kind == KernelAtomKind::KStep ? 6 : atom->kind == KernelAtomKind::Store ? 7 : 3;
    idle = atom->kind == KernelAtomKind::Exit;
  }
  const double lh = px * 1.45;
  for (int i = 0; i < lines.size(); ++i) {
    const QRectF line(box.left(), box.top() + i * lh, box.width(), lh);
    if (i == hot || (hot == 6 && i == 5)) {
      QColor hl = idle ? pal_.idleHatch : pal_.current;
      hl.setAlpha(idle ? 50 : 40);
      p_.fillRect(line, hl);
    }
    p_.setPen(i == hot ? pal_.text : pal_.mutedText);
    p_.drawText(line.adjusted(4, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, lines[i]);
  }
  p_.setPen(pal_.mutedText);
  p_.drawText(QRectF(box.left(), box.top() + lines.size() * lh, box.width(), lh),
              Qt::AlignLeft | Qt::AlignVCenter,
              unchecked ? QStringLiteral("  faulty: threads past C go out of bounds")
              : idle    ? QStringLiteral("  bounds check false: the thread is idle")
                        : QStringLiteral("  the lesson's kernel (fast.ai)"));
}

void KernelPainter::diagnostics() {
  const KernelLaunchResult& r = *m_.result();
  const KernelGeometry& g = r.geometry;
  p_.setPen(QPen(pal_.diagnostic, 2.5));
  p_.setBrush(Qt::NoBrush);
  for (const sim::Diagnostic& d : r.run.report.diagnostics) {
    const std::uint64_t block = g.linearBlock(d.block.x, d.block.y);
    const int thread = int(d.thread.y) * g.tpb + int(d.thread.x);
    if (block < g.blocks()) {
      const QRectF c = atLeast(L_.cellRect(g.rowOf(block, thread), g.colOf(block, thread)), 8);
      p_.drawLine(c.topLeft(), c.bottomRight());
      p_.drawLine(c.topRight(), c.bottomLeft());
    }
    if (d.index.size() != 2) continue;
    const std::int64_t i = d.index[0], j = d.index[1];
    if (d.array == "A" && i >= 0 && i < g.M && j >= 0 && j < g.K) {
      p_.drawRect(atLeast(L_.aRect(i, j, j + 1), 6));
    } else if (d.array == "B" && i >= 0 && i < g.K && j >= 0 && j < g.N) {
      p_.drawRect(atLeast(L_.bRect(i, i + 1, j), 6));
    } else if (d.array == "C" && g.inC(i, j)) {
      p_.drawRect(atLeast(L_.cellRect(i, j), 6));
    }
  }
}

void KernelPainter::banner(const QString& text) {
  p_.setFont(font(1.1, true));
  const QFontMetricsF fm(p_.font());
  const QRectF r(L_.bounds.right() - fm.horizontalAdvance(text) - 3 * L_.fontPx,
                 L_.title.bottom() + 4, fm.horizontalAdvance(text) + 2 * L_.fontPx, 2 * L_.fontPx);
  p_.fillRect(r, QColor(255, 244, 200, 235));
  p_.setPen(pal_.text);
  p_.drawRect(r);
  p_.drawText(r, Qt::AlignCenter, text);
}

}  // namespace matmulviz::ui
