#pragma once
// Parsing of command-line sizes: byte sizes with units ("1.5GiB") and whole numbers ("--n 4096").

#include <cstdint>
#include <string>

namespace matmulviz {

/// Parses a byte size into bytes. Accepted: a plain number of bytes ("1048576"), or a number
/// (digits with at most one '.') followed by an optional space and a case-insensitive unit:
/// B; KiB, MiB, GiB, TiB and K, M, G, T (binary, 2^10 steps, as PyTorch's
/// PYTORCH_CUDA_ALLOC_CONF and `ulimit` read them); KB, MB, GB, TB (decimal, 10^3 steps, SI).
/// Fractions are rounded down to whole bytes ("1.5GiB" = 1610612736, "0.1KiB" = 102).
/// Throws std::invalid_argument whose message starts with `argName` and lists the accepted
/// forms, for an empty text, a missing number ("GiB"), a sign ("-1GiB"), an unknown unit ("12x"),
/// a malformed number ("1.2.3GB"), or a value beyond INT64_MAX bytes.
int64_t parseByteSize(const std::string& text, const std::string& argName);

/// Parses a whole number for a size argument such as "--n": decimal digits only (no sign,
/// space, exponent or fraction), then minValue <= value <= maxValue.
/// Throws std::invalid_argument naming `argName`, saying why and what is allowed, e.g.
/// "--n: '12x' is not a whole number (allowed: 1 to 64)", "--n: '1.5' is not a whole number
/// (...)", "--n: '-5' is negative (...)", "--n: '1e3' is not written in digits only (no sign,
/// exponent or decimal point): write 1000 (...)" or "--n: '0' is out of range (...)".
int64_t parsePositiveInt(const std::string& text, const std::string& argName, int64_t minValue = 1,
                         int64_t maxValue = INT64_MAX);

}  // namespace matmulviz
