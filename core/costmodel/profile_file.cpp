#include "core/costmodel/profile_file.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace matmulviz::costmodel {
namespace {

constexpr std::string_view kFormat = "matmulviz-gpu-profile";

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

/// The number `field`, which must lie in [lo, hi] (what a GPU and a host can plausibly have, and
/// what keeps every prediction finite).
double inRange(const nlohmann::json& j, const char* field, const std::string& where, double lo,
               double hi) {
  const auto it = j.find(field);
  if (it == j.end()) bad(where, std::string("field '") + field + "' is missing");
  if (!it->is_number()) bad(where, std::string("field '") + field + "' must be a number");
  const double v = it->get<double>();
  if (!(v >= lo && v <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    bad(where, std::string("field '") + field + "' must be a number in " + range);
  }
  return v;
}

constexpr double kMinRate = 1e3, kMaxRate = 1e18;  // bytes or FLOPs per second
constexpr double kMinTime = 1e-12, kMaxTime = 10;  // seconds

double rate(const nlohmann::json& j, const char* field, const std::string& where) {
  return inRange(j, field, where, kMinRate, kMaxRate);
}

double seconds(const nlohmann::json& j, const char* field, const std::string& where) {
  return inRange(j, field, where, kMinTime, kMaxTime);
}

std::string text(const nlohmann::json& j, const char* field, const std::string& where,
                 bool required) {
  const auto it = j.find(field);
  if (it == j.end()) {
    if (required) bad(where, std::string("field '") + field + "' is missing");
    return {};
  }
  if (!it->is_string()) bad(where, std::string("field '") + field + "' must be a string");
  std::string s = it->get<std::string>();
  if (required && s.empty()) bad(where, std::string("field '") + field + "' is empty");
  if (s.size() > 200) bad(where, std::string("field '") + field + "' is over 200 characters");
  return s;
}

}  // namespace

GpuProfile parseGpuProfile(std::string_view input, const std::string& where) {
  const nlohmann::json j = nlohmann::json::parse(input, nullptr, false);
  if (j.is_discarded() || !j.is_object()) bad(where, "not a JSON object (a GPU profile file)");
  if (text(j, "format", where, true) != kFormat)
    bad(where, "field 'format' must be \"" + std::string(kFormat) + "\"");
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || version->get<std::int64_t>() != 1)
    bad(where, "field 'version' must be 1");
  GpuProfile p{text(j, "key", where, true),
               text(j, "name", where, true),
               rate(j, "bandwidth_bytes_per_s", where),
               rate(j, "float32_flops_per_s", where),
               seconds(j, "launch_latency_s", where),
               0};
  const auto cc = j.find("compute_capability");
  if (cc == j.end() || !cc->is_number_integer() || cc->get<std::int64_t>() < 10 ||
      cc->get<std::int64_t>() > 999)
    bad(where, "field 'compute_capability' must be an integer major * 10 + minor, e.g. 90");
  p.computeCapability = static_cast<int>(cc->get<std::int64_t>());
  p.onChipBytesPerS = rate(j, "on_chip_bytes_per_s", where);
  p.sgemmFlopsPerS = rate(j, "sgemm_flops_per_s", where);
  p.hostOpS = seconds(j, "host_op_s", where);
  p.blockingCopyS = seconds(j, "blocking_copy_s", where);
  p.hostToDeviceBytesPerS = rate(j, "host_to_device_bytes_per_s", where);
  p.source = text(j, "source", where, false);
  if (p.source.empty()) p.source = where;
  return p;
}

GpuProfile readGpuProfile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot be read (a GPU profile file)");
  std::ostringstream s;
  s << in.rdbuf();
  return parseGpuProfile(s.str(), path);
}

std::string gpuProfileJson(const GpuProfile& p, const std::string& measuredJson) {
  nlohmann::ordered_json j = {{"format", kFormat},
                              {"version", 1},
                              {"key", p.key},
                              {"name", p.name},
                              {"compute_capability", p.computeCapability},
                              {"bandwidth_bytes_per_s", p.bandwidthBytesPerS},
                              {"float32_flops_per_s", p.float32FlopsPerS},
                              {"sgemm_flops_per_s", p.sgemmFlopsPerS},
                              {"launch_latency_s", p.launchLatencyS},
                              {"on_chip_bytes_per_s", p.onChipBytesPerS},
                              {"host_op_s", p.hostOpS},
                              {"blocking_copy_s", p.blockingCopyS},
                              {"host_to_device_bytes_per_s", p.hostToDeviceBytesPerS},
                              {"source", p.source}};
  if (!measuredJson.empty()) j["measured"] = nlohmann::ordered_json::parse(measuredJson);
  return j.dump(2) + "\n";
}

GpuProfile resolveGpuProfile(const std::string& keyOrPath) {
  if (const GpuProfile* p = findGpuProfile(keyOrPath)) return *p;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(keyOrPath, ec))
    throw std::invalid_argument("--model: '" + keyOrPath +
                                "' is neither a GPU profile (allowed: " + gpuProfileKeys() +
                                ") nor a profile file (JSON, written by matmulviz-cli calibrate)");
  try {
    return readGpuProfile(keyOrPath);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--model: ") + e.what());
  }
}

}  // namespace matmulviz::costmodel
