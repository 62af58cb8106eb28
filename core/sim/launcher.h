#pragma once
// The simulated launcher: runs a kernel body for every thread of a grid on the CPU, each block's
// threads as fibers so that barriers wait. Blocks are independent, as on a GPU: ranges of them
// run on several host threads (LaunchOptions::threads), each with its own fibers, and what they
// report is merged in linear block order (x fastest), so the report is the one a single thread
// running the blocks in that order gives. It
// never crashes on a faulty kernel: out-of-bounds accesses, barrier divergence and shared-memory
// races become Diagnostics. Counters are exact for every launch; the trace is capped.
//
//   auto report = sim::launch(config, arrays, options, [&](auto& ctx) { naiveMatmul(ctx, args); });
//
// The body is called with a SimThreadContext, or a TracingSimContext for traced blocks, so it
// must accept both (a generic lambda over a kernel template).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/sim/block_runner.h"
#include "core/sim/block_state.h"
#include "core/sim/diagnostics.h"
#include "core/sim/launch_config.h"
#include "core/sim/sim_context.h"
#include "core/sim/trace.h"

namespace matmulviz::sim {

struct LaunchOptions {
  std::string kernel = "kernel";                       ///< name used in diagnostics
  bool trace = false;                                  ///< record per-thread events
  std::size_t traceCapBytes = std::size_t{256} << 20;  ///< at most this much trace memory
  std::vector<std::uint64_t> traceBlocks;  ///< linear block ids (x fastest) to trace; empty: all
  std::size_t maxDiagnostics = 32;         ///< detailed diagnostics kept (counts stay exact)
  std::size_t stackBytes = 0;              ///< fiber stack per thread; 0: default
  /// Host threads that simulate blocks side by side: 0 (the default) is the hardware's
  /// concurrency, 1 runs every block on the calling thread. Whatever the number, the report
  /// (counters, diagnostics, trace, C) is the same as one thread running the blocks in order.
  /// A launch uses fewer when it has fewer blocks or too little work to share (see below).
  unsigned threads = 0;
  /// Simulated threads each host thread gets at least: a launch of fewer than twice this many
  /// runs on the calling thread, where starting another would cost more than it saves (the
  /// engine's many small launches). Tests set 1 to split small grids.
  std::uint64_t minThreadsPerHostThread = 16384;
};

/// The host threads `LaunchOptions::threads` asks for: itself when non-zero, else
/// std::thread::hardware_concurrency() (at least 1).
unsigned resolveSimThreads(unsigned requested);

struct LaunchStats : LaunchCounters {
  std::uint64_t blocks = 0;
  std::uint64_t threads = 0;
  std::uint64_t barriers = 0;  ///< barrier phases completed, summed over blocks
  double elapsedS = 0;         ///< wall time of the simulation, seconds
  unsigned hostThreads = 1;    ///< host threads that ran the blocks
  double threadsPerS() const { return elapsedS > 0 ? static_cast<double>(threads) / elapsedS : 0; }
};

/// A launch that ran before the reported one as one step of the same kernel (kernel 08's
/// bucketing: histogram, prefix sum, scatter): its name, shape and counters. Its diagnostics are
/// among the report's, under its name.
struct PriorLaunch {
  std::string kernel;
  LaunchConfig config;
  LaunchStats stats;
};

struct LaunchReport {
  std::string kernel;
  LaunchConfig config;
  LaunchStats stats;
  std::vector<Diagnostic> diagnostics;  ///< the first options.maxDiagnostics
  DiagnosticCounts diagnosticCounts;    ///< exact
  std::vector<ArrayInfo> arrays;        ///< the launch's array table (ids as in views)
  bool traced = false;
  std::vector<std::uint64_t> tracedBlocks;  ///< empty with traced: every block
  Trace trace;
  std::vector<PriorLaunch> priorLaunches;  ///< in launch order; empty for a one-launch kernel
};

namespace detail {
LaunchReport runLaunch(const LaunchConfig& config, std::vector<ArrayInfo> arrays,
                       const LaunchOptions& options, BlockRunner::ThreadEntry plain,
                       BlockRunner::ThreadEntry traced, void* body);

/// One simulated thread: its context lives here, on the fiber's stack. `flatten` inlines the
/// kernel body, so the context never escapes and its counters stay in registers.
template <class Ctx, class B>
[[gnu::flatten]] void runThread(void* body, ThreadSlot& slot, BlockState& block) {
  Ctx ctx(slot, block);
  (*static_cast<B*>(body))(ctx);
  ctx.finish();
}
}  // namespace detail

/// Runs `body` for every thread of `config` (validated against CUDA's limits; throws
/// std::invalid_argument when invalid or when a trace block is outside the grid). `arrays`
/// describes the views the body uses, for diagnostics and traces. Rethrows exceptions the body
/// raises (std::bad_alloc) after stopping the launch.
template <class Body>
LaunchReport launch(const LaunchConfig& config, std::vector<ArrayInfo> arrays,
                    const LaunchOptions& options, Body&& body) {
  using B = std::remove_reference_t<Body>;
  BlockRunner::ThreadEntry plain = &detail::runThread<SimThreadContext, B>;
  BlockRunner::ThreadEntry traced = &detail::runThread<TracingSimContext, B>;
  return detail::runLaunch(config, std::move(arrays), options, plain, traced,
                           const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace matmulviz::sim
