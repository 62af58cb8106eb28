#pragma once
// The gathered batched matmul of the PyTorch forum post "Many weird phenomena about
// torch.matmul()": a [N, I, J], c [M, J, K], index q [N] (a host int64 tensor, as in the seed), out
// [N, I, K] with out[n] = a[n] @ c[q[n]].

#include "core/tensor/tensor.h"

#include <cstdint>
#include <string>

namespace matmulviz {

struct Workload {
  int64_t n = 131072;   ///< N: rows of a and entries of q (the seed: 1048576 // 8)
  int64_t m = 2048;     ///< M: matrices in c (the seed: 16384 // 8)
  int64_t i = 1;        ///< I: rows of each a[n]
  int64_t j = 64;       ///< J: the contracted dimension
  int64_t k = 64;       ///< K: columns of each c[m]
  int64_t batch = 256;  ///< strategy3's batch
  DType dtype = DType::Float32;

  /// Throws BadInput naming the field ("n", ..., "batch") when a size is < 1, or "sizes" when a
  /// tensor's element count would overflow 64-bit indexing.
  void validate() const;
  int64_t aBytes() const { return n * i * j * elementSize(dtype); }
  int64_t cBytes() const { return m * j * k * elementSize(dtype); }
  int64_t outBytes() const { return n * i * k * elementSize(dtype); }
};

/// The host inputs of a run. a and c hold values in the workload's dtype; q is int64.
struct Inputs {
  Tensor a, c, q;
};

/// torch.rand-like uniform [0, 1) a and c and randint(0, M) q from a seeded mt19937_64.
/// With `withData` false (the meta device) only q is made: a and c stay undefined and the
/// runner creates them on the meta device by shape.
Inputs makeRandomInputs(const Workload& w, uint64_t seed, bool withData = true);

/// Checks user-supplied inputs against the workload (shapes, q int64 and in [0, M)); throws
/// BadInput naming the tensor ("q", reason "q[17] = 4096 is outside [0, M) = [0, 2048)").
void checkInputs(const Workload& w, const Inputs& in);

/// float64 reference: ref[n] = a[n] @ c[q[n]], a plain loop, independent of the engine's ops.
Tensor referenceOutput(const Inputs& in);
/// float64 reference gradients for grad_output g: dA[n] = g[n] @ c[q[n]]^T,
/// dC[m] = sum over n with q[n] = m of a[n]^T @ g[n].
void referenceGradients(const Inputs& in, const Tensor& gradOutput, Tensor& dA, Tensor& dC);
/// max |x - ref| / max |ref| (0 when both are all zero). Shapes must match (else
/// std::invalid_argument). A non-finite value fails the check rather than vanishing in the max:
/// NaN when x or ref holds a NaN, else +inf when either holds an infinity.
double maxRelativeError(const Tensor& x, const Tensor& ref);

/// "out holds 12 NaN and 0 Inf of 100 elements" style findings of a failed accuracy check, for
/// the tensor named `name` against its float64 reference; empty when both are finite.
std::string nonFiniteWarning(const std::string& name, const Tensor& x, const Tensor& ref);

}  // namespace matmulviz
