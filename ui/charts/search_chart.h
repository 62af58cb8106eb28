#pragma once
// The largest-batch search of a PyTorch script (matmulviz.simulate --search, SearchResults):
// one bar per trial, in the order of its value, as tall as the trial's peak reserved memory
// (what must fit the GPU), filled where the run fit and red where it ran out of memory, its
// peak allocated memory marked on it, and the GPU's capacity as a dashed line. The title says
// the answer. The memory axis is logarithmic by default (the trials double: their peaks span
// decades). Hover a bar for the trial's numbers and the line that ran out of memory.

#include "core/report/search_results.h"
#include "ui/charts/chart_view.h"

#include <memory>

namespace matmulviz::ui {

class SearchChart : public ChartView {
  Q_OBJECT
 public:
  explicit SearchChart(QWidget* parent = nullptr);
  /// Null clears the chart (its placeholder says how to fill it).
  void setResults(std::shared_ptr<const SearchResults> results, const QString& gpuName);
  const SearchResults* results() const { return results_.get(); }
  QString chartName() const override { return QStringLiteral("largest-batch"); }
  /// value, fits, peak_allocated_bytes, peak_reserved_bytes, where, seconds.
  QString csv() const override;
  /// The title drawn ("Largest --batch_size that fits on h100: 5164").
  QString title() const;

 protected:
  void rebuild() override;
  QString toolTipFor(QCPAbstractPlottable* plottable, int dataIndex) const override;

 private:
  std::shared_ptr<const SearchResults> results_;
  QString gpu_;
};

}  // namespace matmulviz::ui
