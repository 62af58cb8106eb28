#include "ui/models/snapshot_allocations.h"

#include "core/io/allocator_history.h"
#include "core/io/snapshot_categories.h"
#include "core/io/snapshot_timeline.h"
#include "core/util/format_units.h"

#include <algorithm>

namespace matmulviz::ui {

const SnapshotAllocations::Device* SnapshotAllocations::device(const QString& name) const {
  for (const Device& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

QString preformatted(const QString& text) {
  return QStringLiteral("<pre>") + text.toHtmlEscaped() + QStringLiteral("</pre>");
}

QString SnapshotAllocations::bandText(const Device& d, int band, double step) const {
  const snapshot::AllocationBands& b = d.bands;
  const int64_t event = snapshot::eventAtStep(b, step);
  QString where = QStringLiteral("step %1").arg(qint64(step));
  if (event >= 0 && d.index < snapshot->traces.size())
    where += QStringLiteral(": event %1 (PyTorch's trace entry %2, %3 us)")
                 .arg(d.eventAtStep(step))
                 .arg(event)
                 .arg(snapshot::traceTimeUs(snapshot->traces[d.index], event), 0, 'f', 0);
  if (band == snapshot::kSummaryBand) {
    const auto it = std::upper_bound(b.summarySteps.begin(), b.summarySteps.end(), step);
    const size_t i = size_t(std::max<std::ptrdiff_t>(1, it - b.summarySteps.begin())) - 1;
    return preformatted(
        QStringLiteral("%1\n%2 in the allocations too small to draw one by one (all but the %3 "
                       "largest of %4; PyTorch's memory_viz summarises them the same way)")
            .arg(where, QString::fromStdString(formatSize(b.summarySizes.at(i))))
            .arg(b.bands.size())
            .arg(b.elements.size()));
  }
  if (band < 0 || size_t(band) >= b.bands.size()) return {};
  const snapshot::BandElement& e = b.elements[b.bands[size_t(band)].element];
  const snapshot::BlockFacts facts{e.addr, e.size, e.size, e.stack, e.allocEvent, e.freeEvent};
  return preformatted(where + "\n" +
                      QString::fromStdString(snapshot::describeBlock(*snapshot, d.index, facts)));
}

int64_t SnapshotAllocations::Device::eventAtStep(double step) const {
  const int64_t entry = snapshot::eventAtStep(bands, step);
  return entry < 0 ? -1 : eventOfTraceEntry(entry);
}

int64_t SnapshotAllocations::Device::eventOfTraceEntry(int64_t entry) const {
  if (entry < 0) return -1;
  const auto it = std::upper_bound(traceOfRow.begin(), traceOfRow.end(), uint64_t(entry) + 1,
                                   [](uint64_t k, uint32_t v) { return k < uint64_t(v); });
  return int64_t(it - traceOfRow.begin()) - 1;
}

QString SnapshotAllocations::blockText(const Device& d, int64_t recordId) const {
  if (recordId < 0 || size_t(recordId) >= d.blocks.size()) return {};
  return preformatted(
      QString::fromStdString(snapshot::describeBlock(*snapshot, d.index, d.blocks[recordId])));
}

std::shared_ptr<const SnapshotAllocations> makeSnapshotAllocations(
    std::shared_ptr<const snapshot::MemorySnapshot> s) {
  auto out = std::make_shared<SnapshotAllocations>();
  out->snapshot = std::move(s);
  for (const size_t d : snapshot::devicesWithMemory(*out->snapshot))
    out->devices.push_back({QStringLiteral("cuda:%1").arg(d), d,
                            snapshot::allocationBands(*out->snapshot, d),
                            snapshot::timelineBlocks(*out->snapshot, d),
                            snapshot::timelineTraceEvents(*out->snapshot, d)});
  return out;
}

}  // namespace matmulviz::ui
