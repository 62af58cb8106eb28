#include "core/io/snapshot_converter.h"

namespace matmulviz::snapshot::detail {

bool Converter::isTraceEntry(const Value& v) const {
  if (v.kind != Kind::Dict) return false;
  const Value* action = doc_->find(v, "action");
  return action && action->kind == Kind::String && parseAction(doc_->string(*action)) &&
         (doc_->find(v, "addr") || doc_->find(v, "device_free"));
}

namespace {

// An entry takes at least this many bytes of pickle: EMPTY_DICT, MARK, 'action' and 'addr' as
// memo gets with their values, SETITEMS.
constexpr size_t kMinEntryBytes = 10;

// Address space only: pages are touched as the columns fill, and growing by copies would touch
// twice as many.
void reserve(DeviceTrace& t, size_t n) {
  t.action.reserve(n);
  t.addr.reserve(n);
  t.size.reserve(n);
  t.stream.reserve(n);
  t.timeUs.reserve(n);
  t.stack.reserve(n);
}

}  // namespace

bool Converter::take(const Document& doc, const Value& list, std::span<const Value> items) {
  doc_ = &doc;
  auto it = taken_.find(list.container);
  if (it == taken_.end()) {
    if (!doc.items(list).empty() || !isTraceEntry(items.front())) return false;
    it = taken_.try_emplace(list.container).first;
    if (taken_.size() == 1) reserve(it->second.trace, doc.input().size() / kMinEntryBytes);
  }
  Taken& t = it->second;
  if (!t.error.empty()) return true;  // the list is refused already: drop the rest
  try {
    for (const Value& v : items) {
      readEvent(v, Where{}.at(t.trace.count()), t.trace);
      tick();
    }
  } catch (const SnapshotError& e) {
    t.error = e.what();
  }
  // The parser reuses the entries' slots: each is claimed only within its batch.
  for (const Value& v : items)
    if (v.isContainer() && v.container < claimed_.size()) claimed_[v.container] = kFree;
  return true;
}

void Converter::readTrace(const Value& v, const Where& w) {
  expect(v, Kind::List, w);
  if (const auto it = taken_.find(v.container); it != taken_.end()) {
    Taken& t = it->second;
    if (t.used)
      bad(w, "a list that already appeared elsewhere in the snapshot (PyTorch writes each once)");
    t.used = true;
    if (!t.error.empty()) throw SnapshotError(w.str() + t.error);
    out_.traces.push_back(std::move(t.trace));
    return;
  }
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
      action = parseAction(doc_->string(x));
      if (!action) bad(k, "unknown action " + quoted(doc_->string(x)));
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

// A frames list, interned: first by the container (the pickle's memo shares one list among
// every entry with that stack), then by its frame ids (equal stacks written twice).
StackId Converter::readStack(const Value& v, const Where& w) {
  expect(v, Kind::List, w);
  const auto items = doc_->items(v);
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
  forEachPair(
      v, w,
      [&](std::string_view key, const Value& x, const Where& k) {
        if (key == "filename") {
          f.filename = asString(*doc_, x, k);
          hasFile = true;
        } else if (key == "name") {
          f.name = asString(*doc_, x, k);
          hasName = true;
        } else if (key == "line") {
          f.line = asInt(x, k);
          hasLine = true;
        }
      },
      false);
  if (!hasFile) missing(w, "filename");
  if (!hasLine) missing(w, "line");
  if (!hasName) missing(w, "name");
  std::string text = f.filename + '\0' + std::to_string(f.line) + '\0' + f.name;
  auto [it, added] = frameOfText_.try_emplace(std::move(text), uint32_t(out_.frames.size()));
  if (added) out_.frames.push_back(std::move(f));
  frameOfDict_.emplace(v.container, it->second);
  return it->second;
}

}  // namespace matmulviz::snapshot::detail
