#include "ui/widgets/program_runner.h"

#include "core/report/json_reader.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

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

QStringList ProgramRunner::simulatedGpus() {
  return {QStringLiteral("h200"), QStringLiteral("h100"), QStringLiteral("a100"),
          QStringLiteral("a100-40gb")};
}

QList<PythonChoice> ProgramRunner::pythonChoices() {
  QList<PythonChoice> out{{tr("Debian's python3 (its PyTorch)"), python()}};
  QString root = qEnvironmentVariable("MATMULVIZ_VENVS");
  if (root.isEmpty()) root = QDir::homePath() + QStringLiteral("/.cache/matmulviz/venvs");
  QStringList versions = QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
  std::reverse(versions.begin(), versions.end());
  for (const QString& v : versions) {
    const QString bin = root + '/' + v + QStringLiteral("/bin/python");
    if (QFileInfo(bin).isExecutable())
      out.push_back({tr("PyTorch %1 (scripts/setup's environment)").arg(v), bin});
  }
  return out;
}

QStringList ProgramRunner::commandLine(const QString& scriptPath, const QString& output,
                                       QString* program, const QString& outputOption) const {
  const QString script = QFileInfo(scriptPath).absoluteFilePath();
  if (!usesPyTorch(scriptPath)) {
    *program = python();
    return {QStringLiteral("-m"), QStringLiteral("matmulviz"), script, outputOption, output};
  }
  *program = settings_.python.isEmpty() ? python() : settings_.python;
  QStringList args{QStringLiteral("-m"), QStringLiteral("matmulviz.simulate"), script};
  args << QProcess::splitCommand(settings_.arguments);
  args << QStringLiteral("--gpu") << (settings_.gpu.isEmpty() ? simulatedGpus()[0] : settings_.gpu);
  if (!settings_.capacity.trimmed().isEmpty())
    args << QStringLiteral("--capacity") << settings_.capacity.trimmed();
  args << outputOption << output;
  return args;
}

void ProgramRunner::start(const QString& scriptPath) {
  if (running_) return;
  searching_ = false;
  dir_ = std::make_unique<QTemporaryDir>();
  reportPath_ = dir_->filePath(QFileInfo(scriptPath).completeBaseName() + ".report.json");
  QString program;
  const QStringList args = commandLine(scriptPath, reportPath_, &program);
  launch(program, args, QFileInfo(scriptPath).absolutePath());
}

void ProgramRunner::startSearch(const QString& scriptPath, const QString& range) {
  if (running_) return;
  searching_ = true;
  dir_ = std::make_unique<QTemporaryDir>();
  reportPath_ = dir_->filePath(QStringLiteral("search.json"));
  QString program;
  // Not a report: the search's results (--stats with --search), two trials at a time.
  QStringList args = commandLine(scriptPath, reportPath_, &program, QStringLiteral("--stats"));
  args << QStringLiteral("--search") << range << QStringLiteral("--jobs") << QStringLiteral("2");
  launch(program, args, QFileInfo(scriptPath).absolutePath());
}

void ProgramRunner::launch(const QString& program, const QStringList& args,
                           const QString& workingDir) {
  running_ = true;
  cancelled_ = false;
  moduleMissing_ = false;
  stderrTail_.clear();
  clock_.start();
  delete process_;
  process_ = new QProcess(this);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (const QString package = packagePath(); !package.isEmpty()) {
    const QString old = env.value(QStringLiteral("PYTHONPATH"));
    env.insert(QStringLiteral("PYTHONPATH"), old.isEmpty() ? package : package + ':' + old);
  }
  env.insert(QStringLiteral("PYTHONUNBUFFERED"), QStringLiteral("1"));  // output as it comes
  process_->setProcessEnvironment(env);
  process_->setWorkingDirectory(workingDir);
  connect(process_, &QProcess::readyReadStandardOutput, this,
          [this] { emit output(QString::fromUtf8(process_->readAllStandardOutput()), false); });
  connect(process_, &QProcess::readyReadStandardError, this, [this] {
    const QString text = QString::fromUtf8(process_->readAllStandardError());
    noteErrorText(text);
    emit output(text, true);
  });
  connect(process_, &QProcess::finished, this, &ProgramRunner::onProcessFinished);
  connect(process_, &QProcess::errorOccurred, this, [this, program](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;  // crashes and kills end in finished()
    const QString problem =
        tr("%1 could not be started (%2): the Python module needs Debian's python3")
            .arg(program, process_->errorString());
    if (searching_)
      endSearch(-1, false, problem);
    else
      end(-1, false, nullptr, problem);
  });
  process_->start(program, args);
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
  if (searching_) {
    endSearch(exitCode, cancelled_,
              cancelled_ ? tr("cancelled")
              : status == QProcess::CrashExit
                  ? tr("Python stopped without finishing (it crashed or was killed)")
                  : QString());
    return;
  }
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

void ProgramRunner::endSearch(int exitCode, bool cancelled, const QString& problem) {
  if (!running_) return;
  running_ = false;
  std::shared_ptr<const SearchResults> results;
  QString why = problem;
  if (why.isEmpty()) {
    if (!QFileInfo::exists(reportPath_)) {
      why = moduleMissing_
                ? tr("Python found no matmulviz module (build it with scripts/python)")
                : tr("the search wrote no results (exit status %1): see its output").arg(exitCode);
    } else {
      try {  // a few hundred bytes: read here
        results = std::make_shared<const SearchResults>(
            readSearchResultsFile(reportPath_.toStdString(), "search.json"));
      } catch (const std::exception& e) {
        why = QString::fromUtf8(e.what());
      }
    }
  }
  dir_.reset();
  emit searchFinished(exitCode, cancelled, std::move(results), why);
}

void ProgramRunner::end(int exitCode, bool cancelled, std::shared_ptr<const PythonReport> report,
                        const QString& problem) {
  if (!running_) return;
  running_ = false;
  dir_.reset();  // the report is read: its temporary folder goes
  emit finished(exitCode, cancelled, std::move(report), problem);
}

}  // namespace matmulviz::ui
