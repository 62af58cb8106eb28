#pragma once
// Where the Kernel canvas puts things: the classic diagram with B above C and A left of C, rows
// of A aligned with rows of C and columns of B with columns of C, the empty top-left corner
// holding the shared-memory tiles (smem_tiled) or the kernel's code, a title line and a legend.
// The K extent is squeezed to a share of the space so that C stays large whatever K is; C's
// cells are square unless the plane is so elongated (50000 x 16) that square cells would vanish.

#include <QColor>
#include <QFont>
#include <QRectF>
#include <cstdint>
#include <optional>
#include <utility>

#include "ui/models/kernel_launch.h"

namespace matmulviz::ui {

struct KernelCanvasLayout {
  QRectF bounds;        ///< the whole canvas
  QRectF title;         ///< top line
  QRectF legend;        ///< bottom strip
  QRectF corner;        ///< top-left square: tiles or code
  QRectF a;             ///< A [M, K]: M rows aligned with C's rows
  QRectF b;             ///< B [K, N]: N columns aligned with C's columns
  QRectF plane;         ///< every thread position: C [M, N] at its top-left, idle threads beyond
  QRectF c;             ///< C [M, N] itself
  double cellW = 1;     ///< width of a plane cell (and of a column of B), pixels
  double cellH = 1;     ///< height of a plane cell (and of a row of A)
  double kW = 1;        ///< width of a column of A
  double kH = 1;        ///< height of a row of B
  bool toScale = true;  ///< false when C's cells are stretched or K is squeezed
  double fontPx = 12;   ///< base text size

  /// Plane position under `p`, if any.
  std::optional<std::pair<std::int64_t, std::int64_t>> cellAt(QPointF p) const;
  QRectF cellRect(std::int64_t row, std::int64_t col) const {
    return {plane.left() + double(col) * cellW, plane.top() + double(row) * cellH, cellW, cellH};
  }
  QRectF aRect(std::int64_t row, std::int64_t k0, std::int64_t k1) const {  ///< A[row, k0..k1)
    return {a.left() + double(k0) * kW, a.top() + double(row) * cellH, double(k1 - k0) * kW, cellH};
  }
  QRectF bRect(std::int64_t k0, std::int64_t k1, std::int64_t col) const {  ///< B[k0..k1, col]
    return {b.left() + double(col) * cellW, b.top() + double(k0) * kH, cellW, double(k1 - k0) * kH};
  }

  /// Lays out `g` in `bounds` with text of `fontPx` pixels.
  static KernelCanvasLayout compute(const QRectF& bounds, const KernelGeometry& g, double fontPx);
};

/// Colours of the canvas; the high-contrast set is for classroom projection.
struct KernelPalette {
  QColor background, text, mutedText, grid, blockLine, aFill, bFill, aLoaded, bLoaded, current,
      follow, veil, idleHatch, tileEmpty, diagnostic;
  QColor blocks[6];
  static KernelPalette standard();
  static KernelPalette highContrast();
  /// The colour of block (blockRow, blockCol) down and across C: neighbours always differ.
  QColor block(std::int64_t blockRow, std::int64_t blockCol) const {
    return blocks[(blockRow % 2) + 2 * (blockCol % 3)];
  }
};

}  // namespace matmulviz::ui
