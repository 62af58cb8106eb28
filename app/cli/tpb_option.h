#pragma once
// --tpb for the commands that launch kernels (`launch`, `ladder`): one parser, one message.

#include <string>

namespace matmulviz::cli {

/// Threads per block side: a whole number from 1 to 32, since a block of TPB x TPB threads holds
/// at most 1024 (CUDA's limit). Throws std::invalid_argument naming --tpb, the range and why.
int parseTpb(const std::string& text);

}  // namespace matmulviz::cli
