// Fuzzes the .npy reader (core/io/npy.h): any bytes as a file. npy::read takes a path, so each
// input is an in-memory file (memfd) read through /proc/self/fd. Every failure must be an
// NpyError; anything else (a crash, a sanitizer report, another exception) is a finding.
#include "core/io/npy.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz.npy", 0);
  if (fd < 0) std::abort();
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) std::abort();
    written += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const matmulviz::Tensor t = matmulviz::npy::read(path);
    (void)t.numel();
  } catch (const matmulviz::npy::NpyError&) {
    // A refused file, with a message: the expected outcome for most inputs.
  }
  close(fd);
  return 0;
}
