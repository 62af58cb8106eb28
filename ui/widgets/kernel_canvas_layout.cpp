#include "ui/widgets/kernel_canvas_layout.h"

#include <algorithm>
#include <cmath>

namespace matmulviz::ui {

std::optional<std::pair<std::int64_t, std::int64_t>> KernelCanvasLayout::cellAt(QPointF p) const {
  if (!plane.contains(p)) return std::nullopt;
  const auto col = static_cast<std::int64_t>((p.x() - plane.left()) / cellW);
  const auto row = static_cast<std::int64_t>((p.y() - plane.top()) / cellH);
  const auto rows = static_cast<std::int64_t>(std::llround(plane.height() / cellH));
  const auto cols = static_cast<std::int64_t>(std::llround(plane.width() / cellW));
  return std::make_pair(std::clamp<std::int64_t>(row, 0, rows - 1),
                        std::clamp<std::int64_t>(col, 0, cols - 1));
}

KernelCanvasLayout KernelCanvasLayout::compute(const QRectF& bounds, const KernelGeometry& g,
                                               double fontPx) {
  KernelCanvasLayout L;
  L.bounds = bounds;
  L.fontPx = fontPx;
  const double line = fontPx * 1.6;
  L.title = QRectF(bounds.left(), bounds.top(), bounds.width(), 2 * line);
  L.legend = QRectF(bounds.left(), bounds.bottom() - 2.2 * line, bounds.width(), 2.2 * line);
  const double gap = 1.8 * line;  // holds the index ticks and the matrix names
  const double margin = fontPx;
  // a line above B for its name, a line under C and A for theirs
  const QRectF area =
      QRectF(bounds.left() + margin, L.title.bottom() + line, bounds.width() - 2 * margin,
             L.legend.top() - L.title.bottom() - 2.8 * line);
  const double W = std::max(10.0, area.width() - gap), H = std::max(10.0, area.height() - gap);
  const double pr = double(g.planeRows()), pc = double(g.planeCols()), K = double(g.K);
  const double maxCell = 8 * fontPx;
  const double minK = g.tiled ? std::min(0.45 * std::min(W, H), 22.0 * fontPx) : 9 * fontPx;
  double kp = 0.36 * std::min(W, H), cw = 0, ch = 0;
  for (int pass = 0; pass < 3; ++pass) {
    cw = (W - kp) / pc;
    ch = (H - kp) / pr;
    const double square = std::min({cw, ch, maxCell});
    L.toScale = std::max(std::min(cw, maxCell), std::min(ch, maxCell)) <= 4 * square;
    if (L.toScale) cw = ch = square;
    cw = std::min(cw, maxCell);
    ch = std::min(ch, maxCell);
    kp = std::clamp(K * std::min(cw, ch), minK, 0.45 * std::min(W, H));
  }
  L.toScale = L.toScale && std::abs(kp - K * cw) < 0.5;
  L.cellW = cw;
  L.cellH = ch;
  const double totalW = kp + gap + pc * cw, totalH = kp + gap + pr * ch;
  const double x0 = area.left() + std::max(0.0, (area.width() - totalW) / 2);
  const double y0 = area.top() + std::max(0.0, (area.height() - totalH) / 2);
  L.corner = QRectF(x0, y0, kp, kp);
  L.plane = QRectF(x0 + kp + gap, y0 + kp + gap, pc * cw, pr * ch);
  L.c = QRectF(L.plane.topLeft(), QSizeF(double(g.N) * cw, double(g.M) * ch));
  L.a = QRectF(x0, L.plane.top(), kp, double(g.M) * ch);
  L.b = QRectF(L.plane.left(), y0, double(g.N) * cw, kp);
  L.kW = kp / K;
  L.kH = kp / K;
  return L;
}

KernelPalette KernelPalette::standard() {
  KernelPalette p;
  p.background = QColor(0xfb, 0xfb, 0xf8);
  p.text = QColor(0x20, 0x24, 0x2a);
  p.mutedText = QColor(0x60, 0x66, 0x70);
  p.grid = QColor(255, 255, 255, 170);
  p.blockLine = QColor(0x30, 0x30, 0x38);
  p.aFill = QColor(0xdc, 0xe8, 0xf6);
  p.bFill = QColor(0xf8, 0xe6, 0xd0);
  p.aLoaded = QColor(0x2f, 0x6f, 0xc4);
  p.bLoaded = QColor(0xd9, 0x7a, 0x1c);
  p.current = QColor(0xc0, 0x10, 0x60);
  p.follow = QColor(0xc0, 0x10, 0x60);
  p.veil = QColor(255, 255, 255, 150);
  p.idleHatch = QColor(0x55, 0x55, 0x60);
  p.tileEmpty = QColor(0xee, 0xee, 0xee);
  p.diagnostic = QColor(0xd0, 0x00, 0x00);
  const QColor blocks[6] = {{0x8e, 0xc9, 0xa8}, {0x9d, 0xb8, 0xe8}, {0xf2, 0xc1, 0x7d},
                            {0xc9, 0xa6, 0xe0}, {0xf0, 0x9e, 0x9a}, {0xa8, 0xd8, 0xdc}};
  std::copy(std::begin(blocks), std::end(blocks), p.blocks);
  return p;
}

KernelPalette KernelPalette::highContrast() {
  KernelPalette p = standard();
  p.background = Qt::white;
  p.text = Qt::black;
  p.mutedText = QColor(0x20, 0x20, 0x20);
  p.grid = QColor(255, 255, 255, 220);
  p.blockLine = Qt::black;
  p.aLoaded = QColor(0x00, 0x40, 0xc0);
  p.bLoaded = QColor(0xc0, 0x50, 0x00);
  p.current = QColor(0xe0, 0x00, 0x60);
  p.follow = QColor(0xe0, 0x00, 0x60);
  p.idleHatch = Qt::black;
  const QColor blocks[6] = {{0x2e, 0xb8, 0x6e}, {0x3d, 0x7e, 0xe8}, {0xff, 0xb0, 0x20},
                            {0xa0, 0x50, 0xe0}, {0xff, 0x60, 0x60}, {0x20, 0xc0, 0xd0}};
  std::copy(std::begin(blocks), std::end(blocks), p.blocks);
  return p;
}

}  // namespace matmulviz::ui
