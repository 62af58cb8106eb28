#include "ui/models/tensor_grid_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace matmulviz::ui {

namespace {

void checkTensor(const Tensor& t, const char* what) {
  if (!t.defined()) throw std::invalid_argument(std::string(what) + ": the tensor is undefined");
  if (t.dim() > 3)
    throw std::invalid_argument(std::string(what) + ": expected 1 to 3 dims, got " +
                                shapeToString(t.sizes()));
  if (!isFloating(t.dtype()))
    throw std::invalid_argument(std::string(what) + ": expected a float dtype, got " +
                                std::string(dtypeName(t.dtype())));
}

QVector<qint64> sizesOf(const Tensor& t) {
  QVector<qint64> s;
  for (int64_t d : t.sizes()) s.append(d);
  return s;
}

}  // namespace

TensorGridModel::TensorGridModel(QObject* parent) : QAbstractTableModel(parent) {}

int TensorGridModel::defaultSliceAxis(const QVector<qint64>& sizes) {
  if (sizes.size() != 3) return 0;
  return sizes[1] >= 8 || sizes[1] >= sizes[0] ? 0 : 1;
}

void TensorGridModel::setTensor(const Tensor& t, const QString& name) {
  checkTensor(t, "TensorGridModel::setTensor");
  setValues(sizesOf(t), t.toDoubles(), name);
}

void TensorGridModel::setDifference(const Tensor& x, const Tensor& y, const QString& name) {
  checkTensor(x, "TensorGridModel::setDifference");
  checkTensor(y, "TensorGridModel::setDifference");
  if (x.sizes() != y.sizes())
    throw std::invalid_argument("TensorGridModel::setDifference: shapes " +
                                shapeToString(x.sizes()) + " and " + shapeToString(y.sizes()) +
                                " differ");
  std::vector<double> v = x.toDoubles();
  const std::vector<double> w = y.toDoubles();
  for (size_t i = 0; i < v.size(); ++i) v[i] -= w[i];
  setValues(sizesOf(x), std::move(v), name);
}

void TensorGridModel::setValues(QVector<qint64> sizes, std::vector<double> values,
                                const QString& name) {
  beginResetModel();
  name_ = name;
  if (sizes.size() == 1) sizes.prepend(1);
  sizes_ = std::move(sizes);
  values_ = std::move(values);
  sliceAxis_ = defaultSliceAxis(sizes_);
  slice_ = 0;
  maxAbsAll_ = 0;
  for (double v : values_)
    if (std::isfinite(v)) maxAbsAll_ = std::max(maxAbsAll_, std::abs(v));
  updateSlice();
  endResetModel();
  emit sliceChanged(slice_);
}

void TensorGridModel::clear() {
  beginResetModel();
  name_.clear();
  sizes_.clear();
  values_.clear();
  slice_ = 0;
  sliceAxis_ = 0;
  maxAbsAll_ = 0;
  updateSlice();
  endResetModel();
}

void TensorGridModel::setSliceAxis(int axis) {
  if (sizes_.size() != 3 || axis < 0 || axis > 2 || axis == sliceAxis_) return;
  beginResetModel();
  sliceAxis_ = axis;
  slice_ = 0;
  updateSlice();
  endResetModel();
  emit sliceChanged(slice_);
}

int TensorGridModel::sliceCount() const {
  if (sizes_.isEmpty()) return 0;
  return sizes_.size() == 3 ? static_cast<int>(sizes_[sliceAxis_]) : 1;
}

void TensorGridModel::setSlice(int s) {
  const int clamped = std::clamp(s, 0, std::max(0, sliceCount() - 1));
  if (clamped == slice_) return;
  beginResetModel();
  slice_ = clamped;
  updateSlice();
  endResetModel();
  emit sliceChanged(slice_);
}

void TensorGridModel::updateSlice() {
  rows_ = cols_ = 0;
  min_ = max_ = 0;
  if (sizes_.size() == 2) {
    rows_ = static_cast<int>(sizes_[0]);
    cols_ = static_cast<int>(sizes_[1]);
  } else if (sizes_.size() == 3) {
    QVector<qint64> rest = sizes_;
    rest.remove(sliceAxis_);
    rows_ = static_cast<int>(rest[0]);
    cols_ = static_cast<int>(rest[1]);
  }
  bool first = true;
  for (int r = 0; r < rows_; ++r)
    for (int c = 0; c < cols_; ++c) {
      const double v = values_[static_cast<size_t>(offsetOf(r, c))];
      if (!std::isfinite(v)) continue;
      min_ = first ? v : std::min(min_, v);
      max_ = first ? v : std::max(max_, v);
      first = false;
    }
}

qint64 TensorGridModel::offsetOf(int r, int c) const {
  if (sizes_.size() == 2) return qint64(r) * sizes_[1] + c;
  qint64 idx[3];
  int k = 0;
  for (int d = 0; d < 3; ++d) idx[d] = d == sliceAxis_ ? slice_ : (k++ == 0 ? r : c);
  return (idx[0] * sizes_[1] + idx[1]) * sizes_[2] + idx[2];
}

double TensorGridModel::value(int r, int c) const {
  if (r < 0 || c < 0 || r >= rows_ || c >= cols_) return std::numeric_limits<double>::quiet_NaN();
  return values_[static_cast<size_t>(offsetOf(r, c))];
}

double TensorGridModel::maxAbsDiff(const Tensor& x, const Tensor& y) {
  if (!x.defined() || !y.defined() || x.sizes() != y.sizes())
    return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a = x.toDoubles(), b = y.toDoubles();
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

int TensorGridModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows_;
}

int TensorGridModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : cols_;
}

QVariant TensorGridModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_ || index.column() >= cols_) return {};
  const double v = value(index.row(), index.column());
  switch (role) {
    case RawRole:
      return v;
    case Qt::DisplayRole:
      return QString::number(v, 'g', 4);
    case Qt::ToolTipRole:
      return QStringLiteral("%1[%2, %3] = %4")
          .arg(name_)
          .arg(index.row())
          .arg(index.column())
          .arg(QString::number(v, 'g', 8));
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    default:
      return {};
  }
}

QVariant TensorGridModel::headerData(int section, Qt::Orientation orientation, int role) const {
  const int count = orientation == Qt::Horizontal ? cols_ : rows_;
  if (role != Qt::DisplayRole || section < 0 || section >= count) return {};
  return QString::number(section);
}

QString TensorGridModel::toCsv() const {
  QStringList header{QStringLiteral("row")};
  for (int c = 0; c < cols_; ++c) header << QString::number(c);
  QString out = header.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (int r = 0; r < rows_; ++r) {
    QStringList fields{QString::number(r)};
    for (int c = 0; c < cols_; ++c) fields << QString::number(value(r, c), 'g', 17);
    out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

}  // namespace matmulviz::ui
