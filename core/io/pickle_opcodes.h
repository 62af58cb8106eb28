#pragma once
// The opcodes of Python's pickle protocols 0 to 5 (their bytes and names as Python's
// Lib/pickletools.py lists them), for the strict reader in core/io/pickle_reader.h.

#include <cstdint>

namespace matmulviz::pickle {

enum Opcode : uint8_t {
  MARK = '(',
  STOP = '.',
  BININT = 'J',
  BININT1 = 'K',
  BININT2 = 'M',
  NONE = 'N',
  BINUNICODE = 'X',
  APPEND = 'a',
  EMPTY_DICT = '}',
  APPENDS = 'e',
  BINGET = 'h',
  LONG_BINGET = 'j',
  EMPTY_LIST = ']',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEM = 's',
  TUPLE = 't',
  EMPTY_TUPLE = ')',
  SETITEMS = 'u',
  BINFLOAT = 'G',
  PROTO = 0x80,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  MEMOIZE = 0x94,
  FRAME = 0x95,
};

/// The pickletools name of any opcode of protocols 0 to 5 (accepted or not), e.g. "GLOBAL" for
/// 'c'; nullptr for a byte that is no opcode.
const char* opcodeName(uint8_t op);

/// True for the opcodes that import, call or build Python objects (GLOBAL, STACK_GLOBAL,
/// REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID, BINPERSID, EXT1/2/4): what makes
/// pickle.load run code a file carries.
bool buildsObjects(uint8_t op);

}  // namespace matmulviz::pickle
