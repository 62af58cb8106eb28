#include "ui/models/compare_events_model.h"

#include "core/report/compare_text.h"
#include "core/util/format_units.h"
#include "ui/models/qstring_of.h"

namespace matmulviz::ui {

CompareEventsModel::CompareEventsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareEventsModel::setSequence(const ComparedSequence& c) {
  beginResetModel();
  copy_ = c;
  sequence_ = &copy_;
  endResetModel();
}

void CompareEventsModel::clear() {
  beginResetModel();
  sequence_ = nullptr;
  copy_ = {};
  endResetModel();
}

int CompareEventsModel::firstDivergence() const {
  return sequence_ ? int(sequence_->alignment.firstDivergence) : -1;
}

int CompareEventsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !sequence_ ? 0 : int(sequence_->alignment.rows.size());
}

int CompareEventsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareEventsModel::data(const QModelIndex& index, int role) const {
  if (!sequence_ || !index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
    return {};
  const AlignedRow& r = sequence_->alignment.rows[size_t(index.row())];
  const AllocationSequence& a = *sequence_->a;
  const AllocationSequence& b = *sequence_->b;
  const SequenceEvent* ea = r.a >= 0 ? &a.events[size_t(r.a)] : nullptr;
  const SequenceEvent* eb = r.b >= 0 ? &b.events[size_t(r.b)] : nullptr;
  if (role == SignRole) return r.kind == AlignedKind::Match ? 0 : 1;
  const int c = index.column();
  if (role == Qt::TextAlignmentRole)
    return c == Kind || c == EventA || c == EventB || c == WhereA || c == WhereB
               ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
               : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
  auto event = [](const SequenceEvent* e) {
    return e ? QString("%1 %2").arg(e->alloc ? "alloc" : "free", qs(formatSize(e->bytes)))
             : QString();
  };
  auto where = [](const AllocationSequence& s, const SequenceEvent* e) {
    if (!e) return QString();
    const SequenceSite& site = s.sites[size_t(e->site)];
    return site.where.empty() ? qs(site.op) : qs(site.op + " at " + site.where);
  };
  const qint64 none = -1;
  qint64 raw = none;
  switch (c) {
    case RequestedA:
      raw = ea ? ea->requested : none;
      break;
    case RequestedB:
      raw = eb ? eb->requested : none;
      break;
    case ReservedA:
      raw = ea ? ea->reserved : none;
      break;
    case ReservedB:
      raw = eb ? eb->reserved : none;
      break;
    default:
      break;
  }
  const bool diff = c == Difference && ea && eb;
  const bool isRaw = role == RawRole;
  if (!isRaw && role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  // The text columns read the same in every role; the numbers are raw (RawRole) or formatted.
  switch (c) {
    case Row:
      return isRaw ? QVariant(qint64(index.row())) : QVariant(index.row());
    case Kind:
      return QString(alignedKindName(r.kind));
    case EventA:
      return event(ea);
    case EventB:
      return event(eb);
    case WhereA:
      return where(a, ea);
    case WhereB:
      return where(b, eb);
    case Difference:
      if (isRaw) return diff ? QVariant(qint64(eb->requested - ea->requested)) : QVariant(none);
      return diff ? qs(formatSizeDifference(eb->requested - ea->requested)) : QString();
    default:
      if (isRaw) return raw;
      return raw < 0 ? QString() : qs(formatSize(raw));
  }
}

QVariant CompareEventsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Row:
      return tr("Row");
    case Kind:
      return tr("Alignment");
    case EventA:
      return tr("A");
    case EventB:
      return tr("B");
    case RequestedA:
      return tr("Requests A");
    case RequestedB:
      return tr("Requests B");
    case Difference:
      return tr("B − A");
    case ReservedA:
      return tr("Reserved A");
    case ReservedB:
      return tr("Reserved B");
    case WhereA:
      return tr("Allocated by (A)");
    case WhereB:
      return tr("Allocated by (B)");
    default:
      return {};
  }
}

}  // namespace matmulviz::ui
