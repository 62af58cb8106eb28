#pragma once
// A file mapped read-only into memory (mmap(2)), for parsers that read large inputs in place
// without copying them.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace matmulviz {

/// A read-only, private mapping of a whole file; unmapped when destroyed. Movable, not copyable.
/// As with any mapping, a file that another process truncates while it is mapped makes reads
/// of the lost pages raise SIGBUS: map files that are not being written.
class MappedFile {
 public:
  /// Maps the file at `path`. An empty file gives an empty span (nothing is mapped).
  /// Throws std::runtime_error naming the file when it cannot be opened, is not a regular file,
  /// or cannot be mapped.
  explicit MappedFile(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  /// The file's bytes; valid while this object lives.
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  /// Drops the mapped pages below byte `offset` from this process's memory (madvise
  /// MADV_DONTNEED): a reader that went past them keeps its resident size down, and a later
  /// read of them loads them from the file again. Best effort: never fails.
  void releaseBefore(size_t offset) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace matmulviz
