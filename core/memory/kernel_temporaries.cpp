#include "core/memory/kernel_temporaries.h"

#include <algorithm>

namespace matmulviz {

std::vector<TemporaryStep> softmaxBackwardTemporaries(int64_t numel, int64_t elementBytes) {
  if (numel == 0) return {};
  return {{"tmp = grad * output of _softmax_backward_data", numel * elementBytes, -1}, {"", 0, 0}};
}

bool topkUsesMultiBlock(int64_t numSlices, int64_t sliceSize) {
  constexpr int64_t kU32Max = 0xffffffffLL;
  if (numSlices > kU32Max || sliceSize > kU32Max) return false;
  return (numSlices <= 20 && sliceSize >= 20000) ||
         (numSlices > 20 && numSlices <= 40 && sliceSize >= 10000) ||
         (numSlices > 40 && numSlices <= 80 && sliceSize >= 8000) ||
         (numSlices > 80 && numSlices < 200 && sliceSize >= 5000) ||
         (numSlices >= 200 && numSlices < 800 && sliceSize >= 3000) ||
         (numSlices >= 800 && numSlices <= 4000 && sliceSize >= 800) ||
         (numSlices > 4000 && sliceSize >= 400);
}

int64_t cubAliasedBytes(std::initializer_list<int64_t> sizes) {
  int64_t total = 255;
  for (int64_t b : sizes) total += (b + 255) / 256 * 256;
  return total;
}

namespace {

/// Items per tile of CUB 3.0's scan-by-key policy for 4-byte keys and values (see the header).
int64_t scanByKeyTileItems(const GpuArchitecture& gpu) {
  if (gpu.computeCapability >= 90) return 288 * 14;                                // sm90_tuning
  if (gpu.computeCapability >= 80 && gpu.computeCapability < 86) return 256 * 15;  // sm80_tuning
  return 256 * 9;  // the default policy (sm_75, sm_86)
}

}  // namespace

int64_t cubScanByKeyTempBytes(int64_t items, const GpuArchitecture& gpu) {
  const int64_t perTile = scanByKeyTileItems(gpu);
  const int64_t tiles = std::max<int64_t>(1, (items + perTile - 1) / perTile);
  return cubAliasedBytes({(tiles + 32) * 16, (tiles + 1) * 4});
}

std::vector<TemporaryStep> topkTemporaries(int64_t numSlices, int64_t sliceSize,
                                           int64_t elementBytes, const GpuArchitecture& gpu) {
  if (numSlices == 0 || sliceSize == 0 || !topkUsesMultiBlock(numSlices, sliceSize)) return {};
  constexpr int64_t kBlockThreads = 256, kRadixDigits = 256, kRegsPerThread = 40;
  const int64_t blocksPerMp = std::min<int64_t>(
      gpu.regsPerMultiprocessor / (kRegsPerThread * kBlockThreads), gpu.maxBlocksPerMultiProcessor);
  const int64_t lanes = gpu.multiProcessorCount * blocksPerMp * kBlockThreads;
  int64_t itemsPerThread = (sliceSize * numSlices + lanes - 1) / lanes;
  itemsPerThread = std::clamp<int64_t>(itemsPerThread, 4, 64);
  const int64_t itemsPerBlock = itemsPerThread * kBlockThreads;
  const int64_t blocksPerSlice = (sliceSize + itemsPerBlock - 1) / itemsPerBlock;
  const int64_t numBlocks = numSlices * blocksPerSlice;
  const int64_t radixBytes = elementBytes == 8 ? 8 : 4;
  const int64_t cub = cubScanByKeyTempBytes(numBlocks, gpu);
  return {
      {"topk kthValues", numSlices * elementBytes, -1},
      {"topk ks_to_find", 2 * numSlices * 4, -1},
      {"topk desired", 2 * numSlices * radixBytes, -1},
      {"topk counts", numBlocks * kRadixDigits * 2, -1},
      {"topk digit_cum_sum", numSlices * kRadixDigits * 4, -1},
      {"topk withinKCounts", numBlocks * 4, -1},
      {"topk kthCounts", numBlocks * 4, -1},
      {"CUB temporary storage of inclusive_sum_by_key", cub, -1},
      {"", 0, 7},
      {"CUB temporary storage of inclusive_sum_by_key", cub, -1},
      {"", 0, 9},
  };
}

void replayTemporaries(CachingAllocator& allocator, const std::vector<TemporaryStep>& steps) {
  std::vector<int64_t> ids(steps.size(), -1);
  std::vector<bool> live(steps.size(), false);
  auto freeAll = [&] {
    for (size_t i = steps.size(); i-- > 0;)
      if (live[i]) allocator.free(ids[i]), live[i] = false;
  };
  try {
    for (size_t i = 0; i < steps.size(); ++i) {
      const TemporaryStep& s = steps[i];
      if (s.freeStep == kOutputsStep) continue;
      if (s.freeStep >= 0) {
        const auto j = static_cast<size_t>(s.freeStep);
        if (j < i && live[j]) allocator.free(ids[j]), live[j] = false;
        continue;
      }
      ids[i] = allocator.allocate(s.bytes, s.label).id;
      live[i] = true;
    }
  } catch (...) {
    freeAll();
    throw;
  }
  freeAll();
}

}  // namespace matmulviz
