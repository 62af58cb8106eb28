// The caching-allocator model's streams against c10/cuda/CUDACachingAllocator.cpp: a free block
// is reused only on its own stream (get_free_block), and a block record_stream() marked is
// cached only after the other stream's work is done (insert_events, process_events,
// synchronize_and_free_events).
#include "core/memory/caching_allocator.h"
#include "core/memory/host_backing.h"

#include <QtTest>

using namespace matmulviz;

namespace {
constexpr int64_t MiB = 1024 * 1024;
}  // namespace

class TestCachingAllocatorStreams : public QObject {
  Q_OBJECT

 private slots:
  void aFreeBlockIsReusedOnlyOnItsStream() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    alloc.free(alloc.allocate(MiB, "on the default stream").id);
    QCOMPARE(alloc.setStream(7), int64_t(0));
    const auto side = alloc.allocate(MiB, "on stream 7");  // the cached block is stream 0's
    QCOMPARE(alloc.segmentCount(), int64_t(2));
    QCOMPARE(alloc.current().reservedBytes, 4 * MiB);
    alloc.free(side.id);
    alloc.setStream(0);
    alloc.allocate(MiB, "default again");  // stream 0's block, no new segment
    alloc.setStream(7);
    alloc.allocate(MiB, "stream 7 again");
    QCOMPARE(alloc.segmentCount(), int64_t(2));
    const auto layout = alloc.segmentLayout();
    QCOMPARE(layout[0].stream + layout[1].stream, int64_t(7));
  }

  void recordStreamDefersReuseUntilThatStreamIsDone() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const auto a = alloc.allocate(12 * MiB, "a");  // its own 12 MiB segment
    alloc.recordStream(a.id, 3);
    alloc.free(a.id);
    QCOMPARE(alloc.current().allocatedBytes, int64_t(0));  // memory_allocated() drops at once
    QCOMPARE(alloc.current().requestedBytes, 12 * MiB);    // requested_bytes at free_block
    QCOMPARE(alloc.pendingFreeBytes(), 12 * MiB);
    const auto b = alloc.allocate(12 * MiB, "b");  // a's block still waits: a new segment
    QCOMPARE(alloc.current().reservedBytes, 24 * MiB);
    alloc.synchronizeStream(3);
    alloc.free(b.id);
    alloc.allocate(12 * MiB, "c");
    alloc.allocate(12 * MiB, "d");  // both cached blocks reused: no third segment
    QCOMPARE(alloc.current().reservedBytes, 24 * MiB);
    QCOMPARE(alloc.pendingFreeBytes(), int64_t(0));
    QCOMPARE(alloc.current().requestedBytes, 24 * MiB);
  }

  void usesOnTheAllocationStreamNeedNoEvent() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const auto a = alloc.allocate(12 * MiB, "a");
    alloc.recordStream(a.id, 0);
    alloc.free(a.id);
    QCOMPARE(alloc.pendingFreeBytes(), int64_t(0));
    alloc.allocate(12 * MiB, "b");
    QCOMPARE(alloc.segmentCount(), int64_t(1));
  }

  void aPendingBlockNeitherMergesNorIsReleased() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const auto a = alloc.allocate(4 * MiB, "a");  // one 20 MiB segment: a, b, 12 MiB free
    const auto b = alloc.allocate(4 * MiB, "b");
    alloc.recordStream(a.id, 1);
    alloc.free(a.id);
    alloc.free(b.id);  // b merges with the free tail, not with the pending a
    auto layout = alloc.segmentLayout();
    QCOMPARE(layout.size(), size_t(1));
    QCOMPARE(layout[0].blocks.size(), size_t(2));
    QVERIFY(layout[0].blocks[0].pendingFree && !layout[0].blocks[0].allocated);
    QCOMPARE(layout[0].blocks[0].requested, 4 * MiB);
    QVERIFY(!layout[0].blocks[1].pendingFree);
    QCOMPARE(layout[0].blocks[1].size, 16 * MiB);
    alloc.emptyCache();  // synchronizes first, so a returns, merges, and the segment goes
    QCOMPARE(alloc.segmentCount(), int64_t(0));
    QCOMPARE(alloc.current().reservedBytes, int64_t(0));
  }

  void eachStreamsEventsCompleteInOrder() {
    MetaBacking backing;
    CachingAllocator alloc(backing, {});
    const auto a = alloc.allocate(12 * MiB, "a");
    const auto b = alloc.allocate(12 * MiB, "b");
    alloc.recordStream(a.id, 1);
    alloc.recordStream(a.id, 2);  // a waits for both streams
    alloc.recordStream(b.id, 2);
    alloc.free(a.id);
    alloc.free(b.id);
    alloc.synchronizeStream(2);
    alloc.allocate(512, "processes events");  // b returns; a still waits for stream 1
    QCOMPARE(alloc.pendingFreeBytes(), 12 * MiB);
    alloc.synchronize();
    alloc.allocate(512, "again");
    QCOMPARE(alloc.pendingFreeBytes(), int64_t(0));
  }

  void anAllocationAboutToFailWaitsForPendingFrees() {
    MetaBacking backing;
    CachingAllocator::Options options;
    options.capacityBytes = 30 * MiB;
    CachingAllocator alloc(backing, options);
    const auto a = alloc.allocate(20 * MiB, "a");
    alloc.recordStream(a.id, 1);
    alloc.free(a.id);
    alloc.setStream(1);
    // 20 MiB more do not fit beside a's segment: release_cached_blocks synchronizes, caches a
    // and releases its segment, and the retry succeeds.
    alloc.allocate(20 * MiB, "b");
    QCOMPARE(alloc.current().reservedBytes, 20 * MiB);
    QCOMPARE(alloc.allocRetries(), int64_t(1));
  }
};

QTEST_GUILESS_MAIN(TestCachingAllocatorStreams)
#include "test_caching_allocator_streams.moc"
