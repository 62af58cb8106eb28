#pragma once
// The conversions to QString that the UI libraries share: core's UTF-8 text, and sizes in bytes
// as core's formatSize writes them.

#include "core/util/format_units.h"

#include <QString>

#include <cstdint>
#include <string_view>

namespace matmulviz::ui {

/// `s`, UTF-8, as a QString.
inline QString qs(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// `bytes` as formatSize writes it ("32.00 MiB").
inline QString bytesText(std::int64_t bytes) {
  return qs(formatSize(bytes));
}

}  // namespace matmulviz::ui
