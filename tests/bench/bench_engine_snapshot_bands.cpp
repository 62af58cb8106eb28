// What stacking by allocation adds to opening a PyTorch memory snapshot held in memory (up to
// kStoreAboveEvents events): the time of snapshot::allocationBands and timelineBlocks beside
// the parse and toMemoryTimeline that the open did before, and the bands' vertices (16 bytes
// each). Snapshots from tests/common/snapshot_generator.h (a training-like loop).
// Usage: bench_engine_snapshot_bands [EVENTS...] (default 100000 990000)
#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_allocation_bands.h"
#include "core/io/snapshot_block_text.h"
#include "core/io/snapshot_timeline.h"
#include "tests/common/snapshot_generator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace matmulviz;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run(uint64_t events) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "bench_snapshot_bands.pickle").string();
  testing::SnapshotGenerator::write(path, events);
  auto t0 = std::chrono::steady_clock::now();
  const snapshot::MemorySnapshot s = snapshot::readMemorySnapshot(path);
  const double parse = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  const MemoryTimeline timeline = snapshot::toMemoryTimeline(s, 0);
  const double tl = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  const snapshot::AllocationBands bands = snapshot::allocationBands(s, 0);
  const double b = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  const auto blocks = snapshot::timelineBlocks(s, 0);
  const double facts = secondsSince(t0);
  size_t vertices = 0;
  for (const auto& band : bands.bands) vertices += band.steps.size();
  std::printf(
      "%llu events: parse %.2f s, timeline %.2f s; bands %.2f s (%zu of %zu allocations drawn, "
      "cap %zu, %zu vertices = %.1f MiB), block facts %.2f s (%zu); added / before = %.2f\n",
      static_cast<unsigned long long>(s.eventCount()), parse, tl, b, bands.bands.size(),
      bands.elements.size(), bands.maxEntries, vertices, vertices * 16.0 / (1 << 20), facts,
      blocks.size(), (b + facts) / (parse + tl));
  std::filesystem::remove(path);
  (void)timeline;
}

/// The worst order for the stacking: `n` blocks allocated, then freed oldest first, so each free
/// slides every band above it (the vertex budget halves the cap until the bands fit).
void runFifo(int64_t n) {
  snapshot::MemorySnapshot s;
  s.stacks = {{}};
  s.traces.resize(1);
  snapshot::DeviceTrace& t = s.traces[0];
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < n; ++i) {
      t.action.push_back(pass ? snapshot::TraceAction::FreeCompleted
                              : snapshot::TraceAction::Alloc);
      t.addr.push_back(0x10000 + i * 4096);
      t.size.push_back(512 * (1 + i % 7));
      t.stream.push_back(0);
      t.timeUs.push_back(int64_t(t.action.size()));
      t.stack.push_back(0);
    }
  const auto t0 = std::chrono::steady_clock::now();
  const snapshot::AllocationBands bands = snapshot::allocationBands(s, 0);
  size_t vertices = 0;
  for (const auto& band : bands.bands) vertices += band.steps.size();
  std::printf("%lld allocs freed oldest first: bands %.2f s, cap %zu, %zu vertices = %.1f MiB\n",
              static_cast<long long>(n), secondsSince(t0), bands.maxEntries, vertices,
              vertices * 16.0 / (1 << 20));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    run(100000);
    run(990000);
    runFifo(495000);
  }
  for (int i = 1; i < argc; ++i) run(std::strtoull(argv[i], nullptr, 10));
  return 0;
}
