// The largest-batch search's results file (core/report/search_results.h), as
// python/matmulviz/simulate/_search.py writes it: read whole, and refused with the key that is
// wrong.
#include "core/report/json_reader.h"
#include "core/report/search_results.h"

#include <QtTest>

using namespace matmulviz;

namespace {

const char* kResults = R"({"search": {"argument": "--batch", "range": [1, 64],
  "capacity_bytes": 25165824, "largest": 24, "seconds": 9.1, "error": null, "trials": [
  {"value": 16, "fits": true, "peak_allocated": 16777216, "peak_reserved": 16777216,
   "where": null, "seconds": 2.1, "error": null},
  {"value": 32, "fits": false, "peak_allocated": 25165824, "peak_reserved": 25165824,
   "where": "train.py:4", "seconds": 2.3, "error": null}]}})";

QString refusal(const std::string& text) {
  try {
    readSearchResults(text, "s.json");
  } catch (const ReportLoadError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestSearchResults : public QObject {
  Q_OBJECT
 private slots:
  void readsEveryField() {
    const SearchResults r = readSearchResults(kResults, "s.json");
    QCOMPARE(QString::fromStdString(r.argument), QString("--batch"));
    QCOMPARE(r.lo, int64_t(1));
    QCOMPARE(r.hi, int64_t(64));
    QCOMPARE(r.capacityBytes.value_or(0), int64_t(24) << 20);
    QCOMPARE(r.largest.value_or(0), int64_t(24));
    QCOMPARE(r.trials.size(), size_t(2));
    QVERIFY(r.trials[0].fits && !r.trials[1].fits);
    QCOMPARE(QString::fromStdString(r.trials[1].where), QString("train.py:4"));
    QVERIFY(r.trials[0].where.empty());
  }

  void refusesWhatIsWrong_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("says");
    QTest::newRow("not JSON") << "{\"search\""
                              << "{"
                              << "not valid JSON";
    QTest::newRow("a number beyond double") << "25165824"
                                            << "251e300165824"
                                            << "not valid JSON";
    QTest::newRow("no argument") << "\"argument\": \"--batch\", "
                                 << ""
                                 << "search.argument";
    QTest::newRow("answer out of range") << "\"largest\": 24"
                                         << "\"largest\": 99"
                                         << "search.largest";
    QTest::newRow("trials out of order") << "\"value\": 32"
                                         << "\"value\": 8"
                                         << "search.trials[1].value";
    QTest::newRow("negative peak") << "\"peak_reserved\": 16777216"
                                   << "\"peak_reserved\": -1"
                                   << "search.trials[0].peak_reserved";
  }
  void refusesWhatIsWrong() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, says);
    QString text = QString::fromUtf8(kResults);
    QVERIFY(text.contains(from));
    text.replace(text.indexOf(from), from.size(), to);
    const QString why = refusal(text.toStdString());
    QVERIFY2(why.startsWith("'s.json': ") && why.contains(says), qPrintable(why));
  }
};

QTEST_GUILESS_MAIN(TestSearchResults)
#include "test_search_results.moc"
