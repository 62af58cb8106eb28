#pragma once
// A Python run's report (core/report/python_report.h) as the Program view shows it, beside the
// script that ran: memory over the allocator's events, the script line behind each event, each
// line's bytes (allocated over the run, alive at the peak), and what was alive at the peak,
// grouped by source line and by owner (what kept the block alive: saved for which backward
// node, or a Python reference to the tensor). Qt Core only; numbers and strings, no colours.

#include "core/report/python_report.h"

#include <QMap>
#include <QString>
#include <QVector>

#include <memory>

namespace matmulviz::ui {

class ProgramRun {
 public:
  /// `scriptPath`: the script shown in the editor; frames in that file map to its lines.
  ProgramRun(std::shared_ptr<const PythonReport> report, const QString& scriptPath);

  const PythonReport& report() const { return *report_; }
  QString scriptPath() const { return scriptPath_; }

  int eventCount() const { return static_cast<int>(allocated_.size()); }
  const QVector<qint64>& allocatedSeries() const { return allocated_; }
  const QVector<qint64>& reservedSeries() const { return reserved_; }
  /// The event of the peak (the report's), -1 when nothing was allocated.
  int peakEvent() const;
  qint64 peakBytes() const;

  /// The frame (index into report().frames) of the allocation behind event `e` (an alloc or a
  /// free), -1 for segment events and allocations without a Python frame.
  int frameOfEvent(int e) const;
  /// The 1-based line of the script of `frame`, 0 when the frame is in another file or -1.
  int scriptLineOfFrame(int frame) const;
  /// scriptLineOfFrame(frameOfEvent(e)).
  int scriptLineOfEvent(int e) const;
  /// "peak_lines.py:21 in direct" (the file's name, never its folder); "" for -1.
  QString whereOfFrame(int frame) const;
  /// The tooltip of event `e`: "event 64: alloc 1 MiB, 'indexed copy' (index), allocated 72
  /// MiB, from peak_lines.py:21 in direct: return torch.matmul(a, c[q])".
  QString eventText(int e) const;

  struct LineBytes {
    qint64 allocatedBytes = 0;    ///< block bytes of every allocation the line made
    int allocations = 0;          ///< how many
    qint64 aliveAtPeakBytes = 0;  ///< of those, alive at the peak
    int aliveAtPeakBlocks = 0;
  };
  /// By script line (1-based), the lines that allocated.
  const QMap<int, LineBytes>& lines() const { return lines_; }
  /// Alloc events made by script line `line`, in order.
  QVector<int> eventsOfLine(int line) const;
  /// Bytes alive after each event among the blocks that `line` allocated (size eventCount()).
  QVector<qint64> seriesOfLine(int line) const;

  /// What kept one block alive at the peak, in plain words: the holders at the peak ("saved as
  /// mat2 of BmmBackward0 because a requires grad"), else the holders at the end when the block
  /// lived on, else the script's variable that held it when it ended ("the variable out ..."),
  /// else "a Python reference to 'indexed copy' (from index)".
  QString ownerAtPeak(const PythonAllocation& a) const;

  struct OwnerGroup {
    QString owner;
    qint64 bytes = 0;
    int blocks = 0;
  };
  struct PeakGroup {
    int frame = -1;       ///< -1: blocks without a Python frame
    int scriptLine = 0;   ///< 0: not a line of the script
    QString where, code;  ///< whereOfFrame, the source line
    qint64 bytes = 0;
    int blocks = 0;
    QVector<OwnerGroup> owners;  ///< largest first
  };
  /// The blocks alive at the peak by frame (source line and function), largest first; each
  /// split by owner.
  const QVector<PeakGroup>& peakGroups() const { return peakGroups_; }

 private:
  void buildSeries();
  void buildLines();
  void buildPeakGroups();
  const PythonAllocation* allocationOfEvent(int e) const;

  std::shared_ptr<const PythonReport> report_;
  QString scriptPath_;
  QVector<qint64> allocated_, reserved_;
  QVector<int> frameLine_;  ///< by frame: script line or 0
  QMap<int, LineBytes> lines_;
  QVector<PeakGroup> peakGroups_;
};

}  // namespace matmulviz::ui
