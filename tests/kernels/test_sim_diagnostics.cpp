// The simulator reports, never crashes on, faulty kernels: out-of-bounds global and shared
// accesses, barrier divergence and shared-memory races, each provoked on purpose here.
#include <QtTest>

#include <cstdint>
#include <vector>

#include "core/sim/launcher.h"
#include "kernels/03_smem_tiled.h"
#include "kernels/matmul_problem.h"

using namespace matmulviz;

namespace {

/// 01_naive without its bounds check `if (i < M && j < N)`.
template <class Ctx>
void naiveWithoutBoundsCheck(Ctx& ctx, const kernels::MatmulArgs& p) {
  const int i = static_cast<int>(ctx.blockIdx().x * ctx.blockDim().x + ctx.threadIdx().x);
  const int j = static_cast<int>(ctx.blockIdx().y * ctx.blockDim().y + ctx.threadIdx().y);
  float tmp = 0.f;
  for (int k = 0; k < p.K; ++k) tmp = ctx.fma(ctx.load(p.a, i, k), ctx.load(p.b, k, j), tmp);
  ctx.store(p.c, i, j, tmp);
}

/// A thread context with the barrier taken out: removes __syncthreads() from a kernel body
/// without editing it.
template <class Ctx>
struct WithoutBarriers {
  Ctx& ctx;
  sim::Dim3 threadIdx() const { return ctx.threadIdx(); }
  sim::Dim3 blockIdx() const { return ctx.blockIdx(); }
  sim::Dim3 blockDim() const { return ctx.blockDim(); }
  sim::Dim3 gridDim() const { return ctx.gridDim(); }
  template <class... A>
  auto load(const A&... a) {
    return ctx.load(a...);
  }
  template <class... A>
  void store(const A&... a) {
    ctx.store(a...);
  }
  float fma(float a, float b, float acc) { return ctx.fma(a, b, acc); }
  void syncthreads() {}
};

struct Problem {
  kernels::MatmulProblem p;
  kernels::MatmulInputs in;
  std::vector<float> out;
  kernels::MatmulArgs args;
  std::vector<sim::ArrayInfo> arrays;

  Problem(std::int64_t M, std::int64_t K, std::int64_t N) : p{M, K, N, 1, 1} {
    in = kernels::makeInputs(p, false, 3);
    out.assign(static_cast<std::size_t>(M * N), 0.f);
    args.a = sim::view2d<const float>(in.a.data(), M, K, kernels::kArrayA, "A");
    args.b = sim::view2d<const float>(in.b.data(), K, N, kernels::kArrayB, "B");
    args.c = sim::view2d<float>(out.data(), M, N, kernels::kArrayC, "C");
    args.M = static_cast<int>(M);
    args.K = static_cast<int>(K);
    args.N = static_cast<int>(N);
  }
};

sim::LaunchOptions named(const char* kernel, std::size_t maxDiagnostics = 32) {
  sim::LaunchOptions options;
  options.kernel = kernel;
  options.maxDiagnostics = maxDiagnostics;
  return options;
}

}  // namespace

class TestSimDiagnostics : public QObject {
  Q_OBJECT
 private slots:
  void globalOutOfBounds_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("K");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("tpb");
    QTest::addRow("5x7x3 tpb4") << 5 << 7 << 3 << 4;
    QTest::addRow("lesson 5x784x10 tpb16") << 5 << 784 << 10 << 16;
    QTest::addRow("exact fit 8x3x8 tpb4") << 8 << 3 << 8 << 4;
  }
  void globalOutOfBounds() {
    QFETCH(int, M);
    QFETCH(int, K);
    QFETCH(int, N);
    QFETCH(int, tpb);
    Problem pr(M, K, N);
    const sim::LaunchConfig config = sim::grid2d(M, N, tpb);
    const sim::LaunchReport r = sim::launch(config, {}, named("naive_unchecked"), [&](auto& ctx) {
      naiveWithoutBoundsCheck(ctx, pr.args);
    });
    // every thread with i >= M reads K elements of A out of range, every j >= N K of B, and
    // each of them stores outside C once
    const std::uint64_t rowsOut = std::uint64_t(config.gridDim.x) * tpb - M;
    const std::uint64_t colsOut = std::uint64_t(config.gridDim.y) * tpb - N;
    const std::uint64_t rows = std::uint64_t(config.gridDim.x) * tpb;
    const std::uint64_t cols = std::uint64_t(config.gridDim.y) * tpb;
    const std::uint64_t expected =
        rowsOut * cols * K + colsOut * rows * K + (rows * cols - std::uint64_t(M) * N);
    QCOMPARE(r.diagnosticCounts.outOfBounds, expected);
    QCOMPARE(r.diagnosticCounts.sharedRaces, 0ull);
    QCOMPARE(r.diagnosticCounts.barrierDivergence, 0ull);
    // threads past both edges touch nothing in bounds: neither active nor idle
    QCOMPARE(r.stats.outOfBoundsOnlyThreads, rowsOut * colsOut);
    QCOMPARE(r.stats.activeThreads, rows * cols - rowsOut * colsOut);
    // the in-range part is still right
    const std::vector<double> ref = kernels::referenceMatmul(pr.p, false, pr.in);
    QVERIFY(kernels::maxRelErr(pr.out.data(), ref) < 1e-5);
    if (expected == 0) {
      QVERIFY(r.diagnostics.empty());
      return;
    }
    const sim::Diagnostic& d = r.diagnostics.front();
    QCOMPARE(d.kind, sim::DiagnosticKind::OutOfBounds);
    QCOMPARE(QString::fromStdString(d.kernel), QString("naive_unchecked"));
    QVERIFY(d.array == "A" || d.array == "B");
    QCOMPARE(d.index.size(), std::size_t(2));
    const QString msg = QString::fromStdString(d.message);
    QVERIFY2(msg.contains("naive_unchecked") && msg.contains("block (") &&
                 msg.contains("thread (") && msg.contains("outside its shape"),
             qPrintable(msg));
  }

  void firstOutOfBoundsNamesEverything() {
    Problem pr(5, 7, 3);
    const sim::LaunchReport r =
        sim::launch(sim::grid2d(5, 3, 4), {}, named("naive_unchecked"),
                    [&](auto& ctx) { naiveWithoutBoundsCheck(ctx, pr.args); });
    // thread order is x fastest: thread (0, 3, 0) of block (0, 0, 0) is the first with j = 3 = N
    const sim::Diagnostic& d = r.diagnostics.front();
    QCOMPARE(d.block.x, 0u);
    QCOMPARE(d.thread.x, 0u);
    QCOMPARE(d.thread.y, 3u);
    QCOMPARE(QString::fromStdString(d.array), QString("B"));
    QCOMPARE(d.index, (std::vector<std::int64_t>{0, 3}));
    QVERIFY2(
        QString::fromStdString(d.message).contains("reads global B[0, 3] outside its shape [7, 3]"),
        d.message.c_str());
  }

  void sharedOutOfBounds() {
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{8, 1, 1};
    config.sharedBytes = 8 * sizeof(float);
    const sim::LaunchReport r = sim::launch(config, {}, named("shift"), [&](auto& ctx) {
      const sim::SharedView<float> tile{static_cast<float*>(ctx.sharedMemory()), 1, 8, 4, "tile"};
      const int tx = static_cast<int>(ctx.threadIdx().x);
      ctx.store(tile, 0, tx + 1, 1.f);  // off by one: thread 7 writes tile[0, 8]
      ctx.syncthreads();
    });
    QCOMPARE(r.diagnosticCounts.outOfBounds, 1ull);
    const sim::Diagnostic& d = r.diagnostics.front();
    QCOMPARE(d.thread.x, 7u);
    QCOMPARE(QString::fromStdString(d.array), QString("tile"));
    QCOMPARE(d.index, (std::vector<std::int64_t>{0, 8}));
    QVERIFY(QString::fromStdString(d.message).contains("writes shared tile[0, 8]"));
  }

  void sharedViewOutsideBuffer() {
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{4, 1, 1};
    config.sharedBytes = 4 * sizeof(float);
    const sim::LaunchReport r = sim::launch(config, {}, named("too_big"), [&](auto& ctx) {
      // a tile declared larger than the shared memory the launch asked for
      const sim::SharedView<float> tile{static_cast<float*>(ctx.sharedMemory()), 2, 4, 4, "tile"};
      ctx.store(tile, 1, static_cast<int>(ctx.threadIdx().x), 1.f);
    });
    QCOMPARE(r.diagnosticCounts.outOfBounds, 4ull);
    QVERIFY(QString::fromStdString(r.diagnostics.front().message).contains("outside the block's"));
  }

  void sharedViewMisaligned() {
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{4, 1, 1};
    config.sharedBytes = 8 * sizeof(float);
    const sim::LaunchReport r = sim::launch(config, {}, named("misaligned"), [&](auto& ctx) {
      // a float tile carved two bytes into the shared memory: a GPU faults on every access
      auto* base = static_cast<std::byte*>(ctx.sharedMemory()) + 2;
      const sim::SharedView<float> tile{reinterpret_cast<float*>(base), 1, 4, 4, "tile"};
      ctx.store(tile, 0, static_cast<int>(ctx.threadIdx().x), 1.f);
    });
    QCOMPARE(r.diagnosticCounts.outOfBounds, 4ull);
    QCOMPARE(r.diagnosticCounts.sharedRaces, 0ull);
    QVERIFY2(QString::fromStdString(r.diagnostics.front().message).contains("not aligned"),
             r.diagnostics.front().message.c_str());
  }

  void raceWithoutBarrier_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("K");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("tpb");
    QTest::addRow("17x33x19 tpb8") << 17 << 33 << 19 << 8;
    QTest::addRow("5x784x10 tpb16") << 5 << 784 << 10 << 16;
  }
  void raceWithoutBarrier() {
    QFETCH(int, M);
    QFETCH(int, K);
    QFETCH(int, N);
    QFETCH(int, tpb);
    Problem pr(M, K, N);
    const sim::LaunchConfig config = kernels::smemTiledConfig(M, N, tpb);
    // with its barriers: no diagnostics
    const sim::LaunchReport ok = sim::launch(config, {}, named("smem_tiled"), [&](auto& ctx) {
      kernels::smemTiledMatmul(ctx, pr.args, kernels::SmemTiles::carve(ctx.sharedMemory(), tpb));
    });
    QCOMPARE(ok.diagnosticCounts.total(), 0ull);
    // without them: threads read tiles others have not written yet, and overwrite tiles others
    // still read
    const sim::LaunchReport r =
        sim::launch(config, {}, named("smem_tiled_no_barrier", 8), [&](auto& ctx) {
          WithoutBarriers<std::remove_reference_t<decltype(ctx)>> noBarrier{ctx};
          kernels::smemTiledMatmul(noBarrier, pr.args,
                                   kernels::SmemTiles::carve(ctx.sharedMemory(), tpb));
        });
    QVERIFY(r.diagnosticCounts.sharedRaces > 0);
    QCOMPARE(r.diagnosticCounts.outOfBounds, 0ull);
    QCOMPARE(r.diagnosticCounts.barrierDivergence, 0ull);
    QCOMPARE(r.diagnostics.size(), std::size_t(8));  // capped; the counts stay exact
    const sim::Diagnostic& d = r.diagnostics.front();
    QCOMPARE(d.kind, sim::DiagnosticKind::SharedRace);
    QVERIFY(d.array == "As" || d.array == "Bs");
    QCOMPARE(d.index.size(), std::size_t(2));
    const QString msg = QString::fromStdString(d.message);
    QVERIFY2(msg.contains("smem_tiled_no_barrier") && msg.contains("with no __syncthreads()"),
             qPrintable(msg));
    // thread (0,0) runs first and reads As[0, 1] before thread (1, 0) writes it: the write is
    // the race, against the read by thread (0, 0)
    QCOMPARE(d.thread.x, 1u);
    QCOMPARE(d.thread.y, 0u);
    QVERIFY2(msg.contains("writes shared As[0, 1] read by thread (0, 0, 0)"), qPrintable(msg));
  }

  void racesBetweenBarriersOnly() {
    // each thread writes its own cell, barrier, then reads its neighbour's: no race
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{32, 1, 1};
    config.sharedBytes = 32 * sizeof(float);
    std::vector<float> out(32);
    auto body = [&](auto& ctx, bool barrier) {
      const sim::SharedView<float> s{static_cast<float*>(ctx.sharedMemory()), 1, 32, 4, "s"};
      const int tx = static_cast<int>(ctx.threadIdx().x);
      ctx.store(s, 0, tx, float(tx));
      if (barrier) ctx.syncthreads();
      out[static_cast<std::size_t>(tx)] = ctx.load(s, 0, (tx + 1) % 32);
    };
    const sim::LaunchReport ok =
        sim::launch(config, {}, named("rotate"), [&](auto& ctx) { body(ctx, true); });
    QCOMPARE(ok.diagnosticCounts.total(), 0ull);
    QCOMPARE(out[31], 0.f);
    QCOMPARE(out[3], 4.f);
    const sim::LaunchReport bad =
        sim::launch(config, {}, named("rotate"), [&](auto& ctx) { body(ctx, false); });
    // thread t reads s[t+1] before thread t+1 writes it (t < 31): 31 write-after-read races;
    // thread 31 reads s[0], written by thread 0 earlier: a read-after-write race
    QCOMPARE(bad.diagnosticCounts.sharedRaces, 32ull);
  }

  void divergenceEarlyExit() {
    // the classic bug: `if (i >= M) return;` before the tile loop of 03_smem_tiled
    Problem pr(5, 40, 6);
    const int tpb = 8;
    const sim::LaunchConfig config = kernels::smemTiledConfig(5, 6, tpb);
    const sim::LaunchReport r =
        sim::launch(config, {}, named("smem_tiled_early_exit"), [&](auto& ctx) {
          const int i = static_cast<int>(ctx.blockIdx().y * ctx.blockDim().y + ctx.threadIdx().y);
          if (i >= pr.args.M) return;
          kernels::smemTiledMatmul(ctx, pr.args,
                                   kernels::SmemTiles::carve(ctx.sharedMemory(), tpb));
        });
    // 5 tiles of K, 2 barriers each: every barrier phase of the single block diverges
    QCOMPARE(r.diagnosticCounts.barrierDivergence, 10ull);
    const sim::Diagnostic& d = r.diagnostics.front();
    QCOMPARE(d.kind, sim::DiagnosticKind::BarrierDivergence);
    QCOMPARE(d.thread.x, 0u);
    QCOMPARE(d.thread.y, 0u);
    const QString msg = QString::fromStdString(d.message);
    QVERIFY2(msg.contains("03_smem_tiled.h:") && msg.contains("thread (0, 5, 0) has exited") &&
                 msg.contains("24 of 64 threads exited"),
             qPrintable(msg));
    // listed once per barrier, not once per phase: the two barriers' messages, each saying it
    // held in all 5 phases of the block
    QCOMPARE(r.diagnostics.size(), std::size_t(2));
    QVERIFY2(msg.endsWith("(the same in 5 barrier phases of this block)"), qPrintable(msg));
    QVERIFY(r.diagnostics[0].message != r.diagnostics[1].message);
  }

  void divergenceDifferentBarriers() {
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{4, 2, 1};
    config.gridDim = sim::Dim3{3, 1, 1};
    const sim::LaunchReport r = sim::launch(config, {}, named("two_barriers"), [&](auto& ctx) {
      if (ctx.threadIdx().x % 2 == 0) {
        ctx.syncthreads();
      } else {
        ctx.syncthreads();
      }
    });
    QCOMPARE(r.diagnosticCounts.barrierDivergence, 3ull);  // once per block
    const sim::Diagnostic& d = r.diagnostics.front();
    QCOMPARE(d.thread.x, 1u);
    QVERIFY2(QString::fromStdString(d.message).contains("waits at the one at"), d.message.c_str());
  }

  void uniformBarrierInLoop() {
    // a barrier inside a loop every thread runs the same number of times is fine
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{8, 4, 2};
    config.gridDim = sim::Dim3{2, 2, 2};
    const sim::LaunchReport r = sim::launch(config, {}, named("loop"), [&](auto& ctx) {
      for (int k = 0; k < 5; ++k) ctx.syncthreads();
    });
    QCOMPARE(r.diagnosticCounts.total(), 0ull);
    QCOMPARE(r.stats.barrierWaits, 8ull * 64 * 5);
    QCOMPARE(r.stats.barriers, 8ull * 5);
  }

  void exceptionLeavesLaunch() {
    sim::LaunchConfig config;
    config.blockDim = sim::Dim3{4, 1, 1};
    config.gridDim = sim::Dim3{2, 1, 1};
    bool threw = false;
    try {
      sim::launch(config, {}, named("throws"), [&](auto& ctx) {
        if (ctx.blockIdx().x == 1 && ctx.threadIdx().x == 2) throw std::runtime_error("boom");
      });
    } catch (const std::runtime_error& e) {
      threw = QString(e.what()) == "boom";
    }
    QVERIFY(threw);
  }
};

QTEST_GUILESS_MAIN(TestSimDiagnostics)
#include "test_sim_diagnostics.moc"
