#pragma once
// Paints one frame of the Kernel view from a KernelLaunchModel: title and narration, A, B and
// the thread plane of C (block colours from a cached image, idle threads hatched), the traced
// block's progress, the followed thread's row of A and column of B as read so far, the
// shared-memory tiles (smem_tiled) or the kernel's code, diagnostics and the legend.
// Cost does not grow with the launch: the plane is one cached image, per-cell work is bounded
// by one block (<= 1024 threads) and one thread's K products.

#include <QImage>
#include <QPainter>

#include "ui/models/kernel_launch_model.h"
#include "ui/widgets/kernel_canvas_layout.h"

namespace matmulviz::ui {

/// A rectangle at least `min` pixels wide and high, centred on `r` (tiny cells stay visible).
inline QRectF atLeast(QRectF r, double min) {
  if (r.width() < min) r.adjust(-(min - r.width()) / 2, 0, (min - r.width()) / 2, 0);
  if (r.height() < min) r.adjust(0, -(min - r.height()) / 2, 0, (min - r.height()) / 2);
  return r;
}

/// The block colours of every plane cell at one pixel per pixel of `L.plane`, idle cells paler.
QImage renderKernelPlane(const KernelGeometry& g, const KernelCanvasLayout& L,
                         const KernelPalette& pal);

class KernelPainter {
 public:
  KernelPainter(QPainter& p, const KernelLaunchModel& model, const KernelCanvasLayout& L,
                const KernelPalette& pal)
      : p_(p), m_(model), L_(L), pal_(pal) {}

  /// Everything; `plane` from renderKernelPlane for the same layout. `busy` is drawn as a
  /// banner (a simulation in flight) when not empty.
  void paint(const QImage& plane, const QString& busy);
  /// What only changes with the launch, the size or the palette: background, A, B, the plane,
  /// grid lines, labels, legend (paintKernelStatic). The canvas caches it as an image, drawn
  /// on a worker thread from a KernelStaticScene.
  void paintStatic(const QImage& plane);
  /// What changes with every step, over paintStatic's image: title and narration, the traced
  /// block's progress, the followed thread, tiles or code, diagnostics, the banner.
  void paintDynamic(const QString& busy);

 private:
  QFont font(double scale = 1, bool bold = false, bool mono = false) const;
  void title();
  void tracedBlock();
  void threadPaths();
  void products(const std::vector<KernelProduct>& list, std::size_t done, bool strong);
  void tiles();
  void tileGrid(const QRectF& r, bool bTile, int tile, const std::vector<char>& filled);
  void tileMarks(const QRectF& r, bool bTile, int tile);
  void code();
  void diagnostics();
  void banner(const QString& text);
  QRectF blockRect(std::uint64_t block) const;

  QPainter& p_;
  const KernelLaunchModel& m_;
  const KernelCanvasLayout& L_;
  const KernelPalette& pal_;
};

}  // namespace matmulviz::ui
