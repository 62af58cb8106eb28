// The segments panel's cost on a big snapshot: how long AllocatorHistory takes to replay a trace
// of N events once (its checkpoints), what the checkpoints and the kept trace hold, and how long
// the state at a random event then takes (what a scrub pays). The snapshot is the generated
// training-like trace of tests/common/snapshot_generator.h.
//   bench_engine_allocator_state [EVENTS (default 10000000)] [PATH (default /tmp/...pickle)]
#include "core/io/allocator_history.h"
#include "tests/bench/bench_stats.h"
#include "tests/common/snapshot_generator.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

namespace {

/// "VmRSS" or "VmHWM" of this process, MiB.
double statusMiB(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace matmulviz;
  const uint64_t events = argc > 1 ? std::stoull(argv[1]) : 10'000'000;
  const std::string path = argc > 2 ? argv[2] : "/tmp/bench_allocator_state.pickle";
  testing::SnapshotGenerator::write(path, events, 3000, 1);
  auto t0 = std::chrono::steady_clock::now();
  auto s = std::make_shared<const snapshot::MemorySnapshot>(snapshot::readMemorySnapshot(path));
  std::printf("read %llu events: %.2f s, RSS %.0f MiB\n", (unsigned long long)s->eventCount(),
              bench::seconds(t0), statusMiB("VmRSS"));
  const double before = statusMiB("VmRSS");
  t0 = std::chrono::steady_clock::now();
  const snapshot::AllocatorHistory h(s, 0);
  std::printf("history: %.2f s; %zu checkpoints every %zu events, %.1f MiB; RSS +%.0f MiB\n",
              bench::seconds(t0), h.checkpointCount(), h.checkpointInterval(),
              double(h.checkpointBytes()) / (1 << 20), statusMiB("VmRSS") - before);
  std::mt19937_64 rng(5);
  std::vector<double> ms;
  size_t blocks = 0;
  for (int i = 0; i < 200; ++i) {
    const int64_t x = int64_t(rng() % uint64_t(h.eventCount()));
    t0 = std::chrono::steady_clock::now();
    blocks += h.stateAfter(x).blocks.size();
    ms.push_back(bench::seconds(t0) * 1e3);
  }
  std::printf("state at a random event: median %.2f ms, max %.2f ms (%zu blocks on average)\n",
              bench::median(ms), *std::max_element(ms.begin(), ms.end()), blocks / 200);
  std::printf("peak RSS %.0f MiB\n", statusMiB("VmHWM"));
  std::remove(path.c_str());
  return 0;
}
