#pragma once
// The Kernel canvas's static layer (background, A, B, the plane of block colours, grid lines,
// labels, legend) drawn from plain values only. A KernelStaticScene is copied out of the model
// and the widget on the GUI thread; paintKernelStatic and renderKernelStaticLayer touch neither,
// so the canvas can draw the layer into a QImage on a worker thread while the GUI stays live.

#include <QFont>
#include <QImage>
#include <QPainter>
#include <cstdint>
#include <functional>

#include "ui/models/kernel_launch.h"
#include "ui/widgets/kernel_canvas_layout.h"

namespace matmulviz::ui {

/// Everything the static layer depends on, by value.
struct KernelStaticScene {
  KernelGeometry geometry;
  std::uint64_t diagnostics = 0;  ///< the launch's diagnostic count (a legend entry when > 0)
  KernelCanvasLayout layout;      ///< bounds start at the origin
  KernelPalette palette;
  QFont font;  ///< the base font, sized by layout.fontPx when drawn
};

/// Paints the static layer of `scene` into `p`; `plane` is renderKernelPlane's image for the
/// same geometry, layout and palette.
void paintKernelStatic(QPainter& p, const KernelStaticScene& scene, const QImage& plane);

/// The static layer of `scene` as an image of the layout's size, or a null image when
/// `cancelled` (checked between stages; may be empty) says the result is no longer wanted.
/// Safe on any thread.
QImage renderKernelStaticLayer(const KernelStaticScene& scene,
                               const std::function<bool()>& cancelled = {});

}  // namespace matmulviz::ui
