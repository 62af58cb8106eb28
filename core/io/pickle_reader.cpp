#include "core/io/pickle_reader.h"

#include "core/io/pickle_opcodes.h"

#include <bit>
#include <cstdio>
#include <iterator>
#include <unordered_map>
#include <utility>

namespace matmulviz::pickle {

namespace {

constexpr uint64_t kCheckEvery = uint64_t{4} << 20;  // progress and cancel, in bytes

std::string hexByte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

std::string refusal(uint8_t op) {
  const char* name = opcodeName(op);
  if (!name) return "byte " + hexByte(op) + " is not a pickle opcode";
  const std::string what = std::string("opcode ") + name + " (" + hexByte(op) + ")";
  if (buildsObjects(op))
    return what +
           " is refused: it imports, calls or builds Python objects, which this reader "
           "never does (a memory snapshot holds only dicts, lists, strings and numbers)";
  return what +
         " is not accepted: this reader takes only dicts, lists, tuples, strings, ints, "
         "floats, bools and None";
}

}  // namespace

// The pickle machine of Python's Lib/pickle.py (_Unpickler), restricted to the accepted
// opcodes: a value stack split by MARKs, and a memo from indices to values.
class Parser {
 public:
  Parser(std::span<const uint8_t> in, const ParseOptions& options) : in_(in), options_(options) {
    doc_.input_ = in;
    // Address space only: pages are touched as the memo fills (a memo entry takes at least 2
    // bytes of input), and growing by copies would touch twice as many.
    memo_.reserve(in.size() / 2);
  }

  Document run() {
    if (in_.empty()) fail("empty input: not a pickle");
    if (in_[0] != PROTO)
      fail("not a pickle of protocol 2 to 5: it does not start with PROTO (0x80), it starts " +
           std::string("with ") + hexByte(in_[0]) + " (protocols 0 and 1 are not read)");
    for (;;) {
      if (pos_ >= nextCheck_) checkpoint();
      opStart_ = pos_;
      if (pos_ >= in_.size()) fail("the input ends without STOP (truncated?)");
      const uint8_t op = in_[pos_++];
      if (op == STOP) break;
      if (!scalarOp(op) && !containerOp(op) && !memoOp(op)) fail(refusal(op));
    }
    finish();
    if (options_.progress) options_.progress(in_.size(), in_.size());
    return std::move(doc_);
  }

 private:
  std::span<const uint8_t> in_;
  const ParseOptions& options_;
  Document doc_;
  size_t pos_ = 0;
  size_t opStart_ = 0;
  uint64_t nextCheck_ = 0;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;  // stack sizes at each open MARK
  std::vector<Value> memo_;    // indices 0..size-1, as Python's pickler numbers them
  std::unordered_map<uint64_t, Value> sparseMemo_;  // indices above memo_.size()
  // By container: its memo index + 1, kNoMemo, kPinned (memoized twice: never reused) or kFree
  // (taken by ParseOptions::takeItems: its slot is in freeSlots_).
  static constexpr uint64_t kNoMemo = 0, kPinned = UINT64_MAX, kFree = UINT64_MAX - 1;
  std::vector<uint64_t> memoOf_;
  std::vector<uint32_t> freeSlots_;

  [[noreturn]] void fail(const std::string& what) const {
    throw PickleError("byte " + std::to_string(opStart_) + ": " + what);
  }

  void checkpoint() {
    nextCheck_ = pos_ + kCheckEvery;
    if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) throw Cancelled();
    if (options_.progress) options_.progress(pos_, in_.size());
  }

  const uint8_t* take(uint64_t n) {
    const uint64_t left = in_.size() - pos_;
    if (n > left) {
      const char* name = opcodeName(in_[opStart_]);
      fail(std::string(name ? name : "opcode") + " needs " + std::to_string(n) +
           " bytes but only " + std::to_string(left) + " are left (truncated?)");
    }
    const uint8_t* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }

  uint64_t littleEndian(unsigned n) {
    const uint8_t* p = take(n);
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
  }

  size_t base() const { return marks_.empty() ? 0 : marks_.back(); }

  Value pop() {
    if (stack_.size() <= base()) fail(std::string(opcodeName(in_[opStart_])) + ": stack empty");
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }

  size_t popMark() {
    if (marks_.empty()) fail(std::string(opcodeName(in_[opStart_])) + " without a MARK");
    const size_t start = marks_.back();
    marks_.pop_back();
    return start;
  }

  // The container below a MARK's items (APPENDS, SETITEMS) or below the top (APPEND, SETITEM).
  std::vector<Value>& target(size_t index, Kind kind) {
    if (index < base() || index >= stack_.size() || stack_[index].kind != kind)
      fail(std::string(opcodeName(in_[opStart_])) + " needs " + kindName(kind) +
           " below its items, found " +
           (index < base() || index >= stack_.size() ? "none" : kindName(stack_[index].kind)));
    return doc_.containers_[stack_[index].container];
  }

  // A slot freed by taken() is reused (with its capacity: the next record dict needs as much).
  Value newContainer(Kind kind, std::vector<Value> items = {}) {
    Value v;
    v.kind = kind;
    if (!freeSlots_.empty()) {
      v.container = freeSlots_.back();
      freeSlots_.pop_back();
      if (!items.empty()) doc_.containers_[v.container] = std::move(items);
      memoOf_[v.container] = kNoMemo;
      return v;
    }
    v.container = static_cast<uint32_t>(doc_.containers_.size());
    doc_.containers_.push_back(std::move(items));
    memoOf_.push_back(kNoMemo);
    return v;
  }

  void push(Value v) { stack_.push_back(v); }
  void pushInt(int64_t i) {
    Value v;
    v.kind = Kind::Int;
    v.integer = i;
    push(v);
  }

  bool scalarOp(uint8_t op);
  bool containerOp(uint8_t op);
  bool memoOp(uint8_t op);
  void pushLong1();
  void pushFloat();
  void pushString(uint64_t length);
  void moveItems(size_t start, std::vector<Value>& into);
  /// Offers `items` to ParseOptions::takeItems; true when taken (their containers emptied).
  bool taken(const Value& list, std::span<const Value> items);
  void forget(uint64_t index, const Value& v);
  void tuple(size_t start);
  void put(uint64_t index);
  void get(uint64_t index);
  void finish();
};

bool Parser::scalarOp(uint8_t op) {
  switch (op) {
    case PROTO: {
      const uint8_t version = *take(1);
      if (version < 2 || version > 5)
        fail("protocol " + std::to_string(version) + " (accepted: 2 to 5)");
      return true;
    }
    case FRAME: {  // a buffering hint: only its length is checked
      const uint64_t length = littleEndian(8);
      if (length > in_.size() - pos_)
        fail("FRAME of " + std::to_string(length) + " bytes but only " +
             std::to_string(in_.size() - pos_) + " are left (truncated?)");
      return true;
    }
    case NONE:
      push(Value{});
      return true;
    case NEWTRUE:
    case NEWFALSE: {
      Value v;
      v.kind = Kind::Bool;
      v.integer = op == NEWTRUE;
      push(v);
      return true;
    }
    case BININT1:
      pushInt(static_cast<int64_t>(littleEndian(1)));
      return true;
    case BININT2:
      pushInt(static_cast<int64_t>(littleEndian(2)));
      return true;
    case BININT:
      pushInt(static_cast<int32_t>(static_cast<uint32_t>(littleEndian(4))));
      return true;
    case LONG1:
      pushLong1();
      return true;
    case BINFLOAT:
      pushFloat();
      return true;
    case SHORT_BINUNICODE:
      pushString(littleEndian(1));
      return true;
    case BINUNICODE:
      pushString(littleEndian(4));
      return true;
    case BINUNICODE8:
      pushString(littleEndian(8));
      return true;
    default:
      return false;
  }
}

// LONG1: a length byte, then that many bytes of a little-endian two's-complement integer.
void Parser::pushLong1() {
  const unsigned n = *take(1);
  if (n > 9) fail("LONG1 of " + std::to_string(n) + " bytes: beyond int64 (at most 9 accepted)");
  const uint8_t* p = take(n);
  if (n == 9) {
    const bool negative = p[7] & 0x80;
    if (p[8] != (negative ? 0xff : 0x00)) fail("LONG1: the value does not fit int64");
  }
  const unsigned bytes = n < 8 ? n : 8;
  uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  if (bytes > 0 && bytes < 8 && (p[bytes - 1] & 0x80)) v |= ~uint64_t{0} << (8 * bytes);
  pushInt(static_cast<int64_t>(v));
}

// BINFLOAT: an IEEE 754 double, big-endian.
void Parser::pushFloat() {
  const uint8_t* p = take(8);
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];
  Value v;
  v.kind = Kind::Float;
  v.real = std::bit_cast<double>(bits);
  push(v);
}

void Parser::pushString(uint64_t length) {
  if (length > UINT32_MAX) fail("a string of " + std::to_string(length) + " bytes (limit 4 GiB)");
  const size_t at = pos_;
  take(length);
  Value v;
  v.kind = Kind::String;
  v.length = static_cast<uint32_t>(length);
  v.offset = at;
  push(v);
}

void Parser::moveItems(size_t start, std::vector<Value>& into) {
  if (into.empty()) into.reserve(stack_.size() - start);
  into.insert(into.end(), stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
  stack_.resize(start);
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
    case APPEND: {
      const Value v = pop();
      std::vector<Value>& list = target(stack_.size() - 1, Kind::List);
      if (!taken(stack_.back(), {&v, 1})) list.push_back(v);
      return true;
    }
    case APPENDS: {
      const size_t start = popMark();
      std::vector<Value>& list = target(start - 1, Kind::List);
      const std::span<const Value> items(stack_.data() + start, stack_.size() - start);
      if (taken(stack_[start - 1], items))
        stack_.resize(start);
      else
        moveItems(start, list);
      return true;
    }
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
