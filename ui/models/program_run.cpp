#include "ui/models/program_run.h"

#include "core/util/format_units.h"
#include "ui/models/qstring_of.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>

#include <algorithm>

namespace matmulviz::ui {

namespace {

/// Whether `frameFile` (as Python named it) is the script at `scriptPath`. A relative name is
/// relative to the folder the run started in, which the report does not say: it matches when
/// the script's path ends with it.
bool isScript(const QString& frameFile, const QString& scriptPath) {
  if (scriptPath.isEmpty() || frameFile.isEmpty()) return false;
  const QString script = QDir::cleanPath(QFileInfo(scriptPath).absoluteFilePath());
  if (QFileInfo(frameFile).isAbsolute()) return QDir::cleanPath(frameFile) == script;
  const QString relative = QDir::cleanPath(frameFile);
  return script == relative || script.endsWith(QLatin1Char('/') + relative);
}

}  // namespace

ProgramRun::ProgramRun(std::shared_ptr<const PythonReport> report, const QString& scriptPath)
    : report_(std::move(report)), scriptPath_(scriptPath) {
  frameLine_.reserve(int(report_->frames.size()));
  for (const PythonFrame& f : report_->frames)
    frameLine_ << (isScript(QString::fromStdString(f.file), scriptPath_) ? int(f.line) : 0);
  buildSeries();
  buildLines();
  buildPeakGroups();
}

void ProgramRun::buildSeries() {
  allocated_.reserve(int(report_->events.size()));
  reserved_.reserve(int(report_->events.size()));
  for (const MemoryEvent& e : report_->events) {
    allocated_ << e.after.allocatedBytes;
    reserved_ << e.after.reservedBytes;
  }
}

void ProgramRun::buildLines() {
  for (const PythonAllocation& a : report_->allocations)
    if (const int line = scriptLineOfFrame(a.frame); line > 0) {
      lines_[line].allocatedBytes += a.blockBytes;
      ++lines_[line].allocations;
    }
  if (!report_->peak) return;
  for (const int64_t id : report_->peak->live)
    if (const PythonAllocation* a = report_->allocation(id))
      if (const int line = scriptLineOfFrame(a->frame); line > 0) {
        lines_[line].aliveAtPeakBytes += a->blockBytes;
        ++lines_[line].aliveAtPeakBlocks;
      }
}

QString ProgramRun::ownerAtPeak(const PythonAllocation& a) const {
  auto holders = [](const std::vector<PythonHolder>& list) {
    QStringList out;
    for (const PythonHolder& h : list)
      out << (h.count > 1
                  ? QStringLiteral("%1 (%2 times)").arg(QString::fromStdString(h.why)).arg(h.count)
                  : QString::fromStdString(h.why));
    return out.join(QStringLiteral("; "));
  };
  if (const auto it = report_->keptAliveAtPeak.find(a.id); it != report_->keptAliveAtPeak.end())
    return holders(it->second);
  if (const auto it = report_->keptAliveBy.find(a.id); it != report_->keptAliveBy.end())
    return holders(it->second);
  if (const auto it = report_->variables.find(a.id); it != report_->variables.end()) {
    QStringList names;
    for (const std::string& n : it->second) names << QString::fromStdString(n);
    return QStringLiteral("the variable %1 (which held it when the script ended)")
        .arg(names.join(QStringLiteral(", ")));
  }
  return QStringLiteral("a Python reference to '%1' (from %2)")
      .arg(QString::fromStdString(a.label), QString::fromStdString(report_->ops[size_t(a.op)]));
}

void ProgramRun::buildPeakGroups() {
  if (!report_->peak) return;
  QHash<int, int> groupOfFrame;  // frame -> index into peakGroups_
  QVector<QHash<QString, int>> ownerIndex;
  for (const int64_t id : report_->peak->live) {
    const PythonAllocation* a = report_->allocation(id);
    if (!a) continue;
    auto it = groupOfFrame.find(a->frame);
    if (it == groupOfFrame.end()) {
      PeakGroup g;
      g.frame = a->frame;
      g.scriptLine = scriptLineOfFrame(a->frame);
      g.where = a->frame < 0 ? QStringLiteral(
                                   "(no Python line: made by the engine or before "
                                   "the recording)")
                             : whereOfFrame(a->frame);
      if (a->frame >= 0) g.code = QString::fromStdString(report_->frames[size_t(a->frame)].code);
      it = groupOfFrame.insert(a->frame, int(peakGroups_.size()));
      peakGroups_ << g;
      ownerIndex << QHash<QString, int>();
    }
    PeakGroup& g = peakGroups_[*it];
    g.bytes += a->blockBytes;
    ++g.blocks;
    const QString owner = ownerAtPeak(*a);
    auto o = ownerIndex[*it].find(owner);
    if (o == ownerIndex[*it].end()) {
      o = ownerIndex[*it].insert(owner, int(g.owners.size()));
      g.owners << OwnerGroup{owner, 0, 0};
    }
    g.owners[*o].bytes += a->blockBytes;
    ++g.owners[*o].blocks;
  }
  auto larger = [](const auto& x, const auto& y) { return x.bytes > y.bytes; };
  for (PeakGroup& g : peakGroups_) std::stable_sort(g.owners.begin(), g.owners.end(), larger);
  std::stable_sort(peakGroups_.begin(), peakGroups_.end(), larger);
}

int ProgramRun::peakEvent() const {
  return report_->peak ? int(report_->peak->event) : -1;
}

qint64 ProgramRun::peakBytes() const {
  return report_->peak ? report_->peak->allocatedBytes : 0;
}

const PythonAllocation* ProgramRun::allocationOfEvent(int e) const {
  if (e < 0 || e >= eventCount()) return nullptr;
  const MemoryEvent& ev = report_->events[size_t(e)];
  if (ev.kind != MemoryEventKind::Alloc && ev.kind != MemoryEventKind::Free) return nullptr;
  return report_->allocation(ev.allocationId);
}

int ProgramRun::frameOfEvent(int e) const {
  const PythonAllocation* a = allocationOfEvent(e);
  return a ? a->frame : -1;
}

int ProgramRun::scriptLineOfFrame(int frame) const {
  return frame >= 0 && frame < frameLine_.size() ? frameLine_[frame] : 0;
}

int ProgramRun::scriptLineOfEvent(int e) const {
  return scriptLineOfFrame(frameOfEvent(e));
}

QString ProgramRun::whereOfFrame(int frame) const {
  if (frame < 0 || size_t(frame) >= report_->frames.size()) return {};
  const PythonFrame& f = report_->frames[size_t(frame)];
  return QStringLiteral("%1:%2 in %3")
      .arg(QFileInfo(QString::fromStdString(f.file)).fileName())
      .arg(f.line)
      .arg(QString::fromStdString(f.function));
}

QString ProgramRun::eventText(int e) const {
  if (e < 0 || e >= eventCount()) return {};
  const MemoryEvent& ev = report_->events[size_t(e)];
  QString text = QStringLiteral("event %1: %2 %3")
                     .arg(e)
                     .arg(QString::fromLatin1(memoryEventKindName(ev.kind)), bytesText(ev.bytes));
  if (const PythonAllocation* a = allocationOfEvent(e))
    text += QStringLiteral(", '%1' (%2)")
                .arg(QString::fromStdString(a->label),
                     QString::fromStdString(report_->ops[size_t(a->op)]));
  text += QStringLiteral("; allocated %1, reserved %2")
              .arg(bytesText(ev.after.allocatedBytes), bytesText(ev.after.reservedBytes));
  const int frame = frameOfEvent(e);
  if (frame >= 0)
    text +=
        QStringLiteral("\nfrom %1: %2")
            .arg(whereOfFrame(frame), QString::fromStdString(report_->frames[size_t(frame)].code));
  return text;
}

QVector<int> ProgramRun::eventsOfLine(int line) const {
  QVector<int> out;
  if (line <= 0) return out;
  for (int e = 0; e < eventCount(); ++e)
    if (report_->events[size_t(e)].kind == MemoryEventKind::Alloc && scriptLineOfEvent(e) == line)
      out << e;
  return out;
}

QVector<qint64> ProgramRun::seriesOfLine(int line) const {
  QVector<qint64> out(eventCount(), 0);
  qint64 alive = 0;
  for (int e = 0; e < eventCount(); ++e) {
    const MemoryEvent& ev = report_->events[size_t(e)];
    if (line > 0 && scriptLineOfEvent(e) == line)
      alive += ev.kind == MemoryEventKind::Alloc ? ev.bytes : -ev.bytes;
    out[e] = std::max<qint64>(0, alive);
  }
  return out;
}

}  // namespace matmulviz::ui
