#include "core/ops/grouped_bmm_rule.h"

#include <limits>

#include "core/sim/launch_config.h"
#include "core/tensor/tensor.h"

namespace matmulviz {

bool groupedBmmApplies(const Tensor& a, const Tensor& c, const Tensor& q) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (a.dtype() != DType::Float32 || c.dtype() != DType::Float32) return false;
  if (!a.isContiguous() || !c.isContiguous()) return false;
  if (q.deviceKind() != DeviceKind::Host && !q.isContiguous()) return false;
  const std::int64_t N = a.size(0), I = a.size(1), J = a.size(2), M = c.size(0), K = c.size(2);
  if (N < 1 || I < 1 || M < 1 || J < 1 || K < 1 || N > kIntMax || M >= kIntMax || N * I > kIntMax)
    return false;
  return J * K * static_cast<std::int64_t>(sizeof(float)) <=
         static_cast<std::int64_t>(sim::CudaLimits::maxSharedBytesPerBlock);
}

}  // namespace matmulviz
