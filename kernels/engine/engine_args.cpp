#include "kernels/engine/engine_args.h"

#include <stdexcept>

namespace matmulviz::kernels::engine {

Strided layoutOf(const Tensor& t) {
  if (t.dim() > kMaxDims)
    throw std::invalid_argument("a tensor of " + std::to_string(t.dim()) +
                                " dims: the device kernels take at most " +
                                std::to_string(kMaxDims));
  Strided s;
  s.rank = static_cast<int>(t.dim());
  for (int d = 0; d < s.rank; ++d) {
    s.sizes[d] = t.size(d);
    s.strides[d] = t.stride(d);
  }
  s.offset = t.storageOffset();
  return s;
}

std::int64_t storageElements(const Tensor& t) {
  return t.storage().nbytes() / t.elementSize();
}

}  // namespace matmulviz::kernels::engine
