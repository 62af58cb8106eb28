// The real snapshots of tests/reference/gpu/snapshots (PyTorch 2.11.0+cu130 on an H200) read
// right: the .pickle.gz opens as it is (and a damaged gzip is refused with a reason), the peak
// and every block are named by the program's op and line, never by the recorder's own frames
// (gather_with_cpp in memory_snapshot.cpp), the cuBLAS workspaces get their category, and the
// Python-only transformer's blocks get the memory profiler's categories (the counts are those
// of the trace read with Python's pickle: see the README beside the files).
#include "core/io/gzip_bytes.h"
#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_block_text.h"
#include "core/io/snapshot_categories.h"
#include "core/io/snapshot_timeline.h"

#include <QtTest>

#include <zlib.h>

#include <map>

using namespace matmulviz;
using namespace matmulviz::snapshot;

Q_DECLARE_METATYPE(matmulviz::MemoryCategory)

namespace {

const std::string kDir = MATMULVIZ_GPU_SNAPSHOT_DIR;

/// `bytes` as one gzip member (zlib's deflate with a gzip header).
QByteArray gzip(const QByteArray& bytes) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  QByteArray out(int(deflateBound(&z, uLong(bytes.size()))) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(int(z.total_out));
  deflateEnd(&z);
  return out;
}

std::span<const uint8_t> span(const QByteArray& b) {
  return {reinterpret_cast<const uint8_t*>(b.data()), size_t(b.size())};
}

std::map<MemoryCategory, int> countCategories(const MemoryTimeline& t) {
  std::map<MemoryCategory, int> n;
  for (const AllocationRecord& r : t.records) ++n[r.category];
  return n;
}

}  // namespace

class TestGpuSnapshots : public QObject {
  Q_OBJECT
 private slots:
  void gzipRoundTrip_data();
  void gzipRoundTrip();
  void damagedGzipIsRefused_data();
  void damagedGzipIsRefused();
  void readsTheCompressedFiles_data();
  void readsTheCompressedFiles();
  void forumPeakNamedByItsOp();
  void forumWorkspaces();
  void transformerCategories_data();
  void transformerCategories();
  void blockTextSaysTheRule();
};

void TestGpuSnapshots::gzipRoundTrip_data() {
  QTest::addColumn<QByteArray>("plain");
  QTest::addColumn<int>("members");
  QTest::newRow("empty") << QByteArray() << 1;
  QTest::newRow("short") << QByteArray("abc") << 1;
  QByteArray big(9 << 20, '\0');  // over gunzip's 4 MiB step
  for (int i = 0; i < big.size(); ++i) big[i] = char((unsigned(i) * 7919u) >> 5);
  QTest::newRow("9 MiB") << big << 1;
  QTest::newRow("two members, as cat a.gz b.gz") << QByteArray("hello, world") << 2;
}

void TestGpuSnapshots::gzipRoundTrip() {
  QFETCH(QByteArray, plain);
  QFETCH(int, members);
  QByteArray packed;
  for (int i = 0; i < members; ++i) packed += gzip(plain);
  QVERIFY(isGzip(span(packed)));
  const std::vector<uint8_t> out = gunzip(span(packed), uint64_t(1) << 30);
  QCOMPARE(QByteArray(reinterpret_cast<const char*>(out.data()), qsizetype(out.size())),
           plain.repeated(members));
}

void TestGpuSnapshots::damagedGzipIsRefused_data() {
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<uint64_t>("maxBytes");
  QTest::addColumn<QString>("problem");
  const QByteArray good = gzip(QByteArray(100000, 'x'));
  QTest::newRow("truncated") << good.left(good.size() / 2) << (uint64_t(1) << 30) << "truncated";
  QByteArray corrupt = good;
  corrupt[20] = char(corrupt[20] ^ 0x55);
  corrupt[21] = char(corrupt[21] ^ 0x55);
  QTest::newRow("corrupt") << corrupt << (uint64_t(1) << 30) << "corrupt";
  QTest::newRow("trailing bytes") << good + "junk" << (uint64_t(1) << 30) << "bytes follow";
  QTest::newRow("over the limit") << good << uint64_t(50000) << "more than 50000 bytes";
}

void TestGpuSnapshots::damagedGzipIsRefused() {
  QFETCH(QByteArray, bytes);
  QFETCH(uint64_t, maxBytes);
  QFETCH(QString, problem);
  try {
    gunzip(span(bytes), maxBytes);
    QFAIL("accepted");
  } catch (const GzipError& e) {
    QVERIFY2(QString(e.what()).contains(problem), e.what());
  }
  // Through the snapshot reader: a SnapshotError that names the file and says gzip.
  QTemporaryDir dir;
  const QString path = dir.filePath("s.pickle.gz");
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes.left(bytes.size() / 2));
  f.close();
  try {
    readMemorySnapshot(path.toStdString());
    QFAIL("accepted");
  } catch (const SnapshotError& e) {
    QVERIFY2(QString(e.what()).contains("'" + path + "': a gzip file that cannot be read"),
             e.what());
  }
}

void TestGpuSnapshots::readsTheCompressedFiles_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<int>("entries");  // len(device_traces[0]) as Python's pickle reads it
  QTest::addColumn<int>("allocs");
  QTest::newRow("forum") << "forum_cpp_stacks.pickle.gz" << 22266 << 7422;
  QTest::newRow("transformer") << "transformer_adamw_3_steps.pickle.gz" << 1704 << 632;
}

void TestGpuSnapshots::readsTheCompressedFiles() {
  QFETCH(QString, file);
  QFETCH(int, entries);
  QFETCH(int, allocs);
  const MemorySnapshot s = readMemorySnapshot(kDir + "/" + file.toStdString());
  QCOMPARE(s.traces.size(), size_t(1));
  QCOMPARE(s.traces[0].count(), size_t(entries));
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  int n = 0;
  for (const MemoryEvent& e : t.events) n += e.kind == MemoryEventKind::Alloc;
  QCOMPARE(n, allocs);
}

void TestGpuSnapshots::forumPeakNamedByItsOp() {
  const MemorySnapshot s = readMemorySnapshot(kDir + "/forum_cpp_stacks.pickle.gz");
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  for (const std::string& op : t.opNames) {
    QVERIFY2(op.find("gather_with_cpp") == std::string::npos, op.c_str());
    QVERIFY2(op.find("CUDACachingAllocator") == std::string::npos, op.c_str());
  }
  for (const AllocationRecord& r : t.records)
    QVERIFY2(r.label.find("memory_snapshot.cpp") == std::string::npos, r.label.c_str());
  // The largest block: c[q] (64 MiB), made by index_Tensor at the script's line 15.
  const auto largest = std::max_element(t.records.begin(), t.records.end(),
                                        [](const AllocationRecord& a, const AllocationRecord& b) {
                                          return a.blockBytes < b.blockBytes;
                                        });
  QCOMPARE(largest->blockBytes, int64_t(64) << 20);
  QCOMPARE(t.opNames.at(size_t(largest->opId)), std::string("index_Tensor"));
  QCOMPARE(largest->label, std::string("snapshots.py:15"));
  QCOMPARE(largest->category, MemoryCategory::GatheredCopy);
}

void TestGpuSnapshots::forumWorkspaces() {
  const MemorySnapshot s = readMemorySnapshot(kDir + "/forum_cpp_stacks.pickle.gz");
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  int workspaces = 0;
  for (const AllocationRecord& r : t.records)
    if (r.category == MemoryCategory::CublasWorkspace) {
      ++workspaces;
      QCOMPARE(r.blockBytes, int64_t(32) << 20);
      QVERIFY(r.alive);  // kept for the life of the process
    }
  QCOMPARE(workspaces, 2);  // the main thread's first matmul, the autograd thread's first
  QCOMPARE(memoryCategoryName(MemoryCategory::CublasWorkspace),
           std::string_view("cuBLAS workspace"));
}

void TestGpuSnapshots::transformerCategories_data() {
  QTest::addColumn<MemoryCategory>("category");
  QTest::addColumn<int>("blocks");
  using C = MemoryCategory;
  // From the trace, read with Python: 26 blocks under Module._apply (.cuda()), 52 under
  // adam.py _init_group, 78 under _multi_tensor_adam freed under adam.py, 6 of
  // _in_projection_packed freed there; 313 without frames: 234 freed without frames, 52 freed
  // by zero_grad and 26 alive (+1 alive: the autograd thread's 32 MiB workspace), 3 of
  // _make_grads; 2 made by the script's own line; the other 151 under torch/nn/ forward code.
  QTest::newRow("parameter") << C::Parameter << 26;
  QTest::newRow("optimizer state") << C::OptimizerState << 52;
  QTest::newRow("temporary") << C::Temporary << 78 + 6;
  QTest::newRow("autograd detail") << C::AutogradDetail << 234;
  QTest::newRow("gradients") << C::Gradients << 52 + 26 + 3;
  QTest::newRow("cuBLAS workspace") << C::CublasWorkspace << 2;
  QTest::newRow("inputs") << C::Inputs << 2;
  QTest::newRow("activation") << C::Activation << 151;
  QTest::newRow("other") << C::Other << 0;
}

void TestGpuSnapshots::transformerCategories() {
  QFETCH(MemoryCategory, category);
  QFETCH(int, blocks);
  const MemorySnapshot s = readMemorySnapshot(kDir + "/transformer_adamw_3_steps.pickle.gz");
  QVERIFY(BlockCategorizer(s, 0).pythonStacksOnly());
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  QCOMPARE(t.records.size(), size_t(632));
  QCOMPARE(countCategories(t)[category], blocks);
}

void TestGpuSnapshots::blockTextSaysTheRule() {
  const MemorySnapshot s = readMemorySnapshot(kDir + "/transformer_adamw_3_steps.pickle.gz");
  const std::vector<BlockFacts> blocks = timelineBlocks(s, 0);
  const MemoryTimeline t = toMemoryTimeline(s, 0);
  QCOMPARE(blocks.size(), t.records.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    const QString text = QString::fromStdString(describeBlock(s, 0, blocks[i]));
    const QString category = QString::fromUtf8(memoryCategoryName(t.records[i].category).data());
    QVERIFY2(text.contains("category: " + category + " (rule: "), qPrintable(text));
  }
}

QTEST_GUILESS_MAIN(TestGpuSnapshots)
#include "test_gpu_snapshots.moc"
