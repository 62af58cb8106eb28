#pragma once
// gzip-compressed files (RFC 1952), as `gzip` writes a PyTorch memory snapshot to keep it small
// ("snapshot.pickle.gz"), inflated into memory with zlib. Qt-free.

#include <atomic>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace matmulviz {

/// A gzip stream that cannot be inflated. what() says why (zlib's message, or the size limit).
class GzipError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// True when `bytes` start with gzip's magic number (0x1f 0x8b).
bool isGzip(std::span<const uint8_t> bytes);

/// The inflated content of the gzip stream `bytes` (several members, as `cat a.gz b.gz` makes,
/// are concatenated). Throws GzipError when the stream is corrupt or truncated, when bytes follow
/// the last member, or when the output would exceed `maxBytes` (a small file can claim to
/// inflate to terabytes); throws std::runtime_error("cancelled") via `cancel` when it becomes
/// true (checked about every 4 MiB of output).
std::vector<uint8_t> gunzip(std::span<const uint8_t> bytes, uint64_t maxBytes,
                            const std::atomic<bool>* cancel = nullptr);

}  // namespace matmulviz
