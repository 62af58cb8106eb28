// The desktop app's command line, end to end: `matmulviz --help` and `--version` print and exit
// 0 with no display (DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM removed), where Qt's default
// platform would abort; a window with no display exits 1 saying what to do instead of aborting.

#include "tests/common/cli_process.h"

#include <QtTest/QtTest>

namespace {

using matmulviz::testing::CliResult;

CliResult runGui(const QStringList& args) {
  return matmulviz::testing::runCliProcess(QStringLiteral(MATMULVIZ_GUI_PATH), args,
                                           {30'000, {}, true});
}

}  // namespace

class TestGuiCommandLine : public QObject {
  Q_OBJECT
 private slots:
  void printsWithoutADisplay_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("--help") << QStringList{"--help"} << "--present";
    QTest::newRow("-h") << QStringList{"-h"} << "--preset";
    QTest::newRow("--help lists every view") << QStringList{"--help"} << "multihead";
    QTest::newRow("--help names the files it opens") << QStringList{"--help"} << "[FILE...]";
    QTest::newRow("--help lists the Budget view") << QStringList{"--help"} << "multihead, budget";
    QTest::newRow("--version") << QStringList{"--version"} << "matmulviz 0.1.0";
    QTest::newRow("--version after another option")
        << QStringList{"--preset", "small", "--version"} << "0.1.0";
  }

  void printsWithoutADisplay() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    const CliResult r = runGui(args);
    QVERIFY2(r.ok(), qPrintable(r.describe()));  // no SIGABRT
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(QString::fromUtf8(r.out).contains(expected), r.out.constData());
  }

  void windowWithoutADisplaySaysWhy() {
    const CliResult r = runGui({"--preset", "small"});
    QVERIFY2(r.ok(), qPrintable(r.describe()));
    QCOMPARE(r.exitCode, 1);
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains("no display") && err.contains("matmulviz-cli export"), qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TestGuiCommandLine)
#include "test_gui_command_line.moc"
