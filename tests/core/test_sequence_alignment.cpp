// Two allocation sequences aligned event by event (core/report/sequence_alignment.h) on
// hand-built sequences, with exact rows; and the sequences read from a real H200 snapshot
// (tests/reference/gpu/snapshots) in memory and through an on-disk store (core/io/
// snapshot_store.h), which must be the same events with the same totals.
#include "core/io/snapshot_store.h"
#include "core/io/timeline_store.h"
#include "core/report/allocation_sequence.h"
#include "core/report/sequence_alignment.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace matmulviz;

namespace {

/// "a100 f100 a7": allocs and frees of those request sizes, totals summed from 0.
AllocationSequence parse(const QString& text, const std::string& name) {
  AllocationSequence s;
  s.name = name;
  s.sites.push_back({"(unknown)", ""});
  s.startRequested = 0, s.startReserved = 0;
  int64_t live = 0;
  for (const QString& token : text.split(' ', Qt::SkipEmptyParts)) {
    const bool alloc = token.startsWith('a');
    const int64_t bytes = token.mid(1).toLongLong();
    live += alloc ? bytes : -bytes;
    s.events.push_back({alloc, bytes, live, 0, int64_t(s.events.size()), 0});
  }
  return s;
}

QString rowsText(const SequenceAlignment& al) {
  QStringList out;
  for (const AlignedRow& r : al.rows) {
    const char* k = r.kind == AlignedKind::Match         ? "="
                    : r.kind == AlignedKind::SizeDiffers ? "~"
                    : r.kind == AlignedKind::KindDiffers ? "!"
                    : r.kind == AlignedKind::OnlyA       ? "A"
                                                         : "B";
    out << QString("%1%2:%3").arg(k).arg(r.a).arg(r.b);
  }
  return out.join(' ');
}

}  // namespace

class TestSequenceAlignment : public QObject {
  Q_OBJECT

 private slots:
  void align_data() {
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::addColumn<QString>("rows");
    QTest::addColumn<int>("firstDivergence");
    QTest::newRow("equal") << "a100 a7 f100 f7"
                           << "a100 a7 f100 f7"
                           << "=0:0 =1:1 =2:2 =3:3" << -1;
    QTest::newRow("both empty") << ""
                                << ""
                                << "" << -1;
    QTest::newRow("one more temporary in A") << "a100 a7 a4000 f4000 a3 f100 f7 f3"
                                             << "a100 a7 a3 f100 f7 f3"
                                             << "=0:0 =1:1 A2:-1 A3:-1 =4:2 =5:3 =6:4 =7:5" << 2;
    QTest::newRow("one more temporary in B") << "a100 a7 a3 f100"
                                             << "a100 a7 a9 a3 f100"
                                             << "=0:0 =1:1 B-1:2 =2:3 =3:4" << 2;
    QTest::newRow("another size, then in step again") << "a100 a7 a3 f100 f7"
                                                      << "a100 a8 a3 f100 f7"
                                                      << "=0:0 ~1:1 =2:2 =3:3 =4:4" << 1;
    QTest::newRow("an alloc against a free") << "a5 a6 f6"
                                             << "a5 f5 f6"
                                             << "=0:0 !1:1 =2:2" << 1;
    QTest::newRow("B ends early") << "a1 a2 a3"
                                  << "a1"
                                  << "=0:0 A1:-1 A2:-1" << 1;
    QTest::newRow("A empty") << ""
                             << "a1 f1"
                             << "B-1:0 B-1:1" << 0;
    QTest::newRow("one release's frees in another order")
        << "a1 a2 a3 f3 f1 f2 a4"
        << "a1 a2 a3 f1 f2 f3 a4"
        << "=0:0 =1:1 =2:2 =3:5 =4:3 =5:4 =6:6" << -1;
    QTest::newRow("a run of frees of other sizes") << "a1 a2 f1 f2"
                                                   << "a1 a3 f1 f3"
                                                   << "=0:0 ~1:1 =2:2 ~3:3" << 1;
  }
  void align() {
    QFETCH(QString, a);
    QFETCH(QString, b);
    QFETCH(QString, rows);
    QFETCH(int, firstDivergence);
    const AllocationSequence sa = parse(a, "A"), sb = parse(b, "B");
    const SequenceAlignment al = alignSequences(sa, sb);
    QCOMPARE(rowsText(al), rows);
    QCOMPARE(al.firstDivergence, int64_t(firstDivergence));
    int64_t matched = 0;
    for (const AlignedRow& r : al.rows) matched += r.kind == AlignedKind::Match;
    QCOMPARE(al.matched, matched);
  }
  void drift() {
    // B starts 32 bytes higher; the totals keep that difference until B's extra block.
    AllocationSequence a = parse("a100 a7 f7 a5 f100", "A"), b = parse("a100 a7 f7 a5 f100", "B");
    b.startRequested = 32;
    for (SequenceEvent& e : b.events) e.requested += 32;
    QCOMPARE(alignSequences(a, b).firstRequestedDrift, int64_t(-1));
    b.events[2].requested += 1;
    QCOMPARE(alignSequences(a, b).firstRequestedDrift, int64_t(2));
    // In a run of frees the totals are compared at its end only (its order may differ).
    AllocationSequence c = parse("a100 a7 f7 f100", "A"), d = parse("a100 a7 f100 f7", "B");
    d.events[2].requested += 1;
    QCOMPARE(alignSequences(c, d).firstRequestedDrift, int64_t(-1));
    d.events[3].requested += 1;
    QCOMPARE(alignSequences(c, d).firstRequestedDrift, int64_t(3));
  }
  void describe() {
    const AllocationSequence a = parse("a100 a4000", "A"), b = parse("a100", "B");
    const SequenceAlignment al = alignSequences(a, b);
    QCOMPARE(describeDivergence(al, a, b),
             std::string("first divergence at row 1, only in A: A: event 1, alloc 4000 B "
                         "(3.91 KiB) by (unknown); B: nothing"));
    QCOMPARE(describeDivergence(alignSequences(a, a), a, a),
             std::string("no divergence (2 events matched)"));
  }
  void snapshotInMemoryAndOnDisk_data() {
    QTest::addColumn<QString>("file");
    for (const char* name : {"gather_backward", "mlp_backward", "softmax_topk",
                             "attention_backward", "forum_held1_s3"})
      QTest::newRow(name) << QString(name);
  }
  void snapshotInMemoryAndOnDisk() {
    QFETCH(QString, file);
    const std::string path =
        (QStringLiteral(MATMULVIZ_GPU_SNAPSHOT_DIR "/") + file + ".pickle").toStdString();
    const snapshot::MemorySnapshot snap = snapshot::readMemorySnapshot(path);
    const AllocationSequence mem = sequenceOfSnapshot(snap, 0, "s");
    // Each starts after a warm-up matmul: its 32 MiB cuBLAS workspace is alive before the trace
    // (and the autograd thread's, once an earlier program of the process ran a backward).
    QVERIFY(mem.startBlocks == 1 || mem.startBlocks == 2);
    QCOMPARE(mem.startRequested, mem.startBlocks * (int64_t(32) << 20));
    QVERIFY(mem.startReserved >= int64_t(32) << 20);
    QVERIFY(!mem.events.empty());
    // The live requests after each event: those at the start plus the events so far.
    int64_t live = mem.startRequested;
    for (const SequenceEvent& e : mem.events) {
      live += e.alloc ? e.bytes : -e.bytes;
      QCOMPARE(e.requested, live);
    }
    QTemporaryDir dir;
    const std::string storePath = dir.filePath("s.sqlite").toStdString();
    snapshot::writeSnapshotStore(snap, storePath);
    const store::TimelineStore st(storePath);
    const AllocationSequence disk = sequenceOfStore(st, 0, "s");
    QCOMPARE(disk.startBlocks, mem.startBlocks);
    QCOMPARE(disk.startRequested, mem.startRequested);
    QCOMPARE(disk.startReserved, mem.startReserved);
    QCOMPARE(disk.events.size(), mem.events.size());
    for (size_t x = 0; x < mem.events.size(); ++x) {
      const SequenceEvent &m = mem.events[x], &d = disk.events[x];
      QCOMPARE(d.alloc, m.alloc);
      QCOMPARE(d.bytes, m.bytes);
      QCOMPARE(d.requested, m.requested);
      QCOMPARE(d.reserved, m.reserved);
      QCOMPARE(disk.sites[size_t(d.site)].where, mem.sites[size_t(m.site)].where);
    }
    QVERIFY(!alignSequences(mem, disk).diverges());
  }
};

QTEST_GUILESS_MAIN(TestSequenceAlignment)
#include "test_sequence_alignment.moc"
