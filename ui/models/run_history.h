#pragma once
// The session's history of strategies runs: one RunEntry per run (a scenario executed once),
// holding one StrategyResult per strategy. Numbers and strings only (no colours): charts and
// tables read it. Saved as JSON (a file in the user's data folder, written by the app).

#include "core/costmodel/cost_model.h"
#include "core/report/strategies_report.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QVector>

#include <limits>

namespace matmulviz::ui {

/// One strategy of one run. Times in seconds, memory in bytes; NaN where not measured.
struct StrategyResult {
  QString strategy;  ///< "strategy1", "direct", "fused"
  bool ok = true;
  QString error;  ///< the run's message when !ok (e.g. out of memory)
  double timeMedianS = std::numeric_limits<double>::quiet_NaN();
  double timeColdS = std::numeric_limits<double>::quiet_NaN();
  qint64 curMemBytes = 0;  ///< memory_allocated() after `out = strategy(...)`, out held
  qint64 maxMemBytes = 0;  ///< max_memory_allocated() since the inputs were made
  /// Forward time predicted by the cost model (costmodel::predict), NaN without a GPU profile.
  double predictedS = std::numeric_limits<double>::quiet_NaN();
  QString predictedGpu;    ///< "NVIDIA H100 SXM (model)", empty without a profile
  QString predictedBound;  ///< "launch", "memory" or "compute"
  double maxRelErr = std::numeric_limits<double>::quiet_NaN();  ///< NaN on meta
  struct Kept {
    QString label;  ///< "c[q]"
    qint64 bytes = 0;
    QString why;  ///< "saved as mat2 of BmmBackward0 because a requires grad"
  };
  QVector<Kept> keptAlive;
  QString backwardStatus;  ///< "not requested", "ran", "skipped: ...", "failed: ..."
  qint64 backwardMaxMemBytes = 0;
  double backwardTimeS = std::numeric_limits<double>::quiet_NaN();
};

/// One run of a scenario: what was asked and one result per strategy.
struct RunEntry {
  int id = 0;  ///< 1, 2, ... in the order of RunHistory::append (assigned there)
  QDateTime finishedAt;
  QString title;  ///< a short name a person gave or the preset's name
  QString requiresGrad = QStringLiteral("none");  ///< RequiresGrad::text(): "none", "a", "c", "a,c"
  QString device;                                 ///< "cpu", "meta"
  QString dtype;                                  ///< "float32"
  QJsonObject workload;                           ///< {"n", "m", "i", "j", "k", "batch", "dtype"}
  bool ok = true;  ///< false when the run as a whole failed (bad input, cancelled)
  QString error;
  QVector<StrategyResult> results;

  /// The result of `strategy`, or nullptr.
  const StrategyResult* result(const QString& strategy) const;
};

/// The runs of a session, in order. append() and clear()/load() notify views.
class RunHistory : public QObject {
  Q_OBJECT
 public:
  explicit RunHistory(QObject* parent = nullptr);

  /// Assigns e.id (last id + 1), appends, emits appended(index) and returns the index.
  int append(RunEntry e);
  const QVector<RunEntry>& entries() const { return entries_; }
  int size() const { return static_cast<int>(entries_.size()); }
  /// Removes every entry and emits reset().
  void clear();

  /// {"format": "matmulviz-run-history", "version": 1, "runs": [...]}; NaN is written as null.
  QJsonDocument toJson() const;
  /// Replaces the entries with those of `doc` and emits reset(). On a malformed document leaves
  /// the history unchanged, sets *error (when given) and returns false.
  bool fromJson(const QJsonDocument& doc, QString* error);
  /// Writes toJson() atomically (QSaveFile). False with *error naming the file on failure.
  bool save(const QString& path, QString* error) const;
  /// Reads a file written by save(). False with *error naming the file (and the JSON offset).
  bool load(const QString& path, QString* error);

 signals:
  void appended(int index);
  void reset();

 private:
  QVector<RunEntry> entries_;
  int nextId_ = 1;
};

/// The history entry of one report: every StrategyRun becomes a StrategyResult. With `gpu`
/// (e.g. costmodel::findGpuProfile("h100")) each result carries the cost model's predicted
/// forward time for the report's workload; with nullptr predictedS stays NaN.
/// finishedAt is now; requiresGrad is the first run's ("none" when there is none).
RunEntry runEntryFromReport(const StrategiesReport& report, const QString& title,
                            const costmodel::GpuProfile* gpu);

}  // namespace matmulviz::ui
