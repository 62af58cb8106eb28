#include "core/memory/sort_temporaries.h"

#include <algorithm>

namespace matmulviz {
namespace {

constexpr int64_t kPairBytes = 8;  // int64 keys and int64 values: the dominant type's size
constexpr int64_t kMaxSharedPerBlock = 48 * 1024;  // CUB's detail::max_smem_per_block
constexpr int64_t kRadixDigits = 256;              // ONESWEEP_RADIX_BITS = 8
constexpr int64_t kOffsetBytes = 8;                // choose_offset_t of a 64-bit item count
constexpr int64_t kAtomicOffsetBytes = 4;          // InvokeOnesweep's PortionOffsetT (int)

/// Items of one tile of a policy with nominal (4-byte) `threads` x `items`, scaled for 8-byte
/// pairs as CUB's RegBoundScaling does.
int64_t tileItems(int64_t nominalThreads, int64_t nominalItems) {
  const int64_t items = std::max<int64_t>(1, nominalItems * 4 / kPairBytes);
  const int64_t bySharedMemory = (kMaxSharedPerBlock / (kPairBytes * items) + 31) / 32 * 32;
  return std::min(nominalThreads, bySharedMemory) * items;
}

/// The onesweep policy's nominal threads and items for 8-byte keys and 8-byte values.
int64_t onesweepTileItems(const GpuArchitecture& gpu) {
  if (gpu.computeCapability >= 90) return tileItems(384, 24);  // OnesweepPolicyKey64
  if (gpu.computeCapability >= 80) return tileItems(384, 21);  // Policy800
  return tileItems(256, 23);                                   // Policy700
}

}  // namespace

int cubKeyBits(int64_t maxKey) {
  int bits = 1;
  for (uint64_t k = static_cast<uint64_t>(maxKey); k > 1; k >>= 1) ++bits;
  return bits;
}

int64_t cubRadixSortPairsTempBytes(int64_t items, int keyBits, const GpuArchitecture& gpu) {
  if (items <= tileItems(256, 19) || keyBits <= 0) return 1;  // single tile, or a plain copy
  const int64_t tile = onesweepTileItems(gpu);
  const int64_t portion = ((int64_t{1} << 28) - 1) / tile * tile;
  const int64_t portions = (items + portion - 1) / portion;
  const int64_t passes = (keyBits + 7) / 8;
  const int64_t blocks = (std::min(items, portion) + tile - 1) / tile;
  const int64_t extra = passes > 1 ? items * kPairBytes : 0;  // a third key and value buffer
  return cubAliasedBytes({portions * passes * kRadixDigits * kOffsetBytes,
                          blocks * kRadixDigits * kAtomicOffsetBytes, extra, extra,
                          portions * passes * kAtomicOffsetBytes});
}

std::vector<TemporaryStep> indexPutSortTemporaries(int64_t numIndices, int64_t maxKey,
                                                   bool indexOnDevice, const GpuArchitecture& gpu) {
  if (numIndices <= 0) return {};
  const int64_t indexBytes = numIndices * 8;
  std::vector<TemporaryStep> steps;
  if (indexOnDevice) {
    steps.push_back({"index.remainder(size) of index_put_'s linear index", indexBytes, -1});
    steps.push_back({"linear index of index_put_ (index * stride)", indexBytes, -1});
    steps.push_back({"", 0, 0});
  }
  steps.push_back({"sorted_indices of index_put_'s sort", indexBytes, -1});
  steps.push_back({"orig_indices of index_put_'s sort", indexBytes, -1});
  steps.push_back({"range = arange(num_indices) of index_put_'s sort", indexBytes, -1});
  const int cub = static_cast<int>(steps.size());
  steps.push_back({"CUB temporary storage of DeviceRadixSort::SortPairs",
                   cubRadixSortPairsTempBytes(numIndices, cubKeyBits(maxKey), gpu), -1});
  steps.push_back({"", 0, cub});
  return steps;  // the rest is freed last first as the op returns (replayTemporaries)
}

}  // namespace matmulviz
