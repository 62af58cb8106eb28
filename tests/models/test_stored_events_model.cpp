// StoredEventsModel under QAbstractItemModelTester: the rows of a generated snapshot's store,
// read lazily, agree with the store's events and with toMemoryTimeline; a reset to another
// store and to none.
#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_store.h"
#include "core/io/snapshot_timeline.h"
#include "core/io/timeline_store.h"
#include "tests/common/snapshot_generator.h"
#include "ui/models/stored_events_model.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

class TestStoredEventsModel : public QObject {
  Q_OBJECT
 private slots:
  void rowsAreTheStoresEvents() {
    QTemporaryDir dir;
    const std::string pickle = dir.filePath("s.pickle").toStdString();
    const std::string db = dir.filePath("s.sqlite").toStdString();
    testing::SnapshotGenerator::write(pickle, 10000, 50, 4);
    const snapshot::MemorySnapshot s = snapshot::readMemorySnapshot(pickle);
    snapshot::writeSnapshotStore(s, db);
    const MemoryTimeline t = snapshot::toMemoryTimeline(s, 0);
    auto st = std::make_shared<const store::TimelineStore>(db);

    StoredEventsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.setStore(st, 0);
    QCOMPARE(model.rowCount(), int(t.events.size()));
    QCOMPARE(model.columnCount(), int(StoredEventsModel::Count));
    QCOMPARE(model.headerData(StoredEventsModel::Allocated, Qt::Horizontal).toString(),
             QStringLiteral("allocated"));
    for (const int row : {0, 1, 4095, 4096, 5000, int(t.events.size()) - 1}) {
      const MemoryEvent& e = t.events[size_t(row)];
      auto raw = [&](int column) { return model.data(model.index(row, column), Qt::UserRole); };
      QCOMPARE(raw(StoredEventsModel::Event).toInt(), row);
      QCOMPARE(raw(StoredEventsModel::Bytes).toLongLong(), e.bytes);
      QCOMPARE(raw(StoredEventsModel::Allocated).toLongLong(), e.after.allocatedBytes);
      QCOMPARE(raw(StoredEventsModel::Reserved).toLongLong(), e.after.reservedBytes);
      QCOMPARE(raw(StoredEventsModel::Time).toDouble(), e.timeUs);
      QCOMPARE(model.data(model.index(row, StoredEventsModel::Action)).toString(),
               QString::fromLatin1(memoryEventKindName(e.kind)));
    }
    const QString stack = model.data(model.index(1, StoredEventsModel::Stack)).toString();
    QVERIFY2(stack.startsWith("layer") && stack.contains("(fn"), qPrintable(stack));
    QVERIFY(!model.data(model.index(1, StoredEventsModel::Allocated)).toString().isEmpty());
    model.setStore(st, 7);  // no such device
    QCOMPARE(model.rowCount(), 0);
    model.setStore(nullptr, 0);
    QCOMPARE(model.rowCount(), 0);
  }
};

QTEST_GUILESS_MAIN(TestStoredEventsModel)
#include "test_stored_events_model.moc"
