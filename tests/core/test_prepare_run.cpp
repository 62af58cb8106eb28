// prepareRun / preflight (core/strategies/prepare_run.h): the one preparation path every front
// end calls. Bad configurations are refused as BadInput naming the field, before anything is
// allocated, in words that name no command-line flag; a workload beyond this machine's RAM is
// refused with what does not fit, on cpu and on meta.

#include "core/memory/host_backing.h"
#include "core/strategies/prepare_run.h"
#include "core/util/format_units.h"

#include <QtTest/QtTest>

using namespace matmulviz;

namespace {

/// A small valid configuration: prepareRun makes its inputs in milliseconds.
RunConfig small() {
  RunConfig c;
  c.workload = {97, 13, 2, 6, 7, 10, DType::Float32};
  c.repeats = 1;
  return c;
}

}  // namespace

class TestPrepareRun : public QObject {
  Q_OBJECT
 private slots:
  void refusesNamingTheField_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("words");
    QTest::newRow("n 0") << "n=0"
                         << "n"
                         << "at least 1";
    QTest::newRow("k -3") << "k=-3"
                          << "k"
                          << "-3";
    QTest::newRow("batch 0") << "batch=0"
                             << "batch"
                             << "at least 1";
    QTest::newRow("product too large") << "huge-product"
                                       << "sizes"
                                       << "too many elements";
    QTest::newRow("repeats 0") << "repeats=0"
                               << "repeats"
                               << "at least 1";
    QTest::newRow("no strategy") << "strategies="
                                 << "strategies"
                                 << "at least one";
    QTest::newRow("unknown strategy") << "strategies=bogus"
                                      << "strategies"
                                      << "bogus";
    QTest::newRow("float64") << "dtype=float64"
                             << "dtype"
                             << "float16";
    QTest::newRow("float16 on cuda") << "cuda-float16"
                                     << "dtype"
                                     << "float32 only";
    QTest::newRow("device memory 0") << "device-memory=0"
                                     << "device memory"
                                     << "more than 0";
    QTest::newRow("inputs beyond RAM on cpu") << "ram-cpu"
                                              << "host memory"
                                              << "meta device";
    QTest::newRow("q beyond RAM on meta") << "ram-meta"
                                          << "host memory"
                                          << "host index q";
  }

  void refusesNamingTheField() {
    QFETCH(QString, change);
    QFETCH(QString, field);
    QFETCH(QString, words);
    RunConfig c = small();
    Workload& w = c.workload;
    const int64_t beyondRam = availableHostMemoryBytes() / 8 + 1;  // 8 bytes a row of q
    if (change == "n=0") w.n = 0;
    if (change == "k=-3") w.k = -3;
    if (change == "batch=0") w.batch = 0;
    if (change == "huge-product") w.n = w.j = w.i = int64_t{1} << 30;
    if (change == "repeats=0") c.repeats = 0;
    if (change == "strategies=") c.strategies.clear();
    if (change == "strategies=bogus") c.strategies = {"direct", "bogus"};
    if (change == "dtype=float64") w.dtype = DType::Float64;
    if (change == "cuda-float16") w.dtype = DType::Float16, c.device = DeviceKind::Cuda;
    if (change == "device-memory=0") c.deviceMemoryBytes = 0;
    if (change == "ram-cpu") w.n = 999'999'999;  // a [N, 2, 6] float32 alone: 44.7 GiB
    if (change == "ram-meta") w.n = beyondRam, c.device = DeviceKind::Meta;
    try {
      (void)prepareRun(c);
      QFAIL("not refused");
    } catch (const BadInput& e) {
      QCOMPARE(QString::fromStdString(e.field()), field);
      const QString what = QString::fromUtf8(e.what());
      QVERIFY2(what.startsWith(field + ": "), qPrintable(what));
      QVERIFY2(QString::fromStdString(e.reason()).contains(words), qPrintable(what));
      QVERIFY2(!what.contains("--"), qPrintable("a flag in core's words: " + what));
    }
  }

  void hostMemorySaysHowMuch() {
    RunConfig c = small();
    c.workload.n = 999'999'999;
    c.workload.j = 64;
    try {
      preflight(c);
      QFAIL("not refused");
    } catch (const BadInput& e) {
      const QString reason = QString::fromStdString(e.reason());
      QVERIFY2(reason.contains("GiB") && reason.contains("available") && reason.contains("85%"),
               qPrintable(reason));
      QCOMPARE(QString::fromStdString(e.value()),
               QString::fromStdString(formatSize(hostInputBytes(c))));
    }
  }

  void preparesASmallRun_data() {
    QTest::addColumn<QString>("device");
    QTest::newRow("cpu") << "cpu";
    QTest::newRow("meta") << "meta";
  }

  void preparesASmallRun() {
    QFETCH(QString, device);
    RunConfig c = small();
    c.device = parseDeviceKind(device.toStdString());
    c.seed = 5;
    const PreparedRun run = prepareRun(c);
    const bool meta = c.device == DeviceKind::Meta;
    QCOMPARE(run.inputs.a.defined(), !meta);
    QCOMPARE(run.inputs.c.defined(), !meta);
    QCOMPARE(run.inputs.q.sizes(), (Shape{97}));
    const Inputs same = makeRandomInputs(c.workload, 5, !meta);  // seeded: the same q
    QCOMPARE(run.inputs.q.toDoubles(), same.q.toDoubles());
    QCOMPARE(run.config.workload.n, int64_t(97));
  }

  void hostBytesFollowTheDevice() {
    RunConfig c = small();
    c.strategies = {"direct"};
    const Workload& w = c.workload;
    QCOMPARE(hostInputBytes(c), w.aBytes() + w.cBytes() + 8 * w.n + 8 * w.n * w.i * w.k);
    c.device = DeviceKind::Meta;
    QCOMPARE(hostInputBytes(c), 8 * w.n);
    c.strategies = {"strategy2"};
    QCOMPARE(hostInputBytes(c), 8 * w.n + 2560 * w.n);
  }
};

QTEST_GUILESS_MAIN(TestPrepareRun)
#include "test_prepare_run.moc"
