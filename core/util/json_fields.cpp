#include "core/util/json_fields.h"

#include <cmath>
#include <sstream>

namespace matmulviz {

namespace {

const nlohmann::json& emptyObject() {
  static const nlohmann::json empty = nlohmann::json::object();
  return empty;
}

}  // namespace

std::string allowedRangeText(int64_t minValue, int64_t maxValue) {
  return "(allowed: " + std::to_string(minValue) + " to " + std::to_string(maxValue) + ")";
}

std::string shortNumberText(double v) {
  std::ostringstream os;
  os << v;  // %g: 1.31e+41, 2.5
  return os.str();
}

std::string jsonMessageWithoutTag(const std::string& what) {
  if (what.starts_with("[json.exception.")) {
    const size_t end = what.find("] ");
    if (end != std::string::npos) return what.substr(end + 2);
  }
  return what;
}

std::string jsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "binary data";
  }
}

JsonFields::JsonFields(const nlohmann::json& object, std::string what, const std::string& context)
    : object_(object), what_(std::move(what)) {
  if (!object_.is_object())
    throw std::invalid_argument(what_ + ": " + context + " must be a JSON object, but is " +
                                jsonTypeName(object_));
}

void JsonFields::fail(const char* key, const std::string& why) const {
  throw std::invalid_argument(what_ + ": field '" + key + "' " + why);
}

int64_t JsonFields::integer(const char* key, int64_t fallback, int64_t minValue,
                            int64_t maxValue) const {
  const auto it = object_.find(key);
  if (it == object_.end()) return fallback;
  const nlohmann::json& v = *it;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (maxValue < 0 || u > static_cast<uint64_t>(maxValue) || static_cast<int64_t>(u) < minValue)
      fail(key, "is " + std::to_string(u) + " " + allowedRangeText(minValue, maxValue));
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < minValue || i > maxValue)
      fail(key, "is " + std::to_string(i) + " " + allowedRangeText(minValue, maxValue));
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // Both bounds as doubles: min and max round to the nearest double, so d is compared with
    // them before it is converted (an int64 max rounds up to 2^63, hence the strict <).
    const bool inRange = d >= static_cast<double>(minValue) &&
                         (maxValue == INT64_MAX ? d < 0x1p63 : d <= static_cast<double>(maxValue));
    if (!std::isfinite(d) || !inRange)
      fail(key, "is " + shortNumberText(d) + " " + allowedRangeText(minValue, maxValue));
    if (d != std::floor(d))
      fail(key, "is " + shortNumberText(d) + ", not a whole number " +
                    allowedRangeText(minValue, maxValue));
    const auto i = static_cast<int64_t>(d);
    if (i < minValue || i > maxValue)
      fail(key, "is " + shortNumberText(d) + " " + allowedRangeText(minValue, maxValue));
    return i;
  }
  fail(key, "must be a whole number " + allowedRangeText(minValue, maxValue) + ", but is " +
                jsonTypeName(v));
}

std::string JsonFields::string(const char* key, const std::string& fallback) const {
  const auto it = object_.find(key);
  if (it == object_.end()) return fallback;
  if (!it->is_string()) fail(key, "must be a string, but is " + jsonTypeName(*it));
  return it->get<std::string>();
}

bool JsonFields::boolean(const char* key, bool fallback) const {
  const auto it = object_.find(key);
  if (it == object_.end()) return fallback;
  if (!it->is_boolean()) fail(key, "must be true or false, but is " + jsonTypeName(*it));
  return it->get<bool>();
}

std::vector<std::string> JsonFields::strings(const char* key,
                                             const std::vector<std::string>& fallback) const {
  const auto it = object_.find(key);
  if (it == object_.end()) return fallback;
  if (!it->is_array()) fail(key, "must be an array of strings, but is " + jsonTypeName(*it));
  std::vector<std::string> out;
  for (const auto& e : *it) {
    if (!e.is_string())
      fail(key, "must be an array of strings, but element " + std::to_string(out.size()) + " is " +
                    jsonTypeName(e));
    out.push_back(e.get<std::string>());
  }
  return out;
}

JsonFields JsonFields::object(const char* key) const {
  const auto it = object_.find(key);
  if (it == object_.end()) return JsonFields(emptyObject(), what_);
  return JsonFields(*it, what_, "field '" + std::string(key) + "'");
}

}  // namespace matmulviz
