#pragma once
// Buffers that PyTorch's CUDA kernels take from the caching allocator for the length of one op
// and give back before it returns: invisible in the op's outputs, visible in
// max_memory_allocated() and in a memory snapshot. Each function returns the op's allocator
// steps in PyTorch's order, for the engine's ops (core/ops) and the PyTorch dispatch adapter to
// replay with replayTemporaries(). Sizes are bytes as requested (the allocator rounds them).

#include "core/memory/caching_allocator.h"
#include "core/memory/pytorch_model.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace matmulviz {

/// One step: allocate `bytes` under `label`, or free the buffer allocated by step `freeStep`.
struct TemporaryStep {
  std::string label;
  int64_t bytes = 0;
  int freeStep = -1;  ///< >= 0: this step frees that earlier step's buffer; kOutputsStep: see there
};

/// The freeStep of a step that only marks where the op allocates its outputs, for an op that
/// takes buffers before them (without such a step, the outputs come first): the PyTorch adapter
/// allocates the outputs there; replayTemporaries() passes over it.
constexpr int kOutputsStep = -4;

/// _softmax_backward_data on CUDA (aten/src/ATen/native/cuda/SoftMax.cu,
/// softmax_backward_cuda_out): after grad_input is allocated (structured kernel) it computes
/// `tmp = grad * output` into a new tensor and frees it when the kernel returns. `numel`
/// elements of `elementBytes` each (grad's dtype). log_softmax's backward has no such tmp.
std::vector<TemporaryStep> softmaxBackwardTemporaries(int64_t numel, int64_t elementBytes);

/// topk on CUDA (aten/src/ATen/native/cuda/TensorTopK.cu, launch_gather_topk_kernel), after
/// values and indices are allocated. For `numSlices` slices of `sliceSize` elements it takes the
/// multi-block path when should_use_multiblock says so, and then mbtopk::launch allocates, in
/// order: kthValues (numSlices x elementBytes), ks_to_find (2 x numSlices x 4), desired
/// (2 x numSlices x radixBytes), counts (numBlocks x 256 x 2), digit_cum_sum (numSlices x 256 x
/// 4), withinKCounts and kthCounts (numBlocks x 4 each); two CUB inclusive_sum_by_key scans over
/// numBlocks items each take and return their temporary storage; the buffers are freed in
/// reverse order when launch returns. numBlocks = numSlices x ceil(sliceSize / (itemsPerThread x
/// 256)), itemsPerThread from get_items_per_thread (40 registers per thread, the GPU's SM count,
/// registers per SM and blocks per SM; clamped to [4, 64]). The single-block path allocates
/// nothing. `radixBytes` is 8 for 8-byte element types, else 4 (TopKTypeConfig's RadixType).
/// Not modelled: the sort of k > 4096 results (sort_out's buffers) and a non-contiguous input's
/// copy.
std::vector<TemporaryStep> topkTemporaries(int64_t numSlices, int64_t sliceSize,
                                           int64_t elementBytes, const GpuArchitecture& gpu);

/// should_use_multiblock of TensorTopK.cu: whether topk over `numSlices` slices of `sliceSize`
/// elements uses the multi-block radix select.
bool topkUsesMultiBlock(int64_t numSlices, int64_t sliceSize);

/// The one blob CUB asks for to hold temporary arrays of `sizes` bytes (cub::AliasTemporaries):
/// each rounded up to 256 bytes, plus 255 bytes of slack to align the blob's start.
int64_t cubAliasedBytes(std::initializer_list<int64_t> sizes);

/// The temporary storage (bytes) CUB's DeviceScan::InclusiveSumByKey asks for over `items`
/// items with 4-byte keys and values: the decoupled look-back tile state ((tiles + 32) x 16 B)
/// and one key per tile boundary ((tiles + 1) x 4 B), aliased into one blob (cubAliasedBytes).
/// Items per tile are those of CUB 3.0's scan-by-key tuning for `gpu` (dispatch_scan_by_key.cuh,
/// tuning_scan_by_key.cuh): sm_90 288 threads x 14 items, sm_80 256 x 15, others 256 x 9. The tile
/// size shows only above 16 tiles.
int64_t cubScanByKeyTempBytes(int64_t items, const GpuArchitecture& gpu);

/// Allocates and frees `steps` on `allocator` in order; buffers still held at the end are
/// freed in reverse order of allocation (as C++ destroys them when the op returns).
/// Throws OutOfMemoryError (after freeing what it allocated).
void replayTemporaries(CachingAllocator& allocator, const std::vector<TemporaryStep>& steps);

}  // namespace matmulviz
