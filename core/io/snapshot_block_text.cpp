#include "core/io/snapshot_block_text.h"

#include "core/io/snapshot_categories.h"
#include "core/io/snapshot_frames.h"
#include "core/io/snapshot_timeline.h"
#include "core/util/format_units.h"

#include <cstdio>
#include <string_view>
#include <unordered_map>

namespace matmulviz::snapshot {

namespace {

std::string hex(int64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

std::string when(const DeviceTrace* trace, int64_t x) {
  if (!trace || x < 0 || x >= static_cast<int64_t>(trace->count())) return "?";
  char text[64];
  std::snprintf(text, sizeof text, "trace entry %lld (%.0f us)", static_cast<long long>(x),
                traceTimeUs(*trace, x));
  return text;
}

}  // namespace

std::vector<BlockFacts> timelineBlocks(const MemorySnapshot& s, size_t device) {
  std::vector<BlockFacts> out;
  std::unordered_map<int64_t, size_t> live;  // address -> index in out
  auto end = [&](int64_t addr, int64_t x) {
    if (const auto it = live.find(addr); it != live.end()) {
      out[it->second].freeEvent = x;
      live.erase(it);
    }
  };
  for (const InitialBlock& b : initialBlocks(s, device)) {
    end(b.addr, -1);
    live[b.addr] = out.size();
    out.push_back({b.addr, b.size, b.requested, b.stack, -1, -1});
  }
  const DeviceTrace* trace = device < s.traces.size() ? &s.traces[device] : nullptr;
  for (size_t x = 0; trace && x < trace->count(); ++x) {
    const auto ix = static_cast<int64_t>(x);
    const int64_t addr = trace->addr[x];
    if (trace->action[x] == TraceAction::Alloc) {
      end(addr, ix);
      live[addr] = out.size();
      out.push_back({addr, trace->size[x], trace->size[x], trace->stack[x], ix, -1});
    } else if (trace->action[x] == TraceAction::FreeCompleted) {
      end(addr, ix);
    }
  }
  return out;
}

double traceTimeUs(const DeviceTrace& trace, int64_t x) {
  if (x < 0 || x >= static_cast<int64_t>(trace.count())) return -1;
  int64_t t0 = -1;
  for (size_t i = 0; i < trace.count() && t0 < 0; ++i) t0 = trace.timeUs[i];
  const int64_t us = trace.timeUs[size_t(x)];
  return us >= 0 && t0 >= 0 ? double(us - t0) : double(x + 1);
}

std::string stackText(const MemorySnapshot& s, StackId stack, size_t maxLines) {
  if (stack >= s.stacks.size() || s.stacks[stack].empty())
    return "no frames recorded (allocated before _record_memory_history was enabled)\n";
  std::vector<std::string> lines;
  const auto& frames = s.stacks[stack];
  for (size_t i = 0; i < frames.size();) {
    const Frame& f = s.frames[frames[i]];
    size_t j = i + 1;
    while (j < frames.size() && frames[j] == frames[i]) ++j;
    if (memoryVizShows(f)) {
      const bool noFile = f.filename.empty() || f.filename == "??";  // a C++ frame
      lines.push_back(noFile ? f.name : f.filename + ":" + std::to_string(f.line) + " " + f.name);
      if (j - i == 2) lines.push_back(lines.back());
      if (j - i > 2) lines.push_back("<repeats " + std::to_string(j - i - 1) + " times>");
    }
    i = j;
  }
  std::string out;
  for (size_t i = 0; i < lines.size() && i < maxLines; ++i) out += lines[i] + "\n";
  if (lines.size() > maxLines)
    out += "... " + std::to_string(lines.size() - maxLines) + " more frames\n";
  return out;
}

std::string describeBlock(const MemorySnapshot& s, size_t device, const BlockFacts& b) {
  const DeviceTrace* trace = device < s.traces.size() ? &s.traces[device] : nullptr;
  std::string out = "block " + hex(b.addr) + ": " + formatSize(b.size);
  if (b.requested != b.size) out += " (requested " + formatSize(b.requested) + ")";
  out += "\nallocated ";
  out += b.allocEvent < 0 ? "before the recording started" : "at " + when(trace, b.allocEvent);
  out += b.freeEvent < 0 ? "; alive at the end of the trace"
                         : "; freed at " + when(trace, b.freeEvent);
  const CategoryChoice c =
      BlockCategorizer(s, device).categorize({b.stack, b.size, b.allocEvent, b.freeEvent});
  out += "\ncategory: " + std::string(memoryCategoryName(c.category));
  out +=
      c.rule.empty() ? " (no rule matched its frames or its lifetime)" : " (rule: " + c.rule + ")";
  out += "\nstack, innermost first:\n" + stackText(s, b.stack);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace matmulviz::snapshot
