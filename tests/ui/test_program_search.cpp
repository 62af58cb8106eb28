// The Program view's simulation of a PyTorch script, offscreen: the interpreter, GPU, capacity
// and arguments chosen in the view make matmulviz.simulate's command line; the largest-batch
// search runs through this build's Python module (two trials at a time) and its trials fill the
// "Largest batch" chart, whose title says the answer; a plain Run then takes that answer where
// the arguments hold {}. The chart is checked on results made here too, without Python.
#include "ui/charts/search_chart.h"
#include "ui/widgets/program_runner.h"
#include "ui/widgets/program_view.h"

#include <QDir>
#include <QFile>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int64_t MiB = 1024 * 1024;

bool moduleBuilt() {
  const QString package = ProgramRunner::packagePath();
  return !package.isEmpty() && QFileInfo::exists(ProgramRunner::python()) &&
         !QDir(package + "/matmulviz").entryList({"_C*.so"}).isEmpty();
}

// n blocks of 1 MiB (small-pool blocks, two to a 2 MiB segment): n MiB reserved for even n.
const char* kBlocks =
    "import sys\n"
    "import torch\n"
    "n = int(sys.argv[1].split('=')[1])\n"
    "xs = [torch.empty(2**18, device='cuda') for _ in range(n)]\n"
    "print(n, torch.cuda.max_memory_reserved())\n";

}  // namespace

class TestProgramSearch : public QObject {
  Q_OBJECT
 private slots:
  void theSettingsMakeTheCommandLine() {
    const QString script = write("train.py", kBlocks);
    ProgramRunner runner;
    SimulationSettings s;
    s.python = QStringLiteral("/opt/env/bin/python");
    s.gpu = QStringLiteral("a100-40gb");
    s.capacity = QStringLiteral("24GiB");
    s.arguments = QStringLiteral("--n=3 --name \"two words\"");
    runner.setSimulation(s);
    QString program;
    const QStringList args = runner.commandLine(script, "r.json", &program);
    QCOMPARE(program, s.python);
    QCOMPARE(args, (QStringList{"-m", "matmulviz.simulate", QFileInfo(script).absoluteFilePath(),
                                "--n=3", "--name", "two words", "--gpu", "a100-40gb", "--capacity",
                                "24GiB", "--report", "r.json"}));
    // matmulviz.torch's own scripts keep Debian's python3 and python3 -m matmulviz
    const QString own = write("own.py", "import matmulviz.torch as torch\n");
    QCOMPARE(runner.commandLine(own, "r.json", &program).mid(0, 2),
             (QStringList{"-m", "matmulviz"}));
    QCOMPARE(program, ProgramRunner::python());
    QCOMPARE(ProgramRunner::pythonChoices().front().path, ProgramRunner::python());
    QCOMPARE(ProgramRunner::simulatedGpus().front(), QString("h200"));
  }

  void theChartDrawsEachTrial() {
    auto results = std::make_shared<SearchResults>();
    results->argument = "--n";
    results->lo = 1;
    results->hi = 64;
    results->capacityBytes = 24 * MiB;
    results->largest = 24;
    for (const auto& [value, fits] :
         std::vector<std::pair<int64_t, bool>>{{1, true}, {16, true}, {24, true}, {32, false}}) {
      SearchTrial t;
      t.value = value;
      t.fits = fits;
      t.peakAllocatedBytes = value * MiB;
      t.peakReservedBytes = (value + value % 2) * MiB;
      if (!fits) t.where = "train.py:4";
      results->trials.push_back(t);
    }
    SearchChart chart;
    chart.resize(900, 500);
    chart.setResults(results, "24GiB");
    QCOMPARE(chart.title(), QString("Largest --n that fits on 24GiB: 24"));
    QCOMPARE(chart.pointCount("fits: peak reserved"), 3);
    QCOMPARE(chart.pointCount("out of memory: reserved when it failed"), 1);
    QCOMPARE(chart.pointCount("peak allocated"), 4);
    QVERIFY2(chart.texts().contains("capacity 24 MiB"), qPrintable(chart.texts().join('|')));
    QVERIFY(chart.texts().contains("largest: 24"));
    QCOMPARE(chart.csv().count('\n'), 5);
    QVERIFY(chart.csv().contains("32,false,33554432,33554432,train.py:4"));
    chart.setResults(nullptr, {});
    QVERIFY(!chart.placeholderText().isEmpty());
  }

  void theSearchFillsTheChartAndARunTakesItsAnswer() {
    if (!moduleBuilt()) QSKIP("the Python module is not built");
    if (QProcess::execute(ProgramRunner::python(), {"-c", "import torch"}) != 0)
      QSKIP("no PyTorch for /usr/bin/python3");
    const QString script = write("blocks.py", kBlocks);
    ProgramView view;
    view.resize(1400, 900);
    view.show();
    QVERIFY(view.openScript(script));
    SimulationSettings s;
    s.capacity = QStringLiteral("24MiB");
    s.arguments = QStringLiteral("--n={}");
    view.setSimulationSettings(s);
    view.searchLargestBatch(QStringLiteral("16:32"));
    QTRY_VERIFY_WITH_TIMEOUT(view.searchChart()->results() != nullptr, 180000);
    const SearchResults* r = view.searchChart()->results();
    QVERIFY(r->largest.has_value());
    QCOMPARE(*r->largest, int64_t(24));  // 24 blocks of 1 MiB fill 24 MiB; 25 need a 13th segment
    QCOMPARE(r->capacityBytes.value_or(0), 24 * MiB);
    QCOMPARE(view.chartTabs()->currentWidget(), view.searchChart());
    QVERIFY2(view.statusText().startsWith("Largest --n that fits on 24MiB: 24"),
             qPrintable(view.statusText()));
    // A plain Run puts the answer where the arguments hold {}.
    QSignalSpy ran(&view, &ProgramView::runEnded);
    view.run();
    QVERIFY(ran.wait(120000));
    QVERIFY2(ran.front().front().toBool(), qPrintable(view.outputPane()->toPlainText()));
    QVERIFY2(view.outputPane()->toPlainText().startsWith("24 " + QString::number(24 * MiB)),
             qPrintable(view.outputPane()->toPlainText()));
  }

 private:
  QString write(const QString& name, const QString& text) {
    const QString path = dir_.filePath(name);
    QFile f(path);
    if (f.open(QIODevice::WriteOnly)) f.write(text.toUtf8());
    return path;
  }
  QTemporaryDir dir_;
};

QTEST_MAIN(TestProgramSearch)
#include "test_program_search.moc"
