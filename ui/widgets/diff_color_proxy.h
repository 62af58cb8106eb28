#pragma once
// Colours a difference table: growth (B > A) in red, shrink (B < A) in green, as heaptrack's diff
// mode does. A proxy over a model that says each row's direction in a role (the Compare window's
// models: SignRole), so that the models stay free of colours.

#include "ui/charts/diff_colors.h"

#include <QColor>
#include <QIdentityProxyModel>

namespace matmulviz::ui {

class DiffColorProxy : public QIdentityProxyModel {
  Q_OBJECT
 public:
  /// `signRole`: the source model's role holding -1, 0 or +1.
  explicit DiffColorProxy(int signRole, QObject* parent = nullptr);
  /// ForegroundRole: red for +1, green for -1, nothing for 0; every other role from the source.
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

  static QColor growthColor() { return ui::growthColor(); }  ///< ui/charts/diff_colors.h
  static QColor shrinkColor() { return ui::shrinkColor(); }

 private:
  int signRole_;
};

}  // namespace matmulviz::ui
