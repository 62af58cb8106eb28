#pragma once
// Kernel 08 (grouped_bmm) in the Kernel view: its own fields (items, table, I, J, K, TPB), and a
// picture of its four launches on one small simulated problem: q, the histogram counts[m], the
// prefix sum offsets[m], the scattered rows with one bracket per block, and the chosen block's
// shared tile cs = c[m] beside the items it multiplies. Click a bucket, or press Left/Right, to
// look at another block.
//
//   auto* panel = new GroupedBmmPanel;
//   panel->setSpec({12, 5, 1, 8, 8, 4});  // simulates at once: the problem is tiny

#include <QWidget>
#include <memory>

#include "ui/models/grouped_bmm_picture.h"

class QLabel;
class QSpinBox;

namespace matmulviz::ui {

class GroupedBmmCanvas;

class GroupedBmmPanel : public QWidget {
  Q_OBJECT

 public:
  explicit GroupedBmmPanel(QWidget* parent = nullptr);

  /// Simulates `spec` (synchronously: at most 64 items of 4 x 32 x 32) and shows it, or shows
  /// checkGroupedBmm's message in red and keeps the previous picture. The fields follow.
  void setSpec(const GroupedBmmSpec& spec);
  const GroupedBmmSpec& spec() const { return spec_; }
  /// The picture shown, null before the first simulation.
  std::shared_ptr<const GroupedBmmPicture> picture() const;

  /// The block whose tile is drawn (a bucket index, 0..table-1).
  void selectBlock(int m);
  int selectedBlock() const;

  /// The picture alone, at `size`, as shown now (tests, exports).
  QImage renderImage(QSize size) const;

 signals:
  void simulated();
  void failed(const QString& message);

 private:
  GroupedBmmSpec specFromFields() const;
  GroupedBmmSpec spec_;
  QSpinBox* items_ = nullptr;
  QSpinBox* table_ = nullptr;
  QSpinBox* i_ = nullptr;
  QSpinBox* j_ = nullptr;
  QSpinBox* k_ = nullptr;
  QSpinBox* tpb_ = nullptr;
  QLabel* status_ = nullptr;
  GroupedBmmCanvas* canvas_ = nullptr;
  bool syncing_ = false;
};

}  // namespace matmulviz::ui
