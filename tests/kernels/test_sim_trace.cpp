// Traces stay bounded (cap with an exact drop count, selected blocks) and never change the
// aggregate statistics; the JSON trace file is well-formed.
#include <QtTest>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/sim/trace_io.h"
#include "kernels/matmul_args.h"
#include "kernels/registry.h"

using namespace matmulviz;

namespace {

std::uint64_t countKind(const sim::Trace& trace, sim::TraceEventKind kind) {
  std::uint64_t n = 0;
  for (const sim::TraceEvent& e : trace.events()) n += e.kind == kind;
  return n;
}

}  // namespace

class TestSimTrace : public QObject {
  Q_OBJECT
 private slots:
  void everyEventOfASmallLaunch_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("tpb");
    QTest::addRow("naive tpb4") << "naive" << 4;
    QTest::addRow("coalesced tpb3") << "coalesced" << 3;
    QTest::addRow("smem_tiled tpb4") << "smem_tiled" << 4;
    QTest::addRow("gather_bmm tpb4") << "gather_bmm" << 4;
  }
  void everyEventOfASmallLaunch() {
    QFETCH(QString, kernel);
    QFETCH(int, tpb);
    const kernels::KernelVariant* v = kernels::findKernel(kernel.toStdString());
    const kernels::MatmulProblem p{3, 5, 7, 2, 3};
    sim::LaunchOptions options;
    options.trace = true;
    const kernels::SimulatedRun run = kernels::runSimulated(*v, p, tpb, 1, options);
    const sim::LaunchReport& r = run.report;
    QCOMPARE(r.trace.dropped(), 0ull);
    QCOMPARE(countKind(r.trace, sim::TraceEventKind::GlobalLoad), r.stats.globalLoads);
    QCOMPARE(countKind(r.trace, sim::TraceEventKind::GlobalStore), r.stats.globalStores);
    QCOMPARE(countKind(r.trace, sim::TraceEventKind::SharedLoad), r.stats.sharedLoads);
    QCOMPARE(countKind(r.trace, sim::TraceEventKind::SharedStore), r.stats.sharedStores);
    QCOMPARE(countKind(r.trace, sim::TraceEventKind::Barrier), r.stats.barrierWaits);
    QCOMPARE(countKind(r.trace, sim::TraceEventKind::ThreadExit), r.stats.threads);
    std::uint64_t fmas = 0;
    for (const sim::TraceEvent& e : r.trace.events()) {
      if (e.kind == sim::TraceEventKind::ThreadExit) fmas += std::uint64_t(e.index[0]);
    }
    QCOMPARE(fmas, r.stats.fmas);
    // tracing does not change the result
    QVERIFY(run.maxRelErr < 1e-5);
  }

  void firstEventsOfNaive() {
    const kernels::MatmulProblem p{3, 5, 7, 1, 1};
    sim::LaunchOptions options;
    options.trace = true;
    const kernels::SimulatedRun run =
        kernels::runSimulated(*kernels::findKernel("naive"), p, 4, 1, options);
    const std::vector<sim::TraceEvent>& e = run.report.trace.events();
    // thread (0, 0) of block (0, 0) computes C[0, 0]: A[0, 0], B[0, 0], A[0, 1], B[1, 0], ...
    QCOMPARE(e[0].kind, sim::TraceEventKind::GlobalLoad);
    QCOMPARE(int(e[0].array), int(kernels::kArrayA));
    QCOMPARE(e[2].index[1], 1);
    QCOMPARE(int(e[3].array), int(kernels::kArrayB));
    QCOMPARE(e[3].index[0], 1);
    QCOMPARE(e[10].kind, sim::TraceEventKind::GlobalStore);
    QCOMPARE(e[11].kind, sim::TraceEventKind::ThreadExit);
    QCOMPARE(e[11].index[0], 5);               // K FMAs
    QCOMPARE(e[12].thread, std::uint16_t(1));  // thread (1, 0) next
  }

  void capDropsAndCounts_data() {
    QTest::addColumn<qulonglong>("capEvents");
    QTest::addRow("cap 0") << 0ull;
    QTest::addRow("cap 100 events") << 100ull;
    QTest::addRow("cap 5000 events") << 5000ull;
  }
  void capDropsAndCounts() {
    QFETCH(qulonglong, capEvents);
    const kernels::KernelVariant* v = kernels::findKernel("smem_tiled");
    const kernels::MatmulProblem p{9, 13, 11, 1, 1};
    const kernels::SimulatedRun plain = kernels::runSimulated(*v, p, 4, 1, {});
    sim::LaunchOptions all;
    all.trace = true;
    const kernels::SimulatedRun full = kernels::runSimulated(*v, p, 4, 1, all);
    sim::LaunchOptions capped = all;
    capped.traceCapBytes = capEvents * sizeof(sim::TraceEvent);
    const kernels::SimulatedRun r = kernels::runSimulated(*v, p, 4, 1, capped);
    const std::uint64_t total = full.report.trace.events().size();
    QVERIFY(total > 5000);
    QCOMPARE(std::uint64_t(r.report.trace.events().size()),
             std::min<std::uint64_t>(capEvents, total));
    QCOMPARE(r.report.trace.dropped(), total - r.report.trace.events().size());
    QVERIFY(r.report.trace.events().capacity() <= capEvents);
    // aggregates are exact whatever the cap
    QCOMPARE(r.report.stats.globalLoads, plain.report.stats.globalLoads);
    QCOMPARE(r.report.stats.sharedLoads, plain.report.stats.sharedLoads);
    QCOMPARE(r.report.stats.fmas, plain.report.stats.fmas);
    QCOMPARE(r.report.stats.activeThreads, plain.report.stats.activeThreads);
    QVERIFY(r.out == plain.out);
  }

  void selectedBlocks() {
    const kernels::KernelVariant* v = kernels::findKernel("naive");
    const kernels::MatmulProblem p{50, 9, 10, 1, 1};  // grid (4, 1) with tpb 16
    sim::LaunchOptions options;
    options.trace = true;
    options.traceBlocks = {3, 1};
    const kernels::SimulatedRun r = kernels::runSimulated(*v, p, 16, 1, options);
    bool sawOne = false;
    bool sawThree = false;
    for (const sim::TraceEvent& e : r.report.trace.events()) {
      QVERIFY(e.block == 1 || e.block == 3);
      sawOne |= e.block == 1;
      sawThree |= e.block == 3;
    }
    QVERIFY(sawOne && sawThree);
    // block 3 holds rows 48 and 49 only: 2 x 10 active threads of K loads each, times two
    QCOMPARE(countKind(r.report.trace, sim::TraceEventKind::GlobalLoad),
             std::uint64_t(16 * 10 * 9 * 2 + 2 * 10 * 9 * 2));
    QCOMPARE(r.report.tracedBlocks, (std::vector<std::uint64_t>{1, 3}));
  }

  void blockOutsideGrid() {
    sim::LaunchOptions options;
    options.trace = true;
    options.traceBlocks = {4};
    try {
      kernels::runSimulated(*kernels::findKernel("naive"), {50, 9, 10, 1, 1}, 16, 1, options);
      QFAIL("no exception");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains("trace block 4 is outside the grid of 4 blocks"),
               e.what());
    }
  }

  void jsonFile() {
    sim::LaunchOptions options;
    options.trace = true;
    options.traceCapBytes = 40 * sizeof(sim::TraceEvent);
    const kernels::SimulatedRun run =
        kernels::runSimulated(*kernels::findKernel("smem_tiled"), {5, 6, 7, 1, 1}, 4, 1, options);
    std::ostringstream out;
    sim::writeTraceJson(out, run.report);
    const nlohmann::json j = nlohmann::json::parse(out.str());
    QCOMPARE(j["format"].get<std::string>(), std::string("matmulviz-trace-1"));
    QCOMPARE(j["kernel"].get<std::string>(), std::string("smem_tiled"));
    QCOMPARE(j["grid"], nlohmann::json({2, 2, 1}));
    QCOMPARE(j["block"], nlohmann::json({4, 4, 1}));
    QCOMPARE(j["events"].size(), std::size_t(40));
    QCOMPARE(j["events_recorded"].get<std::uint64_t>(), 40ull);
    QCOMPARE(j["events_dropped"].get<std::uint64_t>(), run.report.trace.dropped());
    QCOMPARE(j["traced_blocks"].get<std::string>(), std::string("all"));
    QCOMPARE(j["arrays"].size(), std::size_t(5));
    QCOMPARE(j["arrays"][3]["space"].get<std::string>(), std::string("shared"));
    QCOMPARE(j["kinds"][0].get<std::string>(), std::string("global_load"));
    QCOMPARE(j["events"][0].size(), std::size_t(7));
  }
};

QTEST_GUILESS_MAIN(TestSimTrace)
#include "test_sim_trace.moc"
