#include "ui/models/run_history.h"

#include "core/costmodel/report_predictions.h"
#include "core/util/bad_input.h"
#include "ui/models/qstring_of.h"

#include <QFile>
#include <QJsonArray>
#include <QSaveFile>

#include <cmath>
#include <limits>

namespace matmulviz::ui {

namespace {

constexpr int kMaxRunId = std::numeric_limits<int>::max();

QJsonValue number(double v) {
  return std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null);
}
double numberOr(const QJsonValue& v) {
  return v.isDouble() ? v.toDouble() : std::numeric_limits<double>::quiet_NaN();
}

/// A field that does not fit: thrown by the readers below, caught in fromJson.
struct BadField {
  QString message;
};

/// `v` for a message: whole numbers in full (2147483647), others as %g (1e+300, 0.5).
QString numberText(double v) {
  return std::abs(v) < 1e15 && v == std::floor(v) ? QString::number(static_cast<qint64>(v))
                                                  : QString::number(v);
}

/// A byte count: absent or null is 0; otherwise a whole number in [0, 2^63), checked before the
/// conversion (a double beyond qint64 is undefined behaviour, caught by UBSan under
/// tests/fuzz/fuzz_history).
qint64 bytesOf(const QJsonObject& o, const char* key) {
  const QJsonValue v = o.value(QLatin1String(key));
  if (v.isUndefined() || v.isNull()) return 0;
  const double d = v.toDouble(-1);
  if (!v.isDouble() || !(d >= 0 && d < 0x1p63) || d != std::floor(d))
    throw BadField{
        QStringLiteral("field '%1' is %2 (allowed: a whole number of bytes, 0 to %3)")
            .arg(QLatin1String(key), v.isDouble() ? numberText(d) : QStringLiteral("not a number"))
            .arg(std::numeric_limits<qint64>::max())};
  return static_cast<qint64>(d);
}

/// The entry's requires_grad ("none" when absent), checked and written back by RequiresGrad.
QString requiresGradField(const QJsonObject& o) {
  const QString text = o.value("requires_grad").toString(QStringLiteral("none"));
  try {
    return qs(RequiresGrad::parse(text.toStdString()).text());
  } catch (const BadInput& bad) {
    throw BadField{
        QStringLiteral("field 'requires_grad' is '%1' (allowed: %2)").arg(text, qs(bad.allowed()))};
  }
}

QString backwardText(const BackwardOutcome& b) {
  switch (b.status) {
    case BackwardOutcome::Status::NotRequested:
      return QStringLiteral("not requested");
    case BackwardOutcome::Status::Ran:
      return QStringLiteral("ran");
    case BackwardOutcome::Status::Skipped:
      return QStringLiteral("skipped: ") + qs(b.message);
    case BackwardOutcome::Status::Failed:
      return QStringLiteral("failed: ") + qs(b.message);
  }
  return {};
}

QJsonObject resultToJson(const StrategyResult& r) {
  QJsonArray kept;
  for (const auto& k : r.keptAlive)
    kept.append(QJsonObject{{"label", k.label}, {"bytes", double(k.bytes)}, {"why", k.why}});
  return QJsonObject{{"strategy", r.strategy},
                     {"ok", r.ok},
                     {"error", r.error},
                     {"time_median_s", number(r.timeMedianS)},
                     {"time_cold_s", number(r.timeColdS)},
                     {"cur_mem_bytes", double(r.curMemBytes)},
                     {"max_mem_bytes", double(r.maxMemBytes)},
                     {"predicted_s", number(r.predictedS)},
                     {"predicted_gpu", r.predictedGpu},
                     {"predicted_bound", r.predictedBound},
                     {"max_rel_err", number(r.maxRelErr)},
                     {"kept_alive", kept},
                     {"backward_status", r.backwardStatus},
                     {"backward_max_mem_bytes", double(r.backwardMaxMemBytes)},
                     {"backward_time_s", number(r.backwardTimeS)}};
}

bool resultFromJson(const QJsonObject& o, StrategyResult& r) {
  if (!o.value("strategy").isString()) return false;
  r.strategy = o.value("strategy").toString();
  r.ok = o.value("ok").toBool(true);
  r.error = o.value("error").toString();
  r.timeMedianS = numberOr(o.value("time_median_s"));
  r.timeColdS = numberOr(o.value("time_cold_s"));
  r.curMemBytes = bytesOf(o, "cur_mem_bytes");
  r.maxMemBytes = bytesOf(o, "max_mem_bytes");
  r.predictedS = numberOr(o.value("predicted_s"));
  r.predictedGpu = o.value("predicted_gpu").toString();
  r.predictedBound = o.value("predicted_bound").toString();
  r.maxRelErr = numberOr(o.value("max_rel_err"));
  for (const QJsonValue& v : o.value("kept_alive").toArray()) {
    const QJsonObject k = v.toObject();
    r.keptAlive.append(
        {k.value("label").toString(), bytesOf(k, "bytes"), k.value("why").toString()});
  }
  r.backwardStatus = o.value("backward_status").toString();
  r.backwardMaxMemBytes = bytesOf(o, "backward_max_mem_bytes");
  r.backwardTimeS = numberOr(o.value("backward_time_s"));
  return true;
}

QJsonObject entryToJson(const RunEntry& e) {
  QJsonArray results;
  for (const auto& r : e.results) results.append(resultToJson(r));
  return QJsonObject{{"id", e.id},
                     {"finished_at", e.finishedAt.toString(Qt::ISODateWithMs)},
                     {"title", e.title},
                     {"requires_grad", e.requiresGrad},
                     {"device", e.device},
                     {"dtype", e.dtype},
                     {"workload", e.workload},
                     {"ok", e.ok},
                     {"error", e.error},
                     {"results", results}};
}

bool entryFromJson(const QJsonObject& o, RunEntry& e) {
  if (!o.value("id").isDouble() || !o.value("results").isArray()) return false;
  // ids are 1, 2, ...; the next one is the largest + 1, so it must stay below INT_MAX.
  const double id = o.value("id").toDouble();
  if (!(id >= 1 && id < kMaxRunId) || id != std::floor(id))
    throw BadField{QStringLiteral("field 'id' is %1 (allowed: a whole number, 1 to %2)")
                       .arg(numberText(id))
                       .arg(kMaxRunId - 1)};
  e.id = static_cast<int>(id);
  e.finishedAt = QDateTime::fromString(o.value("finished_at").toString(), Qt::ISODateWithMs);
  e.title = o.value("title").toString();
  e.requiresGrad = requiresGradField(o);
  e.device = o.value("device").toString();
  e.dtype = o.value("dtype").toString();
  e.workload = o.value("workload").toObject();
  e.ok = o.value("ok").toBool(true);
  e.error = o.value("error").toString();
  for (const QJsonValue& v : o.value("results").toArray()) {
    StrategyResult r;
    if (!resultFromJson(v.toObject(), r)) return false;
    e.results.append(r);
  }
  return true;
}

}  // namespace

const StrategyResult* RunEntry::result(const QString& strategy) const {
  for (const auto& r : results)
    if (r.strategy == strategy) return &r;
  return nullptr;
}

RunHistory::RunHistory(QObject* parent) : QObject(parent) {}

int RunHistory::append(RunEntry e) {
  e.id = nextId_++;
  entries_.append(std::move(e));
  const int index = size() - 1;
  emit appended(index);
  return index;
}

void RunHistory::clear() {
  entries_.clear();
  nextId_ = 1;
  emit reset();
}

QJsonDocument RunHistory::toJson() const {
  QJsonArray runs;
  for (const auto& e : entries_) runs.append(entryToJson(e));
  return QJsonDocument(
      QJsonObject{{"format", "matmulviz-run-history"}, {"version", 1}, {"runs", runs}});
}

bool RunHistory::fromJson(const QJsonDocument& doc, QString* error) {
  auto fail = [&](const QString& msg) {
    if (error) *error = msg;
    return false;
  };
  const QJsonObject root = doc.object();
  if (root.value("format").toString() != QLatin1String("matmulviz-run-history"))
    return fail(QStringLiteral("not a matmulviz run history (\"format\" is missing or wrong)"));
  if (root.value("version").toInt() != 1)
    return fail(QStringLiteral("unsupported run history version %1 (expected 1)")
                    .arg(root.value("version").toInt()));
  QVector<RunEntry> entries;
  int maxId = 0;
  const QJsonArray runs = root.value("runs").toArray();
  for (qsizetype i = 0; i < runs.size(); ++i) {
    RunEntry e;
    try {
      if (!entryFromJson(runs[i].toObject(), e))
        return fail(QStringLiteral("run %1 is malformed (needs \"id\" and \"results\")").arg(i));
    } catch (const BadField& bad) {
      return fail(QStringLiteral("run %1: %2").arg(i).arg(bad.message));
    }
    maxId = std::max(maxId, e.id);
    entries.append(std::move(e));
  }
  entries_ = std::move(entries);
  nextId_ = maxId + 1;
  emit reset();
  return true;
}

bool RunHistory::save(const QString& path, QString* error) const {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) {
    if (error) *error = path + QStringLiteral(": ") + f.errorString();
    return false;
  }
  f.write(toJson().toJson(QJsonDocument::Indented));
  if (!f.commit()) {
    if (error) *error = path + QStringLiteral(": ") + f.errorString();
    return false;
  }
  return true;
}

bool RunHistory::load(const QString& path, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    if (error) *error = path + QStringLiteral(": ") + f.errorString();
    return false;
  }
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
  if (pe.error != QJsonParseError::NoError) {
    if (error)
      *error =
          QStringLiteral("%1: at offset %2: %3").arg(path).arg(pe.offset).arg(pe.errorString());
    return false;
  }
  QString why;
  if (!fromJson(doc, &why)) {
    if (error) *error = path + QStringLiteral(": ") + why;
    return false;
  }
  return true;
}

namespace {

StrategyResult resultOf(const StrategyRun& r, const StrategiesReport& report,
                        const costmodel::GpuProfile* gpu) {
  StrategyResult s;
  s.strategy = qs(r.strategy);
  s.ok = r.ok;
  s.error = qs(r.error);
  if (r.ok) {
    s.timeMedianS = r.time.median;
    s.timeColdS = r.time.cold;
  }
  s.curMemBytes = r.current.allocatedBytes;
  s.maxMemBytes = r.peak.allocatedBytes;
  s.maxRelErr = r.maxRelErr;
  for (const KeptAlive& k : r.keptAlive) s.keptAlive.append({qs(k.label), k.bytes, qs(k.why)});
  s.backwardStatus = backwardText(r.backward);
  s.backwardMaxMemBytes = r.backward.maxMemBytes;
  if (r.backward.status == BackwardOutcome::Status::Ran) s.backwardTimeS = r.backward.timeSeconds;
  if (const auto p = gpu ? costmodel::predictRun(report.workload, r.strategy, *gpu)
                         : std::nullopt) {  // none for a strategy the model does not know
    s.predictedS = p->prediction.totalS;
    s.predictedGpu = qs(gpu->name);
    s.predictedBound = qs(p->prediction.bound);
  }
  return s;
}

}  // namespace

RunEntry runEntryFromReport(const StrategiesReport& report, const QString& title,
                            const costmodel::GpuProfile* gpu) {
  RunEntry e;
  e.finishedAt = QDateTime::currentDateTime();
  e.title = title;
  e.requiresGrad =
      qs(report.runs.empty() ? RequiresGrad{}.text() : report.runs.front().requiresGrad.text());
  e.device = qs(deviceKindName(report.device));
  const Workload& w = report.workload;
  e.dtype = qs(dtypeName(w.dtype));
  e.workload = QJsonObject{{"n", double(w.n)}, {"m", double(w.m)}, {"i", double(w.i)},
                           {"j", double(w.j)}, {"k", double(w.k)}, {"batch", double(w.batch)},
                           {"dtype", e.dtype}};
  // A strategy that failed (out of memory) is a result with ok = false; the run itself is ok.
  for (const StrategyRun& r : report.runs) e.results.append(resultOf(r, report, gpu));
  return e;
}

}  // namespace matmulviz::ui
