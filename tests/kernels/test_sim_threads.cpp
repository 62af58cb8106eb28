// The simulated launcher on several host threads reports exactly what one thread reports: the
// same C, counters, barrier phases, diagnostics (kept entries, their order and repeat counts,
// exact counts) and trace (events in order, the cap and its drop count), for the correct
// kernels and for the teaching kernels that race, access out of bounds and diverge at barriers.
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "kernels/registry.h"

using namespace matmulviz;

namespace {

void compareReports(const kernels::SimulatedRun& one, const kernels::SimulatedRun& many) {
  QVERIFY(one.out.size() == many.out.size());
  QVERIFY(std::memcmp(one.out.data(), many.out.data(), one.out.size() * sizeof(float)) == 0);
  const sim::LaunchStats& a = one.report.stats;
  const sim::LaunchStats& b = many.report.stats;
  QCOMPARE(b.globalLoads, a.globalLoads);
  QCOMPARE(b.globalStores, a.globalStores);
  QCOMPARE(b.globalLoadBytes, a.globalLoadBytes);
  QCOMPARE(b.globalStoreBytes, a.globalStoreBytes);
  QCOMPARE(b.sharedLoads, a.sharedLoads);
  QCOMPARE(b.sharedStores, a.sharedStores);
  QCOMPARE(b.fmas, a.fmas);
  QCOMPARE(b.barrierWaits, a.barrierWaits);
  QCOMPARE(b.activeThreads, a.activeThreads);
  QCOMPARE(b.outOfBoundsOnlyThreads, a.outOfBoundsOnlyThreads);
  QCOMPARE(b.blocks, a.blocks);
  QCOMPARE(b.threads, a.threads);
  QCOMPARE(b.barriers, a.barriers);
  QCOMPARE(many.report.priorLaunches.size(), one.report.priorLaunches.size());
  for (std::size_t i = 0; i < one.report.priorLaunches.size(); ++i) {
    const sim::PriorLaunch& pa = one.report.priorLaunches[i];
    const sim::PriorLaunch& pb = many.report.priorLaunches[i];
    QCOMPARE(pb.kernel, pa.kernel);
    QCOMPARE(pb.stats.globalLoads, pa.stats.globalLoads);
    QCOMPARE(pb.stats.globalStores, pa.stats.globalStores);
    QCOMPARE(pb.stats.barriers, pa.stats.barriers);
    QCOMPARE(pb.stats.hostThreads, 1u);  // the bucketing stays on one host thread
  }

  const sim::DiagnosticCounts& ca = one.report.diagnosticCounts;
  const sim::DiagnosticCounts& cb = many.report.diagnosticCounts;
  QCOMPARE(cb.outOfBounds, ca.outOfBounds);
  QCOMPARE(cb.barrierDivergence, ca.barrierDivergence);
  QCOMPARE(cb.sharedRaces, ca.sharedRaces);
  QCOMPARE(many.report.diagnostics.size(), one.report.diagnostics.size());
  for (std::size_t i = 0; i < one.report.diagnostics.size(); ++i) {
    const sim::Diagnostic& da = one.report.diagnostics[i];
    const sim::Diagnostic& db = many.report.diagnostics[i];
    QCOMPARE(db.message, da.message);
    QCOMPARE(int(db.kind), int(da.kind));
    QCOMPARE(db.block.x, da.block.x);
    QCOMPARE(db.block.y, da.block.y);
    QCOMPARE(db.thread.x, da.thread.x);
    QCOMPARE(db.thread.y, da.thread.y);
    QCOMPARE(db.array, da.array);
    QVERIFY(db.index == da.index);
    QCOMPARE(db.repeats, da.repeats);
  }

  const std::vector<sim::TraceEvent>& ea = one.report.trace.events();
  const std::vector<sim::TraceEvent>& eb = many.report.trace.events();
  QCOMPARE(eb.size(), ea.size());
  QVERIFY(ea.empty() ||
          std::memcmp(ea.data(), eb.data(), ea.size() * sizeof(sim::TraceEvent)) == 0);
  QCOMPARE(many.report.trace.dropped(), one.report.trace.dropped());
  QVERIFY(many.report.tracedBlocks == one.report.tracedBlocks);
}

}  // namespace

class TestSimThreads : public QObject {
  Q_OBJECT
 private slots:
  void sameReportOnEveryThreadCount_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<QString>("trace");  // off | all | capped | selected
    QTest::addColumn<int>("maxDiagnostics");
    struct Kernel {
      const char* name;
      int m, k, n, tpb;
    };
    // Sizes are not multiples of the tile: edge blocks do less work than the others.
    const Kernel kernels[] = {{"naive", 37, 19, 23, 4},
                              {"coalesced", 37, 19, 23, 5},
                              {"smem_tiled", 37, 19, 23, 4},
                              {"gather_bmm", 3, 7, 5, 4},
                              {"grouped_bmm", 3, 7, 5, 2},
                              {"smem_tiled_no_sync", 21, 17, 19, 4},
                              {"naive_no_bounds_check", 21, 17, 19, 4},
                              {"smem_tiled_divergent_barrier", 21, 17, 19, 4}};
    for (const Kernel& k : kernels) {
      for (const char* trace : {"off", "all", "capped", "selected"}) {
        for (int maxDiagnostics : {3, 32}) {
          if (maxDiagnostics == 3 && QString(k.name).contains("_no_") == false &&
              !QString(k.name).contains("divergent"))
            continue;  // the correct kernels report nothing
          QTest::addRow("%s %s max%d", k.name, trace, maxDiagnostics)
              << k.name << k.m << k.k << k.n << k.tpb << trace << maxDiagnostics;
        }
      }
    }
  }
  void sameReportOnEveryThreadCount() {
    QFETCH(QString, kernel);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, tpb);
    QFETCH(QString, trace);
    QFETCH(int, maxDiagnostics);
    const kernels::KernelVariant* v = kernels::findKernel(kernel.toStdString());
    QVERIFY(v != nullptr);
    // gather_bmm: M x K x N per row of a [batch, M, K], c [table, K, N]
    // grouped_bmm: one block per matrix of c, 13 of them so that traced block 11 exists
    const std::int64_t table = kernel == "grouped_bmm" ? 13 : 5;
    const kernels::MatmulProblem p{m, k, n, v->gathered ? 29 : 1, v->gathered ? table : 1};
    sim::LaunchOptions options;
    options.kernel = kernel.toStdString();
    options.maxDiagnostics = static_cast<std::size_t>(maxDiagnostics);
    options.minThreadsPerHostThread = 1;
    options.trace = trace != "off";
    if (trace == "capped") options.traceCapBytes = 1500 * sizeof(sim::TraceEvent);
    if (trace == "selected") options.traceBlocks = {5, 1, 2, 11};

    options.threads = 1;
    const kernels::SimulatedRun one = kernels::runSimulated(*v, p, tpb, 3, options);
    QCOMPARE(one.report.stats.hostThreads, 1u);
    if (v->faulty) QVERIFY(one.report.diagnosticCounts.total() > 0);
    if (trace == "capped") QVERIFY(one.report.trace.dropped() > 0);
    for (unsigned threads : {2u, 3u, 7u}) {
      options.threads = threads;
      const kernels::SimulatedRun many = kernels::runSimulated(*v, p, tpb, 3, options);
      QCOMPARE(many.report.stats.hostThreads,
               unsigned(std::min<std::uint64_t>(threads, many.report.stats.blocks)));
      compareReports(one, many);
      if (QTest::currentTestFailed()) {
        qWarning("with %u host threads", threads);
        return;
      }
    }
  }

  void smallLaunchesStayOnTheCallingThread() {
    const kernels::KernelVariant* v = kernels::findKernel("naive");
    sim::LaunchOptions options;
    options.threads = 4;  // 37 x 23 = 851 simulated threads: too few to share by default
    const kernels::SimulatedRun r = kernels::runSimulated(*v, {37, 19, 23, 1, 1}, 4, 3, options);
    QCOMPARE(r.report.stats.hostThreads, 1u);
    QVERIFY(r.maxRelErr < 1e-5);
  }

  void defaultIsTheHardwareConcurrency() {
    QVERIFY(sim::resolveSimThreads(0) >= 1);
    QCOMPARE(sim::resolveSimThreads(0), std::max(1u, std::thread::hardware_concurrency()));
    QCOMPARE(sim::resolveSimThreads(3), 3u);
  }

  void anExceptionStopsTheLaunch() {
    // A body that throws in one block: the launch stops and rethrows it, as on one thread.
    sim::LaunchConfig config;
    config.gridDim = {64, 1, 1};
    config.blockDim = {32, 1, 1};
    sim::LaunchOptions options;
    options.threads = 4;
    options.minThreadsPerHostThread = 1;
    try {
      sim::launch(config, {}, options, [&](auto& ctx) {
        if (ctx.blockIdx().x == 40 && ctx.threadIdx().x == 3) throw std::runtime_error("block 40");
      });
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      QCOMPARE(QString(e.what()), QString("block 40"));
    }
  }
};

QTEST_GUILESS_MAIN(TestSimThreads)
#include "test_sim_threads.moc"
