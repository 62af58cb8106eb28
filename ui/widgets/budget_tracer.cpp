#include "ui/widgets/budget_tracer.h"

#include "core/partitioner/graph_json.h"
#include "ui/models/budget_explorer.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

namespace matmulviz::ui {

namespace {

constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kPrefix = "matmulviz-cli budget: ";
constexpr int kTracebackLines = 6;  // the end of a script's traceback shown in the message

/// A traceback without the frames of Python's runpy and of the matmulviz package (each a "File"
/// line and the code under it) and without the carets under code: what the script did.
QStringList scriptLines(const QStringList& lines) {
  QStringList out;
  qsizetype first = 0;  // from the traceback on, when there is one (not the progress lines)
  for (qsizetype i = 0; i < lines.size(); ++i)
    if (lines[i].startsWith(QLatin1String("Traceback "))) first = i;
  for (qsizetype i = first; i < lines.size(); ++i) {
    const QString t = lines[i].trimmed();
    if (t.startsWith(QLatin1String("File \"")) &&
        (t.contains(QLatin1String("<frozen ")) || t.contains(QLatin1String("/matmulviz/")))) {
      if (i + 1 < lines.size() && !lines[i + 1].trimmed().startsWith(QLatin1String("File \"")))
        ++i;  // its code line
      continue;
    }
    if (!t.isEmpty() && t.count(QLatin1Char('^')) + t.count(QLatin1Char('~')) == t.size()) continue;
    out << lines[i];
  }
  return out;
}

}  // namespace

BudgetTracer::BudgetTracer(QObject* parent) : QObject(parent) {}

BudgetTracer::~BudgetTracer() {
  if (process_) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(2000);
  }
}

QString BudgetTracer::pythonPackagePath() {
  const QString env = qEnvironmentVariable("MATMULVIZ_PYTHONPATH");
  if (!env.isEmpty()) return env;
#ifdef MATMULVIZ_PYTHON_BUILD_DIR
  if (QFileInfo(QStringLiteral(MATMULVIZ_PYTHON_BUILD_DIR "/matmulviz")).isDir())
    return QStringLiteral(MATMULVIZ_PYTHON_BUILD_DIR);
#endif
  return {};
}

QStringList BudgetTracer::exampleScripts() {
  QString dir = qEnvironmentVariable("MATMULVIZ_EXAMPLES_DIR");
#ifdef MATMULVIZ_SOURCE_DIR
  if (dir.isEmpty()) dir = QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples");
#endif
  if (dir.isEmpty()) return {};
  QStringList out;
  const QDir d(dir);
  for (const QString& name :
       d.entryList({QStringLiteral("budget_*.py")}, QDir::Files | QDir::Readable, QDir::Name))
    out << d.absoluteFilePath(name);
  return out;
}

QString BudgetTracer::target() const {
  return tr("%1 of %2").arg(function_, QFileInfo(script_).fileName());
}

bool BudgetTracer::isRunning() const {
  return process_ != nullptr;
}

void BudgetTracer::trace(const QString& script, const QString& function) {
  if (process_) cancel();
  dir_ = std::make_unique<QTemporaryDir>();
  if (!dir_->isValid()) {
    emit failed(tr("Cannot create a temporary folder for the traced graph"));
    return;
  }
  script_ = script;
  function_ = function;
  process_ = new QProcess(this);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (const QString path = pythonPackagePath(); !path.isEmpty()) {
    const QString old = env.value(QStringLiteral("PYTHONPATH"));
    env.insert(QStringLiteral("PYTHONPATH"), old.isEmpty() ? path : path + ":" + old);
  }
  process_->setProcessEnvironment(env);
  process_->setProcessChannelMode(QProcess::MergedChannels);
  connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    onFinished(code, status == QProcess::CrashExit);
  });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) onFinished(-1, true);
  });
  process_->start(QString::fromLatin1(kPython),
                  {QStringLiteral("-m"), QStringLiteral("matmulviz._budget"), script,
                   QStringLiteral("--function"), function, QStringLiteral("--graph-out"),
                   dir_->filePath(QStringLiteral("graph.json")), QStringLiteral("--no-sweep")});
}

void BudgetTracer::cancel() {
  if (!process_) return;
  QProcess* p = process_;
  process_ = nullptr;
  p->disconnect(this);
  p->kill();
  p->waitForFinished(2000);
  p->deleteLater();
  emit cancelled();
}

QString BudgetTracer::errorText(int exitCode) const {
  if (exitCode < 0)
    return tr("Could not start %1 (the tracer runs on Debian's Python 3: scripts/setup)")
        .arg(QString::fromLatin1(kPython));
  const QString output = QString::fromUtf8(process_->readAll()).trimmed();
  QStringList lines = scriptLines(output.split(QLatin1Char('\n'), Qt::SkipEmptyParts));
  if (exitCode == 2) {  // bad input: the tracer's own one-line message
    for (qsizetype i = lines.size() - 1; i >= 0; --i)
      if (lines[i].startsWith(QLatin1String(kPrefix)))
        return lines[i].mid(qsizetype(qstrlen(kPrefix)));
  }
  if (lines.size() > kTracebackLines) lines = lines.mid(lines.size() - kTracebackLines);
  const QString tail = lines.isEmpty() ? tr("(no output)") : lines.join(QLatin1Char('\n'));
  return tr("%1 failed while running (exit status %2):\n%3")
      .arg(QFileInfo(script_).fileName())
      .arg(exitCode)
      .arg(tail);
}

void BudgetTracer::onFinished(int exitCode, bool crashed) {
  if (!process_) return;
  QString message;
  std::shared_ptr<const partitioner::JointGraph> graph;
  QString title;
  if (crashed && exitCode >= 0) {
    message = tr("The tracer for %1 crashed").arg(QFileInfo(script_).fileName());
  } else if (exitCode != 0) {
    message = errorText(exitCode);
  } else {
    try {
      partitioner::GraphDocument doc =
          partitioner::readGraphFile(dir_->filePath(QStringLiteral("graph.json")).toStdString());
      checkPlannable(doc.graph);
      graph = std::make_shared<const partitioner::JointGraph>(std::move(doc.graph));
      title = QString::fromStdString(doc.source.title);
    } catch (const std::exception& e) {
      message = tr("The traced graph of %1 cannot be shown: %2")
                    .arg(function_, QString::fromStdString(e.what()));
    }
  }
  process_->deleteLater();
  process_ = nullptr;
  if (graph)
    emit finished(std::move(graph), title);
  else
    emit failed(message);
}

}  // namespace matmulviz::ui
