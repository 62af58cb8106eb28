// The Program view, offscreen: a Python script opens, runs end to end through the real module
// (this build's, in a separate process), and a click on the timeline's peak highlights the line
// that allocated it (issue 16's "Done when"); the cursor on a line lights up its allocations; a
// failing script shows its traceback and the report of what ran; Cancel kills a run and leaves
// the view usable; File > Open of a .py file and of a Python run's report land here. Without
// the module built, the runs are skipped and the committed report of the same script is shown.
#include "ui/charts/program_timeline_chart.h"
#include "ui/models/peak_table_model.h"
#include "ui/models/program_run.h"
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/peak_flame_bar.h"
#include "ui/widgets/program_editor.h"
#include "ui/widgets/program_runner.h"
#include "ui/widgets/program_view.h"
#include "ui/widgets/run_controller.h"

#include <QDir>
#include <QElapsedTimer>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

const QString kExample = QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples/peak_lines.py");
const QString kFixture =
    QStringLiteral(MATMULVIZ_SOURCE_DIR "/tests/reference/python_runs/peak_lines.report.json");

bool moduleBuilt() {
  const QString package = ProgramRunner::packagePath();
  return !package.isEmpty() && QFileInfo::exists(ProgramRunner::python()) &&
         !QDir(package + "/matmulviz").entryList({"_C*.so"}).isEmpty();
}

/// The 1-based line of `needle` in `path`.
int lineOf(const QString& path, const QString& needle) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return -1;
  const QStringList lines = QString::fromUtf8(f.readAll()).split('\n');
  for (int i = 0; i < lines.size(); ++i)
    if (lines[i].contains(needle)) return i + 1;
  return -1;
}

}  // namespace

class TestProgramView : public QObject {
  Q_OBJECT
 private slots:
  // examples/peak_lines.py's numbers here are its activations' (no cuBLAS workspace, which
  // PyTorch 2.x adds per thread and the Python runs count by default since issue 24).
  void initTestCase() { qputenv("CUBLAS_WORKSPACE_CONFIG", ":0:0"); }
  void init() { QVERIFY(dir_.isValid()); }

  void runsAndTheClickedPeakHighlightsItsLine() {
    ProgramView view;
    view.resize(1400, 900);
    view.show();
    const QString script = copyExample();
    QVERIFY(view.openScript(script));
    QVERIFY(view.editor()->text().contains("torch.matmul(a, c[q])"));
    if (moduleBuilt()) {
      QVERIFY(runAndWait(view));
      QVERIFY(view.outputPane()->toPlainText().contains("direct:  peak 72.0 MiB"));
      QVERIFY2(view.statusText().startsWith("Ran in"), qPrintable(view.statusText()));
    } else {
      view.showReport(
          std::make_shared<const PythonReport>(readPythonReportFile(kFixture.toStdString())),
          "peak_lines.report.json");
      QVERIFY(view.currentRun());
      qWarning("the Python module is not built: the committed report stands in for the run");
    }
    const auto run = view.currentRun();
    QVERIFY(run);
    const int peak = run->peakEvent();
    QVERIFY(peak >= 0);
    const int backward = lineOf(view.scriptPath(), "loss.backward()");
    QCOMPARE(run->scriptLineOfEvent(peak), backward);
    QCOMPARE(view.editor()->highlightedLine(), 0);

    // Click the peak's point on the timeline: its line is highlighted in the editor.
    ProgramTimelineChart* chart = view.timeline();
    const QPoint at = chart->pixelOfEvent(peak);
    QCOMPARE(chart->eventAt(at), peak);
    QTest::mouseClick(chart->plotArea(), Qt::LeftButton, {}, at);
    QCOMPARE(chart->selectedEvent(), peak);
    QCOMPARE(view.editor()->highlightedLine(), backward);
    int line = -1, index = -1;
    view.editor()->getCursorPosition(&line, &index);
    QCOMPARE(line + 1, backward);
    QCOMPARE(chart->highlightedLine(), backward);

    // The margin: bytes allocated and held at the peak beside the line of c[q].
    const int direct = lineOf(view.scriptPath(), "return torch.matmul(a, c[q])");
    QCOMPARE(view.editor()->allocatedTextOf(direct), QString("65 MiB"));
    QCOMPARE(view.editor()->peakTextOf(direct), QString("65 MiB"));
    QCOMPARE(view.editor()->peakTextOf(backward), QString("2 MiB"));
    QCOMPARE(view.editor()->allocatedTextOf(1), QString());
  }

  void aPyTorchScriptRunsUnderTheSimulation() {  // a user's own script, unchanged
    const QString script = write("train.py",
                                 "import torch\n"
                                 "model = torch.nn.Linear(512, 512).cuda()\n"
                                 "opt = torch.optim.AdamW(model.parameters())\n"
                                 "model(torch.randn(64, 512, device='cuda')).sum().backward()\n"
                                 "opt.step()\n");
    QVERIFY(ProgramRunner::usesPyTorch(script));
    QVERIFY(!ProgramRunner::usesPyTorch(kExample));  // import matmulviz.torch as torch
    if (!moduleBuilt()) QSKIP("the Python module is not built");
    if (QProcess::execute(ProgramRunner::python(), {"-c", "import torch"}) != 0)
      QSKIP("no PyTorch for /usr/bin/python3");
    ProgramView view;
    view.resize(1400, 900);
    view.show();
    QVERIFY(view.openScript(script));
    QVERIFY2(runAndWait(view), qPrintable(view.outputPane()->toPlainText()));
    const auto run = view.currentRun();
    QVERIFY(run);
    // AdamW's step made its state at line 5: the view has the script's lines
    QVERIFY(run->peakEvent() >= 0);
    QVERIFY(!view.editor()->allocatedTextOf(5).isEmpty());
    QVERIFY(!view.editor()->allocatedTextOf(2).isEmpty());  // the parameters' .cuda()
  }

  void theCursorOnALineLightsUpItsAllocations() {
    ProgramView view;
    view.resize(1400, 900);
    view.show();
    QVERIFY(view.openScript(copyExample()));
    view.showReport(
        std::make_shared<const PythonReport>(readPythonReportFile(kFixture.toStdString())),
        "peak_lines.report.json");
    const int direct = lineOf(view.scriptPath(), "return torch.matmul(a, c[q])");
    view.editor()->setCursorPosition(direct - 1, 4);
    ProgramTimelineChart* chart = view.timeline();
    // QScintilla says the cursor moved when it next updates its window (SCN_UPDATEUI).
    QTRY_COMPARE(chart->highlightedLine(), direct);
    QVERIFY(chart->seriesNames().contains(QString("alive from line %1").arg(direct)));
    QCOMPARE(chart->pointCount(QString("allocations of line %1").arg(direct)),
             view.currentRun()->lines()[direct].allocations);
    QCOMPARE(view.flameBar()->selectedLine(), direct);
    QCOMPARE(view.peakTable()->currentIndex().data(PeakTableModel::ScriptLineRole).toInt(), direct);
    // A line that allocated nothing clears the highlight.
    view.editor()->setCursorPosition(0, 0);
    QTRY_COMPARE(chart->highlightedLine(), 0);
    QVERIFY(!chart->seriesNames().contains(QString("alive from line %1").arg(direct)));
    // A click on the flame bar's block of that line selects it everywhere.
    const QRect block = view.flameBar()->rectOfLine(direct);
    QVERIFY(!block.isEmpty());
    QTest::mouseClick(view.flameBar(), Qt::LeftButton, {}, block.center());
    QCOMPARE(view.editor()->highlightedLine(), direct);
    QCOMPARE(chart->highlightedLine(), direct);
    // An edit after the run says that the margin follows the run's lines.
    view.editor()->insertAt("# a note\n", 0, 0);
    QVERIFY2(view.statusText().contains("changed since its run"), qPrintable(view.statusText()));
  }

  void aFailingScriptShowsItsTracebackAndWhatRan() {
    if (!moduleBuilt())
      QSKIP("the Python module is not built (cmake --build ... matmulviz_python)");
    ProgramView view;
    view.show();
    const QString script = write("fails.py",
                                 "import matmulviz.torch as torch\n"
                                 "x = torch.zeros(1024, 1024, device='cuda')\n"
                                 "raise ValueError('stopped on purpose')\n");
    QVERIFY(view.openScript(script));
    QVERIFY(runAndWait(view));
    QVERIFY(view.outputPane()->toPlainText().contains("Traceback"));
    QVERIFY(view.outputPane()->toPlainText().contains("ValueError: stopped on purpose"));
    QVERIFY2(view.statusText().contains("failed"), qPrintable(view.statusText()));
    const auto run = view.currentRun();
    QVERIFY(run && !run->report().complete);
    QCOMPARE(run->peakBytes(), qint64(4) << 20);
    QCOMPARE(run->scriptLineOfEvent(run->peakEvent()), 2);
  }

  void cancelKillsTheRunAndTheViewStaysUsable() {
    if (!moduleBuilt())
      QSKIP("the Python module is not built (cmake --build ... matmulviz_python)");
    ProgramView view;
    view.show();
    QVERIFY(view.openScript(write("slow.py",
                                  "import time\nprint('started', flush=True)\n"
                                  "time.sleep(60)\n")));
    QSignalSpy ended(&view, &ProgramView::runEnded);
    view.run();
    QVERIFY(view.isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(view.outputPane()->toPlainText().contains("started"), 20000);
    QString error;
    QVERIFY(!view.openScript(write("other.py", "print(1)\n"), &error));  // not while running
    QVERIFY2(error.contains("a script is running"), qPrintable(error));
    QElapsedTimer clock;
    clock.start();
    view.cancel();
    QVERIFY(ended.wait(5000));
    QVERIFY(clock.elapsed() < 5000);
    QCOMPARE(ended.front().front().toBool(), false);
    QVERIFY(!view.isRunning());
    QVERIFY(view.statusText().startsWith("Cancelled"));
    QVERIFY(view.findChild<QPushButton*>("programRun")->isEnabled());
    QVERIFY(!view.findChild<QPushButton*>("programCancel")->isEnabled());
    // Usable: the next script runs.
    QVERIFY(view.openScript(write("quick.py", "print('again')\n")));
    QVERIFY(runAndWait(view));
    QVERIFY(view.outputPane()->toPlainText().contains("again"));
  }

  void ctrlRAndEscActOnTheProgramViewsScript() {
    if (!moduleBuilt())
      QSKIP("the Python module is not built (cmake --build ... matmulviz_python)");
    QTemporaryDir home;
    MainWindow w(home.filePath("history.json"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.showView(MainWindow::View::Program);
    ProgramView* view = w.programView();
    QVERIFY(view->openScript(write("wait.py",
                                   "import time\nprint('waiting', flush=True)\n"
                                   "time.sleep(60)\n")));
    QSignalSpy ended(view, &ProgramView::runEnded);
    // From the editor, where the user types: QScintilla must not take the keys.
    view->editor()->setFocus();
    QTRY_VERIFY(view->editor()->hasFocus());
    view->editor()->insertAt("# saved by Ctrl+S\n", 0, 0);
    QTest::keyClick(view->editor(), Qt::Key_S, Qt::ControlModifier);
    QVERIFY(!view->editor()->isModified());
    QFile saved(view->scriptPath());
    QVERIFY(saved.open(QIODevice::ReadOnly));
    QVERIFY(saved.readAll().startsWith("# saved by Ctrl+S\n"));
    QTest::keyClick(view->editor(), Qt::Key_R, Qt::ControlModifier);
    QVERIFY(view->isRunning());
    QVERIFY(!w.runController()->isRunning());  // the strategies did not start
    QTRY_VERIFY_WITH_TIMEOUT(view->outputPane()->toPlainText().contains("waiting"), 20000);
    QTest::keyClick(view->editor(), Qt::Key_Escape);
    QVERIFY(ended.wait(5000));
    QVERIFY(!view->isRunning());
  }

  void aPythonWithoutTheModuleSaysSo() {
    if (!QFileInfo::exists(ProgramRunner::python())) QSKIP("no /usr/bin/python3");
    qputenv("MATMULVIZ_PYTHONPATH", dir_.filePath("no-module-here").toUtf8());
    ProgramView view;
    QVERIFY(view.openScript(write("plain.py", "print('hello')\n")));
    QSignalSpy ended(&view, &ProgramView::runEnded);
    view.run();
    QVERIFY(ended.wait(60000));
    qunsetenv("MATMULVIZ_PYTHONPATH");
    QCOMPARE(ended.front().front().toBool(), false);
    QVERIFY(view.outputPane()->toPlainText().contains("No module named matmulviz"));
    QVERIFY2(view.statusText().contains("wrote no report"), qPrintable(view.statusText()));
    // What to do about it: scripts/run builds the app, not the module.
    QVERIFY2(view.statusText().contains("scripts/python"), qPrintable(view.statusText()));
    QVERIFY(!view.currentRun());
  }

  void aLargeTimelineIsDrawnPerPixelColumn() {
    // 400 000 events: 200 000 blocks of 1 KiB allocated by lines 3 and 5 in turn, then freed.
    const QString script = write("large.py",
                                 "import matmulviz.torch as torch\n\n"
                                 "x = torch.zeros(256, device='cuda')\n\n"
                                 "y = torch.zeros(256, device='cuda')\n");
    auto report = std::make_shared<PythonReport>();
    report->script = script.toStdString();
    report->ops = {"zeros"};
    report->frames = {{script.toStdString(), 3, "<module>", "x = ..."},
                      {script.toStdString(), 5, "<module>", "y = ..."}};
    const int blocks = 200000;
    int64_t allocated = 0;
    for (int i = 0; i < 2 * blocks; ++i) {
      const bool alloc = i < blocks;
      allocated += alloc ? 1024 : -1024;
      report->events.push_back({alloc ? MemoryEventKind::Alloc : MemoryEventKind::Free,
                                alloc ? i : i - blocks,
                                1024,
                                double(i),
                                {allocated, 0, 1 << 30},
                                0});
      if (alloc) report->allocations.push_back({i, "zeros", 0, 1024, 1024, true, i % 2, false});
    }
    report->peak = PythonPeak{int64_t(blocks) * 1024, size_t(blocks - 1), double(blocks - 1), {}};
    for (int i = 0; i < blocks; ++i) report->peak->live.push_back(i);
    ProgramView view;
    view.resize(1400, 900);
    view.show();
    QVERIFY(view.openScript(script));
    QElapsedTimer clock;
    clock.start();
    view.showReport(report, "large.json");
    view.timeline()->replotNow();
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString("%1 ms").arg(clock.elapsed())));
    ProgramTimelineChart* chart = view.timeline();
    QVERIFY(chart->pointCount("allocated") <= ProgramTimelineChart::maxPoints() + 1);
    QVERIFY(chart->pointCount("allocated") > ProgramTimelineChart::maxPoints() / 2);
    const QPoint at = chart->pixelOfEvent(blocks - 1);
    QCOMPARE(chart->eventAt(at), blocks - 1);  // the highest point near the click: the peak
    QTest::mouseClick(chart->plotArea(), Qt::LeftButton, {}, at);
    QCOMPARE(view.editor()->highlightedLine(), (blocks - 1) % 2 ? 5 : 3);
    QCOMPARE(view.editor()->peakTextOf(3), QString("97.7 MiB"));
    QCOMPARE(view.peakModel()->rowCount(), 2);
  }

  void fileOpenLandsInTheProgramView() {
    QTemporaryDir home;
    MainWindow w(home.filePath("history.json"));
    w.show();
    const QString script = copyExample();
    w.openFiles({script, kFixture});
    QVERIFY(w.fileLoader()->wait(20000));
    QCOMPARE(w.findChild<QTabWidget*>("views")->currentWidget(), w.programView());
    QCOMPARE(w.programView()->scriptPath(), QFileInfo(script).absoluteFilePath());
    QVERIFY(w.programView()->currentRun());  // the report of the same script, shown beside it
    QVERIFY(w.programView()->statusText().contains("peak_lines.report.json"));
  }

 private:
  /// The example in a folder of its own called examples/, as the fixture's frames name it.
  QString copyExample() {
    QDir(dir_.path()).mkpath("examples");
    const QString path = dir_.filePath("examples/peak_lines.py");
    QFile::remove(path);
    if (!QFile::copy(kExample, path)) return {};
    return path;
  }
  QString write(const QString& name, const QByteArray& text) {
    QFile f(dir_.filePath(name));
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) return {};
    return f.fileName();
  }
  bool runAndWait(ProgramView& view) {
    QSignalSpy ended(&view, &ProgramView::runEnded);
    view.run();
    if (!ended.wait(120000)) return false;
    return ended.front().front().toBool();
  }
  QTemporaryDir dir_;
};

QTEST_MAIN(TestProgramView)
#include "test_program_view.moc"
