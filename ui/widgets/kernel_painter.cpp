#include "ui/widgets/kernel_painter.h"

#include <QFontDatabase>
#include <algorithm>
#include <cmath>
#include <vector>

#include "ui/widgets/kernel_canvas_static.h"

namespace matmulviz::ui {
namespace {

QColor mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t),
                          float(a.greenF() * (1 - t) + b.greenF() * t),
                          float(a.blueF() * (1 - t) + b.blueF() * t));
}

}  // namespace

QImage renderKernelPlane(const KernelGeometry& g, const KernelCanvasLayout& L,
                         const KernelPalette& pal) {
  const int w = std::max(1, int(std::ceil(L.plane.width())));
  const int h = std::max(1, int(std::ceil(L.plane.height())));
  QImage image(w, h, QImage::Format_RGB32);
  std::vector<std::int64_t> blockCol(std::size_t(w), 0);
  std::vector<char> idleCol(std::size_t(w), 0);
  for (int x = 0; x < w; ++x) {
    const auto col = std::min<std::int64_t>(std::int64_t((x + 0.5) / L.cellW), g.planeCols() - 1);
    blockCol[std::size_t(x)] = col / g.tpb;
    idleCol[std::size_t(x)] = col >= g.N;
  }
  // blocks under 2 px cannot be told apart: their colours are averaged (no moire)
  const bool blendRows = L.cellH * g.tpb < 2, blendCols = L.cellW * g.tpb < 2;
  QRgb colours[2][6];
  for (int i = 0; i < 6; ++i) {
    double r = 0, gr = 0, b = 0;
    int n = 0;
    for (int p = 0; p < 2; ++p) {
      for (int q = 0; q < 3; ++q) {
        if ((!blendRows && p != i % 2) || (!blendCols && q != i / 2)) continue;
        r += pal.blocks[p + 2 * q].redF(), gr += pal.blocks[p + 2 * q].greenF();
        b += pal.blocks[p + 2 * q].blueF(), ++n;
      }
    }
    const QColor c = QColor::fromRgbF(float(r / n), float(gr / n), float(b / n));
    colours[0][i] = c.rgb();
    colours[1][i] = mix(c, pal.background, 0.65).rgb();
  }
  for (int y = 0; y < h; ++y) {
    const auto row = std::min<std::int64_t>(std::int64_t((y + 0.5) / L.cellH), g.planeRows() - 1);
    const std::int64_t br = row / g.tpb;
    const bool idleRow = row >= g.M;
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
    for (int x = 0; x < w; ++x) {
      const int idle = (idleRow || idleCol[std::size_t(x)]) ? 1 : 0;
      line[x] = colours[idle][(br % 2) + 2 * (blockCol[std::size_t(x)] % 3)];
    }
  }
  return image;
}

QFont KernelPainter::font(double scale, bool bold, bool mono) const {
  QFont f = mono ? QFontDatabase::systemFont(QFontDatabase::FixedFont) : QFont();
  f.setPixelSize(std::max(6, int(std::lround(L_.fontPx * scale))));
  f.setBold(bold);
  return f;
}

void KernelPainter::paint(const QImage& planeImage, const QString& busy) {
  if (!m_.hasLaunch()) {
    p_.fillRect(L_.bounds, pal_.background);
    p_.setPen(pal_.mutedText);
    p_.setFont(font(1.4));
    p_.drawText(L_.bounds, Qt::AlignCenter, busy.isEmpty() ? QStringLiteral("No launch") : busy);
    return;
  }
  paintStatic(planeImage);
  paintDynamic(busy);
}

void KernelPainter::paintStatic(const QImage& planeImage) {
  const KernelLaunchResult& r = *m_.result();
  paintKernelStatic(p_, {r.geometry, r.run.report.diagnosticCounts.total(), L_, pal_, QFont()},
                    planeImage);
}

void KernelPainter::paintDynamic(const QString& busy) {
  p_.setRenderHint(QPainter::Antialiasing, false);
  title();
  tracedBlock();
  threadPaths();
  if (m_.result()->geometry.tiled) {
    tiles();
  } else {
    code();
  }
  diagnostics();
  if (!busy.isEmpty()) banner(busy);
}

void KernelPainter::title() {
  const KernelLaunchResult& r = *m_.result();
  const KernelGeometry& g = r.geometry;
  const sim::LaunchStats& s = r.run.report.stats;
  const auto inside = static_cast<qulonglong>(g.M * g.N);
  const double share = s.threads ? 100.0 * double(inside) / double(s.threads) : 0;
  const QString head = QStringLiteral(
                           "%1:  C[%2 x %3] = A[%2 x %4] @ B[%4 x %3]   grid (%5, %6) of %7 x %7 "
                           "blocks   %L8 threads, %L9 inside C (%10 %)")
                           .arg(r.spec.kernel)
                           .arg(g.M)
                           .arg(g.N)
                           .arg(g.K)
                           .arg(g.gridX)
                           .arg(g.gridY)
                           .arg(g.tpb)
                           .arg(qulonglong(s.threads))
                           .arg(inside)
                           .arg(share, 0, 'f', 1);
  const double line = L_.title.height() / 2;
  QRectF top = L_.title.adjusted(L_.fontPx, 0, -L_.fontPx, -line);
  p_.setPen(pal_.text);
  p_.setFont(font(1.05, true));
  p_.drawText(top, Qt::AlignLeft | Qt::AlignVCenter, head);
  QRectF bottom = L_.title.adjusted(L_.fontPx, line, -L_.fontPx, 0);
  p_.setPen(pal_.follow.darker(130));
  p_.setFont(font(1.1, true));
  const QString step = QStringLiteral("step %1 / %2   ")
                           .arg(m_.currentStep())
                           .arg(std::max<std::int64_t>(0, m_.stepCount() - 1));
  p_.drawText(
      bottom, Qt::AlignLeft | Qt::AlignVCenter,
      p_.fontMetrics().elidedText(step + m_.narration(), Qt::ElideRight, int(bottom.width())));
}

QRectF KernelPainter::blockRect(std::uint64_t block) const {
  const KernelGeometry& g = m_.result()->geometry;
  return QRectF(L_.plane.left() + double(g.blockCol0(block)) * L_.cellW,
                L_.plane.top() + double(g.blockRow0(block)) * L_.cellH, L_.cellW * g.tpb,
                L_.cellH * g.tpb);
}

void KernelPainter::tracedBlock() {
  const KernelLaunchResult& r = *m_.result();
  const KernelGeometry& g = r.geometry;
  const KernelTimeline& t = m_.timeline();
  const std::int64_t done = m_.executed();
  const bool values = L_.cellW >= 3.4 * L_.fontPx && L_.cellH >= 1.4 * L_.fontPx;
  p_.setFont(font(0.8));
  for (int th = 0; th < g.threadsPerBlock(); ++th) {
    const std::int64_t row = g.rowOf(r.tracedBlock, th), col = g.colOf(r.tracedBlock, th);
    if (!g.inC(row, col)) continue;
    const QRectF cell = L_.cellRect(row, col);
    const std::int64_t at = t.threadDoneAtom(th);
    if (at < 0 || at >= done) {
      p_.fillRect(cell, pal_.veil);
    } else if (values) {
      p_.setPen(pal_.text);
      p_.drawText(cell, Qt::AlignCenter,
                  QString::number(double(r.run.out[std::size_t(row * g.N + col)]), 'f', 2));
    }
  }
  p_.setPen(QPen(pal_.blockLine, std::max(2.0, L_.fontPx / 5)));
  p_.drawRect(atLeast(blockRect(r.tracedBlock), 4));
}

void KernelPainter::products(const std::vector<KernelProduct>& list, std::size_t done,
                             bool strong) {
  // consecutive elements of one row of A (one column of B) merge into one rectangle each
  const KernelGeometry& g = m_.result()->geometry;
  QColor a = pal_.aLoaded, b = pal_.bLoaded;
  a.setAlpha(strong ? 210 : 120);
  b.setAlpha(strong ? 210 : 120);
  for (int side = 0; side < 2; ++side) {
    const auto line = [side](const KernelProduct& p) { return side == 0 ? p.aRow : p.bCol; };
    const auto along = [side](const KernelProduct& p) { return side == 0 ? p.aCol : p.bRow; };
    std::size_t i = 0;
    while (i < done) {
      std::size_t j = i + 1;
      while (j < done && line(list[j]) == line(list[i]) &&
             along(list[j]) == along(list[j - 1]) + 1) {
        ++j;
      }
      const std::int32_t at = line(list[i]), from = along(list[i]), to = along(list[j - 1]) + 1;
      if (side == 0 && at >= 0 && at < g.M && from >= 0) {
        p_.fillRect(atLeast(L_.aRect(at, from, to), 2), a);
      } else if (side == 1 && at >= 0 && at < g.N && from >= 0) {
        p_.fillRect(atLeast(L_.bRect(from, to, at), 2), b);
      }
      i = j;
    }
  }
}

void KernelPainter::threadPaths() {
  const KernelLaunchResult& r = *m_.result();
  const KernelGeometry& g = r.geometry;
  if (const auto cell = m_.followedCell()) {
    const QRectF c = L_.cellRect(cell->first, cell->second);
    QColor band = pal_.follow;
    band.setAlpha(28);
    if (cell->first < g.M) {
      p_.fillRect(QRectF(L_.a.left(), c.top(), c.left() - L_.a.left(), c.height()), band);
    }
    if (cell->second < g.N) {
      p_.fillRect(QRectF(c.left(), L_.b.top(), c.width(), c.top() - L_.b.top()), band);
    }
    products(m_.followedProducts(), m_.followedProductsDone(), true);
    p_.setPen(QPen(pal_.follow, std::max(2.5, L_.fontPx / 4)));
    p_.drawRect(atLeast(c, 6));
  }
  const KernelAtom* atom = m_.currentAtom();
  if (!atom) return;
  const QRectF cur =
      L_.cellRect(g.rowOf(r.tracedBlock, atom->thread), g.colOf(r.tracedBlock, atom->thread));
  p_.setPen(QPen(pal_.current, 2));
  p_.drawRect(atLeast(cur, 5));
  if (atom->kind != KernelAtomKind::KStep) return;
  const KernelProduct now = m_.timeline().productAt(m_.executed() - 1);
  if (now.aRow >= 0 && now.aRow < g.M) {
    p_.fillRect(atLeast(L_.aRect(now.aRow, now.aCol, now.aCol + 1), 3), pal_.current);
  }
  if (now.bCol >= 0 && now.bCol < g.N) {
    p_.fillRect(atLeast(L_.bRect(now.bRow, now.bRow + 1, now.bCol), 3), pal_.current);
  }
}

}  // namespace matmulviz::ui
