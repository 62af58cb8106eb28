#pragma once
// The difference of two timelines by name (labels or categories alive at the peak), as
// horizontal bars of B - A, largest |B - A| on top: growth in red to the right, shrink in green
// to the left, each with its size. The picture of heaptrack's diff.

#include "core/report/compare.h"
#include "ui/charts/chart_view.h"

#include <vector>

namespace matmulviz::ui {

class CompareDiffChart : public ChartView {
  Q_OBJECT
 public:
  explicit CompareDiffChart(QWidget* parent = nullptr);

  /// Copies the first maxBars() of `rows` (sorted by |B - A|, as compareTimelines sorts them);
  /// `what` says what they are ("label at the peak"), `title` the compared timeline.
  void setRows(const std::vector<BytesDiff>& rows, const QString& what, const QString& title);
  static int maxBars() { return 12; }
  bool supportsLogScale() const override { return false; }  ///< differences have both signs

  QString chartName() const override;  ///< "compare-difference-<title>"
  QString csv() const override;        ///< name, a_bytes, b_bytes, difference_bytes

 protected:
  void rebuild() override;

 private:
  std::vector<BytesDiff> rows_;
  QString what_, title_;
};

}  // namespace matmulviz::ui
