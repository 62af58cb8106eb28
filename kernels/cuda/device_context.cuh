#pragma once
// The thread context on a GPU: the members a kernel body calls (see core/sim/sim_context.h for
// the simulator's), as thin wrappers over CUDA's builtins, plain loads and stores and
// __syncthreads(). Only nvcc compiles this header.

#include <cstdint>
#include <type_traits>

#include "core/sim/views.h"

namespace matmulviz::kernels::cuda {

struct DeviceContext {
  __device__ uint3 threadIdx() const { return ::threadIdx; }
  __device__ uint3 blockIdx() const { return ::blockIdx; }
  __device__ dim3 blockDim() const { return ::blockDim; }
  __device__ dim3 gridDim() const { return ::gridDim; }

  /// Base of the block's dynamic shared memory (the launch's third <<<>>> argument).
  __device__ void* sharedMemory() const {
    extern __shared__ float4 matmulvizDynamicShared[];
    return matmulvizDynamicShared;
  }

  __device__ float fma(float a, float b, float acc) const { return fmaf(a, b, acc); }

  template <class T>
  __device__ std::remove_const_t<T> load(const sim::GlobalView<T>& v, std::int64_t i0) const {
    return v.data[v.offset(i0)];
  }
  template <class T>
  __device__ std::remove_const_t<T> load(const sim::GlobalView<T>& v, std::int64_t i0,
                                         std::int64_t i1) const {
    return v.data[v.offset(i0, i1)];
  }
  template <class T>
  __device__ std::remove_const_t<T> load(const sim::GlobalView<T>& v, std::int64_t i0,
                                         std::int64_t i1, std::int64_t i2) const {
    return v.data[v.offset(i0, i1, i2)];
  }
  template <class T>
  __device__ void store(const sim::GlobalView<T>& v, std::int64_t i0,
                        std::type_identity_t<T> value) const {
    v.data[v.offset(i0)] = value;
  }
  template <class T>
  __device__ void store(const sim::GlobalView<T>& v, std::int64_t i0, std::int64_t i1,
                        std::type_identity_t<T> value) const {
    v.data[v.offset(i0, i1)] = value;
  }
  template <class T>
  __device__ void store(const sim::GlobalView<T>& v, std::int64_t i0, std::int64_t i1,
                        std::int64_t i2, std::type_identity_t<T> value) const {
    v.data[v.offset(i0, i1, i2)] = value;
  }

  template <class T>
  __device__ T load(const sim::SharedView<T>& v, std::int64_t r, std::int64_t c) const {
    return v.data[v.offset(r, c)];
  }
  template <class T>
  __device__ void store(const sim::SharedView<T>& v, std::int64_t r, std::int64_t c,
                        std::type_identity_t<T> value) const {
    v.data[v.offset(r, c)] = value;
  }

  /// atomicAdd(&v[i0], value) on a 1-d view: returns the value before the addition.
  template <class T>
  __device__ T atomicAdd(const sim::GlobalView<T>& v, std::int64_t i0,
                         std::type_identity_t<T> value) const {
    return ::atomicAdd(&v.data[v.offset(i0)], value);
  }

  __device__ void syncthreads() const { __syncthreads(); }
};

/// v[i] += value with the GPU's atomicAdd (float and double; sm_60 and newer have both). Found
/// by argument-dependent lookup on DeviceContext from the engine's kernel bodies, and chosen by
/// partial ordering over the simulator's load-and-store in kernels/engine/strided.h (its context
/// and view types are more specialized; `value` is a non-deduced context, so the call's value
/// type converts as it would to the view's element type).
template <class T>
__device__ void atomicAddAt(DeviceContext&, const sim::GlobalView<T>& v, std::int64_t i,
                            std::remove_const_t<T> value) {
  ::atomicAdd(&v.data[v.offset(i)], value);
}

}  // namespace matmulviz::kernels::cuda
