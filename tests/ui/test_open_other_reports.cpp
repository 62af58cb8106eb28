// The reports that hold no timeline, opened in the app (core/report/other_reports.h): a
// multi-head report reruns its workload in the Multi-head view, an einsum report is summarised
// with the command that reruns it, a budget report whose script is not here says so; a damaged
// one is refused naming the key, and nothing already open is lost.
#include "ui/widgets/file_loader.h"
#include "ui/widgets/main_window.h"
#include "ui/widgets/multihead_view.h"

#include <QtTest/QtTest>

#include <QLabel>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kLoadMs = 60'000;

const QByteArray kMultihead = R"({"format": "matmulviz-report", "version": 1, "kind": "multihead",
  "workload": {"b": 3, "s": 8, "h": 16, "e": 4, "num_heads": 2, "head_dim": 8, "top_p": 0.5,
               "top_k": 4, "dtype": "float32", "backward": true, "seed": 0},
  "device": "cuda", "t": 5, "time_s": 0.25,
  "memory": {"max_mem_bytes": 4096, "reserved_peak_bytes": 2097152}})";

const QByteArray kEinsum = R"({"format": "matmulviz-report", "version": 1, "kind": "einsum",
  "equation": "ij,jk->ik", "dtype": "float32", "device": "cpu",
  "operand_shapes": [[2, 3], [3, 4]], "output_shape": [2, 4], "time_s": 0.00002,
  "memory": {"inputs_bytes": 1024, "cur_mem_bytes": 1536, "max_mem_bytes": 1536}})";

const QByteArray kBudget = R"({"format": "matmulviz-report", "version": 1, "kind": "budget",
  "script": "/nowhere/chain.py", "function": "f", "solver": "dp", "budgets": [0, 0.5, 1],
  "eager": {"activation_bytes": 10485764}, "rows": []})";

}  // namespace

class TestOpenOtherReports : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString write(const QString& name, const QByteArray& bytes) {
    QFile f(dir_.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes);
    return f.fileName();
  }
  bool open(MainWindow& w, const QString& path) {
    w.openFiles({path});
    return w.fileLoader()->wait(kLoadMs);
  }
  static QString status(MainWindow& w) { return w.findChild<QLabel*>("statusText")->text(); }
  static QString noteBoxText(MainWindow& w) {
    auto* box = w.findChild<QMessageBox*>("reportNoteBox");
    return box ? box->text() : QString();
  }

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("matmulviz-tests");
    QCoreApplication::setApplicationName("test_open_other_reports");
    QSettings().clear();
  }

  void multiheadReportRerunsItsWorkload() {
    MainWindow w(dir_.filePath("history.json"));
    QSignalSpy ran(w.multiheadView(), &MultiheadView::reportReady);
    QVERIFY(open(w, write("heads.json", kMultihead)));
    QCOMPARE(w.findChild<QTabWidget*>("views")->currentIndex(), int(MainWindow::View::Multihead));
    const MultiheadConfig c = w.multiheadView()->config();
    QCOMPARE(c.b, 3);
    QCOMPARE(c.numHeads, 2);
    QCOMPARE(c.topP, 0.5);
    QCOMPARE(c.topK.value_or(0), 4);
    QVERIFY(c.backward);
    QVERIFY(ran.wait(kLoadMs) || !ran.isEmpty());
    QVERIFY2(status(w).contains("heads.json: a multi-head run on cuda (250 ms, maxMem 4 KiB); "
                                "its workload runs again here"),
             qPrintable(status(w)));
  }

  void einsumReportIsSummarised() {
    MainWindow w(dir_.filePath("history.json"));
    QVERIFY(open(w, write("e.json", kEinsum)));
    const QString text = noteBoxText(w);
    QVERIFY2(text.contains("einsum('ij,jk->ik') of [2, 3], [3, 4] -> [2, 4], float32 on cpu") &&
                 text.contains("matmulviz-cli einsum 'ij,jk->ik' --shapes 2x3,3x4 --dtype float32"),
             qPrintable(text));
    QVERIFY(status(w).startsWith("Opened e.json: einsum("));
  }

  void budgetReportWithoutItsScriptSaysSo() {
    MainWindow w(dir_.filePath("history.json"));
    QVERIFY(open(w, write("b.json", kBudget)));
    QVERIFY2(noteBoxText(w).contains("a budget sweep of f in /nowhere/chain.py, which is not on "
                                     "this machine"),
             qPrintable(noteBoxText(w)));
    QCOMPARE(status(w), QStringLiteral("Opened b.json: a budget sweep; its script is not here"));
  }

  void damagedMultiheadReportIsRefused() {
    MainWindow w(dir_.filePath("history.json"));
    QByteArray bad = kMultihead;
    bad.replace("\"num_heads\": 2", "\"num_heads\": 3");
    QVERIFY(open(w, write("bad.json", bad)));
    auto* box = w.findChild<QMessageBox*>("openErrorBox");
    QVERIFY(box);
    QVERIFY2(box->text().contains("'bad.json': workload is not a workload multihead runs"),
             qPrintable(box->text()));
  }
};

QTEST_MAIN(TestOpenOtherReports)
#include "test_open_other_reports.moc"
