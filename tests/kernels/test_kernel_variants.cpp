// Every kernel variant on the simulated launcher against BLAS (float64), at sizes that are not
// multiples of the tile, with the launcher's exact counters; the faulty teaching kernels report
// the diagnostic they exist to show, and only that one.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "kernels/launch_report.h"
#include "kernels/registry.h"

using namespace matmulviz;

namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

class TestKernelVariants : public QObject {
  Q_OBJECT
 private slots:
  void registry() {
    QCOMPARE(QString::fromStdString(kernels::kernelNames()),
             QString("naive|coalesced|smem_tiled|gather_bmm|grouped_bmm"));
    const kernels::KernelVariant* blas = kernels::findKernel("blas");
    QVERIFY(blas != nullptr);
    QVERIFY(blas->reference);
    QVERIFY(kernels::findKernel("tiled") == nullptr);
    for (const kernels::KernelVariant& v : kernels::kernelVariants()) {
      QVERIFY(!v.file.empty());
      QVERIFY(!v.summary.empty());
      if (v.faulty) {  // simulated only, plain A @ B
        QVERIFY(!v.reference && !v.gathered);
        QVERIFY(v.config != nullptr && v.simulate != nullptr);
      }
    }
    QCOMPARE(QString::fromStdString(kernels::faultyKernelNames()),
             QString("smem_tiled_no_sync|naive_no_bounds_check|smem_tiled_divergent_barrier"));
    QCOMPARE(QString::fromStdString(kernels::kernelNames(true, true)),
             QString("blas|naive|coalesced|smem_tiled|gather_bmm|grouped_bmm|smem_tiled_no_sync|"
                     "naive_no_bounds_check|smem_tiled_divergent_barrier"));
    QVERIFY(kernels::findKernel("naive_no_bounds_check")->faulty);
    QVERIFY(!kernels::findKernel("naive")->faulty);
  }

  void faultyKernels_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<qlonglong>("M");
    QTest::addColumn<qlonglong>("K");
    QTest::addColumn<qlonglong>("N");
    QTest::addColumn<int>("tpb");
    for (const char* k :
         {"smem_tiled_no_sync", "naive_no_bounds_check", "smem_tiled_divergent_barrier"}) {
      const QString name(k);
      QTest::addRow("%s lesson 5x784x10 tpb16", k) << name << 5ll << 784ll << 10ll << 16;
      QTest::addRow("%s 17x33x19 tpb8", k) << name << 17ll << 33ll << 19ll << 8;
      QTest::addRow("%s 40x37x33 tpb8", k) << name << 40ll << 37ll << 33ll << 8;
      QTest::addRow("%s 7x5x9 tpb3", k) << name << 7ll << 5ll << 9ll << 3;
      QTest::addRow("%s exact fit 16x20x24 tpb8", k) << name << 16ll << 20ll << 24ll << 8;
    }
  }
  void faultyKernels() {
    QFETCH(QString, kernel);
    QFETCH(qlonglong, M);
    QFETCH(qlonglong, K);
    QFETCH(qlonglong, N);
    QFETCH(int, tpb);
    const kernels::KernelVariant* v = kernels::findKernel(kernel.toStdString());
    QVERIFY(v != nullptr && v->faulty);
    const kernels::MatmulProblem p{M, K, N, 1, 1};
    sim::LaunchOptions options;
    options.maxDiagnostics = 4;
    const kernels::SimulatedRun run = kernels::runSimulated(*v, p, tpb, 42, options);
    const sim::LaunchReport& r = run.report;
    const sim::DiagnosticCounts& c = r.diagnosticCounts;
    // the plane of threads: whole TPB x TPB blocks over C
    const std::int64_t rows = ceilDiv(M, tpb) * tpb, cols = ceilDiv(N, tpb) * tpb;
    const bool exactFit = rows == M && cols == N;
    if (kernel == "smem_tiled_no_sync") {
      // every launch with more than one tile of K (and TPB > 1) overwrites tiles still read
      QVERIFY(c.sharedRaces > 0);
      QCOMPARE(c.outOfBounds, 0ull);
      QCOMPARE(c.barrierDivergence, 0ull);
      QCOMPARE(r.diagnostics.front().kind, sim::DiagnosticKind::SharedRace);
      QVERIFY2(run.maxRelErr > 1e-3, qPrintable(QString::number(run.maxRelErr)));   // C is wrong
      QCOMPARE(r.stats.barriers, std::uint64_t(r.stats.blocks * ceilDiv(K, tpb)));  // one a tile
    } else if (kernel == "naive_no_bounds_check") {
      // a thread with i >= M reads K elements outside A, one with j >= N K outside B, and each
      // thread outside C stores outside it once
      const std::uint64_t expected =
          std::uint64_t((rows - M) * cols * K + (cols - N) * rows * K + (rows * cols - M * N));
      QCOMPARE(c.outOfBounds, expected);
      QCOMPARE(c.sharedRaces, 0ull);
      QCOMPARE(c.barrierDivergence, 0ull);
      QVERIFY2(run.maxRelErr < 1e-5, qPrintable(QString::number(run.maxRelErr)));  // dropped
      QCOMPARE(r.stats.globalStores, std::uint64_t(M * N));  // bad writes are not counted
      if (!exactFit) QCOMPARE(r.diagnostics.front().kind, sim::DiagnosticKind::OutOfBounds);
    } else {
      // every block straddling an edge of C diverges at both barriers of each tile of K
      const std::int64_t edgeBlocks = ceilDiv(M, tpb) * ceilDiv(N, tpb) - (M / tpb) * (N / tpb);
      QCOMPARE(c.barrierDivergence, std::uint64_t(edgeBlocks * 2 * ceilDiv(K, tpb)));
      QCOMPARE(c.outOfBounds, 0ull);
      QCOMPARE(c.sharedRaces, 0ull);
      if (!exactFit) {
        const sim::Diagnostic& d = r.diagnostics.front();
        QCOMPARE(d.kind, sim::DiagnosticKind::BarrierDivergence);
        QVERIFY2(QString::fromStdString(d.message).contains("07_smem_tiled_divergent_barrier.h:"),
                 d.message.c_str());
      }
    }
    if (exactFit && kernel != "smem_tiled_no_sync") {  // no thread outside C: nothing goes wrong
      QCOMPARE(c.total(), 0ull);
      QVERIFY(run.maxRelErr < 1e-5);
    }
    QVERIFY(r.diagnostics.size() <= 4);
    for (const sim::Diagnostic& d : r.diagnostics)
      QCOMPARE(QString::fromStdString(d.kernel), kernel);
  }

  void againstBlas_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<qlonglong>("M");
    QTest::addColumn<qlonglong>("K");
    QTest::addColumn<qlonglong>("N");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<qlonglong>("batch");
    QTest::addColumn<qlonglong>("table");
    for (const char* k : {"naive", "coalesced", "smem_tiled"}) {
      const QString name(k);
      QTest::addRow("%s lesson 5x784x10 tpb16", k)
          << name << 5ll << 784ll << 10ll << 16 << 1ll << 1ll;
      QTest::addRow("%s 17x33x19 tpb8", k) << name << 17ll << 33ll << 19ll << 8 << 1ll << 1ll;
      QTest::addRow("%s 31x47x29 tpb16", k) << name << 31ll << 47ll << 29ll << 16 << 1ll << 1ll;
      QTest::addRow("%s 33x65x3 tpb32", k) << name << 33ll << 65ll << 3ll << 32 << 1ll << 1ll;
      QTest::addRow("%s 1x1x1 tpb1", k) << name << 1ll << 1ll << 1ll << 1 << 1ll << 1ll;
      QTest::addRow("%s 7x5x9 tpb3", k) << name << 7ll << 5ll << 9ll << 3 << 1ll << 1ll;
    }
    // gather_bmm: out[b] = a[b] @ c[q[b]]; a [batch, M, K], c [table, K, N]
    QTest::addRow("gather_bmm seed-like I=1 9x1x64x64 table 5 tpb16")
        << "gather_bmm" << 1ll << 64ll << 64ll << 16 << 9ll << 5ll;
    QTest::addRow("gather_bmm 5x3x37x21 table 4 tpb8")
        << "gather_bmm" << 3ll << 37ll << 21ll << 8 << 5ll << 4ll;
    QTest::addRow("gather_bmm 2x7x5x9 table 1 tpb4")
        << "gather_bmm" << 7ll << 5ll << 9ll << 4 << 2ll << 1ll;
    // grouped_bmm: the same products after bucketing; tables larger and smaller than the batch
    // (empty buckets), TPB^2 below and above the table (the prefix sum's runs)
    QTest::addRow("grouped_bmm seed-like I=1 300x1x64x64 table 37 tpb16")
        << "grouped_bmm" << 1ll << 64ll << 64ll << 16 << 300ll << 37ll;
    QTest::addRow("grouped_bmm 5x3x37x21 table 40 tpb2")
        << "grouped_bmm" << 3ll << 37ll << 21ll << 2 << 5ll << 40ll;
    QTest::addRow("grouped_bmm 2x7x5x9 table 1 tpb4")
        << "grouped_bmm" << 7ll << 5ll << 9ll << 4 << 2ll << 1ll;
    QTest::addRow("grouped_bmm 9x2x3x33 table 3 tpb1")
        << "grouped_bmm" << 2ll << 3ll << 33ll << 1 << 9ll << 3ll;
  }
  void againstBlas() {
    QFETCH(QString, kernel);
    QFETCH(qlonglong, M);
    QFETCH(qlonglong, K);
    QFETCH(qlonglong, N);
    QFETCH(int, tpb);
    QFETCH(qlonglong, batch);
    QFETCH(qlonglong, table);
    const kernels::KernelVariant* v = kernels::findKernel(kernel.toStdString());
    QVERIFY(v != nullptr);
    const kernels::MatmulProblem p{M, K, N, batch, table};
    const kernels::SimulatedRun run = kernels::runSimulated(*v, p, tpb, 42, sim::LaunchOptions{});
    const sim::LaunchStats& s = run.report.stats;

    QVERIFY2(run.maxRelErr < 1e-5, qPrintable(QString::number(run.maxRelErr)));
    QCOMPARE(run.report.diagnosticCounts.total(), 0ull);
    QVERIFY(run.report.diagnostics.empty());
    QCOMPARE(s.threads, run.report.config.threads());

    const std::int64_t items = v->gathered ? batch : 1;
    QCOMPARE(s.globalStores, std::uint64_t(items * M * N));
    QCOMPARE(s.globalStoreBytes, std::uint64_t(items * M * N * 4));
    if (kernel == "naive" || kernel == "coalesced") {
      QCOMPARE(s.activeThreads, std::uint64_t(M * N));
      QCOMPARE(s.globalLoads, std::uint64_t(2 * M * N * K));
      QCOMPARE(s.fmas, std::uint64_t(M * N * K));
      QCOMPARE(s.barrierWaits, 0ull);
      QCOMPARE(s.sharedLoads, 0ull);
    } else if (kernel == "smem_tiled") {
      // every thread of the grid walks all ceil(K/T) tiles, two barriers each; the M x N
      // threads inside C do T FMAs per tile, those past its edge none
      const std::int64_t tiles = ceilDiv(K, tpb);
      QCOMPARE(s.barrierWaits, std::uint64_t(s.threads * 2 * tiles));
      QCOMPARE(s.fmas, std::uint64_t(M * N * tiles * tpb));
      QCOMPARE(s.sharedLoads, 2 * s.fmas);
      QCOMPARE(s.sharedStores, std::uint64_t(s.threads * 2 * tiles));
      // each element of A is staged by the ceil(N/T) column blocks, each of B by ceil(M/T)
      QCOMPARE(s.globalLoads, std::uint64_t(M * K * ceilDiv(N, tpb) + K * N * ceilDiv(M, tpb)));
      QCOMPARE(s.barriers, std::uint64_t(s.blocks * 2 * tiles));
    } else if (kernel == "grouped_bmm") {
      // one block per used matrix of c: its K x N elements staged once, then each column of
      // each row reads a[n, i, :] and the tile from shared memory
      QCOMPARE(s.fmas, std::uint64_t(batch * M * N * K));
      QCOMPARE(s.sharedLoads, s.fmas);
      QCOMPARE(run.report.priorLaunches.size(), std::size_t(3));
      QCOMPARE(run.report.priorLaunches[0].stats.globalStores, std::uint64_t(batch));  // counts
      QCOMPARE(run.report.priorLaunches[2].stats.globalStores, std::uint64_t(2 * batch));
      const std::uint64_t used = s.sharedStores / std::uint64_t(K * N);
      QCOMPARE(s.sharedStores, used * std::uint64_t(K * N));
      QVERIFY(used >= 1 && used <= std::uint64_t(std::min(batch, table)));
      // every thread: offsets[m] and offsets[m + 1]; each row: rows[] by the TPB threads of
      // its threadIdx.y, a[n, i, :] per column; c staged (one load per shared store)
      QCOMPARE(s.globalLoads, std::uint64_t(2 * table * tpb * tpb) +
                                  std::uint64_t(batch * M * tpb) +
                                  std::uint64_t(batch * M * N * K) + s.sharedStores);
    } else {
      QCOMPARE(s.activeThreads, std::uint64_t(batch * M * N));
      QCOMPARE(s.globalLoads, std::uint64_t(batch * M * N * (2 * K + 1)));  // + q[n]
      QCOMPARE(s.fmas, std::uint64_t(batch * M * N * K));
      QCOMPARE(s.globalLoadBytes, std::uint64_t(batch * M * N * (2 * K * 4 + 8)));
    }
  }

  // C holding NaN or Inf fails the accuracy check: max_rel_err is not finite (null in the JSON,
  // which stays valid), "accuracy_failed" is true and the text says so.
  void nonFiniteOutputFailsTheCheck_data() {
    QTest::addColumn<float>("value");
    QTest::addRow("NaN") << std::numeric_limits<float>::quiet_NaN();
    QTest::addRow("Inf") << std::numeric_limits<float>::infinity();
    QTest::addRow("-Inf") << -std::numeric_limits<float>::infinity();
  }
  void nonFiniteOutputFailsTheCheck() {
    QFETCH(float, value);
    const kernels::KernelVariant& naive = *kernels::findKernel("naive");
    const kernels::MatmulProblem p{5, 7, 3};
    kernels::SimulatedRun run = kernels::runSimulated(naive, p, 4, 0, {});
    QVERIFY(std::isfinite(run.maxRelErr));
    QCOMPARE(kernels::launchJson(naive, p, 4, run)["accuracy_failed"].get<bool>(), false);
    run.out[4] = value;
    const kernels::MatmulInputs in = kernels::makeInputs(p, false, 0);
    run.maxRelErr = kernels::maxRelErr(run.out.data(), kernels::referenceMatmul(p, false, in));
    QVERIFY(!std::isfinite(run.maxRelErr));
    const nlohmann::ordered_json j = kernels::launchJson(naive, p, 4, run);
    QVERIFY(j["max_rel_err"].is_null());
    QCOMPARE(j["accuracy_failed"].get<bool>(), true);
    QVERIFY(nlohmann::json::parse(j.dump()).is_object());
    std::ostringstream text;
    kernels::writeLaunchText(text, naive, p, 4, run);
    QVERIFY2(
        text.str().find("C holds NaN or Inf, so the accuracy check fails") != std::string::npos,
        text.str().c_str());
  }

  void deterministic() {
    const kernels::KernelVariant* v = kernels::findKernel("smem_tiled");
    const kernels::MatmulProblem p{13, 21, 11, 1, 1};
    const kernels::SimulatedRun a = kernels::runSimulated(*v, p, 4, 7, sim::LaunchOptions{});
    const kernels::SimulatedRun b = kernels::runSimulated(*v, p, 4, 7, sim::LaunchOptions{});
    QVERIFY(a.out == b.out);
  }

  void badInput_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<qlonglong>("M");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<qlonglong>("batch");
    QTest::addColumn<QString>("mentions");
    QTest::addRow("naive M=0") << "naive" << 0ll << 16 << 1ll << "M = 0";
    QTest::addRow("smem_tiled tpb=0") << "smem_tiled" << 5ll << 0 << 1ll << "tpb = 0";
    QTest::addRow("coalesced tpb=33") << "coalesced" << 5ll << 33 << 1ll << "tpb = 33";
    QTest::addRow("gather_bmm batch=0") << "gather_bmm" << 5ll << 16 << 0ll << "batch = 0";
  }
  void badInput() {
    QFETCH(QString, kernel);
    QFETCH(qlonglong, M);
    QFETCH(int, tpb);
    QFETCH(qlonglong, batch);
    QFETCH(QString, mentions);
    const kernels::KernelVariant* v = kernels::findKernel(kernel.toStdString());
    try {
      kernels::runSimulated(*v, kernels::MatmulProblem{M, 7, 9, batch, 3}, tpb, 1, {});
      QFAIL("no exception");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains(mentions), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestKernelVariants)
#include "test_kernel_variants.moc"
