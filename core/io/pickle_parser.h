#pragma once
// Internal to core/io: the parser behind pickle_reader.h, split over pickle_reader.cpp
// (containers, memo, the entry points) and pickle_scalars.cpp (numbers and strings).

#include "core/io/pickle_opcodes.h"
#include "core/io/pickle_reader.h"

#include <cstdio>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace matmulviz::pickle {

inline constexpr uint64_t kCheckEvery = uint64_t{4} << 20;  // progress and cancel, in bytes

inline std::string hexByte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

inline std::string refusal(uint8_t op) {
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
  void append(uint8_t op);
  void forget(uint64_t index, const Value& v);
  void tuple(size_t start);
  void put(uint64_t index);
  void get(uint64_t index);
  void finish();
};

}  // namespace matmulviz::pickle
