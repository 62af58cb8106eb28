#include "core/report/report_text.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace matmulviz {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string seconds(double s) {
  return s >= 1 ? fmt("%.2f s", s) : fmt("%.1f ms", s * 1e3);
}

/// MiB as the seed prints them, or the exact size below 1 MiB ("256.00 KiB").
std::string sizeText(int64_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(toMiBFloor(bytes)) + " MiB" : formatBytes(bytes);
}

std::string relErr(double e) {
  return std::isnan(e) ? "-" : fmt("%.1e", e);
}

/// Entries worth telling: anything but the caller's own a, c and out with nothing more on them.
bool worthTelling(const KeptAlive& k) {
  const bool plain = k.why == "input a, held by the caller" ||
                     k.why == "input c, held by the caller" ||
                     k.why == "the output, held by the caller as out";
  return !plain;
}

void writeBackward(std::ostream& os, const StrategiesReport& report) {
  bool any = false;
  for (const StrategyRun& r : report.runs)
    any = any || r.backward.status != BackwardOutcome::Status::NotRequested;
  if (!any) return;
  os << "\nbackward (grad_output random normal, or --grad-output):\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-10s %10s %12s %12s %12s %12s\n", "strategy", "time",
                "maxMem", "curMem", "err dA", "err dC");
  os << line;
  for (const StrategyRun& r : report.runs) {
    const BackwardOutcome& b = r.backward;
    using S = BackwardOutcome::Status;
    if (b.status == S::Ran) {
      std::snprintf(line, sizeof line, "  %-10s %10s %12s %12s %12s %12s\n", r.strategy.c_str(),
                    seconds(b.timeSeconds).c_str(), sizeText(b.maxMemBytes).c_str(),
                    sizeText(b.curMemBytes).c_str(), relErr(b.maxRelErrDA).c_str(),
                    relErr(b.maxRelErrDC).c_str());
      os << line;
    } else if (b.status != S::NotRequested) {
      os << "  " << r.strategy << ": " << (b.status == S::Skipped ? "skipped: " : "failed: ")
         << b.message << "\n";
    }
  }
}

}  // namespace

void writeTextReport(std::ostream& os, const StrategiesReport& report) {
  const Workload& w = report.workload;
  std::string grads = "none";
  if (!report.runs.empty() && !report.runs.front().requiresGrad.empty()) {
    grads.clear();
    for (const auto& g : report.runs.front().requiresGrad) grads += (grads.empty() ? "" : ",") + g;
  }
  os << "workload: a [" << w.n << ", " << w.i << ", " << w.j << "], c [" << w.m << ", " << w.j
     << ", " << w.k << "], q [" << w.n << "], batch " << w.batch << ", " << dtypeName(w.dtype)
     << ", device " << deviceKindName(report.device) << ", requires_grad " << grads << "\n";
  for (const auto& note : report.notes) os << "note: " << note << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "\n%-10s %10s %10s %11s %11s  %-16s %11s\n", "strategy",
                "median", "cold", "curMem MiB", "maxMem MiB", "output", "max_rel_err");
  os << line;
  for (const StrategyRun& r : report.runs) {
    if (!r.ok) {
      std::snprintf(line, sizeof line, "%-10s %10s %10s %11lld %11lld  FAILED: %s\n",
                    r.strategy.c_str(), "-", "-",
                    static_cast<long long>(toMiBFloor(r.current.allocatedBytes)),
                    static_cast<long long>(toMiBFloor(r.peak.allocatedBytes)), r.error.c_str());
      os << line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-10s %10s %10s %11lld %11lld  %-16s %11s\n",
                  r.strategy.c_str(), seconds(r.time.median).c_str(), seconds(r.time.cold).c_str(),
                  static_cast<long long>(toMiBFloor(r.current.allocatedBytes)),
                  static_cast<long long>(toMiBFloor(r.peak.allocatedBytes)),
                  shapeToString(r.outputShape).c_str(), relErr(r.maxRelErr).c_str());
    os << line;
  }
  os << "\ncurMem: memory_allocated() after `out = strategy(...)` with out held; maxMem: its peak "
        "since a and c were made.\n";
  os << "\nwhat stays alive after the statement besides a, c and out, and why:\n";
  bool toldAny = false;
  for (const StrategyRun& r : report.runs)
    for (const KeptAlive& k : r.keptAlive) {
      if (!worthTelling(k)) continue;
      os << "  " << r.strategy << ": " << k.label << ", " << sizeText(k.bytes);
      if (k.count > 1) os << " in " << k.count << " blocks";
      os << ", " << k.why << "\n";
      toldAny = true;
    }
  if (!toldAny) os << "  nothing: every strategy leaves only a, c and out\n";
  writeBackward(os, report);
}

}  // namespace matmulviz
