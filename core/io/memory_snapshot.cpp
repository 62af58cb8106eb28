#include "core/io/memory_snapshot.h"

#include "core/io/gzip_bytes.h"
#include "core/io/mapped_file.h"
#include "core/io/snapshot_converter.h"

#include <fstream>

namespace matmulviz::snapshot {

using detail::Document;
using detail::Value;

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

bool isGzipFile(const std::string& path) {
  try {
    return isGzip(MappedFile(path).bytes());
  } catch (const std::runtime_error&) {
    return false;  // readPickleFile says why it cannot be read
  }
}

/// A gzip-compressed snapshot ("snapshot.pickle.gz"): inflated into memory, then parsed.
MemorySnapshot readGzipSnapshot(const std::string& path, const LoadOptions& options) {
  std::vector<uint8_t> bytes;
  try {
    bytes = gunzip(MappedFile(path).bytes(), kMaxInflatedSnapshotBytes, options.cancel);
  } catch (const GzipError& e) {
    throw SnapshotError("'" + path + "': a gzip file that cannot be read: " + e.what());
  } catch (const std::runtime_error& e) {
    if (options.cancel && options.cancel->load()) throw pickle::Cancelled();
    throw SnapshotError(e.what());
  }
  try {
    return parseMemorySnapshot(bytes, options);
  } catch (const pickle::PickleError& e) {
    throw SnapshotError("'" + path + "' (inflated): " + e.what());
  } catch (const SnapshotError& e) {
    throw SnapshotError("'" + path + "': " + e.what());
  }
}

}  // namespace

namespace detail {

MemorySnapshot Converter::run(const Document& doc) {
  doc_ = &doc;
  claimed_.resize(std::max(claimed_.size(), doc.containerCount()));
  readRoot();
  for (const auto& [list, taken] : taken_)
    if (!taken.used)
      throw SnapshotError(
          "a list of trace entries (dicts with 'action' and 'addr') outside device_traces");
  if (options_.progress) options_.progress(doc.input().size(), doc.input().size());
  return std::move(out_);
}

void Converter::readRoot() {
  const Value& root = doc_->root();
  if (root.kind != Kind::Dict)
    throw SnapshotError(std::string("not a PyTorch memory snapshot: the pickle holds ") +
                        pickle::kindName(root.kind) +
                        ", not a dict with 'segments' and 'device_traces'");
  if (!doc_->find(root, "segments"))
    throw SnapshotError("not a PyTorch memory snapshot: the pickle's dict has no 'segments'");
  const Where top{};
  claim(root, top);
  // A key written twice keeps its last value, as in Python's dict.
  if (const Value* v = doc_->find(root, "segments")) {
    const Where w = top.child("segments");
    const auto items = listItems(*v, w);
    for (size_t i = 0; i < items.size(); ++i) readSegment(items[i], w.at(i));
  }
  if (const Value* v = doc_->find(root, "device_traces")) {
    const Where w = top.child("device_traces");
    const auto items = listItems(*v, w);
    for (size_t i = 0; i < items.size(); ++i) readTrace(items[i], w.at(i));
  }
  if (const Value* v = doc_->find(root, "allocator_settings"))
    readAllocatorSettings(*v, top.child("allocator_settings"));
  if (const Value* v = doc_->find(root, "external_annotations"))
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
      const std::string_view t = doc_->string(x);
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
  const auto items = doc_->items(v);
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
      const auto state = parseState(doc_->string(x));
      if (!state)
        bad(k,
            "expected active_allocated, active_pending_free, active_awaiting_free or "
            "inactive, got " +
                quoted(doc_->string(x)));
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

void Converter::readAllocatorSettings(const Value& v, const Where& w) {
  forEachPair(v, w, [&](std::string_view key, const Value& x, const Where& k) {
    if (key == "PYTORCH_CUDA_ALLOC_CONF") {
      expectStringOrNone(x, k);
      if (x.kind == Kind::String) out_.allocatorConf = doc_->string(x);
    }
  });
}

}  // namespace detail

MemorySnapshot toMemorySnapshot(const Document& doc, const LoadOptions& options) {
  return detail::Converter(options).run(doc);
}

MemorySnapshot parseMemorySnapshot(std::span<const uint8_t> bytes, const LoadOptions& options) {
  pickle::ParseOptions parse;
  parse.progress = options.progress;
  parse.cancel = options.cancel;
  detail::Converter converter(options);
  parse.takeItems = [&](const Document& doc, const Value& list, std::span<const Value> items) {
    return converter.take(doc, list, items);
  };
  const Document doc = pickle::parse(bytes, parse);
  return converter.run(doc);
}

MemorySnapshot readMemorySnapshot(const std::string& path, const LoadOptions& options) {
  if (isGzipFile(path)) return readGzipSnapshot(path, options);
  pickle::ParseOptions parse;
  parse.progress = options.progress;
  parse.cancel = options.cancel;
  detail::Converter converter(options);
  parse.takeItems = [&](const Document& doc, const Value& list, std::span<const Value> items) {
    return converter.take(doc, list, items);
  };
  try {
    const pickle::PickleFile file = pickle::readPickleFile(path, parse);
    return converter.run(file.document);
  } catch (const pickle::PickleError& e) {  // names the file already
    throw SnapshotError(e.what());
  } catch (const SnapshotError& e) {
    throw SnapshotError("'" + path + "': " + e.what());
  }
}

bool looksLikeSnapshotFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char head[2] = {0, 0};
  if (!f.read(reinterpret_cast<char*>(head), 1)) return false;
  if (head[0] == 0x80) return true;
  return f.read(reinterpret_cast<char*>(head + 1), 1) && head[0] == 0x1f && head[1] == 0x8b;
}

}  // namespace matmulviz::snapshot
