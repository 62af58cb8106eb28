#include "core/io/pickle_reader.h"

#include "core/io/pickle_parser.h"

#include <iterator>

namespace matmulviz::pickle {

void Parser::moveItems(size_t start, std::vector<Value>& into) {
  if (into.empty()) into.reserve(stack_.size() - start);
  into.insert(into.end(), stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
  stack_.resize(start);
}

// APPEND (one item below the list) and APPENDS (the items since the MARK above the list), the
// items offered to ParseOptions::takeItems first.
void Parser::append(uint8_t op) {
  if (op == APPEND) {
    const Value v = pop();
    std::vector<Value>& list = target(stack_.size() - 1, Kind::List);
    if (!taken(stack_.back(), {&v, 1})) list.push_back(v);
    return;
  }
  const size_t start = popMark();
  std::vector<Value>& list = target(start - 1, Kind::List);
  const std::span<const Value> items(stack_.data() + start, stack_.size() - start);
  if (taken(stack_[start - 1], items))
    stack_.resize(start);
  else
    moveItems(start, list);
}

// Taken containers are emptied; one memoized once has its memo entry replaced by None and its
// slot reused, so that a list of ten million records needs no ten million slots.
bool Parser::taken(const Value& list, std::span<const Value> items) {
  if (!options_.takeItems || items.empty() || !options_.takeItems(doc_, list, items)) return false;
  for (const Value& v : items) {
    if (!v.isContainer() || memoOf_[v.container] == kFree) continue;
    std::vector<Value>& c = doc_.containers_[v.container];
    uint64_t& memo = memoOf_[v.container];
    if (memo == kPinned) {
      std::vector<Value>().swap(c);
      continue;
    }
    c.clear();
    if (memo != kNoMemo) forget(memo - 1, v);
    memo = kFree;
    freeSlots_.push_back(v.container);
  }
  return true;
}

// Replaces the memo entry `index` by None when it still holds the container `v`.
void Parser::forget(uint64_t index, const Value& v) {
  Value* entry = nullptr;
  if (index < memo_.size()) {
    entry = &memo_[index];
  } else if (const auto it = sparseMemo_.find(index); it != sparseMemo_.end()) {
    entry = &it->second;
  }
  if (entry && entry->isContainer() && entry->container == v.container) *entry = Value{};
}

void Parser::tuple(size_t start) {
  std::vector<Value> items(stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
  stack_.resize(start);
  push(newContainer(Kind::Tuple, std::move(items)));
}

bool Parser::containerOp(uint8_t op) {
  switch (op) {
    case MARK:
      if (marks_.size() >= kMaxMarkDepth)
        fail("MARKs nested deeper than " + std::to_string(kMaxMarkDepth));
      marks_.push_back(stack_.size());
      return true;
    case EMPTY_LIST:
      push(newContainer(Kind::List));
      return true;
    case EMPTY_DICT:
      push(newContainer(Kind::Dict));
      return true;
    case EMPTY_TUPLE:
      push(newContainer(Kind::Tuple));
      return true;
    case TUPLE1:
    case TUPLE2:
    case TUPLE3: {
      const size_t k = op - TUPLE1 + 1u;
      if (stack_.size() - base() < k) fail(std::string(opcodeName(op)) + ": stack empty");
      tuple(stack_.size() - k);
      return true;
    }
    case TUPLE:
      tuple(popMark());
      return true;
    case APPEND:
    case APPENDS:
      append(op);
      return true;
    case SETITEM: {
      const Value v = pop();
      const Value k = pop();
      std::vector<Value>& dict = target(stack_.size() - 1, Kind::Dict);
      dict.push_back(k);
      dict.push_back(v);
      return true;
    }
    case SETITEMS: {
      const size_t start = popMark();
      if ((stack_.size() - start) % 2) fail("SETITEMS with an odd number of items");
      moveItems(start, target(start - 1, Kind::Dict));
      return true;
    }
    default:
      return false;
  }
}

bool Parser::memoOp(uint8_t op) {
  switch (op) {
    case BINPUT:
      put(littleEndian(1));
      return true;
    case LONG_BINPUT:
      put(littleEndian(4));
      return true;
    case MEMOIZE:
      put(memo_.size() + sparseMemo_.size());
      return true;
    case BINGET:
      get(littleEndian(1));
      return true;
    case LONG_BINGET:
      get(littleEndian(4));
      return true;
    default:
      return false;
  }
}

// Python's memo is a dict; the pickler numbers its entries 0, 1, 2, ... so they go to a vector,
// and any other index (a hand-made file) to a map, which never holds an index < memo_.size().
void Parser::put(uint64_t index) {
  if (stack_.size() <= base()) fail(std::string(opcodeName(in_[opStart_])) + ": stack empty");
  const Value& v = stack_.back();
  if (v.isContainer()) {
    uint64_t& memo = memoOf_[v.container];
    memo = memo == kNoMemo ? index + 1 : kPinned;
  }
  if (index < memo_.size()) {
    memo_[index] = v;
  } else if (index == memo_.size()) {
    memo_.push_back(v);
    for (auto it = sparseMemo_.find(memo_.size()); it != sparseMemo_.end();
         it = sparseMemo_.find(memo_.size())) {
      memo_.push_back(it->second);
      sparseMemo_.erase(it);
    }
  } else {
    sparseMemo_[index] = v;
  }
}

void Parser::get(uint64_t index) {
  if (index < memo_.size()) return push(memo_[index]);
  const auto it = sparseMemo_.find(index);
  if (it == sparseMemo_.end())
    fail("memo index " + std::to_string(index) + " was never put (BINPUT/MEMOIZE)");
  push(it->second);
}

void Parser::finish() {
  if (!marks_.empty()) fail("STOP with " + std::to_string(marks_.size()) + " open MARK(s)");
  if (stack_.size() != 1)
    fail("STOP with " + std::to_string(stack_.size()) + " values on the stack (expected 1)");
  if (pos_ != in_.size())
    fail(std::to_string(in_.size() - pos_) + " bytes after STOP (one pickle per file)");
  doc_.root_ = stack_[0];
}

Document parse(std::span<const uint8_t> bytes, const ParseOptions& options) {
  return Parser(bytes, options).run();
}

PickleFile readPickleFile(const std::string& path, const ParseOptions& options) {
  try {
    MappedFile file(path);
    ParseOptions releasing = options;  // the pages parsed so far leave the resident set
    releasing.progress = [&](uint64_t done, uint64_t total) {
      file.releaseBefore(done);
      if (options.progress) options.progress(done, total);
    };
    Document doc = parse(file.bytes(), releasing);
    return PickleFile{std::move(file), std::move(doc)};
  } catch (const PickleError& e) {
    throw PickleError("'" + path + "': " + e.what());
  } catch (const Cancelled&) {
    throw;
  } catch (const std::runtime_error& e) {  // MappedFile's, which already names the file
    throw PickleError(e.what());
  }
}

}  // namespace matmulviz::pickle
