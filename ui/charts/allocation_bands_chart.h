#pragma once
// The Memory view's chart of a PyTorch memory snapshot's active memory stacked by allocation,
// as PyTorch's memory_viz draws its "Active Memory Timeline": each allocation a band over its
// life, bands stacked in the order they were allocated, those above a freed block sliding down
// over 3 steps; the largest 15000 drawn one by one and the rest summarised in one grey band on
// top (core/io/snapshot_allocation_bands.h). Each band has its own colour; no legend. The peak
// is marked. Hover a band for its block: address, size, when it was allocated and freed, its
// category from the frames and its stack, innermost first. Drag pans, the wheel zooms.

#include "ui/charts/chart_view.h"
#include "ui/models/snapshot_allocations.h"

#include <memory>

class QCPItemText;

namespace matmulviz::ui {

class AllocationBandsChart : public ChartView {
  Q_OBJECT
 public:
  explicit AllocationBandsChart(QWidget* parent = nullptr);

  /// Shows device `name` of `allocations` (nullptr or an unknown name clears the chart).
  void setDevice(std::shared_ptr<const SnapshotAllocations> allocations, const QString& name);
  QString chartName() const override;  ///< "memory-allocations-cuda-0"
  /// One line per band drawn: band, address, size, category, first and last step, and the
  /// events (as the Memory view numbers them) of its alloc and free (empty: none in the trace).
  QString csv() const override;
  bool supportsLogScale() const override { return false; }
  /// Bands drawn one by one (not counting the summary), and all allocations.
  int bandCount() const;
  int allocationCount() const;
  /// The hover text at `step` (x) and `bytes` (y): a band's block, the summary, or empty.
  QString textAt(double step, double bytes) const;
  /// The device shown; nullptr when none.
  const SnapshotAllocations::Device* device() const;
  /// The peak's label as drawn ("peak 20.0 MiB at event 553 (step 972)"): the event as the
  /// Memory view numbers events; empty without a device.
  QString peakText() const;
  /// The widget position of (step, bytes), for tests that hover.
  QPoint positionOf(double step, double bytes) const;

 protected:
  void rebuild() override;
  QString toolTipAt(const QPoint& pos) const override;

 private:
  void setupAxes();
  void markPeak();

  std::shared_ptr<const SnapshotAllocations> allocations_;
  QString name_;
  QCPItemText* peakLabel_ = nullptr;
};

}  // namespace matmulviz::ui
