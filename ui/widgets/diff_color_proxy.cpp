#include "ui/widgets/diff_color_proxy.h"

#include <QBrush>
#include <QColor>

namespace matmulviz::ui {

DiffColorProxy::DiffColorProxy(int signRole, QObject* parent)
    : QIdentityProxyModel(parent), signRole_(signRole) {}

QVariant DiffColorProxy::data(const QModelIndex& index, int role) const {
  if (role != Qt::ForegroundRole) return QIdentityProxyModel::data(index, role);
  const int sign = QIdentityProxyModel::data(index, signRole_).toInt();
  if (sign > 0) return QBrush(ui::growthColor());
  if (sign < 0) return QBrush(ui::shrinkColor());
  return {};
}

}  // namespace matmulviz::ui
