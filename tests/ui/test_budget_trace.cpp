// The Budget view on a traced function, offscreen: examples/budget_chain.py traced in a separate
// process plans exactly what `matmulviz-cli budget` reports for the same budgets (saved and
// recomputed values, planned activation bytes); an unsupported op (with its line), a function
// that is not differentiable and a script that raises each give a message and keep the graph
// shown; Cancel stops a trace; the repository's examples are in the graph box; a saved graph
// file opens as a BudgetGraph (File > Open).

#include "core/partitioner/graph_json.h"
#include "ui/models/budget_explorer.h"
#include "ui/models/open_file.h"
#include "ui/widgets/budget_tracer.h"
#include "ui/widgets/budget_view.h"

#include <QComboBox>
#include <QDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest/QtTest>

using namespace matmulviz;
using namespace matmulviz::ui;

namespace {

constexpr int kTraceMs = 120000;  // two cores shared with other builds

const QString kChain = QStringLiteral(MATMULVIZ_SOURCE_DIR "/examples/budget_chain.py");

QStringList names(const partitioner::JointGraph& g, const std::vector<partitioner::NodeId>& ids) {
  QStringList out;
  for (partitioner::NodeId i : ids) out << QString::fromStdString(g.node(i).name);
  return out;
}

QStringList strings(const QJsonValue& v) {
  QStringList out;
  for (const QJsonValue& s : v.toArray()) out << s.toString();
  return out;
}

/// Writes `text` as `name` into `dir` and returns its path.
QString writeScript(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  QFile f(dir.filePath(name));
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write(text);
  return f.fileName();
}

const QByteArray kPrelude =
    "import matmulviz.torch as torch\n"
    "x = torch.randn(8, 8, requires_grad=True)\n";

/// With MATMULVIZ_CHART_PNG_DIR set, saves `w` as <name>.png there (to look at).
void savePng(QWidget& w, const QString& name) {
  const QString dir = qEnvironmentVariable("MATMULVIZ_CHART_PNG_DIR");
  if (!dir.isEmpty()) QVERIFY(w.grab().save(dir + "/" + name + ".png"));
}

/// Traces `function` of `script` in `view`; the message of the failure, or "" when it traced.
QString traceAndWait(BudgetView& view, const QString& script, const QString& function = "f") {
  QSignalSpy done(view.tracer(), &BudgetTracer::finished);
  QSignalSpy failed(view.tracer(), &BudgetTracer::failed);
  view.traceFunction(script, function);
  if (!QTest::qWaitFor([&] { return done.count() + failed.count() > 0; }, kTraceMs))
    return QStringLiteral("timed out");
  return failed.isEmpty() ? QString() : failed.front().front().toString();
}

}  // namespace

class TestBudgetTrace : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
#ifndef MATMULVIZ_HAVE_PYTHON
    QSKIP("this build has no Python module (the sanitizer build): nothing can trace a script");
#endif
  }
  void tracedChainPlansAsTheCliReports() {
    BudgetView view;
    QCOMPARE(traceAndWait(view, kChain), QString());
    QCOMPARE(view.explorer()->title(), QStringLiteral("budget_chain.py: f"));
    QCOMPARE(view.findChild<QComboBox*>("budgetExample")->currentText(), view.explorer()->title());
    QTemporaryDir dir;
    const QString json = dir.filePath("budget.json");
    QProcess cli;
    cli.start(QStringLiteral(MATMULVIZ_CLI_PATH), {"budget", kChain, "--function", "f", "--budgets",
                                                   "0,0.1,0.3,0.5,0.8,1", "--json", json});
    QVERIFY(cli.waitForFinished(kTraceMs));
    QCOMPARE(cli.exitCode(), 0);
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray rows = QJsonDocument::fromJson(f.readAll()).object()["rows"].toArray();
    QCOMPARE(rows.size(), 6);
    const partitioner::JointGraph& g = *view.explorer()->graph();
    for (const QJsonValue& v : rows) {
      const QJsonObject row = v.toObject();
      view.setBudget(row["budget"].toDouble());
      const partitioner::BudgetPlan& plan = view.explorer()->plan();
      QCOMPARE(names(g, plan.saved), strings(row["saved"]));
      QCOMPARE(names(g, plan.recomputed), strings(row["recomputed"]));
      QCOMPARE(plan.activationBytes, qint64(row["planned_activation_bytes"].toDouble()));
      QCOMPARE(QString(partitioner::planRouteName(plan.route).data()), row["route"].toString());
    }
  }

  void failuresKeepTheGraph_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unsupported op")
        << QByteArray("def f():\n    return torch.topk(x, 1)[0].sum()\n")
        << QStringLiteral("bad.py:4");
    QTest::newRow("not differentiable")
        << QByteArray("def f():\n    return (x.detach() * 2).sum()\n")
        << QStringLiteral("not differentiable");
    QTest::newRow("script raises") << QByteArray("raise ValueError('broken on purpose')\n")
                                   << QStringLiteral("ValueError: broken on purpose");
    QTest::newRow("no such function")
        << QByteArray("def g():\n    return x.sum()\n") << QStringLiteral("no function 'f'");
  }
  void failuresKeepTheGraph() {
    QFETCH(QByteArray, body);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    BudgetView view;
    const QString before = view.explorer()->title();
    const QString message = traceAndWait(view, writeScript(dir, "bad.py", kPrelude + body));
    QVERIFY2(message.contains(expected), qPrintable(message));
    QCOMPARE(view.explorer()->title(), before);
    QCOMPARE(view.findChild<QComboBox*>("budgetExample")->currentText(), before);
    auto* box = view.findChild<QMessageBox*>("budgetTraceError");
    QVERIFY(box);
    QCOMPARE(box->text(), QStringLiteral("Cannot trace f of bad.py; the graph shown stays."));
    QCOMPARE(box->informativeText(), message);
    QVERIFY(!message.contains("<frozen"));
    box->adjustSize();
    savePng(*box, QStringLiteral("budget-trace-error-") + QTest::currentDataTag());
  }

  void cancelStopsTheTrace() {
    QTemporaryDir dir;
    const QString script = writeScript(dir, "slow.py", kPrelude + "import time\ntime.sleep(60)\n");
    BudgetView view;
    const QString before = view.explorer()->title();
    QSignalSpy cancelled(view.tracer(), &BudgetTracer::cancelled);
    view.resize(1250, 860);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.traceFunction(script, "f");
    QVERIFY(view.tracer()->isRunning());
    QVERIFY(view.findChild<QWidget*>("budgetTraceRow")->isVisible());
    QTest::qWait(200);
    savePng(view, "budget-tracing");
    QElapsedTimer t;
    t.start();
    view.tracer()->cancel();
    QCOMPARE(cancelled.count(), 1);
    QVERIFY(!view.tracer()->isRunning());
    QVERIFY(t.elapsed() < 5000);
    QCOMPARE(view.explorer()->title(), before);
    QVERIFY(!view.findChild<QWidget*>("budgetTraceRow")->isVisible());
  }

  void traceButtonAsksForScriptAndFunction() {
    QTemporaryDir settings;
    QCoreApplication::setOrganizationName("matmulviz-test-trace");
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings.path());
    BudgetView view;
    view.resize(1250, 860);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    bool asked = false;
    QTimer::singleShot(100, [&] {
      auto* dialog = view.findChild<QDialog*>("budgetTraceDialog");
      QVERIFY(dialog);
      asked = true;
      const auto edits = dialog->findChildren<QLineEdit*>();
      QCOMPARE(edits.size(), 2);
      // The first example in the folder's order (budget_attention.py, budget_branches.py, ...).
      QVERIFY(edits[0]->text().contains("examples/budget_") && edits[0]->text().endsWith(".py"));
      QCOMPARE(edits[1]->text(), QStringLiteral("f"));
      savePng(*dialog, "budget-trace-dialog");
      edits[0]->setText(kChain);
      dialog->accept();
    });
    QSignalSpy done(view.tracer(), &BudgetTracer::finished);
    QTest::mouseClick(view.findChild<QPushButton*>("budgetTrace"), Qt::LeftButton);
    QVERIFY(asked);
    QVERIFY(done.wait(kTraceMs));
    QCOMPARE(view.explorer()->title(), QStringLiteral("budget_chain.py: f"));
    QCOMPARE(QSettings().value("budget/traceScript").toString(), kChain);
  }

  void examplesAreInTheGraphBox() {
    BudgetView view;
    auto* box = view.findChild<QComboBox*>("budgetExample");
    QVERIFY(box->findText("budget_chain.py: f") >= 0);
    QVERIFY(box->findText("budget_branches.py: f") >= 0);
    QVERIFY(box->itemData(box->findText("budget_chain.py: f"))
                .toString()
                .endsWith("examples/budget_chain.py"));
  }

  void savedGraphOpensAsBudgetGraph() {
    BudgetView view;
    QCOMPARE(traceAndWait(view, kChain), QString());
    QTemporaryDir dir;
    const QString path = dir.filePath("chain-graph.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(
        partitioner::graphToJson(*view.explorer()->graph(), {"chain", kChain.toStdString(), "f"})
            .dump(1)));
    f.close();
    const OpenedFile opened = loadFile(path);
    QCOMPARE(opened.kind, FileKind::BudgetGraph);
    QCOMPARE(opened.budgetTitle, QStringLiteral("chain"));
    QCOMPARE(opened.budgetGraph->size(), view.explorer()->graph()->size());
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(R"({"format": "matmulviz-report", "version": 1, "kind": "budget-graph"})");
    f.close();
    try {
      loadFile(path);
      QFAIL("a graph file without nodes was opened");
    } catch (const std::exception& e) {
      QVERIFY2(QString(e.what()).contains("'chain-graph.json': title is missing"), e.what());
    }
  }
};

QTEST_MAIN(TestBudgetTrace)
#include "test_budget_trace.moc"
