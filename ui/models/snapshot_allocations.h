#pragma once
// What the Memory view needs of an opened PyTorch memory snapshot beyond its timelines: the
// snapshot itself (its frames and stacks, for the stack of a block on hover), and per device
// the bands of active memory stacked by allocation (core/io/snapshot_allocation_bands.h) and
// the facts of each block of its timeline (core/io/snapshot_block_text.h). Made on the loading
// thread by loadFile (ui/models/open_file.h); read-only afterwards. Qt Core only.

#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_allocation_bands.h"
#include "core/io/snapshot_block_text.h"

#include <cstdint>

#include <QString>

#include <memory>
#include <vector>

namespace matmulviz::ui {

struct SnapshotAllocations {
  struct Device {
    QString name;  ///< "cuda:0", as the timelines name it
    size_t index = 0;
    snapshot::AllocationBands bands;
    std::vector<snapshot::BlockFacts> blocks;  ///< indexed by the timeline's AllocationRecord::id
    /// For each row of the device's timeline: its trace entry + 1, 0 at time 0
    /// (snapshot::timelineTraceEvents).
    std::vector<uint32_t> traceOfRow;
    /// The event (timeline row, as the Memory view numbers events) of the action at `step` of
    /// the bands: the last row that comes from its trace entry or one before; -1 for none.
    int64_t eventAtStep(double step) const;
    /// The event (timeline row) of PyTorch's trace entry `entry`: the last row that comes from
    /// it or one before it; -1 for none.
    int64_t eventOfTraceEntry(int64_t entry) const;
  };
  std::shared_ptr<const snapshot::MemorySnapshot> snapshot;  ///< shared with other holders
  std::vector<Device> devices;  ///< snapshot::devicesWithMemory, in that order

  /// The device named `name`; nullptr when there is none.
  const Device* device(const QString& name) const;
  /// The hover text of band `band` of `device` (an index of its bands, or
  /// snapshot::kSummaryBand) at `step`, as rich text (<pre>); empty for -1.
  QString bandText(const Device& device, int band, double step) const;
  /// The hover text of the timeline's block `recordId` (AllocationRecord::id), as rich text;
  /// empty for an id the device does not have (a segment event).
  QString blockText(const Device& device, int64_t recordId) const;
};

/// Keeps the snapshot and computes each device's bands (snapshot::allocationBands with its
/// default caps) and blocks. Never throws for a snapshot readMemorySnapshot accepted.
std::shared_ptr<const SnapshotAllocations> makeSnapshotAllocations(
    std::shared_ptr<const snapshot::MemorySnapshot> s);

/// `text` (several lines) as rich text that keeps its lines and shows '<' as written.
QString preformatted(const QString& text);

}  // namespace matmulviz::ui
