#include "ui/models/memory_timeline_model.h"

#include "core/util/format_units.h"
#include "ui/models/qstring_of.h"

#include "ui/models/strategies_table_model.h"  // csvField

#include <QHash>

#include <algorithm>

namespace matmulviz::ui {

QString memoryCategoryText(MemoryCategory c) {
  const std::string_view name = memoryCategoryName(c);
  return QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
}

QString blockPhrase(const QString& label) {
  return label.startsWith(QLatin1String("block ")) ? label : QStringLiteral("block ") + label;
}

MemoryTimelineModel::MemoryTimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void MemoryTimelineModel::clear() {
  beginResetModel();
  strategy_.clear();
  rows_.clear();
  records_.clear();
  opNames_.clear();
  allocated_.clear();
  requested_.clear();
  reserved_.clear();
  for (auto& c : byCategory_) c.clear();
  peakEvent_ = -1;
  statementPeakEvent_ = -1;
  statementEndEvent_ = -1;
  endResetModel();
}

void MemoryTimelineModel::setTimeline(const MemoryTimeline& t, const QString& strategy) {
  beginResetModel();
  strategy_ = strategy;
  rows_.clear();
  records_.clear();
  opNames_.clear();
  for (const auto& n : t.opNames) opNames_ << qs(n);
  QHash<qint64, int> recordIndex;
  for (const AllocationRecord& r : t.records) {
    const auto why = t.aliveWhy.find(r.id);
    const std::string whyText = why == t.aliveWhy.end() ? std::string() : why->second;
    recordIndex.insert(r.id, static_cast<int>(records_.size()));
    records_.append({qs(r.label), qs(whyText), r.alive, r.category});
  }
  const qsizetype n = static_cast<qsizetype>(t.events.size());
  rows_.reserve(n);
  for (auto* v : {&allocated_, &requested_, &reserved_}) {
    v->clear();
    v->reserve(n);
  }
  std::array<qint64, kMemoryCategoryCount> current{};
  for (auto& c : byCategory_) {
    c.clear();
    c.reserve(n);
  }
  peakEvent_ = -1;
  statementPeakEvent_ = -1;
  statementEndEvent_ = -1;
  for (qsizetype i = 0; i < n; ++i) {
    const MemoryEvent& ev = t.events[static_cast<size_t>(i)];
    Row row{ev.timeUs, ev.bytes, ev.opId, recordIndex.value(ev.allocationId, -1), ev.kind};
    if (row.record >= 0) {
      const int cat = static_cast<int>(records_[row.record].category);
      if (ev.kind == MemoryEventKind::Alloc) current[cat] += ev.bytes;
      if (ev.kind == MemoryEventKind::Free) current[cat] -= ev.bytes;
    }
    rows_.append(row);
    allocated_.append(ev.after.allocatedBytes);
    requested_.append(ev.after.requestedBytes);
    reserved_.append(ev.after.reservedBytes);
    for (int c = 0; c < kMemoryCategoryCount; ++c) byCategory_[c].append(current[c]);
    if (peakEvent_ < 0 || ev.after.allocatedBytes > allocated_[peakEvent_])
      peakEvent_ = static_cast<int>(i);
    if (statementEndEvent_ < 0 && t.statementEndUs > 0 && ev.timeUs > t.statementEndUs)
      statementEndEvent_ = static_cast<int>(i);
    if (statementEndEvent_ < 0) statementPeakEvent_ = peakEvent_;
  }
  endResetModel();
}

const QVector<qint64>& MemoryTimelineModel::categorySeries(MemoryCategory c) const {
  return byCategory_[static_cast<size_t>(c)];
}

qint64 MemoryTimelineModel::peakAllocatedBytes() const {
  return peakEvent_ < 0 ? 0 : allocated_[peakEvent_];
}

qint64 MemoryTimelineModel::statementPeakBytes() const {
  return statementPeakEvent_ < 0 ? 0 : allocated_[statementPeakEvent_];
}

QString MemoryTimelineModel::peakText() const {
  if (peakEvent_ < 0) return {};
  QString where = QStringLiteral("op ") + opAt(peakEvent_);
  if (const QString label = labelAt(peakEvent_); !label.isEmpty())
    where += QStringLiteral(", ") + blockPhrase(label);
  if (statementEndEvent_ >= 0 && peakEvent_ >= statementEndEvent_)
    where += QStringLiteral(", during backward");
  return QStringLiteral("%1 at event %2 (%3)")
      .arg(QString::fromStdString(formatSize(peakAllocatedBytes())))
      .arg(peakEvent_)
      .arg(where);
}

QString MemoryTimelineModel::opAt(int event) const {
  if (event < 0 || event >= rows_.size()) return {};
  const int op = rows_[event].op;
  return op >= 0 && op < opNames_.size() ? opNames_[op] : QString();
}

QString MemoryTimelineModel::labelAt(int event) const {
  if (event < 0 || event >= rows_.size() || rows_[event].record < 0) return {};
  return records_[rows_[event].record].label;
}

QString MemoryTimelineModel::whyAliveAt(int event) const {
  if (event < 0 || event >= rows_.size() || rows_[event].record < 0) return {};
  const Record& r = records_[rows_[event].record];
  if (!r.why.isEmpty()) return r.why;
  return r.alive ? QStringLiteral("alive at the end") : QStringLiteral("freed");
}

QString MemoryTimelineModel::tooltipAt(int event) const {
  if (event < 0 || event >= rows_.size()) return {};
  const Row& r = rows_[event];
  QString text = QStringLiteral("event %1 (%2 %3 MiB), op %4")
                     .arg(event)
                     .arg(QString::fromLatin1(memoryEventKindName(r.kind)))
                     .arg(r.bytes / kMiB, 0, 'f', 2)
                     .arg(opAt(event));
  if (r.record >= 0)
    text += QStringLiteral(": %1 (%2), %3")
                .arg(labelAt(event), memoryCategoryText(records_[r.record].category),
                     whyAliveAt(event));
  text += QStringLiteral("\nallocated %1 MiB, requested %2 MiB, reserved %3 MiB")
              .arg(allocated_[event] / kMiB, 0, 'f', 2)
              .arg(requested_[event] / kMiB, 0, 'f', 2)
              .arg(reserved_[event] / kMiB, 0, 'f', 2);
  return text;
}

int MemoryTimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int MemoryTimelineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant MemoryTimelineModel::raw(int row, int column) const {
  const Row& r = rows_[row];
  switch (column) {
    case Index:
      return row;
    case TimeUs:
      return r.timeUs;
    case Op:
      return opAt(row);
    case Kind:
      return QString::fromLatin1(memoryEventKindName(r.kind));
    case Label:
      return labelAt(row);
    case Category:
      return r.record < 0 ? QString() : memoryCategoryText(records_[r.record].category);
    case Bytes:
      return r.bytes;
    case Allocated:
      return allocated_[row];
    case Requested:
      return requested_[row];
    case Reserved:
      return reserved_[row];
    case WhyAlive:
      return whyAliveAt(row);
    default:
      return {};
  }
}

QVariant MemoryTimelineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size() || index.column() >= ColumnCount) return {};
  if (role == RawRole) return raw(index.row(), index.column());
  if (role == Qt::ToolTipRole) return tooltipAt(index.row());
  if (role == Qt::TextAlignmentRole) {
    const int c = index.column();
    const bool number = c == Index || c == TimeUs || (c >= Bytes && c <= Reserved);
    return QVariant::fromValue(Qt::Alignment(number ? Qt::AlignRight | Qt::AlignVCenter
                                                    : Qt::AlignLeft | Qt::AlignVCenter));
  }
  if (role != Qt::DisplayRole) return {};
  const QVariant v = raw(index.row(), index.column());
  if (index.column() == TimeUs) return QString::number(v.toDouble(), 'f', 1);
  return v.toString();
}

QVariant MemoryTimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (role != Qt::DisplayRole || section < 0 || section >= ColumnCount) return {};
  static const char* const names[] = {"event",          "time µs",         "op",
                                      "kind",           "label",           "category",
                                      "bytes",          "allocated bytes", "requested bytes",
                                      "reserved bytes", "why alive"};
  return QString::fromUtf8(names[section]);
}

QString MemoryTimelineModel::toCsv() const {
  QString out = QStringLiteral(
      "event,time_us,op,kind,label,category,bytes,allocated_bytes,requested_bytes,"
      "reserved_bytes,why_alive\n");
  for (int row = 0; row < rows_.size(); ++row) {
    QStringList fields;
    for (int c = 0; c < ColumnCount; ++c) {
      const QVariant v = raw(row, c);
      fields << (v.typeId() == QMetaType::Double ? QString::number(v.toDouble(), 'g', 17)
                                                 : csvField(v.toString()));
    }
    out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

}  // namespace matmulviz::ui
