#pragma once
// The envelope every matmulviz report starts with (docs/report-format.md): "format":
// "matmulviz-report", "version": kReportVersion, "kind": what the rest of the document is
// ("strategies", "python", "multihead", "einsum", "budget"). One place writes it, so that every
// report a command or the Python module writes is recognised, or refused by kind, by one loader.

#include <nlohmann/json.hpp>

#include <string_view>

namespace matmulviz {

/// The report schema version this build writes and reads.
constexpr int kReportVersion = 1;

/// A new JSON object holding only the envelope for `kind`; the caller adds the body's keys
/// after it (ordered_json keeps the envelope first).
inline nlohmann::ordered_json reportEnvelope(std::string_view kind) {
  nlohmann::ordered_json j;
  j["format"] = "matmulviz-report";
  j["version"] = kReportVersion;
  j["kind"] = kind;
  return j;
}

}  // namespace matmulviz
