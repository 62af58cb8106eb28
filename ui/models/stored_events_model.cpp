#include "ui/models/stored_events_model.h"

#include "core/io/timeline_store.h"
#include "core/memory/memory_event.h"
#include "core/util/format_units.h"

#include <QLocale>

#include <limits>

namespace matmulviz::ui {

StoredEventsModel::StoredEventsModel(QObject* parent) : QAbstractTableModel(parent) {}

void StoredEventsModel::setStore(std::shared_ptr<const store::TimelineStore> store,
                                 int64_t device) {
  beginResetModel();
  store_ = std::move(store);
  device_ = device;
  rows_ = 0;
  if (store_)
    for (const store::DeviceInfo& d : store_->devices())
      if (d.id == device)  // a view shows at most INT_MAX rows
        rows_ = int(std::min<int64_t>(d.events, std::numeric_limits<int>::max()));
  endResetModel();
}

int StoredEventsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows_;
}

int StoredEventsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : Count;
}

QVariant StoredEventsModel::data(const QModelIndex& index, int role) const {
  if (!store_ || !index.isValid() || index.row() >= rows_ ||
      (role != Qt::DisplayRole && role != Qt::UserRole))
    return {};
  const std::vector<store::StoredEvent> ev = store_->events(device_, index.row(), 1);
  if (ev.empty()) return {};
  const store::StoredEvent& e = ev.front();
  const bool raw = role == Qt::UserRole;
  auto bytes = [&](int64_t b) -> QVariant {
    return raw ? QVariant(qlonglong(b)) : QVariant(QString::fromStdString(formatSize(b)));
  };
  switch (index.column()) {
    case Event:
      return raw ? QVariant(index.row()) : QVariant(QLocale().toString(index.row()));
    case Time:
      return raw ? QVariant(e.timeUs) : QVariant(QLocale().toString(e.timeUs, 'f', 0));
    case Action:
      return QString::fromLatin1(memoryEventKindName(static_cast<MemoryEventKind>(e.kind)));
    case Bytes:
      return bytes(e.bytes);
    case Address:
      return raw ? QVariant(qlonglong(e.addr))
                 : QVariant(QStringLiteral("0x%1").arg(qulonglong(e.addr), 0, 16));
    case Stack: {
      const auto [label, function] = store_->stack(e.stack);
      if (function.empty() || function == label) return QString::fromStdString(label);
      return QStringLiteral("%1 (%2)").arg(QString::fromStdString(label),
                                           QString::fromStdString(function));
    }
    case Allocated:
      return bytes(e.allocated);
    case Requested:
      return bytes(e.requested);
    case Reserved:
      return bytes(e.reserved);
    default:
      return {};
  }
}

QVariant StoredEventsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 || section >= Count)
    return QAbstractTableModel::headerData(section, orientation, role);
  static const char* const kNames[] = {"event", "time (us)", "action",    "bytes",   "block",
                                       "stack", "allocated", "requested", "reserved"};
  return QString::fromLatin1(kNames[section]);
}

}  // namespace matmulviz::ui
