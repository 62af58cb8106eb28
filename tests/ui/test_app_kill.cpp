// Nothing lost when the desktop app is killed: the built `matmulviz` runs offscreen with a
// temporary HOME (settings, data) and --history, and is killed with SIGKILL after a finished run
// and in the middle of a run. After each kill the history holds every run that had finished and
// every file the app wrote is whole (each JSON file parses, the settings file reads); the app
// restarted on it appends to it. (A kill in the middle of a history save, which needs many
// tries to land, is tests/models/test_history_kill.)
#include "ui/models/run_history.h"

#include <QDirIterator>
#include <QJsonDocument>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <unistd.h>

using namespace matmulviz::ui;

namespace {

constexpr int kWaitMs = 120'000;

}  // namespace

class TestAppKill : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;

  QString historyPath() const { return home_.filePath("history.json"); }
  QString settingsPath() const { return home_.filePath("config/matmulviz/matmulviz.conf"); }

  /// Starts the app with `args` (and --history), offscreen, HOME and XDG folders in home_.
  void start(QProcess& app, const QStringList& args) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("HOME", home_.path());
    env.insert("XDG_DATA_HOME", home_.filePath("data"));
    env.insert("XDG_CONFIG_HOME", home_.filePath("config"));
    env.insert("OPENBLAS_NUM_THREADS", "1");
    app.setProcessEnvironment(env);
    app.setProgram(QStringLiteral(MATMULVIZ_APP_PATH));
    app.setArguments(QStringList{"--history", historyPath()} + args);
    app.start();
    QVERIFY2(app.waitForStarted(), qPrintable(app.errorString()));
  }

  /// Runs in the history file now (0 when there is none yet); -1 when it does not load.
  int savedRuns() const {
    if (!QFileInfo::exists(historyPath())) return 0;
    RunHistory h;
    return h.load(historyPath(), nullptr) ? h.size() : -1;
  }

  /// CPU seconds `app` has used (user + system, /proc/PID/stat): a run in progress keeps its
  /// worker busy, an idle window does not.
  static double cpuSeconds(const QProcess& app) {
    QFile f(QStringLiteral("/proc/%1/stat").arg(app.processId()));
    if (!f.open(QIODevice::ReadOnly)) return -1;
    const QByteArray stat = f.readAll();
    // Fields after the command name in parentheses; utime and stime are the 14th and 15th.
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 13) return -1;
    return double(fields[11].toLongLong() + fields[12].toLongLong()) / double(sysconf(_SC_CLK_TCK));
  }

  void kill(QProcess& app) {
    app.kill();  // SIGKILL
    QVERIFY(app.waitForFinished(kWaitMs));
    QCOMPARE(app.exitStatus(), QProcess::CrashExit);
  }

  /// Every file the app wrote is whole: JSON parses, the settings read back.
  void checkNoFileHalfWritten() {
    QDirIterator it(home_.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString path = it.next();
      if (path.endsWith(".json")) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonParseError pe;
        QJsonDocument::fromJson(f.readAll(), &pe);
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(path + ": " + pe.errorString()));
      } else if (path.endsWith(".conf")) {
        QSettings s(path, QSettings::IniFormat);
        QCOMPARE(s.status(), QSettings::NoError);
      }
    }
  }

 private slots:
  void initTestCase() { QVERIFY(home_.isValid()); }

  void killedAfterAFinishedRun() {
    QProcess app;
    start(app, {"--preset", "small", "--run"});
    QVERIFY2(QTest::qWaitFor([&] { return savedRuns() == 1; }, kWaitMs),
             qPrintable(app.readAllStandardError()));
    kill(app);
    QCOMPARE(savedRuns(), 1);
    checkNoFileHalfWritten();
  }

  void killedInTheMiddleOfARun() {
    // A run of several seconds: the scenario restored from the settings (as the app keeps it)
    // is strategy1, one op per row, over a million rows on the meta device.
    {
      QSettings settings(settingsPath(), QSettings::IniFormat);
      settings.setValue("scenario", QString::fromUtf8(R"({"title": "slow",
          "workload": {"n": 1000000, "m": 64, "i": 1, "j": 16, "k": 16, "batch": 256},
          "requires_grad": "none", "strategies": ["strategy1"], "repeats": 1,
          "device": "meta", "backward": false})"));
    }
    QProcess app;
    start(app, {"--run"});
    QTest::qWait(1500);
    const double cpuBefore = cpuSeconds(app);
    QTest::qWait(1000);
    const double busy = cpuSeconds(app) - cpuBefore;
    QCOMPARE(savedRuns(), 1);  // the slow run has not finished
    QCOMPARE(app.state(), QProcess::Running);
    // ... and is running: its worker used most of a core over the last second.
    QVERIFY2(cpuBefore >= 0 && busy > 0.1, qPrintable(QStringLiteral("%1 s of CPU").arg(busy)));
    kill(app);
    QCOMPARE(savedRuns(), 1);
    checkNoFileHalfWritten();
  }

  void restartedAppKeepsEveryFinishedRun() {
    QProcess app;
    start(app, {"--preset", "small", "--run"});
    QVERIFY2(QTest::qWaitFor([&] { return savedRuns() == 2; }, kWaitMs),
             qPrintable(app.readAllStandardError()));
    kill(app);
    RunHistory h;
    QString error;
    QVERIFY2(h.load(historyPath(), &error), qPrintable(error));
    QCOMPARE(h.size(), 2);
    QCOMPARE(h.entries()[0].id, 1);
    QCOMPARE(h.entries()[1].id, 2);
    for (const RunEntry& e : h.entries()) QVERIFY(e.ok && !e.results.isEmpty());
    checkNoFileHalfWritten();
  }
};

QTEST_GUILESS_MAIN(TestAppKill)
#include "test_app_kill.moc"
