// snapshot::readMemorySnapshot: the fixtures of tests/reference/make_snapshot_fixtures.py in the
// layouts of PyTorch 2.0, 2.1 and 2.6 at protocols 2, 4 and 5 read to the same columns; files
// that are no snapshot or hold wrong values give a message naming the file and the key path; a
// large snapshot (1 M events, written by the script at test time) reads with its frames interned
// once, and prints the throughput and the peak RSS.

#include "core/io/memory_snapshot.h"
#include "core/io/pickle_reader.h"

#include <QtTest/QtTest>

#include <sys/resource.h>

#include <atomic>
#include <chrono>

using namespace matmulviz::snapshot;

namespace {

constexpr int64_t A0 = 0x7F3A00000000, A1 = 0x7F3B00000000, STREAM = 0x5583A1B2C3D0;
constexpr int64_t MIB = 1 << 20;

std::string fixture(const QString& name) {
  return (QStringLiteral(MATMULVIZ_SNAPSHOT_DIR "/") + name).toStdString();
}

QString errorOf(const std::string& path) {
  try {
    readMemorySnapshot(path);
  } catch (const SnapshotError& e) {
    return QString::fromStdString(e.what());
  }
  return QStringLiteral("(no error)");
}

QStringList frameNames(const MemorySnapshot& s, StackId id) {
  QStringList out;
  for (uint32_t f : s.stacks.at(id))
    out << QString::fromStdString(s.frames[f].filename + ":" + std::to_string(s.frames[f].line) +
                                  " " + s.frames[f].name);
  return out;
}

}  // namespace

class TestMemorySnapshot : public QObject {
  Q_OBJECT

 private slots:
  void releases_data();
  void releases();
  void refused_data();
  void refused();
  void truncated();
  void cancel();
  void large();
  void protocol2Memo();
};

void TestMemorySnapshot::releases_data() {
  QTest::addColumn<QString>("release");
  QTest::addColumn<QString>("file");
  for (const char* v : {"2_0", "2_1", "2_6"})
    for (const char* p : {"2", "4", "5"})
      QTest::newRow(qPrintable(QStringLiteral("%1 p%2").arg(v, p)))
          << QString(v) << QStringLiteral("snapshot_%1_p%2.pickle").arg(v, p);
}

namespace {

void checkSegments(const MemorySnapshot& s, bool v20) {
  QCOMPARE(s.segments.size(), size_t(2));
  QCOMPARE(s.blocks.size(), size_t(4));
  const Segment& s0 = s.segments[0];
  const Segment& s1 = s.segments[1];
  QCOMPARE(s0.address, A0);
  QCOMPARE(s0.totalSize, 2 * MIB);
  QCOMPARE(s0.allocatedSize, int64_t(512));
  QCOMPARE(s0.activeSize, int64_t(1536));
  QCOMPARE(s0.requestedSize, int64_t(1500));
  QVERIFY(!s0.large && s1.large);
  QCOMPARE(s1.stream, STREAM);
  QCOMPARE(s1.firstBlock, 3u);
  QCOMPARE(s1.blockCount, 1u);
  if (!v20) {
    QVERIFY(s1.expandable && !s0.expandable);
    QCOMPARE(s1.poolId[0], int64_t(1));
    QCOMPARE(s1.poolId[1], int64_t(2));
  }
}

void checkBlocks(const MemorySnapshot& s) {
  // Block addresses: given from 2.1, laid out from the segment's address in 2.0.
  const int64_t addresses[] = {A0, A0 + 512, A0 + 1536, A1};
  const int64_t sizes[] = {512, 1024, 2 * MIB - 1536, 20 * MIB};
  const BlockState states[] = {BlockState::ActiveAllocated, BlockState::ActivePendingFree,
                               BlockState::Inactive, BlockState::ActiveAwaitingFree};
  for (int i = 0; i < 4; ++i) {
    QCOMPARE(s.blocks[i].address, addresses[i]);
    QCOMPARE(s.blocks[i].size, sizes[i]);
    QCOMPARE(int(s.blocks[i].state), int(states[i]));
    QCOMPARE(s.blocks[i].segment, i < 3 ? 0u : 1u);
  }
  QCOMPARE(s.blocks[0].requestedSize, int64_t(500));
  QCOMPARE(s.blocks[3].requestedSize, int64_t(20000000));
  // Stacks: empty, A (train.py:42, train.py:88) and B (linear.py, A), each interned once.
  QCOMPARE(s.stacks.size(), size_t(3));
  QCOMPARE(s.frames.size(), size_t(3));
  QCOMPARE(frameNames(s, s.blocks[0].stack),
           QStringList({"train.py:42 forward", "train.py:88 main"}));
  QCOMPARE(frameNames(s, s.blocks[1].stack).size(), 3);
  QCOMPARE(s.blocks[2].stack, 0u);
  QCOMPARE(s.blocks[1].stack, s.blocks[3].stack);
}

void checkTrace(const MemorySnapshot& s, bool v20, bool v26) {
  // Trace: 12 events (2.0 has no segment_map/unmap: 10) on device 0, none on device 1.
  QCOMPARE(s.traces.size(), size_t(v20 ? 1 : 2));
  const DeviceTrace& t = s.traces[0];
  QCOMPARE(t.count(), size_t(v20 ? 10 : 12));
  QCOMPARE(s.eventCount(), t.count());
  QCOMPARE(int(t.action[0]), int(TraceAction::SegmentAlloc));
  const size_t oom = v20 ? 6 : 7;
  QCOMPARE(int(t.action[oom]), int(TraceAction::Oom));
  QCOMPARE(t.addr[oom], int64_t(123456));
  QCOMPARE(t.size[oom], int64_t(1) << 34);
  QCOMPARE(int(t.action.back()), int(TraceAction::SegmentFree));
  QCOMPARE(t.addr[2], A0 + 512);
  QCOMPARE(t.stack[2], s.blocks[1].stack);
  QCOMPARE(t.stack.back(), 0u);
  QCOMPARE(t.timeUs[3], v26 ? int64_t(1003) : int64_t(-1));
  if (!v20) {
    QCOMPARE(int(t.action[4]), int(TraceAction::SegmentMap));
    QCOMPARE(t.stream[4], STREAM);
    QCOMPARE(int(t.action[8]), int(TraceAction::SegmentUnmap));
  }
  QCOMPARE(QString::fromStdString(s.allocatorConf),
           v26 ? QStringLiteral("expandable_segments:True") : QString());
  QCOMPARE(s.externalAnnotations, size_t(v26 ? 1 : 0));
}

}  // namespace

void TestMemorySnapshot::releases() {
  QFETCH(QString, release);
  QFETCH(QString, file);
  const MemorySnapshot s = readMemorySnapshot(fixture(file));
  const bool v20 = release == "2_0", v26 = release == "2_6";
  checkSegments(s, v20);
  if (QTest::currentTestFailed()) return;
  checkBlocks(s);
  if (QTest::currentTestFailed()) return;
  checkTrace(s, v20, v26);
}

void TestMemorySnapshot::refused_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<QString>("message");
  QTest::newRow("list") << "bad_list_p4.pickle"
                        << "bad_list_p4.pickle': not a PyTorch memory snapshot: the pickle holds "
                           "a list, not a dict with 'segments' and 'device_traces'";
  QTest::newRow("class p2") << "bad_class_p2.pickle"
                            << "bad_class_p2.pickle': byte 32: opcode GLOBAL (0x63) is refused";
  QTest::newRow("class p4") << "bad_class_p4.pickle"
                            << "opcode STACK_GLOBAL (0x93) is refused";
  QTest::newRow("OrderedDict") << "bad_reduce_p4.pickle"
                               << "opcode STACK_GLOBAL (0x93) is refused";
  QTest::newRow("os.system") << "bad_os_system.pickle"
                             << "byte 2: opcode GLOBAL (0x63) is refused";
  QTest::newRow("negative size")
      << "bad_negative_size_p4.pickle"
      << "bad_negative_size_p4.pickle': device_traces[0][3].size: expected a number of bytes "
         ">= 0, got -1024";
  QTest::newRow("string size") << "bad_string_size_p4.pickle"
                               << "device_traces[0][5].size: expected an int, got a string";
  QTest::newRow("no action") << "bad_missing_action_p2.pickle"
                             << "device_traces[0][2]: missing key 'action'";
  QTest::newRow("int") << "bad_int_p4.pickle"
                       << "not a PyTorch memory snapshot: the pickle holds an int, not a dict";
  QTest::newRow("no segments") << "bad_no_segments_p4.pickle"
                               << "not a PyTorch memory snapshot: the pickle's dict has no "
                                  "'segments'";
  QTest::newRow("action") << "bad_action_p4.pickle"
                          << "device_traces[0][4].action: unknown action 'malloc'";
  QTest::newRow("state") << "bad_state_p4.pickle"
                         << "segments[1].blocks[0].state: expected active_allocated, "
                            "active_pending_free, active_awaiting_free or inactive, got 'free'";
  QTest::newRow("segment type") << "bad_segment_type_p4.pickle"
                                << "segments[0].segment_type: expected 'small' or 'large', got "
                                   "'huge'";
  QTest::newRow("pool id") << "bad_pool_id_p4.pickle"
                           << "segments[0].segment_pool_id[1]: expected an int, got a string";
  QTest::newRow("frame line") << "bad_frame_line_p4.pickle"
                              << "segments[0].frames[0].line: expected an int, got a float";
  QTest::newRow("shared trace list")
      << "bad_shared_trace_p4.pickle"
      << "device_traces[1]: a list that already appeared elsewhere in the snapshot";
  QTest::newRow("fuzz: shared lists, 1e8 events")
      << "../../fuzz/regressions/snapshot/memo-shared-lists-1e8-events-in-40kb"
      << "device_traces[0][1]: a dict that already appeared elsewhere in the snapshot";
  QTest::newRow("missing file") << "missing.pickle"
                                << "missing.pickle': cannot open";
}

void TestMemorySnapshot::refused() {
  QFETCH(QString, file);
  QFETCH(QString, message);
  const QString got = errorOf(fixture(file));
  if (!got.contains(message)) qWarning() << "got:" << got;
  QVERIFY(got.contains(message));
}

void TestMemorySnapshot::truncated() {
  QFile in(QString::fromStdString(fixture("snapshot_2_6_p4.pickle")));
  QVERIFY(in.open(QIODevice::ReadOnly));
  const QByteArray whole = in.readAll();
  QTemporaryDir dir;
  const QString cut = dir.path() + "/cut.pickle";
  for (const qsizetype n : {qsizetype(0), qsizetype(1), whole.size() / 2, whole.size() - 1}) {
    QFile out(cut);
    QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
    out.write(whole.left(n));
    out.close();
    const QString got = errorOf(cut.toStdString());
    QVERIFY2(got.startsWith("'" + cut + "': byte "), qPrintable(got));
  }
  QVERIFY(errorOf(cut.toStdString()).contains("(truncated?)"));
}

void TestMemorySnapshot::cancel() {
  std::atomic<bool> stop{true};
  LoadOptions options;
  options.cancel = &stop;
  QVERIFY_THROWS_EXCEPTION(matmulviz::pickle::Cancelled,
                           readMemorySnapshot(fixture("snapshot_2_6_p4.pickle"), options));
}

// A 1 M-event snapshot (100 k under the sanitizers), written by the fixture script.
void TestMemorySnapshot::large() {
#ifdef MATMULVIZ_SANITIZED_BUILD
  const int n = 100000;
#else
  const int n = 1000000;
#endif
  QTemporaryDir dir;
  const QString path = dir.path() + "/large.pickle";
  QProcess py;
  py.start("/usr/bin/python3", {MATMULVIZ_SNAPSHOT_SCRIPT, "--large", QString::number(n), path});
  if (!py.waitForStarted()) QSKIP("no /usr/bin/python3 to write the large snapshot");
  QVERIFY(py.waitForFinished(120000));
  QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());

  std::vector<uint64_t> progress;
  LoadOptions options;
  options.progress = [&](uint64_t done, uint64_t) { progress.push_back(done); };
  const auto t0 = std::chrono::steady_clock::now();
  const MemorySnapshot s = readMemorySnapshot(path.toStdString(), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const qint64 bytes = QFileInfo(path).size();
  QCOMPARE(s.eventCount(), size_t(n));
  QCOMPARE(s.traces[0].count(), size_t(n));
  QCOMPARE(s.frames.size(), size_t(500));  // 500 frame dicts, each in the file once
  QCOMPARE(s.stacks.size(), size_t(65));   // 64 shared lists and the empty stack
  QCOMPARE(int(s.traces[0].action[n - 1]), int(TraceAction((n - 1) % 3)));
  QCOMPARE(s.traces[0].timeUs[n - 1], int64_t(1'700'000'000'000'000) + n - 1);
  QVERIFY(progress.size() >= 3);
  QVERIFY(std::is_sorted(progress.begin(), progress.end()));
  QCOMPARE(progress.back(), uint64_t(bytes));

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);  // the peak while loading (the parse below adds no more)

  // The memo keeps frames shared: the parsed tree has about one container per event, not nine.
  const auto t1 = std::chrono::steady_clock::now();
  const matmulviz::pickle::PickleFile doc = matmulviz::pickle::readPickleFile(path.toStdString());
  const double parse = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  QVERIFY(doc.document.containerCount() < size_t(n) + 1000);

  qInfo(
      "large snapshot: %d events, %.1f MB read in %.3f s (%.0f MB/s; the pickle parse alone "
      "%.3f s, %.0f MB/s), peak RSS %.0f MB",
      n, bytes / 1e6, seconds, bytes / 1e6 / seconds, parse, bytes / 1e6 / parse,
      usage.ru_maxrss / 1024.0);
}

// Protocol 2 numbers the memo with BINPUT up to 255, then LONG_BINPUT / LONG_BINGET; lists and
// dicts of over 1000 items come in several APPENDS / SETITEMS batches. (This file of 5000 events
// holds 6344 LONG_BINPUT and 4312 LONG_BINGET, as pickletools.genops counts them.)
void TestMemorySnapshot::protocol2Memo() {
  QTemporaryDir dir;
  const QString path = dir.path() + "/p2.pickle";
  QProcess py;
  py.start("/usr/bin/python3", {MATMULVIZ_SNAPSHOT_SCRIPT, "--large", "5000", path, "2"});
  if (!py.waitForStarted()) QSKIP("no /usr/bin/python3 to write the snapshot");
  QVERIFY(py.waitForFinished(60000));
  QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
  const MemorySnapshot s = readMemorySnapshot(path.toStdString());
  QCOMPARE(s.eventCount(), size_t(5000));
  QCOMPARE(s.frames.size(), size_t(500));
  QCOMPARE(s.stacks.size(), size_t(65));
  QCOMPARE(s.traces[0].addr[4999], A0 + 512 * (4999 / 3));
}

QTEST_GUILESS_MAIN(TestMemorySnapshot)
#include "test_memory_snapshot.moc"
