#pragma once
// Runs the built matmulviz-cli through QProcess, as a user runs it, for the end-to-end tests of
// its subcommands (tests/cli, tests/kernels). Header-only: each test executable includes it.

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace matmulviz::testing {

struct CliResult {
  bool finished = false;  ///< ended before the timeout
  bool crashed = false;   ///< ended by a signal
  int exitCode = -1;      ///< -1 when it did not finish or crashed
  QByteArray out, err;

  /// Finished normally (whatever the exit code).
  bool ok() const { return finished && !crashed; }
  /// For failure messages: how it ended and the end of stderr.
  QString describe() const {
    const QString how = !finished ? QStringLiteral("did not finish")
                        : crashed ? QStringLiteral("crashed")
                                  : QStringLiteral("exit code %1").arg(exitCode);
    return how + QStringLiteral("; stderr: ") + QString::fromUtf8(err.right(2000));
  }
};

struct CliOptions {
  int timeoutMs = 120'000;
  QString workingDir;      ///< the test's own when empty
  bool noDisplay = false;  ///< remove DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM
};

/// Runs `program` with `args`; a run past the timeout is killed (finished = false).
inline CliResult runCliProcess(const QString& program, const QStringList& args,
                               const CliOptions& options = {}) {
  QProcess p;
  if (options.noDisplay) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) env.remove(var);
    p.setProcessEnvironment(env);
  }
  if (!options.workingDir.isEmpty()) p.setWorkingDirectory(options.workingDir);
  p.setProgram(program);
  p.setArguments(args);
  p.start();
  CliResult r;
  if (!p.waitForStarted()) {
    r.err = "cannot start " + program.toUtf8();
    return r;
  }
  r.finished = p.waitForFinished(options.timeoutMs);
  if (!r.finished) {
    p.kill();
    p.waitForFinished();
  }
  r.crashed = p.exitStatus() != QProcess::NormalExit;
  r.exitCode = r.finished && !r.crashed ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

/// Whether `program devices` says a CUDA device answers (its "cuda yes ..." line).
inline bool cudaAnswers(const QString& program) {
  const CliResult r = runCliProcess(program, {QStringLiteral("devices")});
  for (const QByteArray& line : r.out.split('\n'))
    if (line.simplified().startsWith("cuda yes")) return true;
  return false;
}

}  // namespace matmulviz::testing
