// core/io/timeline_store.h and snapshot_store.h: a snapshot's timelines written to SQLite read
// back event for event as toMemoryTimeline gives them; the levels of detail and the per-pixel
// columns checked against a brute-force min/max over the events; the streamed reader checked
// against the tree reader on a generated snapshot; bad and truncated stores refused.
#include "core/io/memory_snapshot.h"
#include "core/io/pickle_reader.h"
#include "core/io/snapshot_store.h"
#include "core/io/snapshot_timeline.h"
#include "core/io/timeline_store.h"
#include "tests/common/snapshot_generator.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <random>

using namespace matmulviz;
using namespace matmulviz::snapshot;

namespace {

/// Brute force: the counters' min and max over the events [first, last] of `t`.
store::Bucket bruteForce(const MemoryTimeline& t, int64_t first, int64_t last) {
  store::Bucket b{first, last, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN};
  for (int64_t i = first; i <= last; ++i) {
    const MemoryCounters& c = t.events[size_t(i)].after;
    b.allocMin = std::min(b.allocMin, c.allocatedBytes);
    b.allocMax = std::max(b.allocMax, c.allocatedBytes);
    b.reqMin = std::min(b.reqMin, c.requestedBytes);
    b.reqMax = std::max(b.reqMax, c.requestedBytes);
    b.resMin = std::min(b.resMin, c.reservedBytes);
    b.resMax = std::max(b.resMax, c.reservedBytes);
  }
  return b;
}

void compareBucket(const store::Bucket& got, const store::Bucket& want) {
  QCOMPARE(got.first, want.first);
  QCOMPARE(got.last, want.last);
  QCOMPARE(got.allocMin, want.allocMin);
  QCOMPARE(got.allocMax, want.allocMax);
  QCOMPARE(got.reqMin, want.reqMin);
  QCOMPARE(got.reqMax, want.reqMax);
  QCOMPARE(got.resMin, want.resMin);
  QCOMPARE(got.resMax, want.resMax);
}

/// Every event of every device of `s` in the store at `path` as toMemoryTimeline has it.
void compareWithTimelines(const MemorySnapshot& s, const std::string& path) {
  const store::TimelineStore st(path);
  const std::vector<size_t> devices = devicesWithMemory(s);
  QCOMPARE(st.devices().size(), devices.size());
  for (size_t k = 0; k < devices.size(); ++k) {
    const MemoryTimeline t = toMemoryTimeline(s, devices[k]);
    const store::DeviceInfo& d = st.devices()[k];
    QCOMPARE(d.id, int64_t(devices[k]));
    QCOMPARE(d.events, int64_t(t.events.size()));
    const std::vector<store::StoredEvent> got = st.events(d.id, 0, d.events + 10);
    QCOMPARE(got.size(), t.events.size());
    int64_t peak = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const MemoryEvent& e = t.events[i];
      QCOMPARE(got[i].kind, uint8_t(e.kind));
      QCOMPARE(got[i].bytes, e.bytes);
      QCOMPARE(got[i].timeUs, e.timeUs);
      QCOMPARE(got[i].allocated, e.after.allocatedBytes);
      QCOMPARE(got[i].requested, e.after.requestedBytes);
      QCOMPARE(got[i].reserved, e.after.reservedBytes);
      peak = std::max(peak, e.after.allocatedBytes);
    }
    QCOMPARE(d.peakAllocated, peak);
  }
}

}  // namespace

class TestTimelineStore : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::string file(const char* name) const { return dir_.filePath(name).toStdString(); }

 private slots:
  void fixturesRoundTrip_data() {
    QTest::addColumn<QString>("name");
    for (const char* n : {"snapshot_2_0_p4.pickle", "snapshot_2_1_p2.pickle",
                          "snapshot_2_6_p4.pickle", "snapshot_2_6_p5.pickle"})
      QTest::newRow(n) << n;
  }
  void fixturesRoundTrip() {
    QFETCH(QString, name);
    const MemorySnapshot s =
        readMemorySnapshot(std::string(MATMULVIZ_SNAPSHOT_DIR) + "/" + name.toStdString());
    writeSnapshotStore(s, file("fixture.sqlite"));
    compareWithTimelines(s, file("fixture.sqlite"));
    const store::TimelineStore st(file("fixture.sqlite"));
    QVERIFY(!st.stack(0).first.empty());  // "(no frames)"
  }

  // 30 000 events with a few hundred stacks: the streamed reader gives the tree reader's
  // columns, the store gives toMemoryTimeline's events, and every level of detail and the
  // columns of random ranges match a brute-force min/max.
  void generated() {
    const std::string path = file("gen.pickle");
    testing::SnapshotGenerator::write(path, 30000, 300, 7);
    const MemorySnapshot s = readMemorySnapshot(path);
    const pickle::PickleFile tree = pickle::readPickleFile(path);
    const MemorySnapshot fromTree = toMemorySnapshot(tree.document);
    QCOMPARE(s.traces.size(), size_t(1));
    QCOMPARE(s.traces[0].count(), size_t(30000));
    QVERIFY(s.traces[0].addr == fromTree.traces[0].addr);
    QVERIFY(s.traces[0].size == fromTree.traces[0].size);
    QVERIFY(s.traces[0].timeUs == fromTree.traces[0].timeUs);
    QVERIFY(s.traces[0].stack == fromTree.traces[0].stack);
    QCOMPARE(s.stacks.size(), fromTree.stacks.size());

    writeSnapshotStore(s, file("gen.sqlite"));
    compareWithTimelines(s, file("gen.sqlite"));
    const MemoryTimeline t = toMemoryTimeline(s, 0);
    const store::TimelineStore st(file("gen.sqlite"));
    const store::DeviceInfo& d = st.devices()[0];
    QCOMPARE(d.levels, 4);  // 64, 512, 4096, 32768 events a bucket
    int64_t size = store::kFinestBucket;
    for (int l = 0; l < d.levels; ++l, size *= store::kLevelFactor) {
      const std::vector<store::Bucket> buckets = st.level(0, l, 0, d.events - 1);
      QCOMPARE(int64_t(buckets.size()), (d.events + size - 1) / size);
      for (const store::Bucket& b : buckets) compareBucket(b, bruteForce(t, b.first, b.last));
    }
    std::mt19937 rng(3);
    for (int k = 0; k < 40; ++k) {
      const double x0 = double(rng() % 30000), w = double(1 + rng() % 30000);
      const int pixels = int(1 + rng() % 900);
      const std::vector<store::Bucket> cols = st.columns(0, x0, x0 + w, pixels);
      QVERIFY(!cols.empty());
      QVERIFY(int(cols.size()) <= pixels);
      for (size_t c = 0; c < cols.size(); ++c) {
        compareBucket(cols[c], bruteForce(t, cols[c].first, cols[c].last));
        if (c > 0) QCOMPARE(cols[c].first, cols[c - 1].last + 1);  // contiguous
      }
      QVERIFY(double(cols.front().first) <= x0);
      QVERIFY(cols.back().last >= std::min<int64_t>(d.events, int64_t(x0 + w)) - 1);
    }
    const int64_t mid = st.indexAtTime(0, t.events[12345].timeUs);
    QCOMPARE(t.events[size_t(mid)].timeUs, t.events[12345].timeUs);
    QVERIFY(mid == 0 || t.events[size_t(mid) - 1].timeUs < t.events[12345].timeUs);
    QCOMPARE(st.indexAtTime(0, 1e18), d.events);
    QVERIFY(st.stack(s.traces[0].stack[0]).first.starts_with("layer"));
  }

  void refusesOtherFiles() {
    {
      std::ofstream(file("empty.sqlite"));
      std::ofstream(file("text.sqlite")) << "not a database at all, just some text";
    }
    for (const char* name : {"empty.sqlite", "text.sqlite", "missing.sqlite"})
      QVERIFY_THROWS_EXCEPTION(store::StoreError, store::TimelineStore(file(name)));
    // An SQLite database that is not a store.
    QVERIFY_THROWS_EXCEPTION(
        store::StoreError,
        store::TimelineStore(std::string(MATMULVIZ_SNAPSHOT_DIR) + "/snapshot_2_6_p4.pickle"));
  }

  // A store cut short: opening or querying it fails with StoreError or gives fewer events;
  // it never crashes.
  void truncatedStore() {
    testing::SnapshotGenerator::write(file("t.pickle"), 20000, 100, 2);
    writeSnapshotStore(readMemorySnapshot(file("t.pickle")), file("whole.sqlite"));
    std::ifstream in(file("whole.sqlite"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    for (const size_t keep : {bytes.size() / 2, bytes.size() - 70000, size_t(65536 * 3)}) {
      std::ofstream(file("cut.sqlite"), std::ios::binary).write(bytes.data(), long(keep));
      try {
        const store::TimelineStore st(file("cut.sqlite"));
        for (const store::DeviceInfo& d : st.devices()) {
          QVERIFY(st.events(d.id, 0, d.events).size() <= size_t(d.events));
          st.columns(d.id, 0, double(d.events), 500);
        }
      } catch (const store::StoreError& e) {
        QVERIFY(std::string(e.what()).find("cut.sqlite") != std::string::npos);
      }
    }
  }

  void cancelRemovesTheFile() {
    testing::SnapshotGenerator::write(file("c.pickle"), 200000, 100, 2);
    const MemorySnapshot s = readMemorySnapshot(file("c.pickle"));
    std::atomic<bool> cancel{true};
    LoadOptions options;
    options.cancel = &cancel;
    QVERIFY_THROWS_EXCEPTION(pickle::Cancelled, writeSnapshotStore(s, file("c.sqlite"), options));
    QVERIFY(!QFile::exists(QString::fromStdString(file("c.sqlite"))));
  }
};

QTEST_GUILESS_MAIN(TestTimelineStore)
#include "test_timeline_store.moc"
