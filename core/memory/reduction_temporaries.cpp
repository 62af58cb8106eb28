// PyTorch's setReduceConfig and the TensorIterator view it reads (aten/src/ATen/native/cuda/
// Reduce.cuh; aten/src/ATen/TensorIterator.cpp: reorder_dimensions, coalesce_dimensions),
// restated for the sizes of the two buffers a global reduce allocates.
#include "core/memory/reduction_temporaries.h"

#include <algorithm>
#include <string>
#include <utility>

namespace matmulviz {

namespace {

struct IterDim {
  int64_t size;
  int64_t in;   // input stride, elements
  int64_t out;  // output stride, elements (0 where reduced)
};

int64_t divUp(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int lastPow2(int64_t n) {  // Reduce.cuh's last_pow2 over an int
  auto v = static_cast<uint32_t>(std::min<int64_t>(n, 0x7fffffff));
  v |= v >> 1;
  v |= v >> 2;
  v |= v >> 4;
  v |= v >> 8;
  v |= v >> 16;
  return std::max(1, static_cast<int>(v - (v >> 1)));
}

/// TensorIterator's view of a reduction: fastest dim first, reduced dims in front, coalesced.
std::vector<IterDim> iteratorDims(const std::vector<ReductionDim>& dims) {
  // The output is allocated contiguous over the kept dims (review_reduce_result puts 0 strides
  // on the reduced ones).
  std::vector<IterDim> v;
  int64_t outStride = 1;
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {  // PyTorch starts innermost first
    if (d->size == 1) continue;                          // coalescing absorbs size-1 dims
    v.push_back({d->size, d->stride, d->reduced ? 0 : outStride});
    if (!d->reduced) outStride *= d->size;
  }
  // reorder_dimensions: insertion sort with should_swap, the output operand first.
  auto shouldSwap = [](const IterDim& a, const IterDim& b) {
    if ((a.out == 0) != (b.out == 0)) return b.out == 0 ? 1 : -1;
    for (auto [s0, s1] : {std::pair{a.out, b.out}, std::pair{a.in, b.in}}) {
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (a.size > b.size) return 1;
    }
    return 0;
  };
  for (size_t i = 1; i < v.size(); ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      const int c = shouldSwap(v[d0], v[d1]);
      if (c > 0) {
        std::swap(v[d0], v[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  // coalesce_dimensions: merge neighbours whose strides chain in every operand.
  std::vector<IterDim> c;
  for (const IterDim& d : v) {
    if (!c.empty() && c.back().in * c.back().size == d.in &&
        c.back().out * c.back().size == d.out) {
      c.back().size *= d.size;
      continue;
    }
    c.push_back(d);
  }
  return c;
}

/// get_output_vec_size: 4, halved until it divides the input's base offset, the first kept
/// dim's size and every other dim's input stride.
int outputVecSize(const std::vector<IterDim>& it, size_t outputIndex, int64_t offsetElements) {
  int vec = 4;
  auto update = [&vec](int64_t n) {
    while (n % vec != 0) vec /= 2;
  };
  update(offsetElements);
  update(it[outputIndex].size);
  for (size_t j = 0; j < it.size(); ++j)
    if (j != outputIndex) update(it[j].in);
  return vec;
}

}  // namespace

ReductionConfig reductionConfig(const std::vector<ReductionDim>& dims, int64_t accumulateBytes,
                                int64_t offsetElements, const GpuArchitecture& gpu) {
  constexpr int kMaxThreads = 512, kWarp = 32, kInputVecSize = 4, kVt0 = 4;
  constexpr int64_t kMinValuesPerThread = 16, kMaxValuesPerThread = 256;
  ReductionConfig c;
  const std::vector<IterDim> it = iteratorDims(dims);
  size_t numReduceDims = 0;
  while (numReduceDims < it.size() && it[numReduceDims].out == 0) ++numReduceDims;
  for (const ReductionDim& d : dims) (d.reduced ? c.inputsPerOutput : c.numOutputs) *= d.size;
  if (c.numOutputs == 0 || c.inputsPerOutput == 0) return c;

  int64_t dim0 = 1, dim1 = 1, fastestStride = 1;  // fastestStride in elements
  if (!it.empty()) {
    c.reductionOnFastestDim =
        numReduceDims == it.size() || (numReduceDims > 0 && it[0].in < it[numReduceDims].in);
    dim0 = c.reductionOnFastestDim ? c.inputsPerOutput : c.numOutputs;
    dim1 = c.reductionOnFastestDim ? c.numOutputs : c.inputsPerOutput;
    fastestStride = c.reductionOnFastestDim ? it[0].in : it[numReduceDims].in;
  }
  if (fastestStride == 1) {
    if (c.reductionOnFastestDim && dim0 > 128 && numReduceDims == 1 && kVt0 >= kInputVecSize) {
      dim0 /= kInputVecSize;  // vectorize along input
    } else if (!c.reductionOnFastestDim) {
      c.outputVecSize = outputVecSize(it, numReduceDims, offsetElements);
      dim0 /= c.outputVecSize;  // vectorize along output
    }
  }
  // set_block_dimension
  const int maxThreads = kMaxThreads / c.outputVecSize;
  const int dim0Pow2 = dim0 < maxThreads ? lastPow2(dim0) : maxThreads;
  const int dim1Pow2 = dim1 < maxThreads ? lastPow2(dim1) : maxThreads;
  c.blockWidth = std::min(dim0Pow2, kWarp);
  c.blockHeight = std::min(dim1Pow2, maxThreads / c.blockWidth);
  c.blockWidth = std::min(dim0Pow2, maxThreads / c.blockHeight);
  const int numThreads = c.blockWidth * c.blockHeight;

  auto valuesPerThread = [&c] { return divUp(c.inputsPerOutput, c.stepInput); };
  if (it.empty() || c.reductionOnFastestDim) {
    c.blockXReduce = true;
    c.stepInput *= c.blockWidth;
  } else {
    c.stepOutput *= c.blockWidth;
  }
  bool blockYReduce = false;
  if (valuesPerThread() >= c.blockHeight * 16 || valuesPerThread() >= kMaxValuesPerThread) {
    blockYReduce = true;
    c.stepInput *= c.blockHeight;
  } else {
    c.stepOutput *= c.blockHeight;
  }
  const int64_t blocksPerSm = gpu.maxThreadsPerMultiProcessor / numThreads;
  const int64_t targetGridSize = gpu.multiProcessorCount * blocksPerSm;
  auto gridX = [&c] { return divUp(c.numOutputs / c.outputVecSize, c.stepOutput); };
  if (blockYReduce && valuesPerThread() >= kMaxValuesPerThread && gridX() <= targetGridSize) {
    const int64_t ctas1 = divUp(targetGridSize, gridX());
    const int64_t ctas2 = divUp(valuesPerThread(), kMinValuesPerThread);
    const int64_t ctas3 = divUp(valuesPerThread(), kMaxValuesPerThread);
    c.ctasPerOutput = std::max(std::min(ctas1, ctas2), ctas3);
    if (c.ctasPerOutput > 1) {
      c.globalReduce = true;
      c.stepInput *= c.ctasPerOutput;
    }
  }
  if (c.globalReduce) {  // global_memory_size, semaphore_size
    c.bufferBytes = accumulateBytes * c.numOutputs * c.ctasPerOutput;
    if (!c.blockXReduce) c.bufferBytes *= int64_t{c.blockWidth} * c.outputVecSize;
    c.semaphoreBytes = 4 * gridX();
  }
  return c;
}

std::vector<TemporaryStep> reductionTemporaries(const std::vector<ReductionDim>& dims,
                                                int64_t accumulateBytes, int64_t offsetElements,
                                                const GpuArchitecture& gpu) {
  const ReductionConfig c = reductionConfig(dims, accumulateBytes, offsetElements, gpu);
  if (!c.globalReduce) return {};
  return {{"reduction buffer (gpu_reduce_kernel, " + std::to_string(c.ctasPerOutput) +
               " blocks per output)",
           c.bufferBytes, -1},
          {"reduction semaphores (gpu_reduce_kernel)", c.semaphoreBytes, -1}};
}

}  // namespace matmulviz
