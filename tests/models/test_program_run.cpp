// ProgramRun and PeakTableModel (ui/models): the committed report of examples/peak_lines.py
// beside that script: each line's bytes, the line of each event, a line's series, and what was
// alive at the peak by line and owner, as a tree under QAbstractItemModelTester.
#include "ui/models/peak_table_model.h"
#include "ui/models/program_run.h"

#include <QAbstractItemModelTester>
#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

const QString kScript = QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples/peak_lines.py");

std::shared_ptr<const ProgramRun> fixtureRun(const QString& script = kScript) {
  auto report = std::make_shared<const PythonReport>(readPythonReportFile(
      MATMULVIZ_SOURCE_DIR "/tests/reference/python_runs/peak_lines.report.json"));
  return std::make_shared<const ProgramRun>(report, script);
}

/// The 1-based line of `needle` in the script.
int lineOf(const QString& needle) {
  QFile f(kScript);
  if (!f.open(QIODevice::ReadOnly)) return -1;
  const QStringList lines = QString::fromUtf8(f.readAll()).split('\n');
  for (int i = 0; i < lines.size(); ++i)
    if (lines[i].contains(needle)) return i + 1;
  return -1;
}

}  // namespace

class TestProgramRun : public QObject {
  Q_OBJECT
 private slots:
  void linesAndEvents() {
    const auto run = fixtureRun();
    const int direct = lineOf("return torch.matmul(a, c[q])");
    const int backward = lineOf("loss.backward()");
    QVERIFY(direct > 0 && backward > 0);
    QVERIFY(run->lines().contains(direct));
    const auto& l = run->lines()[direct];
    // c[q] copies q to the device (32 KiB), gathers 4096 matrices of 64x64 floats (64 MiB), and
    // bmm writes 1 MiB; the copy of q is gone by the peak.
    QCOMPARE(l.allocatedBytes, (qint64(65) << 20) + (32 << 10));
    QCOMPARE(l.allocations, 3);
    QCOMPARE(l.aliveAtPeakBytes, qint64(65) << 20);
    QCOMPARE(l.aliveAtPeakBlocks, 2);
    // The peak's event is the clone of the gradient made by loss.backward().
    QCOMPARE(run->scriptLineOfEvent(run->peakEvent()), backward);
    QVERIFY(
        run->eventText(run->peakEvent()).contains("peak_lines.py:" + QString::number(backward)));
    // Every allocation a line made is one of its events; its series ends where its blocks end.
    const QVector<int> events = run->eventsOfLine(direct);
    QCOMPARE(events.size(), l.allocations);
    const QVector<qint64> series = run->seriesOfLine(direct);
    QCOMPARE(series.size(), run->eventCount());
    QCOMPARE(series[run->peakEvent()], qint64(65) << 20);
    QVERIFY(*std::max_element(series.begin(), series.end()) >= qint64(65) << 20);
    QCOMPARE(series.front(), qint64(0));
    // Segment events have no line.
    for (int e = 0; e < run->eventCount(); ++e)
      if (run->report().events[size_t(e)].kind == MemoryEventKind::SegmentAlloc)
        QCOMPARE(run->scriptLineOfEvent(e), 0);
  }

  void anotherScriptHasNoLines() {
    const auto run = fixtureRun(QStringLiteral("/somewhere/else.py"));
    QVERIFY(run->lines().isEmpty());
    QCOMPARE(run->scriptLineOfEvent(run->peakEvent()), 0);
    QVERIFY(!run->peakGroups().isEmpty());  // still grouped, by file:line
    QCOMPARE(run->peakGroups().front().scriptLine, 0);
  }

  void peakGroupsByLineAndOwner() {
    const auto run = fixtureRun();
    const auto& groups = run->peakGroups();
    QVERIFY(groups.size() >= 3);
    QCOMPARE(groups.front().scriptLine, lineOf("return torch.matmul(a, c[q])"));
    QCOMPARE(groups.front().where,
             QString("peak_lines.py:%1 in direct").arg(groups.front().scriptLine));
    qint64 total = 0;
    for (const auto& g : groups) {
      total += g.bytes;
      qint64 owners = 0;
      for (const auto& o : g.owners) owners += o.bytes;
      QCOMPARE(owners, g.bytes);
      if (&g != &groups.front()) QVERIFY(g.bytes <= groups.front().bytes);
    }
    QCOMPARE(total, run->peakBytes());
    // The gathered copy: saved for the backward of bmm; the bmm output: a Python reference.
    QVERIFY(groups.front().owners.front().owner.contains("BmmBackward0"));
    QCOMPARE(groups.front().owners.front().bytes, qint64(64) << 20);
    // The bmm output is `out`, which the script still held when it ended.
    bool variable = false;
    for (const auto& o : groups.front().owners)
      variable = variable || (o.owner.startsWith("the variable out") && o.bytes == 1 << 20);
    QVERIFY(variable);
    // The gradient's clone made by backward has no name: a Python reference.
    bool reference = false;
    for (const auto& g : groups)
      for (const auto& o : g.owners)
        reference = reference || o.owner ==
                                     "a Python reference to 'clone of grad_output (ones)' "
                                     "(from clone)";
    QVERIFY(reference);
  }

  void peakTableModel() {
    PeakTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    const auto run = fixtureRun();
    model.setRun(run);
    QCOMPARE(model.rowCount(), int(run->peakGroups().size()));
    QCOMPARE(model.columnCount(), int(PeakTableModel::ColumnCount));
    const QModelIndex top = model.index(0, PeakTableModel::Where);
    QCOMPARE(model.data(top).toString(), run->peakGroups().front().where);
    QCOMPARE(
        model.data(model.index(0, PeakTableModel::Bytes), PeakTableModel::RawRole).toLongLong(),
        qint64(65) << 20);
    QCOMPARE(model.data(model.index(0, PeakTableModel::Bytes)).toString(), QString("65 MiB"));
    QVERIFY(model.data(model.index(0, PeakTableModel::Code)).toString().contains("c[q]"));
    QVERIFY(model.data(model.index(0, PeakTableModel::Share)).toString().endsWith('%'));
    QCOMPARE(model.rowCount(top), int(run->peakGroups().front().owners.size()));
    const QModelIndex owner = model.index(0, PeakTableModel::Where, top);
    QCOMPARE(owner.parent(), top);
    QVERIFY(model.data(owner).toString().contains("BmmBackward0"));
    QCOMPARE(model.data(owner, PeakTableModel::ScriptLineRole).toInt(),
             run->peakGroups().front().scriptLine);
    QCOMPARE(model.rowCount(owner), 0);
    QCOMPARE(model.indexOfLine(run->peakGroups().front().scriptLine), top);
    QVERIFY(!model.indexOfLine(1).isValid());
    model.setRun(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }
};

QTEST_GUILESS_MAIN(TestProgramRun)
#include "test_program_run.moc"
