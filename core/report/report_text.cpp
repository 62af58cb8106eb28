#include "core/report/report_text.h"

#include "core/util/format_units.h"

#include <algorithm>
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

/// "-" when the error was not computed (meta, a failed run, a gradient not required), "NaN" or
/// "inf" when the check found a value that is not finite, else "4.6e-07".
std::string relErr(double e, bool checked) {
  if (!checked) return "-";
  if (std::isnan(e)) return "NaN";
  if (std::isinf(e)) return "inf";
  return fmt("%.1e", e);
}

/// Entries worth telling: anything but the caller's own a, c and out with nothing more on them.
bool worthTelling(const KeptAlive& k) {
  const bool plain = k.why == "input a, held by the caller" ||
                     k.why == "input c, held by the caller" ||
                     k.why == "the output, held by the caller as out";
  return !plain;
}

/// What stays alive after each statement that finished, and why.
void writeKeptAlive(std::ostream& os, const StrategiesReport& report) {
  os << "\nwhat stays alive after the statement besides a, c and out, and why:\n";
  bool toldAny = false, anyRan = false, anyFailed = false;
  for (const StrategyRun& r : report.runs) {
    (r.ok ? anyRan : anyFailed) = true;
    if (!r.ok) continue;
    for (const KeptAlive& k : r.keptAlive) {
      if (!worthTelling(k)) continue;
      os << "  " << r.strategy << ": ";
      if (k.whyNamesTheBlock()) {
        os << k.why << "\n";
      } else {
        os << k.label << ", " << formatSize(k.bytes);
        if (k.count > 1) os << " in " << k.count << " blocks";
        os << ", " << k.why << "\n";
      }
      toldAny = true;
    }
  }
  if (!anyRan)
    os << "  nothing to tell: no strategy finished its statement\n";
  else if (!toldAny)
    os << (anyFailed ? "  nothing: every strategy that finished leaves only a, c and out\n"
                     : "  nothing: every strategy leaves only a, c and out\n");
}

void writeBackward(std::ostream& os, const StrategiesReport& report) {
  bool any = false;
  for (const StrategyRun& r : report.runs)
    any = any || r.backward.status != BackwardOutcome::Status::NotRequested;
  if (!any) return;
  os << "\nbackward (grad_output random normal unless one was given):\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-10s %10s %12s %12s %12s %12s\n", "strategy", "time",
                "maxMem", "curMem", "err dA", "err dC");
  os << line;
  const bool data = report.device != DeviceKind::Meta;
  for (const StrategyRun& r : report.runs) {
    const BackwardOutcome& b = r.backward;
    using S = BackwardOutcome::Status;
    if (b.status == S::Ran) {
      std::snprintf(line, sizeof line, "  %-10s %10s %12s %12s %12s %12s\n", r.strategy.c_str(),
                    formatSeconds(b.timeSeconds).c_str(), formatSize(b.maxMemBytes).c_str(),
                    formatSize(b.curMemBytes).c_str(),
                    relErr(b.maxRelErrDA, data && r.requiresGrad.a).c_str(),
                    relErr(b.maxRelErrDC, data && r.requiresGrad.c).c_str());
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
  const std::string grads =
      report.runs.empty() ? RequiresGrad{}.text() : report.runs.front().requiresGrad.text();
  os << "workload: a [" << w.n << ", " << w.i << ", " << w.j << "], c [" << w.m << ", " << w.j
     << ", " << w.k << "], q [" << w.n << "], batch " << w.batch << ", " << dtypeName(w.dtype)
     << ", device " << deviceKindName(report.device) << ", requires_grad " << grads << "\n";
  if (report.pytorch) {
    os << "memory model: " << report.pytorch->describe();
    if (report.pytorch->cublasWorkspaceConfig)
      os << ", CUBLAS_WORKSPACE_CONFIG=" << *report.pytorch->cublasWorkspaceConfig;
    os << "\n";
  }
  for (const auto& note : report.notes) os << "note: " << note << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "\n%-10s %10s %10s %10s %10s  %-16s %11s\n", "strategy",
                "median", "cold", "curMem", "maxMem", "output", "max_rel_err");
  os << line;
  const bool data = report.device != DeviceKind::Meta;
  for (const StrategyRun& r : report.runs) {
    if (!r.ok) {  // curMem/maxMem of a statement that did not finish mean nothing
      std::snprintf(line, sizeof line, "%-10s %10s %10s %10s %10s  FAILED: %s\n",
                    r.strategy.c_str(), "-", "-", "-", "-", r.error.c_str());
      os << line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-10s %10s %10s %10s %10s  %-16s %11s\n", r.strategy.c_str(),
                  formatSeconds(r.time.median).c_str(), formatSeconds(r.time.cold).c_str(),
                  formatSize(r.current.allocatedBytes).c_str(),
                  formatSize(r.peak.allocatedBytes).c_str(), shapeToString(r.outputShape).c_str(),
                  relErr(r.maxRelErr, data).c_str());
    os << line;
  }
  os << "\ncurMem: memory_allocated() after `out = strategy(...)` with out held; maxMem: its peak "
        "since a and c were made.\n";
  for (const StrategyRun& r : report.runs)
    for (const std::string& warning : r.accuracyWarnings)
      os << "warning: " << r.strategy << ": " << warning << "\n";
  writeKeptAlive(os, report);
  writeBackward(os, report);
}

}  // namespace matmulviz
