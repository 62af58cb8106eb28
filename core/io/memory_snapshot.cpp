#include "core/io/memory_snapshot.h"

#include "core/io/pickle_reader.h"

#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace matmulviz::snapshot {

using pickle::Document;
using pickle::Kind;
using pickle::Value;

const char* actionName(TraceAction action) {
  constexpr const char* kNames[] = {"alloc",         "free_requested", "free_completed",
                                    "segment_alloc", "segment_free",   "segment_map",
                                    "segment_unmap", "snapshot",       "oom"};
  return kNames[static_cast<size_t>(action)];
}

const char* stateName(BlockState state) {
  constexpr const char* kNames[] = {"active_allocated", "active_pending_free",
                                    "active_awaiting_free", "inactive"};
  return kNames[static_cast<size_t>(state)];
}

size_t MemorySnapshot::eventCount() const {
  size_t n = 0;
  for (const DeviceTrace& t : traces) n += t.count();
  return n;
}

namespace {

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

[[noreturn]] void bad(const Where& w, const std::string& what) {
  const std::string path = w.str();
  throw SnapshotError((path.empty() ? std::string("the snapshot") : path) + ": " + what);
}

// A value for a message: quoted, and cut after 60 bytes (a file may hold any length).
std::string quoted(std::string_view s) {
  return "'" + std::string(s.substr(0, 60)) + (s.size() > 60 ? "...'" : "'");
}

void expect(const Value& v, Kind kind, const Where& w) {
  if (v.kind != kind)
    bad(w, std::string("expected ") + pickle::kindName(kind) + ", got " + pickle::kindName(v.kind));
}

int64_t asInt(const Value& v, const Where& w) {
  expect(v, Kind::Int, w);
  return v.integer;
}

int64_t asBytes(const Value& v, const Where& w) {  // a size or an address
  const int64_t i = asInt(v, w);
  if (i < 0) bad(w, "expected a number of bytes >= 0, got " + std::to_string(i));
  return i;
}

std::string_view asString(const Document& doc, const Value& v, const Where& w) {
  expect(v, Kind::String, w);
  return doc.string(v);
}

bool asBool(const Value& v, const Where& w) {
  expect(v, Kind::Bool, w);
  return v.integer != 0;
}

void expectStringOrNone(const Value& v, const Where& w) {
  if (v.kind != Kind::String && v.kind != Kind::None)
    bad(w, std::string("expected a string or None, got ") + pickle::kindName(v.kind));
}

std::optional<TraceAction> parseAction(std::string_view s) {
  for (uint8_t i = 0; i <= static_cast<uint8_t>(TraceAction::Oom); ++i)
    if (s == actionName(static_cast<TraceAction>(i))) return static_cast<TraceAction>(i);
  return std::nullopt;
}

std::optional<BlockState> parseState(std::string_view s) {
  for (uint8_t i = 0; i <= static_cast<uint8_t>(BlockState::Inactive); ++i)
    if (s == stateName(static_cast<BlockState>(i))) return static_cast<BlockState>(i);
  return std::nullopt;
}

void missing(const Where& w, const char* key) {
  bad(w, std::string("missing key '") + key + "'");
}

// Reads a snapshot's dicts by a fixed schema: the descent is as deep as the schema, so a cyclic
// pickle (a list holding itself) ends in a type error, never in a loop.
class Converter {
 public:
  Converter(const Document& doc, const LoadOptions& options) : doc_(doc), options_(options) {
    out_.stacks.emplace_back();  // stack 0: no frames
    claimed_.resize(doc.containerCount());
  }
  MemorySnapshot run();

 private:
  const Document& doc_;
  const LoadOptions& options_;
  MemorySnapshot out_;
  size_t sinceCheck_ = 0;
  std::unordered_map<uint32_t, StackId> stackOfList_;  // by container: memo-shared lists
  std::unordered_map<uint32_t, uint32_t> frameOfDict_;
  std::map<std::vector<uint32_t>, StackId> stackOfFrames_;  // by content: equal, unshared
  std::unordered_map<std::string, uint32_t> frameOfText_;
  std::vector<bool> claimed_;  // by container

  // Calls f(key, value, where) for each pair of `dict` whose key is a string.
  template <class F>
  void forEachPair(const Value& dict, const Where& w, F&& f) {
    expect(dict, Kind::Dict, w);
    claim(dict, w);
    const auto kv = doc_.items(dict);
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (kv[i].kind != Kind::String) continue;
      const std::string_view key = doc_.string(kv[i]);
      f(key, kv[i + 1], w.child(key));
    }
  }
  std::span<const Value> listItems(const Value& v, const Where& w) {
    expect(v, Kind::List, w);
    claim(v, w);
    return doc_.items(v);
  }
  // Each non-empty container is read once: a pickle may refer to one list a million times
  // through the memo at 2 bytes a reference, and reading it each time would multiply the work
  // and the snapshot ("billion laughs"). Frames are interned, so they never come here twice.
  void claim(const Value& v, const Where& w) {
    if (doc_.items(v).empty()) return;
    if (claimed_[v.container])
      bad(w, std::string(pickle::kindName(v.kind)) +
                 " that already appeared elsewhere in the snapshot (PyTorch writes each once)");
    claimed_[v.container] = true;
  }
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

MemorySnapshot Converter::run() {
  readRoot();
  if (options_.progress) options_.progress(doc_.input().size(), doc_.input().size());
  return std::move(out_);
}

void Converter::readRoot() {
  const Value& root = doc_.root();
  if (root.kind != Kind::Dict)
    throw SnapshotError(std::string("not a PyTorch memory snapshot: the pickle holds ") +
                        pickle::kindName(root.kind) +
                        ", not a dict with 'segments' and 'device_traces'");
  if (!doc_.find(root, "segments"))
    throw SnapshotError("not a PyTorch memory snapshot: the pickle's dict has no 'segments'");
  const Where top{};
  claim(root, top);
  // A key written twice keeps its last value, as in Python's dict.
  if (const Value* v = doc_.find(root, "segments")) {
    const Where w = top.child("segments");
    const auto items = listItems(*v, w);
    for (size_t i = 0; i < items.size(); ++i) readSegment(items[i], w.at(i));
  }
  if (const Value* v = doc_.find(root, "device_traces")) {
    const Where w = top.child("device_traces");
    const auto items = listItems(*v, w);
    for (size_t i = 0; i < items.size(); ++i) readTrace(items[i], w.at(i));
  }
  if (const Value* v = doc_.find(root, "allocator_settings"))
    readAllocatorSettings(*v, top.child("allocator_settings"));
  if (const Value* v = doc_.find(root, "external_annotations"))
    out_.externalAnnotations = listItems(*v, top.child("external_annotations")).size();
}

void Converter::readSegment(const Value& v, const Where& w) {
  Segment seg;
  const Value* blocks = nullptr;
  std::optional<Where> blocksAt;
  bool hasAddress = false, hasTotal = false;
  forEachPair(v, w, [&](std::string_view key, const Value& x, const Where& k) {
    if (key == "device")
      seg.device = asInt(x, k);
    else if (key == "address") {
      seg.address = asBytes(x, k);
      hasAddress = true;
    } else if (key == "total_size") {
      seg.totalSize = asBytes(x, k);
      hasTotal = true;
    } else if (key == "allocated_size")
      seg.allocatedSize = asBytes(x, k);
    else if (key == "active_size")
      seg.activeSize = asBytes(x, k);
    else if (key == "requested_size")
      seg.requestedSize = asBytes(x, k);
    else if (key == "stream")
      seg.stream = asInt(x, k);
    else if (key == "is_expandable")
      seg.expandable = asBool(x, k);
    else if (key == "segment_pool_id" || key == "pool_id")
      readPoolId(x, k, seg);
    else if (key == "frames")
      seg.stack = readStack(x, k);
    else if (key == "blocks") {
      blocks = &x;
      blocksAt.emplace(k);
    } else if (key == "segment_type") {
      expect(x, Kind::String, k);
      const std::string_view t = doc_.string(x);
      if (t != "small" && t != "large") bad(k, "expected 'small' or 'large', got " + quoted(t));
      seg.large = t == "large";
    }
  });
  if (!hasAddress) missing(w, "address");
  if (!hasTotal) missing(w, "total_size");
  if (!blocks) missing(w, "blocks");
  const auto items = listItems(*blocks, *blocksAt);
  const uint32_t segIndex = static_cast<uint32_t>(out_.segments.size());
  seg.firstBlock = static_cast<uint32_t>(out_.blocks.size());
  seg.blockCount = static_cast<uint32_t>(items.size());
  int64_t nextAddress = seg.address;
  for (size_t i = 0; i < items.size(); ++i) {
    Block block;
    block.segment = segIndex;
    readBlock(items[i], blocksAt->at(i), block, nextAddress);
    out_.blocks.push_back(block);
    tick();
  }
  out_.segments.push_back(seg);
}

void Converter::readPoolId(const Value& v, const Where& w, Segment& seg) {
  if (v.kind != Kind::Tuple && v.kind != Kind::List)
    bad(w, std::string("expected a tuple of two ints, got ") + pickle::kindName(v.kind));
  const auto items = doc_.items(v);
  if (items.size() != 2)
    bad(w, "expected a tuple of two ints, got " + std::to_string(items.size()) + " items");
  seg.poolId[0] = asInt(items[0], w.at(0));
  seg.poolId[1] = asInt(items[1], w.at(1));
}

void Converter::readBlock(const Value& v, const Where& w, Block& block, int64_t& nextAddress) {
  bool hasAddress = false, hasSize = false, hasState = false, hasRequested = false;
  const Value* history = nullptr;
  std::optional<Where> historyAt;
  forEachPair(v, w, [&](std::string_view key, const Value& x, const Where& k) {
    if (key == "address") {
      block.address = asBytes(x, k);
      hasAddress = true;
    } else if (key == "size") {
      block.size = asBytes(x, k);
      hasSize = true;
    } else if (key == "requested_size") {
      block.requestedSize = asBytes(x, k);
      hasRequested = true;
    } else if (key == "frames")
      block.stack = readStack(x, k);
    else if (key == "history") {
      history = &x;
      historyAt.emplace(k);
    } else if (key == "state") {
      expect(x, Kind::String, k);
      const auto state = parseState(doc_.string(x));
      if (!state)
        bad(k,
            "expected active_allocated, active_pending_free, active_awaiting_free or "
            "inactive, got " +
                quoted(doc_.string(x)));
      block.state = *state;
      hasState = true;
    }
  });
  if (!hasSize) missing(w, "size");
  if (!hasState) missing(w, "state");
  if (!hasAddress) block.address = nextAddress;  // PyTorch 2.0: blocks follow one another
  if (!hasRequested) block.requestedSize = block.size;
  if (history) readHistory(*history, *historyAt, block, hasRequested);
  if (block.size > INT64_MAX - block.address) bad(w.child("size"), "address + size overflows");
  nextAddress = block.address + block.size;
}

// PyTorch 2.0: a block's allocations, oldest first: [{addr, real_size, frames}]. The last one is
// the block's current allocation.
void Converter::readHistory(const Value& v, const Where& w, Block& block, bool hasRequested) {
  const auto items = listItems(v, w);
  for (size_t i = 0; i < items.size(); ++i) {
    const bool last = i + 1 == items.size();
    forEachPair(items[i], w.at(i), [&](std::string_view key, const Value& x, const Where& k) {
      if (key == "addr") {
        asBytes(x, k);
      } else if (key == "real_size") {
        const int64_t real = asBytes(x, k);
        if (last && !hasRequested) block.requestedSize = real;
      } else if (key == "frames") {
        const StackId s = readStack(x, k);
        if (last && block.stack == 0) block.stack = s;
      }
    });
  }
}

void Converter::readTrace(const Value& v, const Where& w) {
  const auto items = listItems(v, w);
  DeviceTrace& t = out_.traces.emplace_back();
  t.action.reserve(items.size());
  t.addr.reserve(items.size());
  t.size.reserve(items.size());
  t.stream.reserve(items.size());
  t.timeUs.reserve(items.size());
  t.stack.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    readEvent(items[i], w.at(i), t);
    tick();
  }
}

void Converter::readEvent(const Value& v, const Where& w, DeviceTrace& t) {
  std::optional<TraceAction> action;
  int64_t addr = -1, size = -1, stream = 0, timeUs = -1;
  StackId stack = 0;
  forEachPair(v, w, [&](std::string_view key, const Value& x, const Where& k) {
    if (key == "addr" || key == "device_free")
      addr = asBytes(x, k);
    else if (key == "size")
      size = asBytes(x, k);
    else if (key == "stream")
      stream = asInt(x, k);
    else if (key == "time_us")
      timeUs = asInt(x, k);
    else if (key == "frames")
      stack = readStack(x, k);
    else if (key == "compile_context" || key == "user_metadata")
      expectStringOrNone(x, k);
    else if (key == "action") {
      expect(x, Kind::String, k);
      action = parseAction(doc_.string(x));
      if (!action) bad(k, "unknown action " + quoted(doc_.string(x)));
    }
  });
  if (!action) missing(w, "action");
  if (size < 0) missing(w, "size");
  if (addr < 0) missing(w, *action == TraceAction::Oom ? "device_free" : "addr");
  t.action.push_back(*action);
  t.addr.push_back(addr);
  t.size.push_back(size);
  t.stream.push_back(stream);
  t.timeUs.push_back(timeUs);
  t.stack.push_back(stack);
}

void Converter::readAllocatorSettings(const Value& v, const Where& w) {
  forEachPair(v, w, [&](std::string_view key, const Value& x, const Where& k) {
    if (key == "PYTORCH_CUDA_ALLOC_CONF") {
      expectStringOrNone(x, k);
      if (x.kind == Kind::String) out_.allocatorConf = doc_.string(x);
    }
  });
}

// A frames list, interned: first by the container (the pickle's memo shares one list among
// every entry with that stack), then by its frame ids (equal stacks written twice).
StackId Converter::readStack(const Value& v, const Where& w) {
  expect(v, Kind::List, w);
  const auto items = doc_.items(v);
  if (items.empty()) return 0;
  if (const auto it = stackOfList_.find(v.container); it != stackOfList_.end()) return it->second;
  std::vector<uint32_t> frames;
  frames.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) frames.push_back(readFrame(items[i], w.at(i)));
  auto [it, added] = stackOfFrames_.try_emplace(frames, static_cast<StackId>(out_.stacks.size()));
  if (added) out_.stacks.push_back(std::move(frames));
  stackOfList_.emplace(v.container, it->second);
  return it->second;
}

uint32_t Converter::readFrame(const Value& v, const Where& w) {
  expect(v, Kind::Dict, w);
  if (const auto it = frameOfDict_.find(v.container); it != frameOfDict_.end()) return it->second;
  Frame f;
  bool hasFile = false, hasLine = false, hasName = false;
  forEachPair(v, w, [&](std::string_view key, const Value& x, const Where& k) {
    if (key == "filename") {
      f.filename = asString(doc_, x, k);
      hasFile = true;
    } else if (key == "name") {
      f.name = asString(doc_, x, k);
      hasName = true;
    } else if (key == "line") {
      f.line = asInt(x, k);
      hasLine = true;
    }
  });
  if (!hasFile) missing(w, "filename");
  if (!hasLine) missing(w, "line");
  if (!hasName) missing(w, "name");
  std::string text = f.filename + '\0' + std::to_string(f.line) + '\0' + f.name;
  auto [it, added] = frameOfText_.try_emplace(std::move(text), uint32_t(out_.frames.size()));
  if (added) out_.frames.push_back(std::move(f));
  frameOfDict_.emplace(v.container, it->second);
  return it->second;
}

}  // namespace

MemorySnapshot toMemorySnapshot(const Document& doc, const LoadOptions& options) {
  return Converter(doc, options).run();
}

MemorySnapshot readMemorySnapshot(const std::string& path, const LoadOptions& options) {
  pickle::ParseOptions parse;
  parse.progress = options.progress;
  parse.cancel = options.cancel;
  try {
    const pickle::PickleFile file = pickle::readPickleFile(path, parse);
    return toMemorySnapshot(file.document, options);
  } catch (const pickle::PickleError& e) {  // names the file already
    throw SnapshotError(e.what());
  } catch (const SnapshotError& e) {
    throw SnapshotError("'" + path + "': " + e.what());
  }
}

}  // namespace matmulviz::snapshot
