#include "core/report/json_reader.h"

#include "core/util/json_fields.h"  // jsonTypeName, allowedRangeText, shortNumberText

#include <cmath>

namespace matmulviz {

std::string jsonPath(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string jsonPath(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

void JsonReader::fail(const std::string& path, const std::string& why) const {
  throw ReportLoadError(file_, (path.empty() ? std::string("the file") : path) + " " + why);
}

const nlohmann::json& JsonReader::member(const nlohmann::json& object, const std::string& path,
                                         const char* key) const {
  const auto it = this->object(object, path).find(key);
  if (it == object.end()) fail(jsonPath(path, key), "is missing");
  return *it;
}

const nlohmann::json& JsonReader::object(const nlohmann::json& value,
                                         const std::string& path) const {
  if (!value.is_object()) fail(path, "must be an object, but is " + jsonTypeName(value));
  return value;
}

const nlohmann::json& JsonReader::array(const nlohmann::json& value,
                                        const std::string& path) const {
  if (!value.is_array()) fail(path, "must be an array, but is " + jsonTypeName(value));
  return value;
}

int64_t JsonReader::integer(const nlohmann::json& value, const std::string& path, int64_t minValue,
                            int64_t maxValue) const {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (maxValue < 0 || u > static_cast<uint64_t>(maxValue) || static_cast<int64_t>(u) < minValue)
      fail(path, "is " + std::to_string(u) + " " + allowedRangeText(minValue, maxValue));
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) {
    const int64_t i = value.get<int64_t>();
    if (i < minValue || i > maxValue)
      fail(path, "is " + std::to_string(i) + " " + allowedRangeText(minValue, maxValue));
    return i;
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    // Compared as doubles before any conversion; int64 max rounds up to 2^63, hence the strict <.
    const bool inRange = d >= static_cast<double>(minValue) &&
                         (maxValue == INT64_MAX ? d < 0x1p63 : d <= static_cast<double>(maxValue));
    if (!std::isfinite(d) || !inRange || d != std::floor(d))
      fail(path, "is " + shortNumberText(d) + ", not a whole number " +
                     allowedRangeText(minValue, maxValue));
    return static_cast<int64_t>(d);
  }
  fail(path, "must be a whole number " + allowedRangeText(minValue, maxValue) + ", but is " +
                 jsonTypeName(value));
}

double JsonReader::number(const nlohmann::json& value, const std::string& path,
                          bool nullIsNaN) const {
  if (nullIsNaN && value.is_null()) return std::nan("");
  if (!value.is_number())
    fail(path, std::string("must be a number") + (nullIsNaN ? " or null" : "") + ", but is " +
                   jsonTypeName(value));
  const double d = value.get<double>();
  if (!std::isfinite(d)) fail(path, "is not a finite number");
  return d;
}

std::string JsonReader::string(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_string()) fail(path, "must be a string, but is " + jsonTypeName(value));
  return value.get<std::string>();
}

bool JsonReader::boolean(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_boolean()) fail(path, "must be true or false, but is " + jsonTypeName(value));
  return value.get<bool>();
}

}  // namespace matmulviz
