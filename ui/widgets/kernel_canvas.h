#pragma once
// The Kernel view's drawing surface: paints the model's current frame with KernelPainter over a
// cached image of everything static (A, B, the plane of block colours, labels, legend; rebuilt
// only when the launch, the size or the palette changes), reports clicked cells and shows a
// cell's thread in a tooltip.
//
// The widget's static layer is drawn on a worker thread (tens of ms of CPU for a large window,
// a few hundred ms of wall time on a loaded machine): meanwhile the previous layer is shown
// stretched to the new size (same launch and mode) or a plain sketch of the diagram (a new
// launch or mode), and the GUI thread never waits for the worker. A serial counts launches and
// mode changes: a build drawn for an older serial stops early and its image is dropped; one
// drawn for an older size of the same serial is kept as the stretched stand-in.

#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "ui/models/kernel_launch_model.h"
#include "ui/widgets/kernel_canvas_layout.h"
#include "ui/widgets/kernel_canvas_static.h"

namespace matmulviz::ui {

class KernelCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit KernelCanvas(const KernelLaunchModel* model, QWidget* parent = nullptr);
  /// Tells a layer being drawn to stop and waits for it: only a stage's worth of time.
  ~KernelCanvas() override;

  /// Classroom: larger text and the high-contrast palette.
  void setPresentationMode(bool on);
  /// A banner shown over the previous frame while a simulation runs; empty hides it.
  void setBusyText(const QString& text);

  /// Paints the current frame into `painter` over `bounds` (an image's), drawing the static
  /// layer on the calling thread when it is not cached: for exports and tests, not for paints.
  void render(QPainter& painter, const QRect& bounds);
  /// The current frame at `size`, as renderFrame() gives it.
  QImage renderImage(QSize size);

  /// The layout of the widget's current size (for hit tests).
  KernelCanvasLayout layout() const { return layoutFor(rect()); }
  /// Widget coordinates of the centre of plane cell (row, col); null when no launch.
  QPointF cellCenter(int row, int col) const;

  /// The size of the static layer the widget paints now (empty before the first one is drawn);
  /// it lags behind size() while a newer one is drawn on the worker.
  QSize staticLayerSize() const { return layer_.isNull() ? QSize() : layer_.size(); }
  /// True when the static layer painted now was drawn for the current launch, mode and size.
  bool staticLayerIsCurrent() const;
  /// True while a static layer is drawn on the worker.
  bool isBuildingStaticLayer() const { return building_; }

  QSize sizeHint() const override { return {1100, 760}; }
  QSize minimumSizeHint() const override { return {420, 320}; }

 signals:
  /// A click on the thread plane at (row, col) (idle positions included).
  void cellClicked(int row, int col);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  /// What a static layer was drawn for: the launch and mode (one serial) and the size.
  struct LayerKey {
    std::uint64_t content = 0;
    QSize size;
    bool operator==(const LayerKey&) const = default;
  };
  KernelCanvasLayout layoutFor(const QRect& bounds) const;
  double fontPx(const QRect& bounds) const;
  LayerKey keyFor(QSize size) const { return {content_, size}; }
  /// The values the static layer of `layout` is drawn from (the model must have a launch).
  KernelStaticScene sceneFor(const KernelCanvasLayout& layout) const;
  /// A new launch or mode: every cached layer is stale, a layer being drawn is told to stop.
  void contentChanged();
  /// Starts drawing the widget's layer for `key` on the worker unless one is being drawn.
  void requestLayer(const LayerKey& key, const KernelCanvasLayout& layout);
  void layerBuilt();
  /// Draws the static layer for the widget's paint: the current one, the previous one stretched,
  /// or a sketch.
  void paintLayer(QPainter& painter, const KernelCanvasLayout& layout);
  QString tooltipAt(QPointF pos) const;

  const KernelLaunchModel* model_;
  bool presentation_ = false;
  KernelPalette palette_ = KernelPalette::standard();
  QString busy_;
  /// Counts launches and mode changes; a layer drawn for an older value is of no use.
  std::uint64_t content_ = 1;
  /// content_ as the worker sees it: a build whose serial differs stops early. 0 in the
  /// destructor stops any build.
  std::shared_ptr<std::atomic<std::uint64_t>> liveContent_;
  /// The widget's static layer: the last one drawn on the worker, for layerKey_.
  QImage layer_;
  LayerKey layerKey_;
  /// The build in flight (one at a time; a newer size waits for it to finish).
  QFutureWatcher<QImage>* builder_ = nullptr;
  LayerKey buildingKey_;
  bool building_ = false;
  /// renderImage's layer, drawn on the calling thread (an export or a test asked for it).
  QImage frameLayer_;
  LayerKey frameKey_;
};

}  // namespace matmulviz::ui
