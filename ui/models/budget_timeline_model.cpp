#include "ui/models/budget_timeline_model.h"

#include "core/util/format_units.h"

#include <algorithm>
#include <map>
#include <set>

namespace matmulviz::ui {

using partitioner::NodeId;

namespace {

struct Interval {
  int begin = 0, end = 0;
  int64_t bytes = 0;
  BudgetTimelineModel::Band band = BudgetTimelineModel::ForwardBand;
};

// Storage intervals of one pass, keyed by storage id.
class Pass {
 public:
  Pass(const partitioner::JointGraph& g, const std::set<int64_t>& inputs, QVector<Interval>& all)
      : graph_(g), inputs_(inputs), all_(all) {}
  /// The interval of `node`'s storage, or nullptr (a tuple, an input, not allocated here).
  Interval* of(NodeId node) {
    const auto& s = graph_.node(node).storage;
    if (!s || inputs_.count(*s)) return nullptr;
    auto it = ids_.find(*s);
    return it == ids_.end() ? nullptr : &all_[it->second];
  }
  void use(NodeId node, int step) {
    if (Interval* i = of(node)) i->end = std::max(i->end, step);
  }
  /// `node`'s value appears at `step`: a new storage, or a view extending its base's.
  void produce(NodeId node, int step, BudgetTimelineModel::Band band) {
    const auto& s = graph_.node(node).storage;
    if (!s || inputs_.count(*s)) return;
    if (Interval* i = of(node)) {
      i->end = std::max(i->end, step);
      return;
    }
    ids_[*s] = static_cast<int>(all_.size());
    all_.append({step, step, graph_.node(node).bytes, band});
  }

 private:
  const partitioner::JointGraph& graph_;
  const std::set<int64_t>& inputs_;
  QVector<Interval>& all_;
  std::map<int64_t, int> ids_;
};

void useArgs(const partitioner::Node& n, Pass& pass, int step) {
  for (NodeId a : n.args) pass.use(a, step);
  for (NodeId a : n.nestedArgs) pass.use(a, step);
}

}  // namespace

BudgetTimelineModel::BudgetTimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void BudgetTimelineModel::setExplorer(const BudgetExplorer* explorer) {
  disconnect(planConn_);
  explorer_ = explorer;
  if (explorer)
    planConn_ = connect(explorer, &BudgetExplorer::planChanged, this, [this] { derive(); });
  derive();
}

QString BudgetTimelineModel::bandText(Band band) {
  static const char* const names[] = {"saved for the backward", "recomputed in the backward",
                                      "other forward values", "backward values and gradients"};
  return QString::fromLatin1(names[band]);
}

void BudgetTimelineModel::derive() {
  beginResetModel();
  nodes_.clear();
  forwardSteps_ = 0;
  for (auto& b : bands_) b.clear();
  const BudgetExplorer* e = explorer_;
  if (e && e->hasGraph()) {
    const partitioner::JointGraph& g = *e->graph();
    std::set<int64_t> inputs;
    for (NodeId i : e->info()->inputs)
      if (g.node(i).storage) inputs.insert(*g.node(i).storage);
    QVector<Interval> all;
    Pass fwd(g, inputs, all), bwd(g, inputs, all);
    nodes_ = e->forwardProgram() + e->backwardProgram();
    forwardSteps_ = static_cast<int>(e->forwardProgram().size());
    const int last = stepCount() - 1, lastFwd = forwardSteps_ - 1;
    for (int step = 0; step < forwardSteps_; ++step) {
      useArgs(g.node(nodes_[step]), fwd, step);
      fwd.produce(nodes_[step], step, ForwardBand);
    }
    for (NodeId o : g.forwardOutputs()) fwd.use(o, lastFwd);
    for (NodeId s : e->plan().savedUsed) {
      Interval* i = fwd.of(s);
      if (!i) continue;
      i->band = SavedBand;
      i->end = std::max(i->end, lastFwd);
      bwd.produce(s, forwardSteps_, SavedBand);
    }
    for (NodeId t = 0; t < g.size(); ++t)
      if (g.node(t).kind == partitioner::NodeKind::Tangent)
        bwd.produce(t, forwardSteps_, BackwardBand);
    const auto& recomputed = e->plan().recomputed;
    for (int step = forwardSteps_; step <= last; ++step) {
      const NodeId n = nodes_[step];
      useArgs(g.node(n), bwd, step);
      const bool again = std::find(recomputed.begin(), recomputed.end(), n) != recomputed.end();
      bwd.produce(n, step, again ? RecomputedBand : BackwardBand);
    }
    for (NodeId gr : g.gradOutputs())
      if (gr != partitioner::kNoNode) bwd.use(gr, last);
    for (auto& b : bands_) b.fill(0, stepCount());
    for (const Interval& i : all)
      for (int s = i.begin; s <= std::min(i.end, last); ++s) bands_[i.band][s] += i.bytes;
  }
  endResetModel();
}

QVector<qint64> BudgetTimelineModel::totalSeries() const {
  QVector<qint64> total(stepCount(), 0);
  for (const auto& b : bands_)
    for (int s = 0; s < b.size(); ++s) total[s] += b[s];
  return total;
}

int BudgetTimelineModel::peakStep() const {
  const QVector<qint64> total = totalSeries();
  if (total.isEmpty()) return -1;
  return static_cast<int>(std::max_element(total.begin(), total.end()) - total.begin());
}

QString BudgetTimelineModel::nodeName(int step) const {
  return QString::fromStdString(explorer_->graph()->node(nodes_[step]).name);
}

QString BudgetTimelineModel::toolTip(int step) const {
  if (step < 0 || step >= stepCount()) return {};
  const partitioner::Node& n = explorer_->graph()->node(nodes_[step]);
  QString text =
      QStringLiteral("step %1 (%2): %3 = %4\nalive after it (derived from the graph):")
          .arg(step)
          .arg(step < forwardSteps_ ? QStringLiteral("forward") : QStringLiteral("backward"))
          .arg(QString::fromStdString(n.name), QString::fromStdString(n.op));
  for (int b = 0; b < BandCount; ++b)
    text += QStringLiteral("\n  %1: %2")
                .arg(bandText(Band(b)), QString::fromStdString(formatSize(bands_[b][step])));
  return text;
}

int BudgetTimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : stepCount();
}

int BudgetTimelineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant BudgetTimelineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= stepCount()) return {};
  const int s = index.row();
  const bool raw = role == RawRole || role == Qt::EditRole;
  if (role == Qt::ToolTipRole) return toolTip(s);
  if (role != Qt::DisplayRole && !raw) return {};
  const partitioner::Node& n = explorer_->graph()->node(nodes_[s]);
  auto bytes = [&](qint64 v) {
    return raw ? QVariant(v) : QVariant(QString::fromStdString(formatSize(v)));
  };
  switch (index.column()) {
    case Step:
      return s;
    case Phase:
      return s < forwardSteps_ ? QStringLiteral("forward") : QStringLiteral("backward");
    case Node:
      return QString::fromStdString(n.name);
    case Op:
      return QString::fromStdString(n.op);
    case SavedBytes:
    case RecomputedBytes:
    case ForwardBytes:
    case BackwardBytes:
      return bytes(bands_[index.column() - SavedBytes][s]);
    case TotalBytes:
      return bytes(totalSeries()[s]);
  }
  return {};
}

QVariant BudgetTimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[] = {"step",       "pass",    "node",     "op",   "saved",
                                      "recomputed", "forward", "backward", "total"};
  return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace matmulviz::ui
