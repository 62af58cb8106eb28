#include "core/sim/launcher.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

namespace matmulviz::sim {

unsigned resolveSimThreads(unsigned requested) {
  if (requested != 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace detail {
namespace {

/// What one contiguous range of blocks produced, merged into the report in block order.
struct ChunkResult {
  LaunchCounters counters;
  std::uint64_t barrierPhases = 0;
  DiagnosticCollector diagnostics;
  Trace trace;
  std::exception_ptr error;

  ChunkResult(const std::string& kernel, std::size_t maxDiagnostics, std::size_t traceCapBytes)
      : diagnostics(kernel, maxDiagnostics), trace(traceCapBytes) {}
};

/// One host thread's simulator: its fibers, the block's shared memory and race shadow, and the
/// barrier epoch (epochs only need to be unique within one shadow).
class Worker {
 public:
  Worker(const LaunchConfig& config, std::size_t stackBytes)
      : shared_(config.sharedBytes),
        shadow_((config.sharedBytes + 3) / 4 + 1),
        runner_(config.threadsPerBlock(), stackBytes) {
    block_.config = config;
    block_.shared = shared_.data();
    block_.shadow = shadow_.data();
  }

  /// Runs blocks [first, last) (linear ids, x fastest) into `out`; `traced(linear)` says
  /// whether a block is traced. Rethrows what a block threw.
  template <class IsTraced>
  void run(std::uint64_t first, std::uint64_t last, const IsTraced& traced,
           BlockRunner::ThreadEntry plain, BlockRunner::ThreadEntry tracedEntry, void* body,
           ChunkResult& out) {
    const Dim3 grid = block_.config.gridDim;
    block_.diagnostics = &out.diagnostics;
    block_.counters = LaunchCounters{};
    for (std::uint64_t linear = first; linear < last; ++linear) {
      block_.blockIdx = Dim3{static_cast<unsigned>(linear % grid.x),
                             static_cast<unsigned>(linear / grid.x % grid.y),
                             static_cast<unsigned>(linear / (std::uint64_t{grid.x} * grid.y))};
      block_.blockLinear = linear;
      const bool traceThis = traced(linear);
      block_.trace = traceThis ? &out.trace : nullptr;
      if (!shared_.empty()) std::memset(shared_.data(), 0xFF, shared_.size());
      block_.epoch = ++epoch_;
      runner_.runBlock(block_, traceThis ? tracedEntry : plain, body);
      out.barrierPhases += block_.epoch - epoch_;
      epoch_ = block_.epoch;
      if (epoch_ > 0xF0000000u) {  // keep epochs unique: restart them with a clean shadow
        std::fill(shadow_.begin(), shadow_.end(), ShadowCell{});
        epoch_ = 1;
      }
    }
    out.counters = block_.counters;
  }

 private:
  std::vector<std::byte> shared_;
  std::vector<ShadowCell> shadow_;
  BlockRunner runner_;
  BlockState block_;
  std::uint32_t epoch_ = 1;
};

}  // namespace

LaunchReport runLaunch(const LaunchConfig& config, std::vector<ArrayInfo> arrays,
                       const LaunchOptions& options, BlockRunner::ThreadEntry plain,
                       BlockRunner::ThreadEntry traced, void* body) {
  validate(config);
  LaunchReport report;
  report.kernel = options.kernel;
  report.config = config;
  report.arrays = std::move(arrays);
  report.traced = options.trace;
  const std::uint64_t blocks = config.blocks();
  std::vector<std::uint64_t> traceBlocks = options.traceBlocks;
  std::sort(traceBlocks.begin(), traceBlocks.end());
  traceBlocks.erase(std::unique(traceBlocks.begin(), traceBlocks.end()), traceBlocks.end());
  if (!traceBlocks.empty() && traceBlocks.back() >= blocks) {
    throw std::invalid_argument("trace block " + std::to_string(traceBlocks.back()) +
                                " is outside the grid of " + std::to_string(blocks) +
                                " blocks (linear block ids 0.." + std::to_string(blocks - 1) +
                                ", x fastest)");
  }
  if (options.trace) {
    report.trace = Trace(options.traceCapBytes);
    report.tracedBlocks = traceBlocks;
  }
  const auto isTraced = [&](std::uint64_t linear) {
    if (!options.trace) return false;
    return traceBlocks.empty() ||
           std::binary_search(traceBlocks.begin(), traceBlocks.end(), linear);
  };

  // Blocks are independent (a kernel that is correct on a GPU cannot rely on their order), so
  // ranges of them run on several host threads. Each range collects its own counters,
  // diagnostics and trace; they are merged in block order, which gives exactly what one thread
  // running the blocks in order gives.
  const std::uint64_t byWork = std::max<std::uint64_t>(
      1, config.threads() / std::max<std::uint64_t>(1, options.minThreadsPerHostThread));
  const unsigned workers = static_cast<unsigned>(
      std::min<std::uint64_t>({resolveSimThreads(options.threads), blocks, byWork}));
  // Many ranges per host thread even out blocks of unequal cost and the end of the launch, where
  // one thread finishes its last range while the other waits: about half a range's time. With 8
  // ranges per thread that was about 5% of smem_tiled's launch on 2 threads; with 32 it is about
  // 1.5% (bench_simulator, tests/bench/README.md). Each range is contiguous.
  const std::uint64_t chunks = workers == 1 ? 1 : std::min<std::uint64_t>(blocks, workers * 32);
  std::vector<std::unique_ptr<ChunkResult>> results(chunks);

  std::mutex mergeMutex;
  std::uint64_t merged = 0;  // results[0, merged) are in the report; guarded by mergeMutex
  std::size_t diagnosticsKept = 0;
  DiagnosticCounts counts;
  LaunchCounters counters;
  std::uint64_t barrierPhases = 0;
  std::exception_ptr error;
  std::atomic<std::uint64_t> nextChunk{0};
  std::atomic<bool> stop{false};

  // Under mergeMutex: moves every finished result that follows the merged ones into the report.
  const auto mergeReady = [&] {
    for (; merged < chunks && results[merged] != nullptr; ++merged) {
      ChunkResult& r = *results[merged];
      if (r.error && !error) error = r.error;
      counters += r.counters;
      barrierPhases += r.barrierPhases;
      const DiagnosticCounts& c = r.diagnostics.counts();
      counts.outOfBounds += c.outOfBounds;
      counts.barrierDivergence += c.barrierDivergence;
      counts.sharedRaces += c.sharedRaces;
      for (Diagnostic& d : r.diagnostics.takeDiagnostics()) {
        if (diagnosticsKept == options.maxDiagnostics) break;
        report.diagnostics.push_back(std::move(d));
        ++diagnosticsKept;
      }
      if (options.trace) report.trace.append(std::move(r.trace));
      results[merged].reset();
    }
  };

  const auto work = [&] {
    try {
      Worker worker(config, options.stackBytes);
      for (;;) {
        const std::uint64_t k = nextChunk.fetch_add(1);
        if (k >= chunks || stop.load()) return;
        const std::uint64_t first = blocks * k / chunks;
        const std::uint64_t last = blocks * (k + 1) / chunks;
        // Events before this range number at least what is merged: only the rest of the cap
        // can be of use (the report keeps the launch's first events).
        std::size_t traceCap = 0;
        if (options.trace) {
          std::lock_guard lock(mergeMutex);
          traceCap = report.trace.capBytes() - report.trace.events().size() * sizeof(TraceEvent);
        }
        auto r = std::make_unique<ChunkResult>(options.kernel, options.maxDiagnostics, traceCap);
        try {
          worker.run(first, last, isTraced, plain, traced, body, *r);
        } catch (...) {
          r->error = std::current_exception();
          stop = true;
        }
        std::lock_guard lock(mergeMutex);
        results[k] = std::move(r);
        mergeReady();
      }
    } catch (...) {  // the worker's stacks could not be mapped
      std::lock_guard lock(mergeMutex);
      if (!error) error = std::current_exception();
      stop = true;
    }
  };

  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(workers - 1);
    for (unsigned w = 1; w < workers; ++w) helpers.emplace_back(work);
    work();
  }  // joins the helpers
  const auto finish = std::chrono::steady_clock::now();
  if (error) std::rethrow_exception(error);
  if (merged != chunks) throw std::logic_error("simulated launch: a block range did not run");

  static_cast<LaunchCounters&>(report.stats) = counters;
  report.stats.blocks = blocks;
  report.stats.threads = config.threads();
  report.stats.barriers = barrierPhases;
  report.stats.elapsedS = std::chrono::duration<double>(finish - start).count();
  report.stats.hostThreads = workers;
  report.diagnosticCounts = counts;
  return report;
}

}  // namespace detail
}  // namespace matmulviz::sim
