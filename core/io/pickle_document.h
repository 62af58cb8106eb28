#pragma once
// The value tree that core/io/pickle_reader.h builds from a pickle: None, bools, 64-bit ints,
// floats, strings, lists, tuples and dicts, nothing else (no Python object is ever built).
// Containers are shared as the pickle's memo shares them: a memo get yields a handle to the same
// container, never a copy, so a frame list written once and referenced a million times is one
// container here. As in Python, a pickle may make a container hold itself (a cycle): walk the
// tree with a bounded depth, or by a schema, never by unbounded recursion.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace matmulviz::pickle {

enum class Kind : uint8_t { None, Bool, Int, Float, String, List, Tuple, Dict };

/// "None", "a bool", "an int", "a float", "a string", "a list", "a tuple", "a dict".
const char* kindName(Kind kind);

/// One value: a scalar held inline, or a handle to a string in the input or to a container.
/// 16 bytes; copying it never copies a container.
struct Value {
  Kind kind = Kind::None;
  uint32_t length = 0;  // String: length in bytes
  union {
    int64_t integer = 0;  // Int; Bool: 0 or 1
    double real;          // Float
    uint64_t offset;      // String: byte offset of its UTF-8 bytes in the input
    uint32_t container;   // List, Tuple, Dict: index in the Document's container table
  };

  bool isContainer() const {
    return kind == Kind::List || kind == Kind::Tuple || kind == Kind::Dict;
  }
};

/// The parsed pickle. Strings are views into the input bytes, which must outlive the Document.
class Document {
 public:
  /// The value STOP returned.
  const Value& root() const { return root_; }
  /// The bytes of a String value (as written: UTF-8, not validated).
  std::string_view string(const Value& v) const {
    return {reinterpret_cast<const char*>(input_.data()) + v.offset, v.length};
  }
  /// A container's items: a List's or Tuple's elements; a Dict's keys and values alternating
  /// (key 0, value 0, key 1, ...), in insertion order. A key set twice appears twice (the later
  /// pair wins, as in Python). Empty for a scalar.
  std::span<const Value> items(const Value& v) const {
    if (!v.isContainer()) return {};
    return containers_[v.container];
  }
  /// The value of the last pair of `dict` whose key is the string `key`; nullptr when none.
  const Value* find(const Value& dict, std::string_view key) const;
  /// How many containers the pickle built (memo-shared ones count once).
  size_t containerCount() const { return containers_.size(); }
  /// The input the strings point into.
  std::span<const uint8_t> input() const { return input_; }

 private:
  friend class Parser;
  std::span<const uint8_t> input_;
  std::vector<std::vector<Value>> containers_;
  Value root_;
};

}  // namespace matmulviz::pickle
