#pragma once
// Internal to core/io: the reader that turns a parsed pickle into a MemorySnapshot by a fixed
// schema (memory_snapshot.cpp: the root, segments and blocks; snapshot_trace.cpp: the traces,
// frames and stacks, which it can also take while the pickle is parsed).

#include "core/io/memory_snapshot.h"
#include "core/io/pickle_reader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace matmulviz::snapshot::detail {

using pickle::Document;
using pickle::Kind;
using pickle::Value;

// The key path of a value, kept on the stack while descending and spelled only for an error:
// device_traces[0][17].size.
struct Where {
  const Where* parent = nullptr;
  std::string_view key;
  size_t index = 0;
  bool isIndex = false;

  Where child(std::string_view k) const { return {this, k, 0, false}; }
  Where at(size_t i) const { return {this, {}, i, true}; }
  std::string str() const {
    std::string up = parent ? parent->str() : std::string();
    if (isIndex) return up + "[" + std::to_string(index) + "]";
    return up.empty() ? std::string(key) : up + "." + std::string(key);
  }
};

[[noreturn]] inline void bad(const Where& w, const std::string& what) {
  const std::string path = w.str();
  throw SnapshotError((path.empty() ? std::string("the snapshot") : path) + ": " + what);
}

// A value for a message: quoted, and cut after 60 bytes (a file may hold any length).
inline std::string quoted(std::string_view s) {
  return "'" + std::string(s.substr(0, 60)) + (s.size() > 60 ? "...'" : "'");
}

inline void expect(const Value& v, Kind kind, const Where& w) {
  if (v.kind != kind)
    bad(w, std::string("expected ") + pickle::kindName(kind) + ", got " + pickle::kindName(v.kind));
}

inline int64_t asInt(const Value& v, const Where& w) {
  expect(v, Kind::Int, w);
  return v.integer;
}

inline int64_t asBytes(const Value& v, const Where& w) {  // a size or an address
  const int64_t i = asInt(v, w);
  if (i < 0) bad(w, "expected a number of bytes >= 0, got " + std::to_string(i));
  return i;
}

inline std::string_view asString(const Document& doc, const Value& v, const Where& w) {
  expect(v, Kind::String, w);
  return doc.string(v);
}

inline bool asBool(const Value& v, const Where& w) {
  expect(v, Kind::Bool, w);
  return v.integer != 0;
}

inline void expectStringOrNone(const Value& v, const Where& w) {
  if (v.kind != Kind::String && v.kind != Kind::None)
    bad(w, std::string("expected a string or None, got ") + pickle::kindName(v.kind));
}

inline std::optional<TraceAction> parseAction(std::string_view s) {
  for (uint8_t i = 0; i <= static_cast<uint8_t>(TraceAction::Oom); ++i)
    if (s == actionName(static_cast<TraceAction>(i))) return static_cast<TraceAction>(i);
  return std::nullopt;
}

inline std::optional<BlockState> parseState(std::string_view s) {
  for (uint8_t i = 0; i <= static_cast<uint8_t>(BlockState::Inactive); ++i)
    if (s == stateName(static_cast<BlockState>(i))) return static_cast<BlockState>(i);
  return std::nullopt;
}

inline void missing(const Where& w, const char* key) {
  bad(w, std::string("missing key '") + key + "'");
}

// Reads a snapshot's dicts by a fixed schema: the descent is as deep as the schema, so a cyclic
// pickle (a list holding itself) ends in a type error, never in a loop.
// It can take a trace's entries while the pickle is parsed (pickle::ParseOptions::takeItems),
// so that the parsed tree never holds them: take() converts each batch into columns at once.
class Converter {
 public:
  explicit Converter(const LoadOptions& options) : options_(options) {
    out_.stacks.emplace_back();  // stack 0: no frames
  }
  /// Converts the whole document (with the entries take() took). Throws SnapshotError.
  MemorySnapshot run(const Document& doc);
  /// For ParseOptions::takeItems: takes `items` when they are appended to a list that take()
  /// took before, or to an empty list and the first is a trace entry (a dict with a known
  /// 'action' and an 'addr' or 'device_free'). A bad entry is remembered and reported by run()
  /// with its path, once the list is found among device_traces; a taken list found elsewhere is
  /// an error there. Throws only pickle::Cancelled.
  bool take(const Document& doc, const Value& list, std::span<const Value> items);

 private:
  /// The entries of one list taken while parsing.
  struct Taken {
    DeviceTrace trace;
    std::string error;  ///< the first bad entry: "[17].size: expected an int, got a string"
    bool used = false;  ///< found in device_traces
  };
  enum : uint8_t { kFree = 0, kClaimed = 1 };

  const Document* doc_ = nullptr;
  const LoadOptions& options_;
  MemorySnapshot out_;
  size_t sinceCheck_ = 0;
  std::unordered_map<uint32_t, Taken> taken_;          // by list container
  std::unordered_map<uint32_t, StackId> stackOfList_;  // by container: memo-shared lists
  std::unordered_map<uint32_t, uint32_t> frameOfDict_;
  std::map<std::vector<uint32_t>, StackId> stackOfFrames_;  // by content: equal, unshared
  std::unordered_map<std::string, uint32_t> frameOfText_;
  std::vector<uint8_t> claimed_;  // by container: kFree or kClaimed

  // Calls f(key, value, where) for each pair of `dict` whose key is a string.
  // Frames are not claimed: they are interned (read once), and a trace taken while parsing
  // may have read one before the segments that hold it too.
  template <class F>
  void forEachPair(const Value& dict, const Where& w, F&& f, bool claimIt = true) {
    expect(dict, Kind::Dict, w);
    if (claimIt) claim(dict, w);
    const auto kv = doc_->items(dict);
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (kv[i].kind != Kind::String) continue;
      const std::string_view key = doc_->string(kv[i]);
      f(key, kv[i + 1], w.child(key));
    }
  }
  std::span<const Value> listItems(const Value& v, const Where& w) {
    expect(v, Kind::List, w);
    claim(v, w);
    return doc_->items(v);
  }
  // Each non-empty container is read once: a pickle may refer to one list a million times
  // through the memo at 2 bytes a reference, and reading it each time would multiply the work
  // and the snapshot ("billion laughs"). Frames are interned, so they never come here twice.
  // An entry take() took is released: the parser reuses its slot, and a memo get of it gives
  // None.
  void claim(const Value& v, const Where& w) {
    if (v.container >= claimed_.size()) claimed_.resize(v.container + size_t{1} + v.container / 2);
    if (doc_->items(v).empty()) return;
    if (claimed_[v.container])
      bad(w, std::string(pickle::kindName(v.kind)) +
                 " that already appeared elsewhere in the snapshot (PyTorch writes each once)");
    claimed_[v.container] = kClaimed;
  }
  bool isTraceEntry(const Value& v) const;
  void tick() {
    if (++sinceCheck_ < 65536) return;
    sinceCheck_ = 0;
    if (options_.cancel && options_.cancel->load(std::memory_order_relaxed))
      throw pickle::Cancelled();
  }

  void readRoot();
  void readSegment(const Value& v, const Where& w);
  void readPoolId(const Value& v, const Where& w, Segment& seg);
  void readBlock(const Value& v, const Where& w, Block& block, int64_t& nextAddress);
  void readHistory(const Value& v, const Where& w, Block& block, bool hasRequested);
  void readTrace(const Value& v, const Where& w);
  void readEvent(const Value& v, const Where& w, DeviceTrace& t);
  void readAllocatorSettings(const Value& v, const Where& w);
  StackId readStack(const Value& v, const Where& w);
  uint32_t readFrame(const Value& v, const Where& w);
};

}  // namespace matmulviz::snapshot::detail
