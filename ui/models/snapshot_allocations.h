#pragma once
// What the Memory view needs of an opened PyTorch memory snapshot beyond its timelines: the
// snapshot itself (its frames and stacks, for the stack of a block on hover), and per device
// the bands of active memory stacked by allocation (core/io/snapshot_allocation_bands.h) and
// the facts of each block of its timeline (core/io/snapshot_block_text.h). Made on the loading
// thread by loadFile (ui/models/open_file.h); read-only afterwards. Qt Core only.

#include "core/io/memory_snapshot.h"
#include "core/io/snapshot_allocation_bands.h"
#include "core/io/snapshot_block_text.h"

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
