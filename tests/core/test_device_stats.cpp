// The caching-allocator model's statistics as c10/cuda/CUDACachingAllocator.cpp keeps them
// (alloc_found_block, free, free_block, alloc_block, release_block): current, peak and the
// totals ever added and removed, for all blocks and each pool, as torch.cuda.memory_stats()
// names them. The H200's inactive_split_bytes at every memcases checkpoint are compared in
// tests/python/test_gpu_memcases.py.
#include "core/memory/caching_allocator.h"
#include "core/memory/device_stats.h"
#include "core/memory/host_backing.h"

#include <QtTest>

using namespace matmulviz;

namespace {
constexpr int64_t MiB = 1024 * 1024;
}  // namespace

class TestDeviceStats : public QObject {
  Q_OBJECT

 private slots:
  void aSplitSegmentsFreeRemainderIsInactiveSplit() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const auto a = alloc.allocate(9 * MiB, "a");  // a 20 MiB segment: 9 used, 11 free
    const DeviceStats& s = alloc.stats();
    QCOMPARE(s.inactiveSplit.all().current, int64_t(1));
    QCOMPARE(s.inactiveSplitBytes.pool(false).current, 11 * MiB);
    QCOMPARE(s.inactiveSplitBytes.pool(true).current, int64_t(0));
    const auto b = alloc.allocate(4 * MiB, "b");  // the remainder shrinks: 7 MiB
    QCOMPARE(s.inactiveSplit.all().current, int64_t(1));
    QCOMPARE(s.inactiveSplitBytes.all().current, 7 * MiB);
    alloc.free(a.id);  // a's 9 MiB is a second free piece of a segment in use
    QCOMPARE(s.inactiveSplit.all().current, int64_t(2));
    QCOMPARE(s.inactiveSplitBytes.all().current, 16 * MiB);
    alloc.free(b.id);  // all three merge: the segment is whole and releasable
    QCOMPARE(s.inactiveSplit.all().current, int64_t(0));
    QCOMPARE(s.inactiveSplitBytes.all().current, int64_t(0));
    QCOMPARE(s.inactiveSplitBytes.all().peak, 16 * MiB);
  }

  void countsAndTotals() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const DeviceStats& s = alloc.stats();
    const auto a = alloc.allocate(1000, "a");  // small pool: 1024 B of a 2 MiB segment
    const auto b = alloc.allocate(12 * MiB, "b");
    alloc.free(a.id);
    QCOMPARE(s.allocation.all().current, int64_t(1));
    QCOMPARE(s.allocation.all().allocated, int64_t(2));
    QCOMPARE(s.allocation.all().freed, int64_t(1));
    QCOMPARE(s.allocatedBytes.pool(true).allocated, int64_t(1024));
    QCOMPARE(s.allocatedBytes.pool(true).freed, int64_t(1024));
    QCOMPARE(s.allocatedBytes.pool(false).current, 12 * MiB);
    QCOMPARE(s.requestedBytes.all().allocated, 12 * MiB + 1000);
    QCOMPARE(s.active.all().current, int64_t(1));
    QCOMPARE(s.segment.all().current, int64_t(2));
    QCOMPARE(s.numDeviceAlloc, int64_t(2));
    alloc.free(b.id);
    alloc.emptyCache();
    QCOMPARE(s.numDeviceFree, int64_t(2));
    QCOMPARE(s.numSyncAllStreams, int64_t(1));
    QCOMPARE(s.reservedBytes.all().current, int64_t(0));
    QCOMPARE(s.reservedBytes.all().peak, 14 * MiB);
    QCOMPARE(s.reservedBytes.all().freed, 14 * MiB);
    QCOMPARE(s.allocatedBytes.all().current, alloc.current().allocatedBytes);
    alloc.resetAccumulated();
    QCOMPARE(s.allocation.all().allocated, int64_t(0));
    QCOMPARE(s.numDeviceAlloc, int64_t(0));
    QCOMPARE(s.reservedBytes.all().peak, 14 * MiB);  // peaks stay
    alloc.resetPeak();
    QCOMPARE(s.reservedBytes.all().peak, int64_t(0));
  }

  void aPendingFreeStaysActive() {  // free() drops allocated; free_block drops active
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const DeviceStats& s = alloc.stats();
    const auto a = alloc.allocate(12 * MiB, "a");
    alloc.recordStream(a.id, 5);
    alloc.free(a.id);
    QCOMPARE(s.allocatedBytes.all().current, int64_t(0));
    QCOMPARE(s.activeBytes.all().current, 12 * MiB);
    QCOMPARE(s.requestedBytes.all().current, 12 * MiB);
    alloc.synchronize();
    alloc.allocate(512, "x");
    QCOMPARE(s.activeBytes.all().current, int64_t(512));
  }

  void flatKeysAreTorchs() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    alloc.allocate(3 * MiB, "a");
    const auto keys = memoryStatsByKey(alloc.stats());
    QCOMPARE(keys.at("allocated_bytes.all.current"), 3 * MiB);
    QCOMPARE(keys.at("allocated_bytes.large_pool.allocated"), 3 * MiB);
    QCOMPARE(keys.at("inactive_split_bytes.all.current"), 17 * MiB);
    QCOMPARE(keys.at("segment.small_pool.peak"), int64_t(0));
    QCOMPARE(keys.at("oversize_allocations.current"), int64_t(0));
    QCOMPARE(keys.at("num_device_alloc"), int64_t(1));
    QCOMPARE(keys.at("max_split_size"), int64_t(-1));
    // 9 statistics x 3 pools x 4 values, 2 oversize x 4, 5 counters, max_split_size
    QCOMPARE(keys.size(), size_t(9 * 3 * 4 + 2 * 4 + 5 + 1));
  }
};

QTEST_GUILESS_MAIN(TestDeviceStats)
#include "test_device_stats.moc"
