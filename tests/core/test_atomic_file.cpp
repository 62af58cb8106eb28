// replaceFileAtomically: the target is replaced whole or left as it was; the temporary never
// stays behind, whether the writer succeeds, reports a failure, or throws half-way.
#include "core/util/atomic_file.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>
#include <sstream>
#include <stdexcept>

using namespace matmulviz;

namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

class TestAtomicFile : public QObject {
  Q_OBJECT

 private slots:
  void replacedWholeOrNotAtAll_data() {
    QTest::addColumn<QString>("outcome");  // "ok", "false", "throw"
    QTest::addColumn<QString>("expected");
    QTest::newRow("written") << "ok"
                             << "new content";
    QTest::newRow("writer reports failure") << "false"
                                            << "old content";
    QTest::newRow("writer throws half-way") << "throw"
                                            << "old content";
  }
  void replacedWholeOrNotAtAll() {
    QFETCH(QString, outcome);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const std::string path = dir.filePath("chart.png").toStdString();
    writeText(path, "old content");
    auto writer = [&](const std::string& tmp) {
      if (tmp == path) throw std::runtime_error("the temporary is the target itself");
      writeText(tmp, outcome == "ok" ? "new content" : "new");
      if (outcome == "throw") throw std::logic_error("half-way");
      return outcome == "ok";
    };
    try {
      replaceFileAtomically(path, writer);
      QCOMPARE(outcome, QString("ok"));
    } catch (const std::runtime_error& e) {
      QCOMPARE(outcome, QString("false"));
      QVERIFY2(std::string(e.what()).find(path) != std::string::npos, e.what());
    } catch (const std::logic_error&) {
      QCOMPARE(outcome, QString("throw"));
    }
    QCOMPARE(QString::fromStdString(readAll(path)), expected);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"chart.png"});
  }

  void newFileInAMissingFolderFails() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("missing/chart.png").toStdString();
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             replaceFileAtomically(path, [](const std::string& tmp) {
                               return static_cast<bool>(std::ofstream(tmp) << "x");
                             }));
    QVERIFY(!QFileInfo::exists(dir.filePath("missing")));
  }
};

QTEST_GUILESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
