#include "core/io/gzip_bytes.h"

#include <zlib.h>

#include <algorithm>
#include <string>

namespace matmulviz {

bool isGzip(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

std::vector<uint8_t> gunzip(std::span<const uint8_t> bytes, uint64_t maxBytes,
                            const std::atomic<bool>* cancel) {
  constexpr size_t kChunk = size_t{4} << 20;
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer (zlib.h, inflateInit2).
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw GzipError("zlib could not start");
  std::vector<uint8_t> out;
  const auto fail = [&](const std::string& why) {
    inflateEnd(&z);
    throw GzipError(why);
  };
  size_t in = 0;
  for (;;) {
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      inflateEnd(&z);
      throw std::runtime_error("cancelled");
    }
    if (out.size() >= maxBytes)
      fail("it inflates to more than " + std::to_string(maxBytes) + " bytes");
    const size_t room = size_t(std::min<uint64_t>(kChunk, maxBytes - out.size()));
    const size_t before = out.size();
    out.resize(before + room);
    const size_t feed = std::min<size_t>(bytes.size() - in, UINT32_MAX);
    z.next_in = const_cast<Bytef*>(bytes.data() + in);
    z.avail_in = static_cast<uInt>(feed);
    z.next_out = out.data() + before;
    z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&z, Z_NO_FLUSH);
    in += feed - z.avail_in;
    out.resize(before + room - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (in == bytes.size()) break;
      if (!isGzip(bytes.subspan(in)))
        fail("bytes follow the end of the compressed stream at byte " + std::to_string(in));
      inflateReset(&z);  // the next member
      continue;
    }
    if (rc == Z_BUF_ERROR && in == bytes.size()) fail("the compressed stream is truncated");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      fail(std::string("corrupt compressed data (") + (z.msg ? z.msg : "zlib error") + ")");
  }
  inflateEnd(&z);
  out.shrink_to_fit();
  return out;
}

}  // namespace matmulviz
