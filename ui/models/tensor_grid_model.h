#pragma once
// A 2D slice of a host tensor (2D, or 3D sliced along one axis) as a table of numbers, for the
// gradient heatmaps. Values are read once with Tensor::toDoubles (any float dtype).

#include "core/tensor/tensor.h"

#include <QAbstractTableModel>
#include <QString>
#include <QVector>

namespace matmulviz::ui {

class TensorGridModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int RawRole = Qt::UserRole + 1;  ///< the value as a double

  explicit TensorGridModel(QObject* parent = nullptr);

  /// Shows `t` (host, defined, 1 to 3 dims; a 1D tensor is one row), named `name` ("dA,
  /// strategy1"). For 3D the slice axis is chosen by defaultSliceAxis(); slice 0 is shown.
  /// Throws std::invalid_argument for an undefined tensor, > 3 dims or a non-float dtype.
  void setTensor(const Tensor& t, const QString& name);
  /// Shows x - y elementwise (same shape), named `name` ("dA: strategy1 - fused").
  void setDifference(const Tensor& x, const Tensor& y, const QString& name);
  void clear();

  QString name() const { return name_; }
  /// The tensor's sizes as given ([N, I, J]).
  QVector<qint64> sizes() const { return sizes_; }
  /// For [D0, D1, D2]: 0 when D1 >= 8 or D1 >= D0 (slices [D1, D2]), else 1 (slices [D0, D2]):
  /// dC [M, J, K] shows J x K per m; dA [N, 1, J] shows one N x J slice.
  static int defaultSliceAxis(const QVector<qint64>& sizes);
  int sliceAxis() const { return sliceAxis_; }
  /// Slices along `axis` of a 3D tensor (0, 1 or 2); resets the model to slice 0.
  void setSliceAxis(int axis);
  int sliceCount() const;
  int slice() const { return slice_; }
  /// Shows slice `s` (clamped to [0, sliceCount())); resets the model and emits sliceChanged.
  void setSlice(int s);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  /// Value of the shown slice at (r, c); NaN out of range.
  double value(int r, int c) const;
  /// Min and max over the shown slice (0 when empty).
  double minValue() const { return min_; }
  double maxValue() const { return max_; }
  /// Max |value| over the whole tensor (every slice).
  double maxAbsValue() const { return maxAbsAll_; }

  /// max |x - y| over all elements; NaN when shapes differ or either is undefined.
  static double maxAbsDiff(const Tensor& x, const Tensor& y);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  /// The shown slice: a header line "row,0,1,..." then one line per row, full precision.
  QString toCsv() const;

 signals:
  void sliceChanged(int slice);

 private:
  void setValues(QVector<qint64> sizes, std::vector<double> values, const QString& name);
  void updateSlice();
  qint64 offsetOf(int r, int c) const;

  QString name_;
  QVector<qint64> sizes_;
  std::vector<double> values_;
  int sliceAxis_ = 0;
  int slice_ = 0;
  int rows_ = 0, cols_ = 0;
  double min_ = 0, max_ = 0, maxAbsAll_ = 0;
};

}  // namespace matmulviz::ui
