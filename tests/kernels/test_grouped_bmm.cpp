// Kernel 08's bucketing on the simulator, launch by launch: the histogram of q, the prefix sum
// (runs longer and shorter than the block, one thread, one bucket), the scatter (every item once,
// in its bucket, in item order on one host thread), and what a user sees when q is out of range
// or c[m] does not fit in shared memory.
#include <QtTest>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/sim/launcher.h"
#include "kernels/08_grouped_bmm.h"
#include "kernels/registry.h"

using namespace matmulviz;

namespace {

/// The bucketing of q (values in 0..M-1) by 08's three launches with TPB x TPB threads a block.
struct Buckets {
  std::vector<int> counts, offsets, rows;
  sim::DiagnosticCounts diagnostics;
};

Buckets bucket(const std::vector<std::int64_t>& q, int M, int tpb) {
  const int N = static_cast<int>(q.size());
  Buckets b;
  b.counts.assign(static_cast<std::size_t>(M), 0);
  b.offsets.assign(static_cast<std::size_t>(M) + 1, -1);
  b.rows.assign(static_cast<std::size_t>(N), -1);
  std::vector<int> cursor(static_cast<std::size_t>(M), 0);
  kernels::GroupedBmmArgs args;
  args.g.q = sim::view1d<const std::int64_t>(q.data(), N, kernels::kArrayQ, "q");
  args.g.N = N;
  args.g.M = M;
  args.counts = sim::view1d<int>(b.counts.data(), M, kernels::kArrayCounts, "counts");
  args.offsets = sim::view1d<int>(b.offsets.data(), M + 1, kernels::kArrayOffsets, "offsets");
  args.cursor = sim::view1d<int>(cursor.data(), M, kernels::kArrayCursor, "cursor");
  args.rows = sim::view1d<int>(b.rows.data(), N, kernels::kArrayRows, "rows");
  const kernels::GroupedBmmConfigs configs = kernels::GroupedBmmConfigs::of(N, 1, 1, M, tpb);
  sim::LaunchOptions options;
  options.threads = 1;
  const auto add = [&](const sim::LaunchReport& r) {
    b.diagnostics.outOfBounds += r.diagnosticCounts.outOfBounds;
    b.diagnostics.barrierDivergence += r.diagnosticCounts.barrierDivergence;
    b.diagnostics.sharedRaces += r.diagnosticCounts.sharedRaces;
  };
  add(sim::launch(configs.histogram, {}, options,
                  [&](auto& ctx) { kernels::groupHistogram(ctx, args); }));
  add(sim::launch(configs.offsets, {}, options,
                  [&](auto& ctx) { kernels::groupOffsets(ctx, args); }));
  add(sim::launch(configs.scatter, {}, options,
                  [&](auto& ctx) { kernels::groupScatter(ctx, args); }));
  return b;
}

}  // namespace

class TestGroupedBmm : public QObject {
  Q_OBJECT
 private slots:
  void bucketing_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("tpb");
    QTest::addColumn<bool>("skewed");  // every item in bucket M - 1
    QTest::addRow("seed-like 4096 items, 2048 buckets, tpb16") << 4096 << 2048 << 16 << false;
    QTest::addRow("runs of 3: 700 buckets, 256 threads") << 1000 << 700 << 16 << false;
    QTest::addRow("fewer buckets than threads") << 500 << 7 << 16 << false;
    QTest::addRow("one thread") << 50 << 9 << 1 << false;
    QTest::addRow("3 x 3 threads, 10 buckets") << 77 << 10 << 3 << false;
    QTest::addRow("one bucket") << 300 << 1 << 8 << false;
    QTest::addRow("all items in the last bucket") << 600 << 33 << 4 << true;
    QTest::addRow("more buckets than items") << 5 << 64 << 2 << false;
  }
  void bucketing() {
    QFETCH(int, N);
    QFETCH(int, M);
    QFETCH(int, tpb);
    QFETCH(bool, skewed);
    std::mt19937_64 rng(7);
    std::vector<std::int64_t> q(static_cast<std::size_t>(N));
    for (std::int64_t& v : q) v = skewed ? M - 1 : static_cast<std::int64_t>(rng() % M);
    const Buckets b = bucket(q, M, tpb);
    QCOMPARE(b.diagnostics.total(), 0ull);

    std::vector<int> counts(static_cast<std::size_t>(M), 0);
    for (std::int64_t v : q) ++counts[static_cast<std::size_t>(v)];
    QVERIFY(b.counts == counts);
    std::vector<int> offsets(static_cast<std::size_t>(M) + 1, 0);
    std::partial_sum(counts.begin(), counts.end(), offsets.begin() + 1);
    QVERIFY(b.offsets == offsets);
    // one host thread runs blocks and threads in order: each bucket lists its items ascending
    std::vector<int> rows(static_cast<std::size_t>(N));
    std::iota(rows.begin(), rows.end(), 0);
    std::stable_sort(rows.begin(), rows.end(), [&](int x, int y) {
      return q[static_cast<std::size_t>(x)] < q[static_cast<std::size_t>(y)];
    });
    QVERIFY(b.rows == rows);
  }

  void outOfRangeQIsReportedNotFollowed() {
    const kernels::KernelVariant* v = kernels::findKernel("grouped_bmm");
    QVERIFY(v != nullptr);
    const kernels::MatmulProblem p{1, 4, 4, 6, 3};
    kernels::MatmulInputs in = kernels::makeInputs(p, true, 1);
    in.q[4] = 3;  // c has matrices 0..2
    std::vector<float> out(static_cast<std::size_t>(kernels::outputElements(p, true)), 0.f);
    sim::LaunchOptions options;
    options.kernel = "grouped_bmm";
    const sim::LaunchReport r = v->simulate(p, 2, in, out.data(), options);
    QVERIFY(r.diagnosticCounts.outOfBounds > 0);
    QVERIFY(!r.diagnostics.empty());
    QCOMPARE(QString::fromStdString(r.diagnostics.front().kernel),
             QString("grouped_bmm histogram"));
    QCOMPARE(QString::fromStdString(r.diagnostics.front().array), QString("counts"));
    QCOMPARE(r.priorLaunches.size(), std::size_t(3));
  }

  void aMatrixTooLargeForSharedMemoryIsRefused() {
    const kernels::KernelVariant* v = kernels::findKernel("grouped_bmm");
    // 64 x 193 floats = 49408 bytes, over the 48 KiB a launch gets
    try {
      v->config({1, 64, 193, 10, 4}, 16);
      QFAIL("no exception");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(
          QString(e.what()).contains("shared memory") && QString(e.what()).contains("gather_bmm"),
          e.what());
    }
    v->config({1, 64, 192, 10, 4}, 16);  // 49152 bytes: fits
  }
};

QTEST_GUILESS_MAIN(TestGroupedBmm)
#include "test_grouped_bmm.moc"
