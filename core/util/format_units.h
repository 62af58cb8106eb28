#pragma once
// Numbers with units for people: sizes in B/KiB/MiB/GiB/TiB, times in ns/us/ms/s and rates
// ("2.33 M threads/s"), each with 3 significant digits. The one formatter the CLI tables and the
// app's tables use. (PyTorch's own wording of out-of-memory messages is formatBytes in
// core/memory/caching_allocator.h.)

#include <cstdint>
#include <string>

namespace matmulviz {

/// Bytes in a MiB (2^20), for charts whose axes are in MiB.
inline constexpr double kMiB = 1024.0 * 1024.0;

/// Bytes in the largest binary unit that leaves a value of at least 1, with 3 significant digits
/// and no trailing zeros: 512 -> "512 B", 3584 -> "3.5 KiB", 2464153 -> "2.35 MiB",
/// 2248146944 -> "2.09 GiB", 100663296 -> "96 MiB". Units are 2^10 apart (KiB, MiB, GiB, TiB,
/// PiB, EiB). A negative size gets a leading '-'.
std::string formatSize(int64_t bytes);

/// Seconds in ns, us, ms or s, with 3 significant digits: 3.586e-6 -> "3.59 us",
/// 5.67e-4 -> "567 us", 1.234e-3 -> "1.23 ms", 2.34 -> "2.34 s", 1234.6 -> "1235 s";
/// 0 -> "0 s". NaN or infinite -> "-".
std::string formatSeconds(double seconds);

/// A rate per second with a decimal prefix (k, M, G, T) and 3 significant digits:
/// formatRate(2.32739e6, "threads") -> "2.33 M threads/s", formatRate(512, "threads") ->
/// "512 threads/s". NaN or infinite -> "-".
std::string formatRate(double perSecond, const std::string& what);

/// A ratio such as a speed-up, with 3 significant digits and an 'x': 1.994 -> "1.99x",
/// 0.006734 -> "0.00673x", 198765 -> "199000x" (whole numbers from 1000 on, never an
/// exponent). NaN or infinite -> "-".
std::string formatFactor(double ratio);

}  // namespace matmulviz
