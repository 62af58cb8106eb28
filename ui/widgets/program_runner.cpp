#include "ui/widgets/program_runner.h"

#include "core/report/json_reader.h"

#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtConcurrent/QtConcurrentRun>

namespace matmulviz::ui {

namespace {

using ReportResult = std::pair<std::shared_ptr<const PythonReport>, QString>;

ReportResult readReportFile(const QString& path) {
  try {
    return {std::make_shared<const PythonReport>(readPythonReportFile(path.toStdString())), {}};
  } catch (const std::exception& e) {
    return {nullptr, QString::fromUtf8(e.what())};
  }
}

}  // namespace

ProgramRunner::ProgramRunner(QObject* parent) : QObject(parent) {}

ProgramRunner::~ProgramRunner() {
  if (process_ && process_->state() != QProcess::NotRunning) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(2000);
  }
}

QString ProgramRunner::packagePath() {
  const QString env = qEnvironmentVariable("MATMULVIZ_PYTHONPATH");
  if (!env.isEmpty()) return env;
#ifdef MATMULVIZ_PYTHON_BUILD_DIR
  if (QFileInfo::exists(QStringLiteral(MATMULVIZ_PYTHON_BUILD_DIR "/matmulviz")))
    return QStringLiteral(MATMULVIZ_PYTHON_BUILD_DIR);
#endif
  return {};
}

void ProgramRunner::start(const QString& scriptPath) {
  if (running_) return;
  running_ = true;
  cancelled_ = false;
  moduleMissing_ = false;
  stderrTail_.clear();
  clock_.start();
  dir_ = std::make_unique<QTemporaryDir>();
  reportPath_ = dir_->filePath(QFileInfo(scriptPath).completeBaseName() + ".report.json");
  delete process_;
  process_ = new QProcess(this);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (const QString package = packagePath(); !package.isEmpty()) {
    const QString old = env.value(QStringLiteral("PYTHONPATH"));
    env.insert(QStringLiteral("PYTHONPATH"), old.isEmpty() ? package : package + ':' + old);
  }
  env.insert(QStringLiteral("PYTHONUNBUFFERED"), QStringLiteral("1"));  // output as it comes
  process_->setProcessEnvironment(env);
  const QFileInfo script(scriptPath);
  process_->setWorkingDirectory(script.absolutePath());
  connect(process_, &QProcess::readyReadStandardOutput, this,
          [this] { emit output(QString::fromUtf8(process_->readAllStandardOutput()), false); });
  connect(process_, &QProcess::readyReadStandardError, this, [this] {
    const QString text = QString::fromUtf8(process_->readAllStandardError());
    noteErrorText(text);
    emit output(text, true);
  });
  connect(process_, &QProcess::finished, this, &ProgramRunner::onProcessFinished);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;  // crashes and kills end in finished()
    end(-1, false, nullptr,
        tr("%1 could not be started (%2): the Python module needs Debian's python3")
            .arg(python(), process_->errorString()));
  });
  QStringList args{QStringLiteral("-m"), QStringLiteral("matmulviz"), script.absoluteFilePath(),
                   QStringLiteral("--report"), reportPath_};
  if (usesPyTorch(scriptPath)) {
    args[1] = QStringLiteral("matmulviz.simulate");
    args << QStringLiteral("--gpu") << simulatedGpu();
  }
  process_->start(python(), args);
}

bool ProgramRunner::usesPyTorch(const QString& scriptPath) {
  QFile f(scriptPath);
  if (!f.open(QIODevice::ReadOnly)) return false;
  static const QRegularExpression imports(
      QStringLiteral(R"(^\s*(import\s+torch\b|from\s+torch\b))"),
      QRegularExpression::MultilineOption);
  return imports.match(QString::fromUtf8(f.readAll())).hasMatch();
}

void ProgramRunner::cancel() {
  if (!running_ || !process_ || process_->state() == QProcess::NotRunning) return;
  cancelled_ = true;
  process_->kill();
}

void ProgramRunner::onProcessFinished(int exitCode, QProcess::ExitStatus status) {
  if (cancelled_) {
    end(-1, true, nullptr, tr("cancelled"));
    return;
  }
  if (status == QProcess::CrashExit) {
    end(-1, false, nullptr, tr("Python stopped without finishing (it crashed or was killed)"));
    return;
  }
  if (!QFileInfo::exists(reportPath_)) {
    if (moduleMissing_) {  // scripts/run builds the app and the CLI, not the Python module
      end(exitCode, false, nullptr,
          tr("the script wrote no report: Python found no matmulviz module. Build it with "
             "scripts/python in matmulviz's source folder (scripts/test builds it too), or "
             "install it with `python3 -m pip install --no-build-isolation .` there"));
      return;
    }
    end(exitCode, false, nullptr,
        tr("the script wrote no report (exit status %1): see its output").arg(exitCode));
    return;
  }
  readReport(exitCode);
}

void ProgramRunner::noteErrorText(const QString& text) {
  stderrTail_ = (stderrTail_ + text).right(512);
  if (stderrTail_.contains(QLatin1String("No module named matmulviz"))) moduleMissing_ = true;
}

void ProgramRunner::readReport(int exitCode) {
  auto* watcher = new QFutureWatcher<ReportResult>(this);
  connect(watcher, &QFutureWatcher<ReportResult>::finished, this, [this, watcher, exitCode] {
    const ReportResult result = watcher->result();
    watcher->deleteLater();
    end(exitCode, false, result.first, result.second);
  });
  watcher->setFuture(QtConcurrent::run(readReportFile, reportPath_));
}

void ProgramRunner::end(int exitCode, bool cancelled, std::shared_ptr<const PythonReport> report,
                        const QString& problem) {
  if (!running_) return;
  running_ = false;
  dir_.reset();  // the report is read: its temporary folder goes
  emit finished(exitCode, cancelled, std::move(report), problem);
}

}  // namespace matmulviz::ui
