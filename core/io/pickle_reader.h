#pragma once
// A strict, safe reader of Python pickles (protocols 2 to 5) that builds no Python objects,
// for files such as PyTorch's CUDA memory snapshots (torch.cuda.memory._dump_snapshot), which
// Python's own pickle.load would let run any code the file carries.
//
// Accepted opcodes, exactly: PROTO (2 to 5; it must come first), FRAME, MARK, STOP, BINPUT,
// LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET, EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE, SETITEM,
// SETITEMS, APPEND, APPENDS, TUPLE1, TUPLE2, TUPLE3, TUPLE, SHORT_BINUNICODE, BINUNICODE,
// BINUNICODE8, BININT, BININT1, BININT2, LONG1 (at most 9 bytes, and only values within int64),
// BINFLOAT, NONE, NEWTRUE, NEWFALSE. Every other opcode (GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
// INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID, BINPERSID, EXT1/2/4, bytes, sets, protocol-0 text
// opcodes, ...) is refused with a message naming it and its byte offset.
//
// Safety: every length is checked against the bytes left, so a truncated or hostile input never
// reads past its end; each opcode adds at most a constant number of 16-byte values, so the tree
// takes at most about 40 bytes per input byte (a file of EMPTY_LIST opcodes; a real snapshot
// takes about 7); the parser is a loop (no recursion) over opcodes that each advance the input,
// so it ends in time linear in the input; MARKs nest at most kMaxMarkDepth deep. What a walk of
// the tree costs is the walker's to bound: memo references let a few bytes repeat a container.

#include "core/io/mapped_file.h"
#include "core/io/pickle_document.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>

namespace matmulviz::pickle {

/// A refused or malformed pickle. what() names the byte offset and the problem, e.g.
/// "byte 12: opcode GLOBAL (0x63) is refused: it imports or calls Python code, which ...".
class PickleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The caller set the cancel flag while a read was under way.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled") {}
};

/// How deeply MARKs may nest (a memory snapshot needs about 6).
inline constexpr size_t kMaxMarkDepth = 1000;

struct ParseOptions {
  /// Called with (bytes consumed, total bytes) about every 4 MiB and once at the end; on the
  /// parsing thread.
  std::function<void(uint64_t done, uint64_t total)> progress;
  /// When set and it becomes true, the parse stops by throwing Cancelled (checked about every
  /// 4 MiB of input).
  const std::atomic<bool>* cancel = nullptr;
  /// Called by APPEND and APPENDS with the list and the items about to be appended to it, and
  /// the document as built so far (every container made before the items is complete). When it
  /// returns true the items are the caller's: the list stays as it was, and each item that is a
  /// container is emptied; one memoized once (as Python's pickler writes every container) has
  /// its memo entry set to None and its slot in the document reused for later containers.
  /// A reader of a long list of records (a memory snapshot's trace) converts them as they are
  /// parsed instead of holding the whole tree. Exceptions it throws end the parse.
  std::function<bool(const Document& doc, const Value& list, std::span<const Value> items)>
      takeItems;
};

/// Parses one pickle that fills `bytes` exactly (bytes after STOP are refused). The Document's
/// strings point into `bytes`, which must outlive it.
/// Throws PickleError (with the byte offset) when: the input is empty or does not start with
/// PROTO 2..5; an opcode is not in the accepted set; an argument or length runs past the end;
/// an int does not fit int64; a memo get names an index never put; APPEND(S) or SETITEM(S)
/// finds no list or dict below its items, or SETITEMS an odd number of items; the stack or the
/// marks run out; STOP finds other than exactly one value and no open MARK; the input ends
/// without STOP or goes on after it. Throws Cancelled when the cancel flag is set.
Document parse(std::span<const uint8_t> bytes, const ParseOptions& options = {});

/// A pickle file read through a memory map: the map stays alive with the document.
struct PickleFile {
  MappedFile file;
  Document document;
};

/// Maps the file at `path` and parses it (see parse()). Throws PickleError whose message starts
/// with the quoted path: "'x.pickle': byte 3: ..."; an empty file, or one that cannot be opened,
/// is a PickleError as well. Throws Cancelled when the cancel flag is set.
PickleFile readPickleFile(const std::string& path, const ParseOptions& options = {});

}  // namespace matmulviz::pickle
