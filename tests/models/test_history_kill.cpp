// Nothing lost when killed: RunHistory::save (QSaveFile) leaves history.json whole whatever the
// moment a SIGKILL lands. This executable is also its own child: with MATMULVIZ_SAVE_LOOP=PATH it
// appends a run and saves PATH over and over, printing "saving N" before and "saved N" after each
// save; the test kills it with SIGKILL at many moments (during and between saves) and loads what
// is left.
#include "ui/models/run_history.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cstdio>

using namespace matmulviz::ui;

namespace {

constexpr int kResultsPerRun = 40;  // about 40 KB per run: a save takes long enough to be hit

RunEntry bigRun(int index) {
  RunEntry e;
  e.title = QStringLiteral("run %1").arg(index);
  e.finishedAt = QDateTime::currentDateTime();
  for (int r = 0; r < kResultsPerRun; ++r) {
    StrategyResult s;
    s.strategy = QStringLiteral("strategy%1").arg(r);
    s.curMemBytes = qint64(index) * 1000 + r;
    s.maxMemBytes = qint64(1) << 40;
    for (int k = 0; k < 4; ++k)
      s.keptAlive.append({QStringLiteral("c[q]"), qint64(k) << 30,
                          QStringLiteral("saved as mat2 of BmmBackward0 because a requires grad")});
    e.results.append(s);
  }
  return e;
}

/// The child: append, save, report, forever (until killed, or 2000 saves).
int saveLoop(const QString& path) {
  RunHistory h;
  for (int n = 1; n <= 2000; ++n) {
    h.append(bigRun(n));
    std::printf("saving %d\n", n);
    std::fflush(stdout);
    QString error;
    if (!h.save(path, &error)) {
      std::fprintf(stderr, "%s\n", qPrintable(error));
      return 1;
    }
    std::printf("saved %d\n", n);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

class TestHistoryKill : public QObject {
  Q_OBJECT

 private slots:
  void killedAnywhereLosesNothing_data() {
    QTest::addColumn<int>("savesBeforeKill");
    QTest::addColumn<int>("extraMicroseconds");
    // Kills after a number of completed saves, plus a random delay within the next one.
    auto* rng = QRandomGenerator::global();
    for (int i = 0; i < 24; ++i) {
      const int saves = 1 + i % 6, extra = int(rng->bounded(30000));
      QTest::newRow(qPrintable(QStringLiteral("after %1 saves + %2 us").arg(saves).arg(extra)))
          << saves << extra;
    }
  }
  void killedAnywhereLosesNothing() {
    QFETCH(int, savesBeforeKill);
    QFETCH(int, extraMicroseconds);
    QTemporaryDir dir;
    const QString path = dir.filePath("history.json");
    QProcess child;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("MATMULVIZ_SAVE_LOOP", path);
    child.setProcessEnvironment(env);
    child.setProgram(QCoreApplication::applicationFilePath());
    child.start();
    QVERIFY(child.waitForStarted());
    int lastSaved = 0;
    bool inSave = false;  // the last line was "saving N"
    QByteArray pending;
    auto readSaved = [&] {
      pending += child.readAllStandardOutput();
      int nl;
      while ((nl = int(pending.indexOf('\n'))) >= 0) {
        const QByteArray line = pending.left(nl);
        pending.remove(0, nl + 1);
        if (line.startsWith("saved ")) lastSaved = line.mid(6).toInt();
        inSave = line.startsWith("saving ");
      }
    };
    while (lastSaved < savesBeforeKill) {
      QVERIFY2(child.waitForReadyRead(30000), qPrintable(child.readAllStandardError()));
      readSaved();
    }
    QThread::usleep(static_cast<unsigned long>(extraMicroseconds));
    child.kill();  // SIGKILL
    QVERIFY(child.waitForFinished(30000));
    readSaved();

    RunHistory loaded;
    QString error;
    QVERIFY2(loaded.load(path, &error), qPrintable(error));
    // Every save that reported is there; at most one more (saved, killed before it printed).
    QVERIFY2(loaded.size() >= lastSaved && loaded.size() <= lastSaved + 1,
             qPrintable(QStringLiteral("%1 runs, %2 reported").arg(loaded.size()).arg(lastSaved)));
    for (int i = 0; i < loaded.size(); ++i) {
      const RunEntry& e = loaded.entries()[i];
      QCOMPARE(e.id, i + 1);
      QCOMPARE(e.results.size(), kResultsPerRun);
      QCOMPARE(e.results.back().curMemBytes, qint64(i + 1) * 1000 + kResultsPerRun - 1);
    }
    if (inSave) ++killsDuringSave_;  // counted, to show that saves were hit
  }

  void someKillsLandedDuringASave() {
    // With 24 kills spread over the saves, at least one must have hit one mid-way; otherwise
    // the test above proved less than it claims.
    QVERIFY2(killsDuringSave_ > 0, "no kill landed during a save");
    qInfo("%d of 24 kills landed during a save", killsDuringSave_);
  }

 private:
  int killsDuringSave_ = 0;
};

int main(int argc, char** argv) {
  const QString loopPath = qEnvironmentVariable("MATMULVIZ_SAVE_LOOP");
  if (!loopPath.isEmpty()) return saveLoop(loopPath);
  QCoreApplication app(argc, argv);
  TestHistoryKill test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_history_kill.moc"
