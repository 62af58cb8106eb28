#pragma once
// The Gradients view: heatmaps of dA and dC from the last run with backward, one slice of a
// 3D tensor at a time (slice selector), the value under the cursor, and the difference
// between two strategies' gradients (should be ~0: its max is shown); and dA1, dW1 of the
// last multi-head run.

#include "core/multihead/multihead_report.h"
#include "core/report/strategies_report.h"

#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;

namespace matmulviz::ui {

class HeatmapChart;
class TensorGridModel;

class GradientsView : public QWidget {
  Q_OBJECT
 public:
  explicit GradientsView(QWidget* parent = nullptr);

  /// Offers the runs of `report` whose backward produced gradients; says why when none did.
  void setReport(std::shared_ptr<const StrategiesReport> report);
  /// Adds dA1 [b, s, h] and dW1 [h, e] of a multi-head run (the multi-head assignment) to the
  /// choices.
  void setMultiheadReport(std::shared_ptr<const MultiheadReport> report);
  void setPresentationMode(bool on);

  HeatmapChart* chart() const { return chart_; }
  TensorGridModel* model() const { return model_; }
  /// max |x - y| between the two chosen strategies' gradients; NaN when not comparable.
  double maxDifference() const { return maxDiff_; }
  /// Chooses what is shown: "dA", "dC", "dA1" or "dW1" (multi-head), the strategy, the one compared
  /// with (empty: none).
  void select(const QString& tensor, const QString& strategy, const QString& compareWith = {});

 private:
  void refresh();
  /// The slice spinner after the model changed: 1..sliceCount, on the model's slice + 1.
  void resetSlice();
  const StrategyRun* run(const QString& strategy) const;
  Tensor gradient(const StrategyRun& r) const;

  std::shared_ptr<const StrategiesReport> report_;
  std::shared_ptr<const MultiheadReport> multihead_;
  QComboBox* tensor_ = nullptr;
  QComboBox* strategy_ = nullptr;
  QComboBox* compare_ = nullptr;
  QCheckBox* showDifference_ = nullptr;
  QSpinBox* slice_ = nullptr;
  QLabel* hover_ = nullptr;
  QLabel* diff_ = nullptr;
  QLabel* message_ = nullptr;
  HeatmapChart* chart_ = nullptr;
  TensorGridModel* model_ = nullptr;
  double maxDiff_ = 0;
};

}  // namespace matmulviz::ui
