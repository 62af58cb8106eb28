#pragma once
// The sort inside index_put_ with accumulate=True on CUDA, the backward of t[idx]: PyTorch sorts
// the linear indices with CUB's radix sort before it adds the values, and takes the sort's
// buffers and CUB's temporary storage from the caching allocator for the length of the op.
// Sources: PyTorch's aten/src/ATen/native/cuda/Indexing.cu (index_put_with_sort_kernel,
// computeLinearIndex), aten/src/ATen/cuda/cub.cuh (get_num_bits, radix_sort_pairs) and CUB 3.0
// (the CCCL of CUDA 13.0, which PyTorch 2.11+cu130 builds with): cub/device/dispatch/
// dispatch_radix_sort.cuh and its tuning policies.

#include "core/memory/kernel_temporaries.h"
#include "core/memory/pytorch_model.h"

#include <cstdint>
#include <vector>

namespace matmulviz {

/// get_num_bits of ATen's cub.cuh: the bits the keys 0..maxKey need; 1 for 0 and 1.
int cubKeyBits(int64_t maxKey);

/// Bytes of temporary storage cub::DeviceRadixSort::SortPairs asks for to sort `items` pairs of
/// int64 keys (bits [0, keyBits)) and int64 values into separate output arrays, with a 64-bit
/// item count (so 8-byte offsets): what at::cuda::cub::radix_sort_pairs<int64_t, int64_t>
/// allocates. DispatchRadixSort::Invoke, for the tuning policy of `gpu`'s architecture:
/// - at most one tile of the single-tile policy (256 threads x 9 items for 8-byte pairs): 1 byte;
/// - else the onesweep sort (InvokeOnesweep): a histogram of 256 8-byte offsets per 8-bit pass;
///   a look-back of 256 x 4 bytes per onesweep tile (8-byte pairs: sm_90 384 threads x 12
///   items, sm_80 384 x 10, sm_70 and sm_75 256 x 11); with two passes or more a third key and
///   a third value buffer (items x 8 bytes each); a 4-byte counter per pass; aliased into one
///   blob (cubAliasedBytes).
/// Checked against the H200: 3000 indices of 10 bits take 53759 bytes.
int64_t cubRadixSortPairsTempBytes(int64_t items, int keyBits, const GpuArchitecture& gpu);

/// The allocator steps of index_put_(self, (idx,), values, accumulate=True) on CUDA
/// (index_put_with_sort_kernel) with one int64 index of `numIndices` elements into the first
/// dim, whose largest linear index divided by the slice size is `maxKey` (size(0) - 1 for a
/// contiguous self), after self exists and, for an index on the host, after its device copy
/// (computeLinearIndex's `.to(device)`, which the caller makes and frees):
/// - an index already on the device: index.remainder(size) then `* stride` (the linear
///   index, kept to the end), the remainder freed;
/// - sorted_indices, orig_indices and range = arange(numIndices) (numIndices x 8 bytes each);
/// - CUB's temporary storage, freed when the sort returns;
/// - range, orig_indices, sorted_indices (and the linear index) freed as the op returns.
/// No steps for an empty index.
std::vector<TemporaryStep> indexPutSortTemporaries(int64_t numIndices, int64_t maxKey,
                                                   bool indexOnDevice, const GpuArchitecture& gpu);

}  // namespace matmulviz
