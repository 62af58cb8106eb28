#include "core/report/python_run.h"

#include "core/util/saturating.h"

#include <algorithm>
#include <unordered_map>

namespace matmulviz {

namespace {

/// "file.py:12" for `frame`: the file by its name without its folder.
std::string frameText(const PythonFrame& frame) {
  std::string file = frame.file;
  if (const size_t slash = file.find_last_of('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  return file + ":" + std::to_string(frame.line);
}

}  // namespace

PythonRun pythonRunFromReport(const PythonReport& report) {
  PythonRun run;
  run.script = report.script.value_or("");
  run.complete = report.complete;
  run.error = report.error;
  run.torch = report.torch;
  run.valueReads = report.valueReads;
  run.pinnedHost = report.pinnedHost;
  MemoryTimeline& t = run.timeline;
  t.opNames = report.ops;
  t.records.reserve(report.allocations.size());
  std::unordered_map<int64_t, size_t> recordOf;
  for (const PythonAllocation& a : report.allocations) {
    AllocationRecord rec;
    rec.id = a.id;
    rec.label = a.label;
    if (a.frame >= 0) rec.label += " at " + frameText(report.frames[static_cast<size_t>(a.frame)]);
    rec.opId = a.op;
    rec.requestedBytes = a.requestedBytes;
    rec.blockBytes = a.blockBytes;
    rec.small = a.small;
    rec.alive = a.alive;
    rec.category = a.category;
    recordOf[rec.id] = t.records.size();
    t.records.push_back(std::move(rec));
  }
  for (const auto& [id, holders] : report.keptAliveBy) {
    std::string why;
    for (const PythonHolder& h : holders) why += (why.empty() ? "" : "; ") + h.why;
    t.aliveWhy[id] = why;
  }
  int64_t requested = 0;
  t.events.reserve(report.events.size());
  for (MemoryEvent ev : report.events) {
    const auto rec = recordOf.find(ev.allocationId);
    if (rec != recordOf.end() && ev.kind == MemoryEventKind::Alloc)
      requested = addSaturating(requested, t.records[rec->second].requestedBytes);
    if (rec != recordOf.end() && ev.kind == MemoryEventKind::Free)
      requested = subSaturating(requested, t.records[rec->second].requestedBytes);
    ev.after.requestedBytes = std::max<int64_t>(0, requested);
    t.events.push_back(ev);
  }
  return run;
}

PythonRun readPythonRun(const nlohmann::json& doc, const JsonReader& reader,
                        std::vector<std::string>& ignored) {
  const PythonReport report = readPythonReport(doc, reader.file());
  ignored.insert(ignored.end(), report.ignored.begin(), report.ignored.end());
  return pythonRunFromReport(report);
}

}  // namespace matmulviz
