#pragma once
// The staging buffers of PyTorch's CUDA reduction kernel (sum, mean and the sums autograd makes
// to undo broadcasting): aten/src/ATen/native/cuda/Reduce.cuh, gpu_reduce_kernel. When
// setReduceConfig splits one output's inputs across several thread blocks (a "global reduce"),
// the kernel takes two buffers from the caching allocator after the output exists, `buffer`
// (the blocks' partial results) then `semaphores` (one int per output block column), and frees
// them in reverse order when it returns. A full sum of 192,000 floats on an H200 asks for 96 B
// and 4 B; a sum over few inputs per output asks for nothing.

#include "core/memory/kernel_temporaries.h"
#include "core/memory/pytorch_model.h"

#include <cstdint>
#include <vector>

namespace matmulviz {

/// One dimension of a reduction's input as TensorIterator sees it.
struct ReductionDim {
  int64_t size = 1;
  int64_t stride = 0;    ///< the input's stride, in elements
  bool reduced = false;  ///< summed away (the output's stride is 0 there)
};

/// The launch that setReduceConfig (Reduce.cuh) chooses, as far as memory depends on it.
struct ReductionConfig {
  int64_t numOutputs = 1;
  int64_t inputsPerOutput = 1;
  bool reductionOnFastestDim = true;
  int outputVecSize = 1;
  int blockWidth = 1, blockHeight = 1;
  int64_t stepInput = 1, stepOutput = 1;
  int64_t ctasPerOutput = 1;
  bool blockXReduce = false;   ///< input_mult[BLOCK_X] != 0
  bool globalReduce = false;   ///< input_mult[CTA] != 0
  int64_t bufferBytes = 0;     ///< global_memory_size()
  int64_t semaphoreBytes = 0;  ///< semaphore_size()
};

/// setReduceConfig for an input of `dims` (PyTorch's dim order, outermost first; size-1 dims
/// allowed; strides in elements) whose first element sits `offsetElements` elements into its
/// allocation (blocks are 512-byte aligned), accumulated in `accumulateBytes` (sizeof arg_t: 4
/// for float, float16 and bfloat16 sums and means, 8 for double). TensorIterator's view first:
/// size-1 dims dropped, reduced dims moved to the front (by the input's stride), the rest in
/// the output's (contiguous) order, neighbours coalesced where every operand allows. Not
/// modelled: inputs over 2^31 elements (split into 32-bit-indexable pieces, each its own
/// launch), complex double (256 threads per block) and Welford reductions (var, std).
ReductionConfig reductionConfig(const std::vector<ReductionDim>& dims, int64_t accumulateBytes,
                                int64_t offsetElements, const GpuArchitecture& gpu);

/// The allocator steps of one such reduction: none, or buffer and semaphores allocated then
/// freed in reverse order (replayTemporaries frees what is still held, last first).
std::vector<TemporaryStep> reductionTemporaries(const std::vector<ReductionDim>& dims,
                                                int64_t accumulateBytes, int64_t offsetElements,
                                                const GpuArchitecture& gpu);

}  // namespace matmulviz
