#include "core/io/pickle_parser.h"

#include <bit>

namespace matmulviz::pickle {

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

}  // namespace matmulviz::pickle
