// matmulviz-cli export --report FILE for Python-run reports, PyTorch memory snapshots and joint
// graph files: the file read by the app's loader, its charts drawn by the app's chart code.
#include "app/cli/export_opened.h"

#include "app/cli/commands.h"
#include "core/io/timeline_store.h"
#include "core/tensor/dtype.h"
#include "core/util/format_units.h"
#include "ui/charts/allocation_bands_chart.h"
#include "ui/charts/big_timeline_chart.h"
#include "ui/charts/budget_export.h"
#include "ui/charts/chart_export.h"
#include "ui/charts/memory_timeline_chart.h"
#include "ui/models/memory_timeline_model.h"
#include "ui/models/open_file.h"

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <QTemporaryDir>

#include <algorithm>
#include <iostream>
#include <memory>

namespace matmulviz::cli {

namespace {

constexpr QSize kChartSize{1600, 900};

bool writeText(const QString& path, const QString& text, QStringList& written, QString* error) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0 || !f.commit()) {
    *error = path + QStringLiteral(": ") + f.errorString();
    return false;
  }
  written << path;
  return true;
}

/// "cuda:0: 12 events; peak allocated 20.0 MiB at event 7 (op forward, block linear.py:116);
/// peak reserved 44.0 MiB".
QString timelineSummary(const ui::NamedTimeline& t, const ui::MemoryTimelineModel& model) {
  int64_t reserved = 0;
  for (const MemoryEvent& e : t.timeline.events)
    reserved = std::max(reserved, e.after.reservedBytes);
  const QString peak = model.peakText();
  return QStringLiteral("%1: %2 events; peak allocated %3; peak reserved %4\n")
      .arg(t.name)
      .arg(t.timeline.events.size())
      .arg(peak.isEmpty() ? QStringLiteral("none (no allocation)") : peak,
           QString::fromStdString(formatSize(reserved)));
}

QString storeSummary(const store::DeviceInfo& d) {
  return QStringLiteral("%1: %2 events; peak allocated %3 at event %4; peak reserved %5\n")
      .arg(QString::fromStdString(d.name))
      .arg(d.events)
      .arg(QString::fromStdString(formatSize(d.peakAllocated)))
      .arg(d.peakIndex)
      .arg(QString::fromStdString(formatSize(d.maxReserved)));
}

/// summary.txt of a multi-head or einsum report: what ran and what it measured.
bool writeSummary(const ui::OpenedFile& file, const OpenedExport& e, QStringList& written,
                  QString* error) {
  QString text = file.fileName + QLatin1Char('\n');
  if (file.einsum) text += QString::fromStdString(einsumSummary(*file.einsum)) + '\n';
  if (file.multihead) {
    const MultiheadReportFile& r = *file.multihead;
    const MultiheadConfig& c = r.config;
    text += QStringLiteral(
                "multihead b=%1 s=%2 h=%3 e=%4 num_heads=%5 top_p=%6 %7 on %8: %9 "
                "important tokens, %10, maxMem %11, reserved peak %12\n")
                .arg(c.b)
                .arg(c.s)
                .arg(c.h)
                .arg(c.e)
                .arg(c.numHeads)
                .arg(c.topP)
                .arg(QString::fromStdString(std::string(dtypeName(c.dtype))),
                     QString::fromStdString(r.device))
                .arg(r.t)
                .arg(QString::fromStdString(formatSeconds(r.timeS)),
                     QString::fromStdString(formatSize(r.maxMemBytes)),
                     QString::fromStdString(formatSize(r.reservedPeakBytes)));
  }
  return writeText(QDir(e.out).filePath(QStringLiteral("summary.txt")), text, written, error);
}

/// A budget report's Budget charts at e.budget: its script traced again (found as written or
/// beside the report). Exit status 2 when the script is not there.
int exportBudgetReport(const ui::OpenedFile& file, const OpenedExport& e, QStringList& written,
                       QString* error) {
  const BudgetReportFile& r = *file.budget;
  QString script = QString::fromStdString(r.script);
  if (!QFileInfo(script).isFile())
    script = QFileInfo(e.path).dir().filePath(QFileInfo(script).fileName());
  if (!QFileInfo(script).isFile()) {
    std::cerr << "matmulviz-cli export: --report: '" << file.fileName.toStdString()
              << "': its script " << r.script
              << " is not here (nor beside the report): the Budget charts need it traced\n";
    return 2;
  }
  QTemporaryDir tmp;
  const std::string graph = tmp.filePath(QStringLiteral("graph.json")).toStdString();
  if (const int status = traceToGraphFile(script.toStdString(), r.function, graph); status != 0)
    return status;
  written = ui::exportBudgetGraphFileCharts(QString::fromStdString(graph), e.budget, e.out,
                                            e.formats, error, kChartSize);
  return 0;
}

/// The memory charts of a file's timelines (in memory or in its store), and summary.txt.
bool writeTimelineCharts(const ui::OpenedFile& file, const OpenedExport& e, QStringList& written,
                         QString* error) {
  const QDir dir(e.out);
  QString summary = file.fileName + QStringLiteral("\n");
  if (file.store) {
    for (const store::DeviceInfo& d : file.store->devices()) {
      ui::BigTimelineChart chart;
      chart.setStore(file.store, d.id);
      if (!ui::writeChart(chart, dir, e.formats, kChartSize, written, error)) return false;
      summary += storeSummary(d);
    }
  } else if (file.timelines) {
    // A snapshot's allocations stacked as PyTorch's memory_viz draws them (the Memory view's
    // default for a snapshot), then its category chart.
    if (file.allocations)
      for (const ui::SnapshotAllocations::Device& d : file.allocations->devices) {
        ui::AllocationBandsChart bands;
        bands.setDevice(file.allocations, d.name);
        if (!ui::writeChart(bands, dir, e.formats, kChartSize, written, error)) return false;
      }
    for (const ui::NamedTimeline& t : *file.timelines) {
      ui::MemoryTimelineModel model;
      model.setTimeline(t.timeline, t.name);
      ui::MemoryTimelineChart chart;
      chart.setModel(&model);
      if (!ui::writeChart(chart, dir, e.formats, kChartSize, written, error)) return false;
      summary += timelineSummary(t, model);
    }
  }
  if (!file.note.isEmpty()) summary += file.note + QLatin1Char('\n');
  return writeText(dir.filePath(QStringLiteral("summary.txt")), summary, written, error);
}

}  // namespace

std::function<void(double)> snapshotProgress() {
  auto shown = std::make_shared<int>(-1);
  return [shown](double fraction) {
    const int tenth = int(fraction * 10);
    if (tenth == *shown) return;
    *shown = tenth;
    std::cerr << "[matmulviz] reading " << tenth * 10 << "%\n";
  };
}

int exportOpenedFile(const OpenedExport& e, const ui::OpenedFile& file) {
  QStringList written;
  QString error;
  switch (file.kind) {
    case ui::FileKind::Snapshot:
    case ui::FileKind::Report:
      if (file.multihead || file.einsum) {
        writeSummary(file, e, written, &error);
        break;
      }
      if (file.budget) {
        if (const int status = exportBudgetReport(file, e, written, &error); status != 0)
          return status;
        break;
      }
      if (file.report) {
        std::cerr << "matmulviz-cli export: --report: '" << file.fileName.toStdString()
                  << "': a strategies report (internal: drawn by the strategies export)\n";
        return 2;
      }
      writeTimelineCharts(file, e, written, &error);
      break;
    case ui::FileKind::BudgetGraph:
      written = ui::exportBudgetCharts(*file.budgetGraph, file.budgetTitle, e.budget, e.out,
                                       e.formats, &error, kChartSize);
      break;
    default:
      std::cerr << "matmulviz-cli export: --report: '" << file.fileName.toStdString()
                << "': a Python script or a preset, not a report (run the script first: "
                   "matmulviz-cli run SCRIPT --report FILE; a preset: export --preset NAME)\n";
      return 2;
  }
  return finishExport(written, error, e.out.toStdString());
}

int finishExport(const QStringList& written, const QString& error, const std::string& dir) {
  for (const QString& f : written) std::cout << f.toStdString() << "\n";
  if (!error.isEmpty()) {
    std::cerr << "matmulviz-cli export: " << error.toStdString() << "\n";
    return 1;
  }
  std::cerr << "[matmulviz] wrote " << written.size() << " files to " << dir << "\n";
  return 0;
}

}  // namespace matmulviz::cli
