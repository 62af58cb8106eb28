#include "core/sim/trace_io.h"

#include <ostream>
#include <stdexcept>

namespace matmulviz::sim {
namespace {

void dim3(std::ostream& out, const Dim3& d) {
  out << '[' << d.x << ',' << d.y << ',' << d.z << ']';
}

void jsonString(std::ostream& out, const std::string& s) {
  out << '"';
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out << '\\' << ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      out << ' ';
    } else {
      out << ch;
    }
  }
  out << '"';
}

}  // namespace

void writeTraceJson(std::ostream& out, const LaunchReport& report) {
  out << "{\"format\":\"matmulviz-trace-1\",\"kernel\":";
  jsonString(out, report.kernel);
  out << ",\"grid\":";
  dim3(out, report.config.gridDim);
  out << ",\"block\":";
  dim3(out, report.config.blockDim);
  out << ",\"shared_bytes\":" << report.config.sharedBytes << ",\"arrays\":[";
  for (std::size_t i = 0; i < report.arrays.size(); ++i) {
    const ArrayInfo& a = report.arrays[i];
    out << (i ? "," : "") << "{\"id\":" << a.id << ",\"name\":";
    jsonString(out, a.name);
    out << ",\"space\":\"" << (a.shared ? "shared" : "global") << "\",\"shape\":[";
    for (std::size_t d = 0; d < a.shape.size(); ++d) out << (d ? "," : "") << a.shape[d];
    out << "],\"element_bytes\":" << a.elementBytes << '}';
  }
  out << "],\"traced_blocks\":";
  if (report.tracedBlocks.empty()) {
    out << "\"all\"";
  } else {
    out << '[';
    for (std::size_t i = 0; i < report.tracedBlocks.size(); ++i) {
      out << (i ? "," : "") << report.tracedBlocks[i];
    }
    out << ']';
  }
  out << ",\"cap_bytes\":" << report.trace.capBytes()
      << ",\"events_recorded\":" << report.trace.events().size()
      << ",\"events_dropped\":" << report.trace.dropped() << ",\"kinds\":[";
  for (int k = 0; k <= static_cast<int>(TraceEventKind::ThreadExit); ++k) {
    out << (k ? "," : "") << '"' << toString(static_cast<TraceEventKind>(k)) << '"';
  }
  out << "],\"event_fields\":[\"block\",\"thread\",\"kind\",\"array\",\"i0\",\"i1\",\"i2\"],"
         "\"events\":[";
  bool first = true;
  for (const TraceEvent& e : report.trace.events()) {
    out << (first ? "\n[" : ",\n[") << e.block << ',' << e.thread << ',' << static_cast<int>(e.kind)
        << ',' << static_cast<int>(e.array) << ',' << e.index[0] << ',' << e.index[1] << ','
        << e.index[2] << ']';
    first = false;
  }
  out << "]}\n";
  if (!out) throw std::runtime_error("writing the trace failed (disk full or not writable?)");
}

}  // namespace matmulviz::sim
