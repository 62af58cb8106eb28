#include "ui/models/opened_file_summary.h"

#include "core/io/timeline_store.h"
#include "core/report/strategies_report.h"
#include "core/util/format_units.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/qstring_of.h"

#include <QLocale>

namespace matmulviz::ui {

namespace {

/// "1,182 events; peak allocated 20.0 MiB at event 553 (op x, block y)": the first event at the
/// largest allocated, as MemoryTimelineModel::peakEvent finds it.
QString timelineLine(const NamedTimeline& t) {
  const MemoryTimeline& tl = t.timeline;
  int64_t peak = -1;
  for (size_t i = 0; i < tl.events.size(); ++i)
    if (peak < 0 ||
        tl.events[i].after.allocatedBytes > tl.events[size_t(peak)].after.allocatedBytes)
      peak = int64_t(i);
  QString text =
      QStringLiteral("%1: %2 events").arg(t.name, QLocale().toString(qlonglong(tl.events.size())));
  if (peak < 0) return text;
  const MemoryEvent& e = tl.events[size_t(peak)];
  text += QStringLiteral("; peak allocated %1 at event %2")
              .arg(qs(formatSize(e.after.allocatedBytes)), QLocale().toString(qlonglong(peak)));
  QStringList where;
  if (e.opId >= 0 && size_t(e.opId) < tl.opNames.size())
    where << QStringLiteral("op ") + qs(tl.opNames[size_t(e.opId)]);
  for (const AllocationRecord& r : tl.records)
    if (r.id == e.allocationId) where << blockPhrase(qs(r.label));
  if (!where.isEmpty()) text += QStringLiteral(" (") + where.join(QStringLiteral(", ")) + ')';
  return text;
}

}  // namespace

QString openedFileKind(const OpenedFile& file) {
  switch (file.kind) {
    case FileKind::Snapshot:
      return file.fileName.endsWith(QLatin1String(".gz"), Qt::CaseInsensitive)
                 ? QStringLiteral("a PyTorch memory snapshot, gzip-compressed")
                 : QStringLiteral("a PyTorch memory snapshot");
    case FileKind::Report:
      if (file.multihead) return QStringLiteral("a multi-head run's report");
      if (file.budget) return QStringLiteral("a budget sweep's report");
      if (file.einsum) return QStringLiteral("an einsum run's report");
      if (file.report) return QStringLiteral("a strategies report");
      return QStringLiteral("a Python run's report");
    case FileKind::BudgetGraph:
      return QStringLiteral("a joint graph (memory budget)");
    case FileKind::Preset:
      return QStringLiteral("a preset");
    case FileKind::Script:
      return QStringLiteral("a Python script");
    case FileKind::Unknown:
      break;
  }
  return QStringLiteral("an unknown file");
}

QStringList openedFileSummary(const OpenedFile& file) {
  QStringList out{QStringLiteral("file: ") + file.fileName,
                  QStringLiteral("kind: ") + openedFileKind(file)};
  if (file.report) {
    const std::string_view device = deviceKindName(file.report->device);
    out << QStringLiteral("%1 runs on the %2 device")
               .arg(file.report->runs.size())
               .arg(QString::fromUtf8(device.data(), qsizetype(device.size())));
    return out;
  }
  if (file.budgetGraph) return out;
  if (file.timelines)
    for (const NamedTimeline& t : *file.timelines) out << timelineLine(t);
  if (file.store)
    for (const store::DeviceInfo& d : file.store->devices())
      out << QStringLiteral("%1: %2 events; peak allocated %3 at event %4")
                 .arg(qs(d.name), QLocale().toString(qlonglong(d.events)),
                      qs(formatSize(d.peakAllocated)), QLocale().toString(qlonglong(d.peakIndex)));
  if (file.timelines || file.store)
    out << QStringLiteral(
        "events: allocations, frees and segment changes, numbered from 0 as "
        "the Memory view's table numbers them");
  return out;
}

}  // namespace matmulviz::ui
