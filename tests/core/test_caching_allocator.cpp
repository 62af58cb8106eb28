// The caching-allocator model against the rules of c10/cuda/CUDACachingAllocator.cpp.
// Each row is a script of requests ("a SIZE" allocates, "f I" frees the I-th allocation) and
// the counters it must end with; sizes take K/M suffixes (KiB/MiB) and may be fractional.
#include "core/memory/caching_allocator.h"
#include "core/memory/host_backing.h"
#include "core/tensor/tensor.h"

#include <QtTest>

#include <cstring>

using namespace matmulviz;

namespace {

constexpr qint64 KiB = 1024, MiB = 1024 * 1024;

qint64 parseSize(const QString& s) {
  if (s.endsWith('M')) return static_cast<qint64>(s.chopped(1).toDouble() * MiB);
  if (s.endsWith('K')) return static_cast<qint64>(s.chopped(1).toDouble() * KiB);
  return s.toLongLong();
}

}  // namespace

class TestCachingAllocator : public QObject {
  Q_OBJECT

 private slots:
  void counters_data() {
    QTest::addColumn<QString>("script");
    QTest::addColumn<qint64>("allocated");
    QTest::addColumn<qint64>("requested");
    QTest::addColumn<qint64>("reserved");
    QTest::addColumn<int>("segments");
    QTest::addColumn<qint64>("peakAllocated");

    QTest::newRow("1 byte rounds to 512") << "a 1" << 512LL << 1LL << 2 * MiB << 1 << 512LL;
    QTest::newRow("zero bytes still take 512") << "a 0" << 512LL << 0LL << 2 * MiB << 1 << 512LL;
    QTest::newRow("513 rounds to 1024") << "a 513" << 1024LL << 513LL << 2 * MiB << 1 << 1024LL;
    QTest::newRow("small requests share one 2 MiB segment")
        << "a 1000;a 1000;a 1000" << 3 * 1024LL << 3000LL << 2 * MiB << 1 << 3 * 1024LL;
    QTest::newRow("1 MiB is still small") << "a 1M" << MiB << MiB << 2 * MiB << 1 << MiB;
    QTest::newRow("two 1 MiB blocks fill one small segment")
        << "a 1M;a 1M" << 2 * MiB << 2 * MiB << 2 * MiB << 1 << 2 * MiB;
    QTest::newRow("1 MiB + 1 is large: 20 MiB segment, split")
        << "a 1048577" << MiB + 512 << MiB + 1 << 20 * MiB << 1 << MiB + 512;
    QTest::newRow("9 MiB: 20 MiB segment, split")
        << "a 9M" << 9 * MiB << 9 * MiB << 20 * MiB << 1 << 9 * MiB;
    QTest::newRow("10 MiB: its own segment")
        << "a 10M" << 10 * MiB << 10 * MiB << 10 * MiB << 1 << 10 * MiB;
    QTest::newRow("19.5 MiB counts 20 MiB (remainder not split)")
        << "a 19.5M" << 20 * MiB << qint64(19.5 * MiB) << 20 * MiB << 1 << 20 * MiB;
    QTest::newRow("18.5 MiB: 1.5 MiB remainder is split off")
        << "a 18.5M" << qint64(18.5 * MiB) << qint64(18.5 * MiB) << 20 * MiB << 1
        << qint64(18.5 * MiB);
    QTest::newRow("32 MiB: segment of exactly 32 MiB")
        << "a 32M" << 32 * MiB << 32 * MiB << 32 * MiB << 1 << 32 * MiB;
    QTest::newRow("33 MiB: segment rounded to 34 MiB, 1 MiB not split")
        << "a 33M" << 34 * MiB << 33 * MiB << 34 * MiB << 1 << 34 * MiB;
    QTest::newRow("a reused 3 MiB block counts 3 MiB for 2.5 MiB")
        << "a 3M;a 17M;f 0;a 2.5M" << 20 * MiB << qint64(19.5 * MiB) << 20 * MiB << 1 << 20 * MiB;
    QTest::newRow("freed blocks are cached, not released")
        << "a 4M;f 0" << 0LL << 0LL << 20 * MiB << 1 << 4 * MiB;
    // 4+4+4+8 fill a 20 MiB segment; freeing the first two leaves one merged 8 MiB block.
    QTest::newRow("freed neighbours merge and are reused")
        << "a 4M;a 4M;a 4M;a 8M;f 0;f 1;a 6M" << 18 * MiB << 18 * MiB << 20 * MiB << 1 << 20 * MiB;
    QTest::newRow("one freed 4 MiB block cannot take 6 MiB: new segment")
        << "a 4M;a 4M;a 4M;a 8M;f 0;a 6M" << 22 * MiB << 22 * MiB << 40 * MiB << 2 << 22 * MiB;
    QTest::newRow("a merged block with a remainder <= 1 MiB is handed out whole")
        << "a 4M;a 4M;a 4M;a 8M;f 0;f 1;a 7M" << 20 * MiB << 19 * MiB << 20 * MiB << 1 << 20 * MiB;
    QTest::newRow("small and large pools do not share")
        << "a 512K;f 0;a 2M" << 2 * MiB << 2 * MiB << 22 * MiB << 2 << 2 * MiB;
    QTest::newRow("large pool reuse of a whole 32 MiB segment")
        << "a 32M;f 0;a 31M" << 32 * MiB << 31 * MiB << 32 * MiB << 1 << 32 * MiB;
    QTest::newRow("peak survives frees")
        << "a 8M;a 8M;f 0;f 1" << 0LL << 0LL << 20 * MiB << 1 << 16 * MiB;
  }

  void counters() {
    QFETCH(QString, script);
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    std::vector<int64_t> ids;
    for (const QString& step : script.split(';')) {
      const QStringList parts = step.split(' ');
      if (parts[0] == "a")
        ids.push_back(alloc.allocate(parseSize(parts[1]), "t").id);
      else
        alloc.free(ids.at(parts[1].toInt()));
    }
    QTEST(qint64(alloc.current().allocatedBytes), "allocated");
    QTEST(qint64(alloc.current().requestedBytes), "requested");
    QTEST(qint64(alloc.current().reservedBytes), "reserved");
    QTEST(int(alloc.segmentCount()), "segments");
    QTEST(qint64(alloc.peak().allocatedBytes), "peakAllocated");
  }

  void bestFitPicksTheSmallestBlockThatFits() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    // Segment 1 (20 MiB): 9 + 5 used, 6 free. Segment 2 (20 MiB): 8 + 8 used, 4 free.
    for (double mib : {9.0, 5.0, 8.0, 8.0}) alloc.allocate(static_cast<int64_t>(mib * MiB), "x");
    QCOMPARE(alloc.segmentCount(), 2);
    alloc.allocate(static_cast<int64_t>(3.5 * MiB), "c");  // takes the 4 MiB block, whole
    QCOMPARE(alloc.current().allocatedBytes, 34 * MiB);
    alloc.allocate(6 * MiB, "d");  // the 6 MiB block is still there
    QCOMPARE(alloc.segmentCount(), 2);
    QCOMPARE(alloc.current().allocatedBytes, 40 * MiB);
  }

  void segmentLayoutCoversEachSegment() {  // what torch.cuda.memory_snapshot() lists
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const auto a = alloc.allocate(9 * MiB, "a");  // a 20 MiB large segment: 9 + 5, 6 free
    const auto b = alloc.allocate(5 * MiB - 100, "b");
    alloc.allocate(1000, "s");  // a 2 MiB small segment
    alloc.free(a.id);
    const auto layout = alloc.segmentLayout();
    QCOMPARE(layout.size(), size_t(2));
    for (const auto& s : layout) {
      int64_t end = s.address;
      for (const auto& block : s.blocks) {
        QCOMPARE(block.address, end);
        end += block.size;
      }
      QCOMPARE(end, s.address + s.size);
    }
    const auto& large = layout[0].small ? layout[1] : layout[0];
    QCOMPARE(large.size, 20 * MiB);
    QCOMPARE(large.blocks.size(), size_t(3));
    QVERIFY(!large.blocks[0].allocated && large.blocks[0].allocationId == -1);
    QCOMPARE(large.blocks[1].requested, 5 * MiB - 100);
    QCOMPARE(large.blocks[1].allocationId, b.id);
    QCOMPARE(alloc.blockAddress(b.id), large.blocks[1].address);
    QCOMPARE(alloc.blockAddress(a.id), int64_t(-1));  // freed
  }

  void outOfMemoryNamesSizes() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {64 * MiB, true});
    alloc.allocate(32 * MiB, "a");
    alloc.allocate(32 * MiB, "c");
    try {
      alloc.allocate(2048 * MiB, "c[q]");
      QFAIL("expected OutOfMemoryError");
    } catch (const OutOfMemoryError& e) {
      const QString msg = e.what();
      QVERIFY2(msg.contains("out of memory: tried to allocate 2.00 GiB"), qPrintable(msg));
      QVERIFY2(msg.contains("64.00 MiB allocated"), qPrintable(msg));
      QVERIFY2(msg.contains("capacity 64.00 MiB"), qPrintable(msg));
    }
    QCOMPARE(alloc.current().allocatedBytes, 64 * MiB);  // nothing half-done
    QCOMPARE(alloc.events().back().kind, MemoryEventKind::Oom);
  }

  void outOfMemoryReleasesCachedSegmentsFirst() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {40 * MiB, false});
    const auto a = alloc.allocate(32 * MiB, "a");
    alloc.free(a.id);
    QCOMPARE(alloc.current().reservedBytes, 32 * MiB);
    alloc.allocate(34 * MiB, "b");  // 32 cached + 34 > 40: the cached segment goes first
    QCOMPARE(alloc.current().reservedBytes, 34 * MiB);
    QCOMPARE(alloc.segmentCount(), 1);
  }

  void resetPeakAndEmptyCache() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const auto a = alloc.allocate(8 * MiB, "a");
    alloc.allocate(1 * MiB, "b");
    alloc.free(a.id);
    QCOMPARE(alloc.peak().allocatedBytes, 9 * MiB);
    alloc.resetPeak();
    QCOMPARE(alloc.peak().allocatedBytes, 1 * MiB);
    alloc.emptyCache();  // the 20 MiB segment is free and whole: released; the small one is not
    QCOMPARE(alloc.current().reservedBytes, 2 * MiB);
  }

  void timelineRecordsEveryEventWithItsOp() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {std::nullopt, true});
    alloc.pushOp("index");
    const auto a = alloc.allocate(4 * MiB, "c[q]");
    alloc.popOp();
    alloc.setLabel(a.id, "renamed");
    alloc.free(a.id);
    const auto& ev = alloc.events();
    QCOMPARE(int(ev.size()), 3);  // segment alloc, alloc, free
    QCOMPARE(ev[0].kind, MemoryEventKind::SegmentAlloc);
    QCOMPARE(ev[1].kind, MemoryEventKind::Alloc);
    QCOMPARE(QString::fromStdString(alloc.opNames()[ev[1].opId]), QString("index"));
    QCOMPARE(ev[1].after.allocatedBytes, 4 * MiB);
    QCOMPARE(ev[2].kind, MemoryEventKind::Free);
    QCOMPARE(ev[2].after.allocatedBytes, 0LL);
    QCOMPARE(QString::fromStdString(alloc.record(a.id).label), QString("renamed"));
    QVERIFY(!alloc.record(a.id).alive);
    QCOMPARE(int(alloc.opSpans().size()), 1);
  }

  // What an allocation holds is set by the code that allocates (issue 15): the default
  // category while it is made, or what it says after; a CategoryScope changes the default.
  void categoryIsSetWhereItIsAllocated() {
    const DevicePtr device = makeDevice(DeviceKind::Meta, {std::nullopt, true});
    CachingAllocator& alloc = device->allocator();
    const Tensor scratch = empty({8}, DType::Float32, device, "scratch");
    QCOMPARE(scratch.category(), MemoryCategory::Other);
    const Tensor input = empty({8}, DType::Float32, device, "a");
    QCOMPARE(input.setCategory(MemoryCategory::Inputs).category(), MemoryCategory::Inputs);
    {
      CategoryScope gradients(device.get(), MemoryCategory::Gradients);
      const Tensor g = empty({8}, DType::Float32, device, "grad of a");
      QCOMPARE(g.category(), MemoryCategory::Gradients);
      QCOMPARE(alloc.record(g.storage().allocationId()).category, MemoryCategory::Gradients);
      CategoryScope nested(device.get(), MemoryCategory::Other);
      QCOMPARE(empty({8}, DType::Float32, device, "staging").category(), MemoryCategory::Other);
    }
    QCOMPARE(alloc.defaultCategory(), MemoryCategory::Other);
    // Host tensors have no record: setting does nothing.
    const Tensor host = empty({8}, DType::Float32, nullptr, "host");
    QCOMPARE(host.setCategory(MemoryCategory::Inputs).category(), MemoryCategory::Other);
    QCOMPARE(std::string(memoryCategoryName(MemoryCategory::SavedForBackward)),
             std::string("saved for backward"));
  }

  void hostBackingReusesFreedRanges() {
    HostBacking host(int64_t{1} << 30);
    void* a = host.allocate(20 * MiB);
    void* b = host.allocate(2 * MiB);
    host.release(a, 20 * MiB);
    void* c = host.allocate(4 * MiB);  // lowest free range: a's
    QCOMPARE(c, a);
    void* d = host.allocate(16 * MiB);  // the rest of a's range
    QCOMPARE(static_cast<char*>(d), static_cast<char*>(a) + 4 * MiB);
    QCOMPARE(host.highWaterBytes(), 22 * MiB);
    host.release(b, 2 * MiB);
    host.release(c, 4 * MiB);
    host.release(d, 16 * MiB);
    void* e = host.allocate(22 * MiB);  // everything merged back into one range
    QCOMPARE(e, a);
    QVERIFY_THROWS_EXCEPTION(std::bad_alloc, host.allocate(int64_t{2} << 30));
  }

  // What the app does after a run (issue 17, point 16): the pages of freed segments go back to
  // the OS, while live ones keep their data; the reservation stays usable.
  void hostBackingReleasesFreePages_data() {
    QTest::addColumn<qint64>("liveBytes");
    QTest::addColumn<qint64>("freedBytes");
    QTest::newRow("all freed") << 0LL << 64 * MiB;
    QTest::newRow("a live segment below the freed one") << 2 * MiB << 30 * MiB;
  }
  void hostBackingReleasesFreePages() {
    QFETCH(qint64, liveBytes);
    QFETCH(qint64, freedBytes);
    HostBacking host(int64_t{1} << 30);
    char* live = liveBytes ? static_cast<char*>(host.allocate(size_t(liveBytes))) : nullptr;
    if (live) std::memset(live, 7, size_t(liveBytes));
    auto* freed = static_cast<char*>(host.allocate(size_t(freedBytes)));
    std::memset(freed, 1, size_t(freedBytes));  // touched: resident
    host.release(freed, size_t(freedBytes));
    QCOMPARE(host.releaseFreePages(), freedBytes);
    QCOMPARE(host.highWaterBytes(), liveBytes);
    QCOMPARE(host.releaseFreePages(), 0LL);  // nothing left to give back
    if (live) QCOMPARE(int(live[liveBytes - 1]), 7);
    auto* again = static_cast<char*>(host.allocate(size_t(freedBytes)));
    QCOMPARE(again, freed);
    QCOMPARE(int(again[0]), 0);  // fresh zero pages
  }

  void formatBytesLikePyTorch_data() {
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("bytes") << 512LL << "512 bytes";
    QTest::newRow("KiB") << 1536LL << "1.50 KiB";
    QTest::newRow("MiB") << 20 * MiB << "20.00 MiB";
    QTest::newRow("GiB") << 2048 * MiB << "2.00 GiB";
    // Each unit up to and including its limit, as c10's format_size.
    QTest::newRow("1024 bytes") << 1024LL << "1024 bytes";
    QTest::newRow("1 MiB in KiB") << MiB << "1024.00 KiB";
    QTest::newRow("1 GiB in MiB") << 1024 * MiB << "1024.00 MiB";
  }
  void formatBytesLikePyTorch() {
    QFETCH(qint64, bytes);
    QTEST(QString::fromStdString(formatBytes(bytes)), "text");
  }
};

QTEST_GUILESS_MAIN(TestCachingAllocator)
#include "test_caching_allocator.moc"
