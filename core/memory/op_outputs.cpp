#include "core/memory/op_outputs.h"

namespace matmulviz {

std::vector<int> hostOutputPositions(std::string_view op) {
  if (op == "_scaled_dot_product_efficient_attention" || op == "_efficient_attention_forward")
    return {2, 3};
  return {};
}

std::vector<int> outputAllocationOrder(std::string_view op) {
  if (op == "native_dropout") return {1, 0};
  return {};
}

}  // namespace matmulviz
