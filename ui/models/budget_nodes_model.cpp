#include "ui/models/budget_nodes_model.h"

#include "core/util/format_units.h"
#include "ui/models/qstring_of.h"

namespace matmulviz::ui {

using partitioner::NodeId;

namespace {

QString meaning(NodeRole role) {
  switch (role) {
    case NodeRole::Input:
      return QStringLiteral("The caller keeps inputs alive anyway: saving one costs nothing.");
    case NodeRole::Parameter:
      return QStringLiteral("Parameters live as long as the model: saving one costs nothing.");
    case NodeRole::Saved:
      return QStringLiteral("The forward keeps this value alive until the backward has used it.");
    case NodeRole::SavedView:
      return QStringLiteral(
          "The forward keeps this value for the backward, but it is a view of an input that "
          "stays alive anyway: it costs no memory.");
    case NodeRole::Recomputed:
      return QStringLiteral(
          "The forward frees this value early; the backward computes it again from saved "
          "values.");
    case NodeRole::BackwardOnly:
      return QStringLiteral(
          "Only the backward needs this value: it is computed there, from saved values.");
    case NodeRole::ForwardOnly:
      return QStringLiteral("The backward does not need this value: it is freed in the forward.");
  }
  return {};
}

}  // namespace

BudgetNodesModel::BudgetNodesModel(QObject* parent) : QAbstractTableModel(parent) {}

void BudgetNodesModel::setExplorer(const BudgetExplorer* explorer) {
  beginResetModel();
  disconnect(graphConn_);
  disconnect(planConn_);
  explorer_ = explorer;
  if (explorer) {
    graphConn_ = connect(explorer, &BudgetExplorer::graphChanged, this, [this] {
      beginResetModel();
      endResetModel();
    });
    planConn_ = connect(explorer, &BudgetExplorer::planChanged, this, [this] {
      if (rowCount() > 0) emit dataChanged(index(0, Role), index(rowCount() - 1, Role));
    });
  }
  endResetModel();
}

NodeId BudgetNodesModel::nodeAt(int row) const {
  return explorer_ ? explorer_->forwardNodes().value(row, partitioner::kNoNode)
                   : partitioner::kNoNode;
}

NodeRole BudgetNodesModel::roleAt(int row) const {
  return explorer_->role(nodeAt(row));
}

QString BudgetNodesModel::toolTip(int row) const {
  if (row < 0 || row >= rowCount()) return {};
  const partitioner::Node& n = explorer_->graph()->node(nodeAt(row));
  const NodeRole role = roleAt(row);
  const QString op = n.kind == partitioner::NodeKind::Primal ? nodeRoleText(role) : qs(n.op);
  return QStringLiteral("%1 (%2): %3, %4\n%5: %6")
      .arg(qs(n.name), op, qs(formatSize(n.bytes)), flopsText(n.flops), nodeRoleText(role),
           meaning(role));
}

int BudgetNodesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !explorer_ ? 0 : static_cast<int>(explorer_->forwardNodes().size());
}

int BudgetNodesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BudgetNodesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const partitioner::Node& n = explorer_->graph()->node(nodeAt(index.row()));
  const bool raw = role == RawRole || role == Qt::EditRole;
  if (role == Qt::ToolTipRole) return toolTip(index.row());
  if (role == Qt::TextAlignmentRole)
    return index.column() >= Bytes ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
  if (role != Qt::DisplayRole && !raw) return {};
  switch (index.column()) {
    case Name:
      return qs(n.name);
    case Op:
      return n.kind == partitioner::NodeKind::Primal ? QStringLiteral("(placeholder)") : qs(n.op);
    case Role:
      return raw ? QVariant(int(roleAt(index.row()))) : QVariant(nodeRoleText(roleAt(index.row())));
    case Bytes:
      return raw ? QVariant(qint64(n.bytes)) : QVariant(qs(formatSize(n.bytes)));
    case Flops:
      return raw ? QVariant(qint64(n.flops)) : QVariant(flopsText(n.flops));
  }
  return {};
}

QVariant BudgetNodesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[] = {"node", "op", "under this plan", "size", "FLOPs"};
  return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace matmulviz::ui
