#pragma once
// The events of one device of a timeline store (core/io/timeline_store.h) as a table, read
// lazily: a row's chunk of 4096 events is read when the view shows it (the store keeps the last
// chunks decoded), so ten million rows cost nothing until scrolled to. Columns: event, time
// (us), action, bytes, block address, stack (innermost frame, its function), allocated,
// requested and reserved after the event (bytes shown with units). Read-only.

#include <QAbstractTableModel>

#include <cstdint>
#include <memory>

namespace matmulviz::store {
class TimelineStore;
}

namespace matmulviz::ui {

class StoredEventsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Event, Time, Action, Bytes, Address, Stack, Allocated, Requested, Reserved, Count };

  explicit StoredEventsModel(QObject* parent = nullptr);

  /// Shows `device` of `store` (nullptr: no rows). Resets the model.
  void setStore(std::shared_ptr<const store::TimelineStore> store, int64_t device);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  /// DisplayRole: the text; UserRole: the raw number (bytes, microseconds, event index).
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const store::TimelineStore> store_;
  int64_t device_ = 0;
  int rows_ = 0;
};

}  // namespace matmulviz::ui
